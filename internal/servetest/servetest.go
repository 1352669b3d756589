// Package servetest runs `gantry serve` as a real process for tests that
// kill, pause and restart it (cmd/gantry's restart tests, the replicas of
// internal/clustertest), and calls its API.
package servetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Start starts cmd, a `gantry serve` process (name, in failures) whose stdout and stderr go
// to logs, and waits up to wait for its "listening" log line: it returns
// the base URL of that address (http://host:port) and a channel closed
// once the process has ended; the process is killed when the test ends.
// It fails tb, with the logs, when the
// process exits first or does not listen in time.
func Start(tb testing.TB, name string, cmd *exec.Cmd, logs *LockedBuffer, wait time.Duration) (base string, done <-chan struct{}) {
	tb.Helper()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = logs, io.MultiWriter(logs, pw)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { _ = cmd.Wait(); pw.Close(); close(ended) }()
	tb.Cleanup(func() { // a paused process ends too
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-ended
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "msg=listening addr="); i >= 0 {
				select {
				case found <- strings.Fields(sc.Text()[i+len("msg=listening addr="):])[0]:
				default:
				}
			}
		}
	}()
	select {
	case addr := <-found:
		return "http://" + addr, ended
	case <-ended:
		tb.Fatalf("%s exited at start (%s):\n%s", name, cmd.ProcessState, logs.String())
	case <-time.After(wait):
		tb.Fatalf("%s did not start within %s:\n%s", name, wait, logs.String())
	}
	return "", ended
}

// Call sends one API request to base (a JSON body when body is not
// empty, the bearer token when token is not), decodes the envelope's data
// into out when it is not nil, and returns the status.
func Call(tb testing.TB, base, method, path, token, body string, out any) int {
	tb.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, base+path, err)
	}
	defer res.Body.Close()
	var env struct{ Data json.RawMessage }
	_ = json.NewDecoder(res.Body).Decode(&env)
	if out != nil && env.Data != nil {
		_ = json.Unmarshal(env.Data, out)
	}
	return res.StatusCode
}

// LockedBuffer is a bytes.Buffer safe for concurrent use: a process's
// log, written by its pipes while the test reads it.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
