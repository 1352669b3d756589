package sandbox

import (
	"os"
	"os/exec"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestWarmRuntimesKeepsNodeCachedThroughAnOverflow starts a node process
// in a run's cgroup with a small memory limit, lets it allocate past the
// limit, and checks that the node binary is still in the page cache
// afterwards: WarmRuntimes read it on the platform's behalf, so the run's
// reclaim could not drop it (without the warm-up the run owned the pages
// node faulted in, and the overflow dropped them: the next app started
// read them back from the disk).
func TestWarmRuntimesKeepsNodeCachedThroughAnOverflow(t *testing.T) {
	runsParents(t)
	path, err := lookRuntime("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	// Out of the page cache first (pages mapped by node processes running
	// now stay), so that what is cached afterwards is what this test put
	// there.
	fadvise(t, path, unix.FADV_DONTNEED)
	WarmRuntimes()
	deadline := time.Now().Add(20 * time.Second)
	for resident(t, path) < 0.99 {
		if time.Now().After(deadline) {
			t.Fatalf("after WarmRuntimes %.0f%% of %s is in the page cache, want all of it", 100*resident(t, path), path)
		}
		time.Sleep(50 * time.Millisecond)
	}

	cg, err := newCgroup("/sys/fs/cgroup", cgroupName(), Limits{Memory: 96 << 20, Pids: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer cg.destroy()
	// The hog waits a moment so that it is in the cgroup before it runs
	// most of node and allocates.
	cmd := exec.Command(path, "-e", `setTimeout(() => { const a = []; for (;;) a.push(Buffer.alloc(8 << 20, 1)) }, 300)`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	if err := cg.add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the hog was not ended within 30 s (without the warm-up it thrashes: the reclaim drops the node binary it runs, and it reads it back from the disk, again and again)")
	}
	if got := resident(t, path); got < 0.99 {
		t.Errorf("after a run overflowed its memory only %.0f%% of %s is still in the page cache, want all of it", 100*got, path)
	}
}

func fadvise(t *testing.T, path string, advice int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, advice); err != nil {
		t.Fatal(err)
	}
}

// resident is the share of path's pages in the page cache (mincore).
func resident(t *testing.T, path string) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, b := range vec {
		n += int(b & 1)
	}
	return float64(n) / float64(len(vec))
}
