package build

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// A repository cannot turn a restore into a write outside its workspace:
// a cache folder it replaced with a symlink is removed, not followed, and
// a symlinked parent folder stops the restore.
func TestUnpackCacheStaysInside(t *testing.T) {
	src := t.TempDir()
	for _, p := range []string{"node_modules/a/index.js", ".next/cache/x"} {
		os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(src, p), []byte("hi"), 0o644)
	}
	os.Symlink("a", filepath.Join(src, "node_modules", "b"))
	store := t.TempDir()
	for _, rel := range []string{"node_modules", ".next/cache"} {
		if _, _, err := packCache(src, rel, nil, filepath.Join(store, filepath.Base(rel)), MaxCachePacked); err != nil {
			t.Fatal(err)
		}
	}

	ws, outside := t.TempDir(), t.TempDir()
	os.Symlink(outside, filepath.Join(ws, "node_modules"))
	os.Symlink(outside, filepath.Join(ws, ".next"))
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	if err := unpackCache(filepath.Join(store, "node_modules"), ws, "node_modules", uid, gid); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "node_modules", "a", "index.js")); err != nil || string(b) != "hi" {
		t.Errorf("node_modules not restored: %q %v", b, err)
	}
	if target, err := os.Readlink(filepath.Join(ws, "node_modules", "b")); err != nil || target != "a" {
		t.Errorf("symlink inside not restored: %q %v", target, err)
	}
	if err := unpackCache(filepath.Join(store, "cache"), ws, ".next/cache", uid, gid); err == nil {
		t.Error("restored through a symlinked .next")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the restore wrote outside the workspace: %v", entries)
	}
}

// Caches are stored as plain tars; the gzip'd ones older versions wrote,
// and zstd'd ones, still restore.
func TestUnpackCacheFormats(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "node_modules", "a"), 0o755)
	os.WriteFile(filepath.Join(src, "node_modules", "a", "index.js"), []byte("module.exports = 1"), 0o644)
	store := t.TempDir()
	if _, _, err := packCache(src, "node_modules", nil, filepath.Join(store, "new"), MaxCachePacked); err != nil {
		t.Fatal(err)
	}
	old := cacheCompressor
	defer func() { cacheCompressor = old }()
	for name, c := range map[string]func(io.Writer) (io.WriteCloser, error){
		"gzip": func(w io.Writer) (io.WriteCloser, error) { return gzip.NewWriterLevel(w, gzip.BestSpeed) },
		"zstd": func(w io.Writer) (io.WriteCloser, error) { return zstd.NewWriter(w) },
	} {
		cacheCompressor = c
		if _, _, err := packCache(src, "node_modules", nil, filepath.Join(store, name), MaxCachePacked); err != nil {
			t.Fatal(err)
		}
	}
	for name, magic := range map[string]string{"new": "ustar", "gzip": "\x1f\x8b", "zstd": "\x28\xb5\x2f\xfd"} {
		b, _ := os.ReadFile(filepath.Join(store, name))
		if name == "new" && len(b) > 262 {
			b = b[257:] // a tar's magic
		}
		if !strings.HasPrefix(string(b), magic) {
			t.Errorf("%s: starts %q, want %q", name, b[:min(len(b), 4)], magic)
		}
		ws := t.TempDir()
		if err := unpackCache(filepath.Join(store, name), ws, "node_modules", uint32(os.Getuid()), uint32(os.Getgid())); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b, err := os.ReadFile(filepath.Join(ws, "node_modules", "a", "index.js")); err != nil || string(b) != "module.exports = 1" {
			t.Errorf("%s: restored %q, %v", name, b, err)
		}
	}
}
