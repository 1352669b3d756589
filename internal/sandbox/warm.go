package sandbox

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SharedRuntimes are the interpreters that many runs share (found in Path):
// WarmRuntimes keeps their files in the page cache on the platform's
// behalf.
var SharedRuntimes = []string{"node", "python3"}

// WarmRuntimes reads the parts of the files of SharedRuntimes that are
// not in the page cache into it, on behalf of the calling process: it
// maps each file, asks the kernel which pages are in the cache (mincore:
// about 0.1 ms for node's 94 MB when all of them are) and reads the
// missing ones. Run calls it before each run; one call at a time.
//
// The kernel charges a page of the page cache to the memory cgroup of the
// process that first read it, and a cgroup that reaches its memory limit
// reclaims its own pages first. Without this, the first run to start node
// after its pages left the cache owned them: when that app allocated past
// its limit, the reclaim dropped the node binary itself, and every app
// started next (the crashed one, a woken one) read it back from a disk
// that the restarts' file systems kept busy — two to six seconds of page
// faults for a start that takes 0.1 s. Read by the platform, the pages
// are charged to the platform's cgroup, which no run's limit reclaims.
// (POSIX_FADV_WILLNEED would not do: it reads one read-ahead window.)
func WarmRuntimes() {
	warmMu.Lock()
	defer warmMu.Unlock()
	for _, name := range SharedRuntimes {
		if path, err := lookRuntime(name); err == nil {
			warm(path)
		}
	}
}

var warmMu sync.Mutex

// warm reads the pages of path that are not in the page cache.
func warm(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return
	}
	// The missing pages are read with pread, not through the mapping: a
	// file cut short meanwhile (an upgrade writing in place) then gives a
	// short read, not a SIGBUS.
	var buf []byte
	for i := 0; i < len(vec); {
		if vec[i]&1 != 0 {
			i++
			continue
		}
		j := i
		for j < len(vec) && vec[j]&1 == 0 && j-i < warmChunk/page {
			j++
		}
		if buf == nil {
			buf = make([]byte, warmChunk)
		}
		if _, err := f.ReadAt(buf[:(j-i)*page], int64(i*page)); err != nil && !errors.Is(err, io.EOF) {
			return
		}
		i = j
	}
}

// warmChunk is the most warm reads at once.
const warmChunk = 256 << 10

// lookRuntime finds name in Path, the PATH runs get, and resolves its
// symbolic links (node is often one), so that the real file is warmed.
func lookRuntime(name string) (string, error) {
	for _, dir := range strings.Split(Path, ":") {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return filepath.EvalSymlinks(p)
		}
	}
	return "", exec.ErrNotFound
}
