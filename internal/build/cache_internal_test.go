package build

import (
	"os"
	"path/filepath"
	"testing"
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
