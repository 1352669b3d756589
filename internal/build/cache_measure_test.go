package build

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// TestMeasureCacheFormats packs and unpacks the folders named in
// GANTRY_CACHE_MEASURE (a project folder holding node_modules and .npm
// after an install, e.g. a Next.js app's) in each candidate format and
// prints bytes stored and seconds to pack and to restore. Skipped without
// it: it measures, it asserts nothing (docs/architecture.md, "Build
// caches", has the figures).
func TestMeasureCacheFormats(t *testing.T) {
	base := os.Getenv("GANTRY_CACHE_MEASURE")
	if base == "" {
		t.Skip("GANTRY_CACHE_MEASURE names no project folder to measure")
	}
	formats := []struct {
		name string
		w    func(io.Writer) (io.WriteCloser, error)
	}{
		{"tar", func(w io.Writer) (io.WriteCloser, error) { return nopWriteCloser{w}, nil }},
		{"gzip-1", func(w io.Writer) (io.WriteCloser, error) { return gzip.NewWriterLevel(w, gzip.BestSpeed) }},
		{"zstd-fastest", func(w io.Writer) (io.WriteCloser, error) {
			return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		}},
		{"zstd-default", func(w io.Writer) (io.WriteCloser, error) {
			return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		}},
		{"zstd-better", func(w io.Writer) (io.WriteCloser, error) {
			return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
		}},
	}
	old := cacheCompressor
	defer func() { cacheCompressor = old }()
	out := t.TempDir()
	for _, rel := range []string{"node_modules", ".npm"} {
		for _, f := range formats {
			cacheCompressor = f.w
			file := filepath.Join(out, "c")
			start := time.Now()
			size, stored, err := packCache(base, rel, nil, file, 8<<30)
			if err != nil {
				t.Fatal(err)
			}
			packed := time.Since(start)
			dst := t.TempDir()
			start = time.Now()
			if err := unpackCache(file, dst, rel, uint32(os.Getuid()), uint32(os.Getgid())); err != nil {
				t.Fatal(err)
			}
			fmt.Printf("%-12s %-12s %6.0f MB unpacked %6.0f MB stored  pack %5.1f s  restore %5.1f s\n",
				rel, f.name, float64(size)/1e6, float64(stored)/1e6, packed.Seconds(), time.Since(start).Seconds())
			os.RemoveAll(dst)
		}
	}
}
