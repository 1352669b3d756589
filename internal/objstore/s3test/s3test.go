// Package s3test starts a real S3-compatible server for tests: the
// in-repo cmd/s3serve (gofakes3 over a bolt file), as a process on
// loopback, which a test can stop, pause and start again to show what
// Gantry does while its object store is down.
package s3test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/objstore"
)

// Bucket is the bucket every Server creates.
const Bucket = "gantry"

// Server is one s3serve process.
type Server struct {
	t    testing.TB
	bin  string
	root string
	addr string // host:port, kept across restarts
	cmd  *exec.Cmd
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// binary returns s3serve's path: $S3SERVE_BIN, or cmd/s3serve built once
// per test process into one shared place (a build renamed into place,
// so processes building at once never run a half-written file, and runs
// leave one binary behind, not one each).
func binary(t testing.TB) string {
	if b := os.Getenv("S3SERVE_BIN"); b != "" {
		return b
	}
	buildOnce.Do(func() {
		dir := filepath.Join(os.TempDir(), "gantry-s3serve")
		if buildErr = os.MkdirAll(dir, 0o755); buildErr != nil {
			return
		}
		tmp, err := os.CreateTemp(dir, "s3serve-*")
		if err != nil {
			buildErr = err
			return
		}
		tmp.Close()
		defer os.Remove(tmp.Name())
		out, err := exec.Command("go", "build", "-o", tmp.Name(), "github.com/gantryhq/gantry/cmd/s3serve").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build cmd/s3serve: %v\n%s", err, out)
			return
		}
		builtBin = filepath.Join(dir, "s3serve")
		buildErr = os.Rename(tmp.Name(), builtBin)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// Start starts an s3serve on loopback, stopped at the test's end.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, bin: binary(t), root: t.TempDir(), addr: "127.0.0.1:0"}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	cmd := exec.Command(s.bin, "-root", s.root, "-addr", s.addr, "-bucket", Bucket)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on http://")
	if err != nil || !ok {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		s.t.Fatalf("s3serve did not start: %q %v", line, err)
	}
	s.addr, s.cmd = addr, cmd
}

// URL is the server's endpoint, http://127.0.0.1:PORT.
func (s *Server) URL() string { return "http://" + s.addr }

// ObjectStore is the GANTRY_OBJECT_STORE value for the bucket under prefix.
func (s *Server) ObjectStore(prefix string) string {
	return "s3://" + Bucket + "/" + prefix + "?endpoint=" + s.URL() + "&region=us-east-1&path_style=1"
}

// Env is what a gantry process needs to use the server under prefix:
// GANTRY_OBJECT_STORE and credentials (any are taken).
func (s *Server) Env(prefix string) []string {
	return []string{"GANTRY_OBJECT_STORE=" + s.ObjectStore(prefix),
		"AWS_ACCESS_KEY_ID=gantry-test", "AWS_SECRET_ACCESS_KEY=gantry-test-secret",
		"AWS_EC2_METADATA_DISABLED=true"}
}

// Store returns a client of the server under prefix, as Gantry makes it.
func (s *Server) Store(prefix string) *objstore.S3 {
	s.t.Helper()
	st, err := objstore.New(context.Background(), objstore.Options{Bucket: Bucket, Prefix: prefix,
		Endpoint: s.URL(), Region: "us-east-1", PathStyle: true, Timeout: 20 * time.Second,
		AccessKey: "gantry-test", SecretKey: "gantry-test-secret"})
	if err != nil {
		s.t.Fatal(err)
	}
	return st
}

// Stop kills the server (SIGKILL): connections to it are refused until
// Restart. What it stored stays in its root.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a paused one too
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the server again on the same address and data.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// Pause stops the process without closing its port (SIGSTOP): requests
// hang, as with a store that stopped answering. Resume ends it.
func (s *Server) Pause() { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }
