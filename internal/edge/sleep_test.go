package edge_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/edge"
)

// sleeper is a sleeping app "a" of deployment "d1" and a waker that points
// it at a real app once release is closed, counting its wakes.
type sleeper struct {
	table   *edge.Table
	state   *edge.AppState
	target  string
	release chan struct{}
	wakes   atomic.Int32
	fail    bool
}

func newSleeper(t *testing.T) (*sleeper, *edge.Edge) {
	t.Helper()
	s := &sleeper{table: edge.NewTable(), target: startApp(t), release: make(chan struct{})}
	s.state = s.table.App("d1")
	s.sleep()
	e := edge.New("localhost", s.table, "http://localhost:8080")
	return s, e
}

func (s *sleeper) sleep() {
	s.table.Set("a", edge.Site{DeploymentID: "d1", Status: gantry.DeploymentLive, App: s.state})
}

func (s *sleeper) wake(ctx context.Context, id string) error {
	s.wakes.Add(1)
	if id != "d1" {
		return fmt.Errorf("woke %q", id)
	}
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.fail {
		return errors.New("app exited with code 1")
	}
	s.table.Set("a", edge.Site{DeploymentID: "d1", Status: gantry.DeploymentLive, ProxyTarget: s.target, App: s.state})
	return nil
}

// TestSleepingAppWakesAndAnswersHeldRequests: every request that arrives
// while the app sleeps is held, one wake runs, and all of them get the
// app's own answer; then requests go straight to it, on both paths.
func TestSleepingAppWakesAndAnswersHeldRequests(t *testing.T) {
	for _, m := range loopModes {
		t.Run(m.name, func(t *testing.T) {
			s, e := newSleeper(t)
			e.ConfigureWake(edge.WakeConfig{Wake: s.wake, PageAfter: 50 * time.Millisecond})
			srv := startEdge(t, e, m.on)
			const n = 40
			var wg sync.WaitGroup
			bodies := make([]string, n)
			codes := make([]int, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Browser navigations would get the waking page after
					// 50 ms: these are API clients, which wait.
					resp, body := do(t, srv.addr, "GET", "a.localhost", "/json", nil, map[string]string{"Accept": "application/json"})
					codes[i], bodies[i] = resp.StatusCode, body
				}()
			}
			waitFor(t, func() bool { return s.state.Waiting() == n })
			time.Sleep(100 * time.Millisecond) // past PageAfter: still held
			close(s.release)
			wg.Wait()
			for i := range n {
				if codes[i] != 200 || bodies[i] != `{"ok":true}` {
					t.Fatalf("request %d: %d %q", i, codes[i], bodies[i])
				}
			}
			if got := s.wakes.Load(); got != 1 {
				t.Errorf("wakes = %d, want 1", got)
			}
			before := s.state.LastRequest()
			time.Sleep(300 * time.Millisecond)
			resp, body := do(t, srv.addr, "GET", "a.localhost", "/json", nil, nil)
			if resp.StatusCode != 200 || body != `{"ok":true}` {
				t.Fatalf("awake: %d %q", resp.StatusCode, body)
			}
			if !s.state.LastRequest().After(before) {
				t.Errorf("the request clock did not move: %v then %v", before, s.state.LastRequest())
			}
			if s.wakes.Load() != 1 {
				t.Errorf("an awake app was woken again")
			}
		})
	}
}

// TestWakeQueueIsBounded: past the queue's bound a request is answered 503
// with Retry-After at once, and the held ones are still answered.
func TestWakeQueueIsBounded(t *testing.T) {
	s, e := newSleeper(t)
	e.ConfigureWake(edge.WakeConfig{Wake: s.wake, Queue: 3})
	srv := startEdge(t, e, false)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, _ := do(t, srv.addr, "GET", "a.localhost", "/json", nil, nil); resp.StatusCode != 200 {
				t.Errorf("held request: %d", resp.StatusCode)
			}
		}()
	}
	waitFor(t, func() bool { return s.state.Waiting() == 3 })
	resp, body := do(t, srv.addr, "POST", "a.localhost", "/echo", strings.NewReader("x"), nil)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "too many visitors") {
		t.Errorf("over the bound: %d Retry-After=%q %q", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	close(s.release)
	wg.Wait()
}

// TestWakingPageForBrowsers: a browser navigation that waited PageAfter
// gets the "Waking up…" page, which reloads itself; the wake goes on and
// the reload finds the app awake.
func TestWakingPageForBrowsers(t *testing.T) {
	for _, m := range loopModes {
		t.Run(m.name, func(t *testing.T) {
			s, e := newSleeper(t)
			e.ConfigureWake(edge.WakeConfig{Wake: s.wake, PageAfter: 100 * time.Millisecond})
			srv := startEdge(t, e, m.on)
			nav := map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
			start := time.Now()
			resp, body := do(t, srv.addr, "GET", "a.localhost", "/json?x=<1>", nil, nav)
			if waited := time.Since(start); waited < 100*time.Millisecond {
				t.Errorf("the waking page came after %v, before PageAfter", waited)
			}
			for _, want := range []string{"Waking up…", `http-equiv="refresh"`, "a.localhost", "prefers-color-scheme", `href="/json?x=&lt;1&gt;"`} {
				if !strings.Contains(body, want) {
					t.Errorf("waking page lacks %q:\n%s", want, body)
				}
			}
			if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("waking page: %d %v", resp.StatusCode, resp.Header)
			}
			close(s.release)
			waitFor(t, func() bool { site, _ := s.table.Lookup("a"); return site.ProxyTarget != "" })
			resp, body = do(t, srv.addr, "GET", "a.localhost", "/json", nil, nav)
			if resp.StatusCode != 200 || body != `{"ok":true}` {
				t.Errorf("reload: %d %q", resp.StatusCode, body)
			}
		})
	}
}

// TestFailedWake: an app that does not wake answers its held requests
// 503 "did not wake up yet", with Retry-After (the reload interval unless
// the waker's error says when).
func TestFailedWake(t *testing.T) {
	s, e := newSleeper(t)
	s.fail = true
	close(s.release)
	e.ConfigureWake(edge.WakeConfig{Wake: s.wake})
	srv := startEdge(t, e, false)
	resp, body := do(t, srv.addr, "GET", "a.localhost", "/json", nil, nil)
	if resp.StatusCode != 503 || !strings.Contains(body, "did not wake up") || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("failed wake: %d Retry-After %q %q", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}

// TestWakeHint: Edge.Wake starts the wake of a sleeping app without a
// request waiting, and does nothing for an awake or unknown one.
func TestWakeHint(t *testing.T) {
	s, e := newSleeper(t)
	e.ConfigureWake(edge.WakeConfig{Wake: s.wake})
	if e.Wake("nope") {
		t.Error("woke an unknown subdomain")
	}
	if !e.Wake("a") || !e.Wake("a") {
		t.Error("did not wake a sleeping app")
	}
	close(s.release)
	waitFor(t, func() bool { site, _ := s.table.Lookup("a"); return site.ProxyTarget != "" })
	if e.Wake("a") {
		t.Error("woke an awake app")
	}
	if got := s.wakes.Load(); got != 1 {
		t.Errorf("wakes = %d, want 1", got)
	}
	srv := startEdge(t, e, true)
	if resp, body := do(t, srv.addr, "GET", "a.localhost", "/json", nil, nil); resp.StatusCode != 200 {
		t.Errorf("after the hint: %d %q", resp.StatusCode, body)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
