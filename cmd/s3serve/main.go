// Command s3serve is an S3-compatible object store on loopback, for the
// tests and trials of Gantry's replicas (issue 26): gofakes3 over a bolt
// file, so what it holds outlives a restart on the same -root.
//
//	s3serve -root DIR [-addr 127.0.0.1:0] [-bucket gantry]
//
// It prints "listening on http://ADDR" once ready and serves until
// killed. The bucket is created at start. It takes any credentials (it
// checks no signature) and, unlike gofakes3 alone, refuses a PUT whose
// x-amz-checksum-sha256 does not match the bytes received (400
// BadDigest), as S3 does.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
)

func main() {
	root := flag.String("root", "", "folder for the store's bolt file (required)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	bucket := flag.String("bucket", "gantry", "bucket created at start")
	flag.Parse()
	if *root == "" {
		fmt.Fprintln(os.Stderr, "usage: s3serve -root DIR [-addr 127.0.0.1:0] [-bucket gantry]")
		os.Exit(2)
	}
	if err := os.MkdirAll(*root, 0o700); err != nil {
		log.Fatal(err)
	}
	backend, err := s3bolt.NewFile(filepath.Join(*root, "s3.bolt"))
	if err != nil {
		log.Fatal(err)
	}
	if ok, err := backend.BucketExists(*bucket); err != nil {
		log.Fatal(err)
	} else if !ok {
		if err := backend.CreateBucket(*bucket); err != nil {
			log.Fatal(err)
		}
	}
	fake := gofakes3.New(backend, gofakes3.WithoutVersioning(), gofakes3.WithLogger(gofakes3.DiscardLog()))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, checkSHA256(fake.Server())))
}

// checkSHA256 refuses a PUT whose x-amz-checksum-sha256 header does not
// match its body.
func checkSHA256(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want := r.Header.Get("X-Amz-Checksum-Sha256")
		if r.Method != http.MethodPut || want == "" {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sum := sha256.Sum256(body)
		if base64.StdEncoding.EncodeToString(sum[:]) != want {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>BadDigest</Code>`+
				`<Message>The SHA256 you specified did not match the calculated checksum.</Message></Error>`)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}
