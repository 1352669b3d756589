package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A server app's workspace may be stored by content (internal/blobs): its
// files are then hard links to the account's blobs in a folder beside
// the volume, Path + ".files" (FilesDir), on the data disk, and the
// workspace the app sees is an overlay of that folder (read-only lower
// layer) under an upper layer inside the volume (Path/upper, with its
// work folder Path/.overlay-work). What the app writes — new files, and
// any file of its build it changes, which the overlay copies up first —
// goes to the volume, whose kernel limits bound it as before; the blobs,
// shared with the account's other deployments, are never written. The
// overlay is mounted on Workspace (MountFiles), where the app's runs find
// their /workspace as before.

// Overlay folders inside a volume.
const (
	volumeUpper = "upper"
	volumeWork  = ".overlay-work"
)

// FilesDir is the folder of links a volume's workspace is made from when
// it is stored by content.
func FilesDir(volume string) string { return filepath.Clean(volume) + ".files" }

// MountFiles mounts the workspace of v as an overlay of its FilesDir under
// an upper layer in the volume, owned by uid and gid (zero: the
// sandbox's), unless it is mounted already or v has no FilesDir (it is
// then a plain workspace, as before). Whatever lies in the unmounted
// workspace folder (node_modules put back there after a failed start
// without dev dependencies) is moved into the upper layer first, so it
// shows over the files. It does nothing in mode none.
func (s *Sandbox) MountFiles(v *Volume, uid, gid uint32) error {
	if s.mode == ModeNone || !v.bounded || mounted(v.Workspace) {
		return nil
	}
	lower := FilesDir(v.Path)
	if _, err := os.Stat(lower); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("volume: %w", err)
	}
	uid, gid = s.owner(uid, gid)
	upper, work := filepath.Join(v.Path, volumeUpper), filepath.Join(v.Path, volumeWork)
	for _, d := range []string{upper, work} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("volume: %w", err)
		}
	}
	if err := os.Lchown(upper, int(uid), int(gid)); err != nil {
		return fmt.Errorf("volume: %w", err)
	}
	if err := os.Chmod(upper, 0o700); err != nil { // the workspace's own mode
		return fmt.Errorf("volume: %w", err)
	}
	left, err := os.ReadDir(v.Workspace)
	if err != nil {
		return fmt.Errorf("volume: %w", err)
	}
	for _, e := range left {
		to := filepath.Join(upper, e.Name())
		if err := os.RemoveAll(to); err != nil {
			return fmt.Errorf("volume: %w", err)
		}
		if err := os.Rename(filepath.Join(v.Workspace, e.Name()), to); err != nil {
			return fmt.Errorf("volume: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := "lowerdir=" + escapeOverlay(lower) + ",upperdir=" + escapeOverlay(upper) + ",workdir=" + escapeOverlay(work)
	cmd := exec.CommandContext(ctx, sbin("mount"), "-t", "overlay", "-o", opts+",nosuid,nodev,noatime", "overlay", v.Workspace)
	cmd.Env = []string{"PATH=/usr/sbin:/sbin:/usr/bin:/bin"}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("volume: mount the workspace's files: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// escapeOverlay escapes the characters overlayfs options give a meaning.
func escapeOverlay(p string) string {
	return strings.NewReplacer(`\`, `\\`, `,`, `\,`, `:`, `\:`).Replace(p)
}

// UnmountFiles unmounts the overlay on the workspace of the volume at
// path, if there is one (a workspace stored by content, see MountFiles).
// The run that used it may have just ended, its mount namespace still
// being torn down: it waits up to 5 seconds for its last references to
// go, and fails rather than detach it lazily (a detached overlay still
// holding its upper folder would keep the next one from mounting).
func UnmountFiles(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	ws := filepath.Join(abs, volumeWorkspace)
	if !mounted(ws) {
		return nil
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := unix.Unmount(ws, 0)
		if err == nil || errors.Is(err, syscall.EINVAL) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("volume: unmount %s: %w", ws, err)
		}
	}
}
