package edge

import (
	"errors"
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// siteRoot is a site's folder, open, through which every file is opened so
// that nothing outside it can be reached: no ".." beyond it, no symlink
// (absolute or relative) resolving outside it, no /proc magic link.
//
// Where the kernel has openat2 (Linux 5.6+), files are opened with
// RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS in a single system call; os.Root,
// which gives the same guarantee with a few calls per path component, is
// used otherwise and for Stat.
type siteRoot struct {
	root *os.Root
	dirf *os.File        // the folder opened O_PATH, or nil
	dir  syscall.RawConn // dirf's, for openat2 under its reference count
	// closed is set by Close: the edge's loops then drop the files they
	// keep open under it.
	closed atomic.Bool
}

// openat2Missing is set once openat2 is found unavailable (old kernel,
// seccomp filter).
var openat2Missing atomic.Bool

// openSiteRoot opens dir; withOpenat2 also prepares the one-call opens
// (worth it for folders kept open).
func openSiteRoot(dir string, withOpenat2 bool) (*siteRoot, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	s := &siteRoot{root: r}
	if withOpenat2 && !openat2Missing.Load() {
		if fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			s.dirf = os.NewFile(uintptr(fd), dir)
			if s.dir, err = s.dirf.SyscallConn(); err != nil {
				s.dirf.Close()
				s.dirf, s.dir = nil, nil
			}
		}
	}
	return s, nil
}

// Open opens name, a slash-separated path relative to the folder, for
// reading. It returns an error wrapping os.ErrClosed once Close was called.
func (s *siteRoot) Open(name string) (*os.File, error) {
	if s.dir != nil && !openat2Missing.Load() {
		var fd int
		var oerr error
		how := unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
		}
		if err := s.dir.Control(func(dfd uintptr) { fd, oerr = unix.Openat2(int(dfd), name, &how) }); err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: os.ErrClosed}
		}
		switch {
		case oerr == nil:
			return os.NewFile(uintptr(fd), name), nil
		case errors.Is(oerr, unix.ENOSYS):
			openat2Missing.Store(true)
		case errors.Is(oerr, unix.EPERM), errors.Is(oerr, unix.EAGAIN), errors.Is(oerr, unix.EINTR):
			// A seccomp filter refusing openat2, or a concurrent rename
			// or mount: let os.Root resolve it.
		default:
			return nil, &fs.PathError{Op: "openat2", Path: name, Err: oerr}
		}
	}
	return s.root.Open(name)
}

// openStat opens name for the edge's loops, as Open does, and returns the
// bare descriptor (the caller closes it) and its fstat. It needs openat2
// and fails (fs.ErrInvalid) where that is missing; the loop then leaves
// the request to net/http.
func (s *siteRoot) openStat(name string) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	if s.dir == nil || openat2Missing.Load() {
		return -1, st, fs.ErrInvalid
	}
	fd, oerr := -1, error(nil)
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	if err := s.dir.Control(func(dfd uintptr) { fd, oerr = unix.Openat2(int(dfd), name, &how) }); err != nil {
		return -1, st, os.ErrClosed
	}
	if oerr != nil {
		return -1, st, oerr
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, st, err
	}
	return fd, st, nil
}

// Stat returns the FileInfo of name, following symlinks inside the folder.
func (s *siteRoot) Stat(name string) (fs.FileInfo, error) { return s.root.Stat(name) }

// Close closes the folder; opens in progress finish first.
func (s *siteRoot) Close() error {
	s.closed.Store(true)
	if s.dirf != nil {
		s.dirf.Close()
	}
	return s.root.Close()
}
