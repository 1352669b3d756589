package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gantryhq/gantry/internal/sandbox"
)

// TestWorkspaceOverFiles: a workspace stored by content is an overlay of
// its folder of links (here to a "blob" another deployment shares) under
// the volume. The app writing to a file in place changes its own copy
// only; what it writes counts against the volume's kernel limit; the
// volume still resizes and changes owner (the links with it), and its
// removal takes the links, never the blob.
func TestWorkspaceOverFiles(t *testing.T) {
	s := mustSandbox(t)
	const uid, newUID = 20201, 20202
	v := volume(t, s, sandbox.Disk{Bytes: 32 << 20, Inodes: 500}, uid)
	files := sandbox.FilesDir(v.Path)
	blob := filepath.Join(filepath.Dir(filepath.Dir(v.Path)), "blob")
	if err := os.WriteFile(blob, []byte("shared original"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{files, filepath.Join(files, "data")} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(files, 0o700)
	if err := os.Link(blob, filepath.Join(files, "data", "f")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(files, "data"), blob} {
		os.Lchown(p, uid, uid)
	}
	if err := s.MountFiles(v, uid, uid); err != nil {
		t.Fatal(err)
	}
	out, err := runIn(t, s, v, uid, `printf CHANGED | dd of=data/f conv=notrunc 2>/dev/null && cat data/f && echo new > data/g`)
	if err != nil || !strings.Contains(out.String(), "CHANGEDoriginal") {
		t.Fatalf("writing in place: %v %q", err, out)
	}
	if b, _ := os.ReadFile(blob); string(b) != "shared original" {
		t.Errorf("the blob reads %q after the app wrote to its copy", b)
	}
	out, err = runIn(t, s, v, uid, `head -c 40M /dev/zero > big`)
	if err == nil || !strings.Contains(out.String(), "No space left") {
		t.Fatalf("40 MiB into a 32 MiB volume through the overlay: %v\n%s", err, out)
	}
	runIn(t, s, v, uid, `rm big`)

	if err := v.Resize(context.Background(), 24<<20); err != nil {
		t.Fatalf("resize with the overlay mounted: %v", err)
	}
	if err := s.Reown(v, newUID, newUID); err != nil {
		t.Fatal(err)
	}
	if err := s.MountFiles(v, newUID, newUID); err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(t, s, v, newUID, `cat data/f data/g && echo more >> data/f`); err != nil || !strings.Contains(out.String(), "CHANGEDoriginalnew") {
		t.Fatalf("after resize and reown, uid %d reads %q, %v", newUID, out, err)
	}
	if fi, err := os.Stat(blob); err != nil || fi.Sys().(*syscall.Stat_t).Uid != newUID {
		t.Errorf("the blob's owner after Reown: %v", err)
	}
	if err := sandbox.RemoveVolume(v.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(files); err == nil {
		t.Error("the workspace's links are left")
	}
	if b, _ := os.ReadFile(blob); string(b) != "shared original" {
		t.Errorf("the blob reads %q after the volume's removal", b)
	}
}
