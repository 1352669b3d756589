package deadline_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/deadline"
	"github.com/gantryhq/gantry/internal/deadline/deadlinetest"
)

// serve runs h behind deadline.Body(d) on a real loopback server.
func serve(t *testing.T, d time.Duration, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(w, deadline.Body(w, r, d))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func TestSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	readErr := make(chan error, 1)
	addr := serve(t, time.Second, func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
		if errors.Is(err, deadline.ErrSlowBody) {
			http.Error(w, "too slow", http.StatusRequestTimeout)
		}
	})
	d, got := deadlinetest.Trickle(t, addr, "POST", "x", "/")
	if d > 2500*time.Millisecond {
		t.Errorf("connection held %v, want about 1 s (the body would take 20 s)", d)
	}
	if !strings.HasPrefix(got, "HTTP/1.1 408 ") {
		t.Errorf("got %q, want a 408 answer", got)
	}
	if err := <-readErr; !errors.Is(err, deadline.ErrSlowBody) {
		t.Errorf("the handler's read failed with %v, want ErrSlowBody", err)
	}
}

// TestUnreadSlowBodyIsCutOff: net/http discards a body its handler did not
// read within the same deadline.
func TestUnreadSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	addr := serve(t, time.Second, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ignored") })
	if d, _ := deadlinetest.Trickle(t, addr, "POST", "x", "/"); d > 2500*time.Millisecond {
		t.Errorf("connection held %v, want about 1 s", d)
	}
}

// TestDeadlineLiftedAfterBody: a large body sent at once arrives whole, and
// the handler may take longer than the deadline afterwards (net/http
// lifts it at the body's end: the handler's context is not cancelled);
// the connection then serves the next request.
func TestDeadlineLiftedAfterBody(t *testing.T) {
	t.Parallel()
	addr := serve(t, time.Second, func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if r.URL.Path == "/slow" {
			select {
			case <-time.After(1500 * time.Millisecond):
			case <-r.Context().Done():
				http.Error(w, "cancelled", http.StatusInternalServerError)
				return
			}
		}
		fmt.Fprintf(w, "%d", n)
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	br := bufio.NewReader(c)
	for _, path := range []string{"/slow", "/again"} {
		body := strings.Repeat("x", 8<<20)
		go fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		got, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || string(got) != fmt.Sprint(len(body)) {
			t.Errorf("%s: got %d %q, want 200 %d", path, res.StatusCode, got, len(body))
		}
	}
}

func TestNoBodyNoDeadline(t *testing.T) {
	t.Parallel()
	r, _ := http.NewRequest("GET", "/", nil)
	if got := deadline.Body(nil, r, time.Second); got != r {
		t.Error("a request without a body was replaced")
	}
}
