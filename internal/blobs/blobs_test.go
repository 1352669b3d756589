package blobs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantryhq/gantry/internal/blobs"
)

// publish adds files (path → content) to a fresh folder under dir
// through w, as a build publishes, and returns the folder and entries.
func publish(t *testing.T, w *blobs.Session, dir string, files map[string]string) []blobs.Entry {
	t.Helper()
	var es []blobs.Entry
	for p, content := range files {
		dst := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		e, err := w.Copy(strings.NewReader(content), dst, false)
		if err != nil {
			t.Fatal(err)
		}
		e.Path = p
		es = append(es, e)
	}
	return es
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return string(b)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// A sweep while a build is adding files deletes nothing, not even a blob
// whose last manifest was just removed and which the build links again;
// once the build has written its manifest, the next sweep keeps that
// blob and deletes the one nobody names.
func TestSweepDuringBuildKeepsItsBlobs(t *testing.T) {
	root := t.TempDir()
	s := blobs.Open(filepath.Join(root, "blobs"), "u1")
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	old := publish(t, w, filepath.Join(root, "sites", "d1"), map[string]string{"a.txt": "shared", "b.txt": "only d1"})
	if err := w.WriteManifest("d1", old); err != nil {
		t.Fatal(err)
	}
	w.Close()

	// d1 is deleted while d2's build runs and links "shared" again.
	build, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveManifest("d1"); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(root, "sites", "d1"))
	es := publish(t, build, filepath.Join(root, "sites", "d2"), map[string]string{"a.txt": "shared"})
	if _, err := s.Sweep(); !errors.Is(err, blobs.ErrBusy) {
		t.Fatalf("sweep during a build: %v, want ErrBusy", err)
	}
	if !s.Pending() {
		t.Error("a sweep skipped for a build is not marked pending")
	}
	for _, e := range old {
		if !exists(s.Path(e.Blob)) {
			t.Errorf("%s: its blob was deleted during the build", e.Path)
		}
	}
	if err := build.WriteManifest("d2", es); err != nil {
		t.Fatal(err)
	}
	build.Close()

	swept, err := s.Sweep()
	if err != nil {
		t.Fatal(err)
	}
	if swept.Blobs != 1 || s.Pending() {
		t.Errorf("swept %d blobs (still pending: %v), want 1 (d1's own)", swept.Blobs, s.Pending())
	}
	for _, e := range old {
		if got, want := exists(s.Path(e.Blob)), e.Path == "a.txt"; got != want {
			t.Errorf("%s: blob kept %v, want %v", e.Path, got, want)
		}
	}
	if got := read(t, filepath.Join(root, "sites", "d2", "a.txt")); got != "shared" {
		t.Errorf("d2's a.txt: %q", got)
	}
}

// A build killed between any two of its steps loses nothing another
// deployment has, and what it left is swept later: files half written
// into tmp, blobs linked but named by no manifest, a manifest whose
// deployment never went live (removed when the deployment fails).
func TestCrashBetweenStepsIsSweptLater(t *testing.T) {
	root := t.TempDir()
	s := blobs.Open(filepath.Join(root, "blobs"), "u1")
	w, _ := s.Begin()
	live := publish(t, w, filepath.Join(root, "sites", "live"), map[string]string{"index.html": "live page", "x.js": "shared script"})
	if err := w.WriteManifest("live", live); err != nil {
		t.Fatal(err)
	}
	w.Close()

	// Killed after linking its files, before its manifest: the session
	// just ends (its process, and its lock, are gone).
	w, _ = s.Begin()
	publish(t, w, filepath.Join(root, "sites", "cut1"), map[string]string{"x.js": "shared script", "new.js": "new in cut1"})
	os.WriteFile(filepath.Join(s.Dir, "tmp", "blob-123"), []byte("half written"), 0o600)
	w.Close()
	// Killed after its manifest, before its folder went into place: the
	// deployment fails on restart, and its manifest is removed then.
	w, _ = s.Begin()
	cut2 := publish(t, w, filepath.Join(root, "sites", ".publish-cut2"), map[string]string{"x.js": "shared script", "other.js": "new in cut2"})
	if err := w.WriteManifest("cut2", cut2); err != nil {
		t.Fatal(err)
	}
	w.Close()

	swept, err := s.Sweep()
	if err != nil {
		t.Fatal(err)
	}
	if swept.Blobs != 1 {
		t.Errorf("first sweep removed %d blobs, want 1 (cut1's new.js)", swept.Blobs)
	}
	if left, _ := os.ReadDir(filepath.Join(s.Dir, "tmp")); len(left) != 0 {
		t.Errorf("tmp still holds %d files", len(left))
	}
	if err := s.RemoveManifest("cut2"); err != nil {
		t.Fatal(err)
	}
	if swept, err = s.Sweep(); err != nil || swept.Blobs != 1 {
		t.Errorf("second sweep: %+v, %v; want cut2's other.js removed", swept, err)
	}
	for _, e := range live {
		if got := read(t, s.Path(e.Blob)); got != read(t, filepath.Join(root, "sites", "live", e.Path)) {
			t.Errorf("%s: blob holds %q", e.Path, got)
		}
	}
	m, err := s.ReadManifest("live")
	if err != nil || len(m.Files) != 2 {
		t.Fatalf("live manifest: %+v, %v", m, err)
	}
}

// Blobs are read-only and the platform's: a process of another user
// cannot open one for writing through any of its links, and a file
// replaced in a deployment's folder (unlinked, written anew) leaves the
// blob and the other deployments' copies as they were.
func TestBlobsAreReadOnly(t *testing.T) {
	root := t.TempDir()
	s := blobs.Open(filepath.Join(root, "blobs"), "u1")
	w, _ := s.Begin()
	a := publish(t, w, filepath.Join(root, "a"), map[string]string{"f": "original", "empty": ""})
	publish(t, w, filepath.Join(root, "b"), map[string]string{"f": "original"})
	w.Close()
	for _, e := range a {
		if e.Path == "empty" && e.Blob != "" {
			t.Errorf("an empty file got blob %q, want none", e.Blob)
		}
		if e.Path == "f" {
			fi, err := os.Stat(s.Path(e.Blob))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o444 {
				t.Errorf("blob mode %v, want 0444", fi.Mode().Perm())
			}
		}
	}
	p := filepath.Join(root, "a", "f")
	os.Remove(p)
	os.WriteFile(p, []byte("changed"), 0o644)
	if got := read(t, filepath.Join(root, "b", "f")); got != "original" {
		t.Errorf("b's copy: %q", got)
	}
}

// Ingest makes a server app's workspace again of links to blobs the
// account owns: folders and symlinks as they were, executables kept
// executable, and a second workspace with the same files links to the
// same blobs.
func TestIngestWorkspace(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "ws")
	os.MkdirAll(filepath.Join(src, "node_modules", "pkg", "bin"), 0o755)
	os.WriteFile(filepath.Join(src, "node_modules", "pkg", "index.js"), []byte("module.exports = 1"), 0o644)
	os.WriteFile(filepath.Join(src, "node_modules", "pkg", "bin", "run"), []byte("#!/bin/sh\necho run"), 0o755)
	os.WriteFile(filepath.Join(src, "empty"), nil, 0o644)
	os.Symlink("pkg/bin/run", filepath.Join(src, "node_modules", "run"))
	s := blobs.Open(filepath.Join(root, "blobs"), "u1")
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	o := blobs.Owner{UID: os.Getuid(), GID: os.Getgid()}
	var es []blobs.Entry
	for _, dst := range []string{"a.files", "b.files"} {
		if es, err = w.Ingest(src, filepath.Join(root, dst), o); err != nil {
			t.Fatal(err)
		}
	}
	byPath := map[string]blobs.Entry{}
	for _, e := range es {
		byPath[e.Path] = e
	}
	if e := byPath["node_modules/run"]; e.Link != "pkg/bin/run" || e.Blob != "" {
		t.Errorf("symlink entry %+v", e)
	}
	if e := byPath["node_modules/pkg/bin/run"]; e.Mode != 0o755 || !strings.HasSuffix(e.Blob, "xw") {
		t.Errorf("executable entry %+v", e)
	}
	if e := byPath["node_modules/pkg"]; !e.Mode.IsDir() {
		t.Errorf("folder entry %+v", e)
	}
	for _, rel := range []string{"node_modules/pkg/index.js", "node_modules/pkg/bin/run"} {
		a, _ := os.Stat(filepath.Join(root, "a.files", rel))
		b, _ := os.Stat(filepath.Join(root, "b.files", rel))
		if a == nil || b == nil || !os.SameFile(a, b) {
			t.Errorf("%s: not one blob for both workspaces", rel)
		}
		if a != nil && a.Mode().Perm()&0o200 == 0 {
			t.Errorf("%s: mode %v, want the account's own writable file", rel, a.Mode())
		}
	}
	if got, err := os.Readlink(filepath.Join(root, "b.files", "node_modules", "run")); err != nil || got != "pkg/bin/run" {
		t.Errorf("symlink: %q, %v", got, err)
	}
	if fi, err := os.Stat(filepath.Join(root, "a.files")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the folder of links: %v, want mode 0700", err)
	}
}
