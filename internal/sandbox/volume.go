package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Disk bounds a Volume. The kernel enforces both: a Volume is a filesystem
// of its own, so a write past Bytes fails with ENOSPC and a file past
// Inodes with ENOSPC too, whatever writes it — `.git` folders, empty files
// and hard links included (a hard link cannot leave its filesystem).
type Disk struct {
	// Bytes is the size of the filesystem (default 4 GiB). The
	// filesystem's own bookkeeping takes a little of it.
	Bytes int64
	// Inodes is the number of files, folders and links it can hold
	// (default 200,000). The kernel rounds it up to fill its inode tables
	// (a few dozen more at most) and keeps 11 for itself; it is lowered to
	// one per KiB of Bytes, so that inode tables take at most a quarter of
	// the space.
	Inodes int64
}

// DefaultDisk is the Disk used for every zero field: a build's limits.
var DefaultDisk = Disk{Bytes: 4 << 30, Inodes: 200_000}

// WithDefaults returns d with its zero fields taken from DefaultDisk.
func (d Disk) WithDefaults() Disk {
	if d.Bytes <= 0 {
		d.Bytes = DefaultDisk.Bytes
	}
	if d.Inodes <= 0 {
		d.Inodes = DefaultDisk.Inodes
	}
	return d
}

// Volume is a folder on a filesystem of its own: a sparse ext4 image file
// (Path + ".img") attached to a loop device and mounted at Path with
// nosuid and nodev. It holds two folders, Workspace (the run's /workspace)
// and Tmp (its /tmp), so that everything a build or an app writes counts
// against the same kernel-enforced Disk. The image only takes the disk
// space that is written. Its root and both folders belong to the
// sandbox user the volume was made for, mode 0700.
//
// In mode none a Volume is a plain folder with the same layout and no
// limit.
type Volume struct {
	Path      string // the mount point
	Workspace string // Path/workspace
	Tmp       string // Path/tmp
	Disk      Disk   // the limits it was made with (zero in mode none)
	bounded   bool
}

// Volume sub-folders.
const (
	volumeWorkspace = "workspace"
	volumeTmp       = "tmp"
)

// OpenVolume returns the Volume at path: with a fresh, empty filesystem
// bounded by d, owned by uid and gid (zero: the sandbox's), when none is
// there; mounted again when its image exists but is not mounted (after a
// reboot); as it is when it is mounted. The parent of path must exist and
// be searchable by the sandbox user.
func (s *Sandbox) OpenVolume(path string, d Disk, uid, gid uint32) (*Volume, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("volume: %w", err)
	}
	uid, gid = s.owner(uid, gid)
	v := &Volume{Path: abs, Workspace: filepath.Join(abs, volumeWorkspace), Tmp: filepath.Join(abs, volumeTmp)}
	if s.mode == ModeNone {
		for _, dir := range []string{v.Workspace, v.Tmp} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("volume: %w", err)
			}
		}
		return v, nil
	}
	d = d.WithDefaults()
	v.Disk, v.bounded = d, true
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("volume: %w", err)
	}
	if mounted(abs) {
		return v, nil
	}
	img := abs + ".img"
	if _, err := os.Stat(img); errors.Is(err, os.ErrNotExist) {
		if err := makeImage(img, d, uid, gid); err != nil {
			os.Remove(img)
			return nil, err
		}
	}
	if err := mountImage(img, abs); err != nil {
		return nil, err
	}
	_ = os.Remove(filepath.Join(abs, "lost+found")) // mkfs's; the user has no use for it
	for _, dir := range []string{abs, v.Workspace, v.Tmp} {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			_ = unmount(abs)
			return nil, fmt.Errorf("volume: %w", err)
		}
		if err := os.Lchown(dir, int(uid), int(gid)); err != nil {
			_ = unmount(abs)
			return nil, fmt.Errorf("volume: %w", err)
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			_ = unmount(abs)
			return nil, fmt.Errorf("volume: %w", err)
		}
	}
	return v, nil
}

// AttachVolume returns the existing Volume at path, mounting its image
// again if it is not mounted (after a reboot). Unlike OpenVolume it never
// makes a new one: a volume whose image is gone is an error.
func (s *Sandbox) AttachVolume(path string) (*Volume, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("volume: %w", err)
	}
	v := &Volume{Path: abs, Workspace: filepath.Join(abs, volumeWorkspace), Tmp: filepath.Join(abs, volumeTmp)}
	if s.mode == ModeNone {
		if _, err := os.Stat(v.Workspace); err != nil {
			return nil, fmt.Errorf("volume: %w", err)
		}
		return v, nil
	}
	v.bounded = true
	if !mounted(abs) {
		if _, err := os.Stat(abs + ".img"); err != nil {
			return nil, fmt.Errorf("volume: %w", err)
		}
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return nil, fmt.Errorf("volume: %w", err)
		}
		if err := mountImage(abs+".img", abs); err != nil {
			return nil, err
		}
	}
	if fi, err := os.Stat(abs + ".img"); err == nil {
		v.Disk.Bytes = fi.Size()
	}
	return v, nil
}

// owner returns uid and gid, or the sandbox's for zeros.
func (s *Sandbox) owner(uid, gid uint32) (uint32, uint32) {
	if uid == 0 {
		uid = s.uid
	}
	if gid == 0 {
		gid = s.gid
	}
	return uid, gid
}

// RemoveVolume unmounts the Volume at path (if it is one) and removes it,
// image and all. A folder that is no Volume (mode none, a workspace of an
// older version) is simply removed. Missing is not an error.
//
// It works in the idle I/O class (inIdleClass): removing a workspace a
// build flooded (gigabytes in one file, 200,000 files) takes from the
// sites the platform serves only the disk time they leave.
func RemoveVolume(path string) error {
	return inIdleClass(func() error { return removeVolume(path) })
}

func removeVolume(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	var errs []error
	if ws := filepath.Join(abs, volumeWorkspace); mounted(ws) {
		if err := unmount(ws); err != nil { // the overlay of its files: lazily if in use
			errs = append(errs, err)
		}
	}
	if mounted(abs) {
		if err := unmount(abs); err != nil {
			errs = append(errs, err)
		}
	}
	// The image goes first: a volume whose folder is gone is gone, and
	// nothing may find its image and mount it again meanwhile.
	if err := os.Remove(abs + ".img"); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if !mounted(abs) {
		if err := os.RemoveAll(abs); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(FilesDir(abs)); err != nil { // its links: the blobs stay for the store's sweep
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Usage is what a Volume holds.
type Usage struct {
	Bytes, FreeBytes   int64
	Inodes, FreeInodes int64
}

// Usage returns what the volume's filesystem holds and has left; zero in
// mode none.
func (v *Volume) Usage() Usage {
	if !v.bounded {
		return Usage{}
	}
	var st unix.Statfs_t
	if err := unix.Statfs(v.Path, &st); err != nil {
		return Usage{}
	}
	bs := int64(st.Bsize)
	return Usage{
		Bytes:      int64(st.Blocks-st.Bfree) * bs,
		FreeBytes:  int64(st.Bavail) * bs,
		Inodes:     int64(st.Files - st.Ffree),
		FreeInodes: int64(st.Ffree),
	}
}

// MountedUsage returns what the volume mounted at path holds and has left
// (statfs of its filesystem, as Usage), and false when no volume is
// mounted there (mode none, or its image is not attached).
func MountedUsage(path string) (Usage, bool) {
	abs, err := filepath.Abs(path)
	if err != nil || !mounted(abs) {
		return Usage{}, false
	}
	return (&Volume{Path: abs, bounded: true}).Usage(), true
}

// Full says which of the volume's limits a run has reached: "bytes" when
// (almost) no block is left, "inodes" when no inode is, "" otherwise.
// Callers ask after a run failed, to tell the student why.
func (v *Volume) Full() string {
	if !v.bounded {
		return ""
	}
	u := v.Usage()
	switch {
	case u.FreeInodes == 0:
		return "inodes"
	case u.FreeBytes < 64<<10:
		return "bytes"
	}
	return ""
}

// Resize makes the volume's filesystem size bytes, growing or shrinking
// it (never below what it holds, nor below the smallest size resize2fs
// can shrink it to: its estimate and 1 MiB): it is unmounted, checked, resized and
// mounted again, so nothing may run from it meanwhile. Server apps get
// their writable space this way: what the build left plus the app's
// allowance. The inode limit scales with the size.
func (v *Volume) Resize(ctx context.Context, bytes int64) error {
	if !v.bounded {
		return nil
	}
	img := v.Path + ".img"
	if err := UnmountFiles(v.Path); err != nil { // mounted again when its app starts
		return err
	}
	bsize := int64(4096)
	if st := (unix.Statfs_t{}); unix.Statfs(v.Path, &st) == nil && st.Bsize > 0 {
		bsize = int64(st.Bsize)
	}
	// The run that filled it has just ended: its last references (a mount
	// namespace being torn down) may take a moment to go. A lazy unmount
	// would leave the filesystem in use while it is checked and resized.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := unix.Unmount(v.Path, 0)
		if err == nil || errors.Is(err, syscall.EINVAL) {
			break
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("volume: unmount %s: %w", v.Path, err)
		}
	}
	// Unmounted here, the filesystem may still live on in a mount namespace
	// of the run that is being torn down (bubblewrap's copy of the mount):
	// checking and resizing the image then would race the kernel's own
	// writes to it, and corrupt it. Its loop device is released (mount's
	// autoclear) only when the last copy goes: wait for that.
	if err := waitLoopReleased(img, 10*time.Second); err != nil {
		if merr := mountImage(img, v.Path); merr != nil {
			return errors.Join(err, merr)
		}
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	kib := (bytes + 1023) / 1024
	var rerr error
	if out, err := exec.CommandContext(ctx, sbin("e2fsck"), "-f", "-p", img).CombinedOutput(); err != nil && !fsckOK(err) {
		rerr = fmt.Errorf("volume: check %s: %w: %s", img, err, strings.TrimSpace(string(out)))
	} else {
		kib = max(kib, minimumKiB(ctx, img, bsize))
		if out, err := exec.CommandContext(ctx, sbin("resize2fs"), img, strconv.FormatInt(kib, 10)+"K").CombinedOutput(); err != nil {
			rerr = fmt.Errorf("volume: resize %s: %w: %s", img, err, strings.TrimSpace(string(out)))
		} else if err := os.Truncate(img, kib*1024); err != nil {
			rerr = fmt.Errorf("volume: %w", err)
		} else {
			v.Disk.Bytes = kib * 1024
		}
	}
	if err := mountImage(img, v.Path); err != nil {
		return errors.Join(rerr, err)
	}
	return rerr
}

// minimumKiB is the smallest size, in KiB, resize2fs can shrink the
// checked, unmounted image img (of blocks of bsize bytes) to: its
// estimate (resize2fs -P) and 1 MiB; 0 when it cannot tell.
func minimumKiB(ctx context.Context, img string, bsize int64) int64 {
	out, err := exec.CommandContext(ctx, sbin("resize2fs"), "-P", img).Output()
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if _, n, ok := strings.Cut(line, "minimum size of the filesystem:"); ok {
			if blocks, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64); err == nil {
				return (blocks*bsize+1023)/1024 + 1024
			}
		}
	}
	return 0
}

// waitLoopReleased waits until no loop device is backed by img any more,
// for at most timeout.
func waitLoopReleased(img string, timeout time.Duration) error {
	abs, err := filepath.Abs(img)
	if err != nil {
		return fmt.Errorf("volume: %w", err)
	}
	for deadline := time.Now().Add(timeout); loopBacks(abs); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("volume: %s is still in use %s after it was unmounted", img, timeout)
		}
	}
	return nil
}

// loopBacks reports whether a loop device is backed by the file at path.
func loopBacks(path string) bool {
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil && strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)") == path {
			return true
		}
	}
	return false
}

// fsckOK reports whether e2fsck's exit status means the filesystem is
// clean (0) or was fixed (1).
func fsckOK(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == 1
}

// makeImage creates a sparse ext4 image of d.Bytes with at least d.Inodes
// inodes, no journal (a workspace is thrown away, not recovered) and no
// blocks reserved for root, its root folder owned by uid:gid.
func makeImage(img string, d Disk, uid, gid uint32) error {
	f, err := os.OpenFile(img, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("volume: %w", err)
	}
	err = f.Truncate(d.Bytes)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("volume: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Inode tables take 256 bytes an inode: at most a quarter of the space.
	inodes := min(d.Inodes, d.Bytes/1024)
	cmd := exec.CommandContext(ctx, sbin("mkfs.ext4"), "-q", "-F", "-m", "0", "-O", "^has_journal",
		"-N", strconv.FormatInt(inodes, 10),
		"-E", fmt.Sprintf("root_owner=%d:%d,lazy_itable_init=1", uid, gid), img)
	cmd.Env = []string{"PATH=/usr/sbin:/sbin:/usr/bin:/bin"}
	if out, err := cmd.CombinedOutput(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return errors.New("volume: mkfs.ext4 is not installed: run `apt-get install e2fsprogs`")
		}
		return fmt.Errorf("volume: mkfs.ext4: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// mountImage attaches img to a free loop device and mounts it at dir
// (nosuid, nodev). mount(8) sets the loop device to detach itself when it
// is unmounted.
func mountImage(img, dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Two mounts setting up loop devices at the same moment can both pick
	// the same free one, and the loser fails: it tries again.
	var err error
	for try := 0; try < 4; try++ {
		if try > 0 {
			time.Sleep(time.Duration(try) * 100 * time.Millisecond)
		}
		cmd := exec.CommandContext(ctx, sbin("mount"), "-t", "ext4", "-o", "loop,nosuid,nodev,noatime", img, dir)
		cmd.Env = []string{"PATH=/usr/sbin:/sbin:/usr/bin:/bin"}
		out, cerr := cmd.CombinedOutput()
		if cerr == nil {
			return nil
		}
		err = fmt.Errorf("volume: mount %s: %w: %s (loop devices must be available: see scripts/sandbox-ensure)", img, cerr, strings.TrimSpace(string(out)))
		if ctx.Err() != nil {
			break
		}
	}
	return err
}

// unmount unmounts dir, lazily when something still holds it (a process
// that is being killed): the filesystem goes away with its last user.
func unmount(dir string) error {
	err := unix.Unmount(dir, 0)
	if errors.Is(err, syscall.EBUSY) {
		err = unix.Unmount(dir, unix.MNT_DETACH)
	}
	if err != nil && !errors.Is(err, syscall.EINVAL) { // EINVAL: not a mount point
		return fmt.Errorf("volume: unmount %s: %w", dir, err)
	}
	return nil
}

// mounted reports whether dir is a mount point.
func mounted(dir string) bool {
	return slices.Contains(mountPoints(), dir)
}

// mountPoints lists this process's mount points, from /proc/self/mountinfo,
// in the order they were mounted.
func mountPoints() []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var points []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			points = append(points, unescapeMount(f[4]))
		}
	}
	return points
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// RemoveTree removes dir and everything under it, unmounting first the
// volumes mounted below it (the workspaces a data folder's live apps
// keep). Tests use it to clean up a platform's data folder.
func RemoveTree(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	var points []string
	for _, p := range mountPoints() {
		if strings.HasPrefix(p, abs+"/") {
			points = append(points, p)
		}
	}
	var errs []error
	for i := len(points) - 1; i >= 0; i-- { // the deepest were mounted last
		if err := unmount(points[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(abs); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// sbin finds a system tool on the PATH or in the folders system tools live
// in, which a non-login root shell's PATH may leave out; it returns name
// itself when nothing is found, for exec to report.
func sbin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p
		}
	}
	return name
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// Reown gives the files of the mounted volume v to uid:gid (zero: the
// sandbox's) when its workspace belongs to someone else: an app volume
// built under an account's sandbox uid slot that has since gone back to
// the pool (store.ReleaseSandboxSlots) runs under the account's new uid,
// which must own it. In mode none it does nothing.
func (s *Sandbox) Reown(v *Volume, uid, gid uint32) error {
	if s.mode == ModeNone {
		return nil
	}
	uid, gid = s.owner(uid, gid)
	fi, err := os.Lstat(v.Workspace)
	if err != nil {
		return fmt.Errorf("volume: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == uid && st.Gid == gid {
		return nil
	}
	// Its files stored by content too (MountFiles): the overlay comes off
	// first, so that no owner change goes through it (each would copy the
	// file up), and the links, blobs included, follow.
	if err := UnmountFiles(v.Path); err != nil {
		return fmt.Errorf("volume: %w", err)
	}
	if err := s.PrepareWorkspaceAs(v.Path, uid, gid); err != nil {
		return err
	}
	files := FilesDir(v.Path)
	err = filepath.WalkDir(files, func(p string, _ fs.DirEntry, err error) error {
		if err != nil || p == files {
			return err // the folder itself stays the platform's
		}
		return os.Lchown(p, int(uid), int(gid))
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("volume: %w", err)
	}
	return nil
}

// I/O priority classes (ioprio_set(2)).
const (
	ioprioWhoProcess = 1
	ioprioClassIdle  = 3
	ioprioClassShift = 13
)

// idleHook, when set (tests), runs on the idle thread before the work.
var idleHook func()

// inIdleClass runs f on an OS thread of its own in the idle I/O class
// (ioprio_set IOPRIO_CLASS_IDLE: the disk serves it when no one else
// asks, under schedulers that honour classes, BFQ and mq-deadline), and
// returns its error. Its CPU class stays the platform's: a thread of the
// gantry process that the scheduler left waiting (SCHED_IDLE on a busy
// machine) would hold up the Go runtime's stop-the-world pauses, and the
// edge's loops with them, while one waiting on the disk is in a system
// call, which never does.
//
// The thread's own class is put back before it is given back to the Go
// runtime, so no other goroutine inherits the idle class. The thread is
// never left to end with the goroutine: the runtime's threads are where
// runs are forked, and a run's bubblewrap gets SIGKILL (Pdeathsig) when
// the thread that forked it ends, so ending one killed whichever builds
// and apps had been started from it (TestRemoveVolumeLeavesRunsAlone).
// Lowering one's own class needs no privilege; where the kernel refuses
// either change, f runs anyway.
func inIdleClass(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		old, _, errno := syscall.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, 0, 0)
		if errno == 0 {
			_, _, errno = syscall.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, 0, ioprioClassIdle<<ioprioClassShift)
			if errno == 0 {
				defer syscall.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, 0, old)
			}
		}
		if idleHook != nil {
			idleHook()
		}
		done <- f()
	}()
	return <-done
}

// Trim gives the blocks freed inside the Volume mounted at path back to
// the disk (fstrim: the loop device punches holes in the image), so that
// what was deleted stops counting in the image's size. A folder that is
// no mounted Volume (mode none) has nothing to trim.
func Trim(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if !mounted(abs) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sbin("fstrim"), abs)
	cmd.Env = []string{"PATH=/usr/sbin:/sbin:/usr/bin:/bin"}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("volume: fstrim %s: %w: %s", abs, err, strings.TrimSpace(string(out)))
	}
	return nil
}
