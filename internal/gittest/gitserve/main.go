// Command gitserve serves the bare git repositories under a folder over
// smart HTTP on loopback, for browser journeys and benchmarks that need a
// real git host: git's own git-http-backend behind net/http/cgi.
//
//	gitserve -root DIR [-addr 127.0.0.1:0]
//
// It prints "listening on http://ADDR" once ready and serves
// DIR/<owner>/<name>.git as http://ADDR/<owner>/<name>.git until killed.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/gantryhq/gantry/internal/gittest"
)

func main() {
	root := flag.String("root", "", "folder of bare repositories (required)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	if *root == "" {
		fmt.Fprintln(os.Stderr, "usage: gitserve -root DIR [-addr 127.0.0.1:0]")
		os.Exit(2)
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		log.Fatal(err)
	}
	h, err := gittest.SmartHandler(abs)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, h))
}
