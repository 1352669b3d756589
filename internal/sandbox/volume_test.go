package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/sandbox"
)

// volume makes a small kernel-limited volume under a platform-like data
// folder, removed when the test ends.
func volume(tb testing.TB, s *sandbox.Sandbox, d sandbox.Disk, uid uint32) *sandbox.Volume {
	tb.Helper()
	data := platformDir(tb)
	v, err := s.OpenVolume(filepath.Join(data, "builds", "v"), d, uid, uid)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := sandbox.RemoveVolume(v.Path); err != nil {
			tb.Errorf("remove volume: %v", err)
		}
	})
	return v
}

func runIn(tb testing.TB, s *sandbox.Sandbox, v *sandbox.Volume, uid uint32, script string) (*capture, error) {
	tb.Helper()
	c := &capture{}
	_, err := s.Run(context.Background(), sandbox.Command{
		Args: []string{"sh", "-c", script}, Dir: v.Workspace, Tmp: v.Tmp, UID: uid, GID: uid,
		Limits: sandbox.Limits{Timeout: 60 * 1e9, Memory: 256 << 20}, Output: c.fn,
	})
	return c, err
}

// TestVolumeDiskLimit writes past a 64 MiB limit the ways a poller missed:
// into a folder named .git, through hard links, in /tmp. The kernel stops
// each at the limit.
func TestVolumeDiskLimit(t *testing.T) {
	s := mustSandbox(t)
	v := volume(t, s, sandbox.Disk{Bytes: 64 << 20, Inodes: 500}, 0)
	out, err := runIn(t, s, v, 0, `mkdir -p x/.git && for i in 1 2 3 4; do head -c 30M /dev/zero > x/.git/f$i || exit 7; done`)
	if err == nil {
		t.Fatalf("120 MiB into .git under a 64 MiB limit succeeded:\n%s", out)
	}
	if !strings.Contains(out.String(), "No space left on device") {
		t.Errorf("the write did not fail with ENOSPC:\n%s", out)
	}
	if got := v.Full(); got != "bytes" {
		t.Errorf("Full() = %q, want bytes", got)
	}
	if u := v.Usage(); u.Bytes > 64<<20 {
		t.Errorf("the volume holds %d bytes, over its 64 MiB", u.Bytes)
	}
	// /tmp is the same filesystem: full too.
	out, err = runIn(t, s, v, 0, `rm -rf x && head -c 40M /dev/zero > /tmp/a && head -c 40M /dev/zero > /tmp/b`)
	if err == nil || !strings.Contains(out.String(), "No space left on device") {
		t.Fatalf("80 MiB into /tmp under a 64 MiB limit: err %v\n%s", err, out)
	}
	// Hard links cannot leave the filesystem, and /workspace is its own.
	out, err = runIn(t, s, v, 0, `ln /usr/bin/sh here 2>&1; echo "exit $?"`)
	if err != nil || !strings.Contains(out.String(), "exit 1") {
		t.Fatalf("a hard link into the workspace from outside: err %v\n%s", err, out)
	}
}

// TestVolumeInodeLimit creates empty files until the kernel says no: a
// poller that counts bytes saw nothing.
func TestVolumeInodeLimit(t *testing.T) {
	s := mustSandbox(t)
	v := volume(t, s, sandbox.Disk{Bytes: 64 << 20, Inodes: 500}, 0)
	out, err := runIn(t, s, v, 0, `seq 1 2000 | xargs touch`)
	if err == nil {
		t.Fatalf("2000 empty files under a 500-inode limit succeeded:\n%s", out)
	}
	if got := v.Full(); got != "inodes" {
		t.Errorf("Full() = %q, want inodes\n%s", got, out)
	}
	n, _ := os.ReadDir(v.Workspace)
	if len(n) > 520 || len(n) < 400 {
		t.Errorf("%d files were created under a 500-inode limit", len(n))
	}
}

// TestVolumeOwnership: a volume belongs to the uid it was made for, mode
// 0700, so no other account's uid can enter it.
func TestVolumeOwnership(t *testing.T) {
	s := mustSandbox(t)
	const uid = 10077
	v := volume(t, s, sandbox.Disk{Bytes: 32 << 20, Inodes: 200}, uid)
	for _, dir := range []string{v.Path, v.Workspace, v.Tmp} {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != uid || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: uid %d mode %o, want %d 0700", dir, st.Uid, fi.Mode().Perm(), uid)
		}
	}
	out, err := runIn(t, s, v, uid, `id -u; echo hi > f; ls -ln f`)
	if err != nil || !strings.Contains(out.String(), " 10077 10077 ") {
		t.Fatalf("run as %d: %v\n%s", uid, err, out)
	}
	if _, err := os.Stat(filepath.Join(v.Path, "lost+found")); err == nil {
		t.Error("lost+found is left in the volume")
	}
}

// TestVolumeResize shrinks a volume to what it holds plus an allowance, as
// a server app gets, and keeps its files.
func TestVolumeResize(t *testing.T) {
	s := mustSandbox(t)
	v := volume(t, s, sandbox.Disk{Bytes: 128 << 20, Inodes: 2000}, 0)
	if out, err := runIn(t, s, v, 0, `head -c 5M /dev/urandom > keep`); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := v.Resize(context.Background(), 32<<20); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(v.Workspace, "keep")); err != nil || fi.Size() != 5<<20 {
		t.Fatalf("the file did not survive the resize: %v", err)
	}
	out, err := runIn(t, s, v, 0, `head -c 40M /dev/zero > big`)
	if err == nil || !strings.Contains(out.String(), "No space left") {
		t.Fatalf("40 MiB after shrinking to 32 MiB: %v\n%s", err, out)
	}
}

// TestRemoveVolume leaves nothing: no mount, no image, no folder.
func TestRemoveVolume(t *testing.T) {
	s := mustSandbox(t)
	data := platformDir(t)
	path := filepath.Join(data, "builds", "r")
	v, err := s.OpenVolume(path, sandbox.Disk{Bytes: 16 << 20, Inodes: 100}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v.Workspace, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sandbox.RemoveVolume(path); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + ".img"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is left", p)
		}
	}
	b, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(b), path) {
		t.Errorf("%s is still mounted", path)
	}
}

// TestTenantsCannotReachEachOther runs one account's app (a sleeper) and
// then another account's build beside it: the build sees none of the app's
// processes or files, and even with the app's host pid in hand — as after
// an escape from its namespaces — its uid may not signal the app.
func TestTenantsCannotReachEachOther(t *testing.T) {
	s := mustSandbox(t)
	const uidA, uidB = 10101, 10102
	a := volume(t, s, sandbox.Disk{Bytes: 16 << 20, Inodes: 100}, uidA)
	data := platformDir(t)
	b, err := s.OpenVolume(filepath.Join(data, "builds", "b"), sandbox.Disk{Bytes: 16 << 20, Inodes: 100}, uidB, uidB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sandbox.RemoveVolume(b.Path) })
	if err := os.WriteFile(filepath.Join(a.Workspace, "secret.txt"), []byte("tenant A"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(a.Workspace, "secret.txt"), uidA, uidA); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	appDone := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, sandbox.Command{Args: []string{"sleep", "313"}, Dir: a.Workspace, Tmp: a.Tmp, UID: uidA, GID: uidA,
			Limits: sandbox.Limits{Memory: 64 << 20, Pids: 16}})
		appDone <- err
	}()
	var appPid int
	for i := 0; i < 200 && appPid == 0; i++ {
		for _, p := range processesMatching(t, "sleep 313") {
			pid, _, _ := strings.Cut(p, ":")
			if st, err := os.Stat("/proc/" + pid); err == nil && st.Sys().(*syscall.Stat_t).Uid == uidA {
				fmt.Sscan(pid, &appPid)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if appPid == 0 {
		t.Fatal("the app did not start as its account's uid")
	}

	out, err := runIn(t, s, b, uidB, fmt.Sprintf(`id -u; ls /proc | grep -c '^[0-9]'; kill -9 %d 2>&1; ls /proc/%d 2>&1; cat %s 2>&1; true`,
		appPid, appPid, filepath.Join(a.Workspace, "secret.txt")))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := out.String()
	if !strings.Contains(text, "10102") || strings.Contains(text, "tenant A") {
		t.Fatalf("the build ran as the wrong uid or read the app's file:\n%s", text)
	}
	// As the other account's uid on the host itself: the kernel refuses.
	// (A pid that is gone by then, "No such process", proves nothing: the
	// app's process is looked up again and the kill tried on it.)
	for try := 0; ; try++ {
		kill := exec.Command("kill", "-9", fmt.Sprint(appPid))
		kill.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uidB, Gid: uidB}}
		msg, err := kill.CombinedOutput()
		if err != nil && strings.Contains(string(msg), "not permitted") {
			break
		}
		if _, gone := os.Stat(fmt.Sprintf("/proc/%d", appPid)); err == nil || gone == nil || try == 20 {
			t.Fatalf("uid %d signalled uid %d's app: %v %s", uidB, uidA, err, msg)
		}
		time.Sleep(50 * time.Millisecond)
		for _, p := range processesMatching(t, "sleep 313") {
			pid, _, _ := strings.Cut(p, ":")
			if st, err := os.Stat("/proc/" + pid); err == nil && st.Sys().(*syscall.Stat_t).Uid == uidA {
				fmt.Sscan(pid, &appPid)
			}
		}
	}
	read := exec.Command("cat", filepath.Join(a.Workspace, "secret.txt"))
	read.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uidB, Gid: uidB}}
	if msg, err := read.CombinedOutput(); err == nil {
		t.Fatalf("uid %d read uid %d's workspace: %s", uidB, uidA, msg)
	}
	select {
	case err := <-appDone:
		t.Fatalf("the app ended while the other tenant tried to reach it: %v", err)
	default:
	}
	cancel()
	<-appDone
}
