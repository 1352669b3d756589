package deploy_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/events"
)

// sleepy restarts e's platform with apps sleeping after idle, behind a
// real edge on loopback that wakes them, and returns the new service, its
// table and the edge's address.
func (e *env) sleepy(idle time.Duration) (*deploy.Service, *edge.Table, string) {
	e.t.Helper()
	return e.sleepyPreviews(idle, 0)
}

// sleepyPreviews is sleepy with previews' apps sleeping after previewIdle.
func (e *env) sleepyPreviews(idle, previewIdle time.Duration) (*deploy.Service, *edge.Table, string) {
	e.t.Helper()
	e.svc.Close()
	table := edge.NewTable()
	svc := deploytest.Restarted(e.svc, table)
	svc.Hub = events.NewHub()
	svc.AppIdle, svc.PreviewIdle = idle, previewIdle
	if err := svc.Open(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { svc.Close() })
	ed := edge.New("localhost", table, "http://localhost:8080")
	ed.ConfigureWake(edge.WakeConfig{Wake: svc.Wake, PageAfter: time.Second, Timeout: 30 * time.Second})
	srv := httptest.NewServer(ed)
	e.t.Cleanup(srv.Close)
	e.svc, e.table = svc, table
	return svc, table, srv.Listener.Addr().String()
}

func fetch(t *testing.T, addr, sub, path string) (int, string) {
	t.Helper()
	code, body, _ := fetchRetry(t, addr, sub, path)
	return code, body
}

// fetchRetry is fetch that also returns the Retry-After header.
func fetchRetry(t *testing.T, addr, sub, path string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.Host = sub + ".localhost"
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Retry-After")
}

// waitAsleep waits until sub's app sleeps: the edge holds its requests
// and the store says so.
func (e *env) waitAsleep(table *edge.Table, sub, id string) {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		site, _ := table.Lookup(sub)
		d, err := e.db.FindDeployment(context.Background(), "", id)
		if err != nil {
			e.t.Fatal(err)
		}
		if site.ProxyTarget == "" && site.App != nil && d.Sleeping {
			if d.Status != gantry.DeploymentLive {
				e.t.Fatalf("a sleeping app's deployment is %q, want live", d.Status)
			}
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s did not fall asleep: %+v sleeping=%v\n%s", sub, site, d.Sleeping, strings.Join(e.logs(id), "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAppSleepsAndWakes: an app idle for AppIdle is stopped (its port
// closed, its deployment live and sleeping); the requests that come next
// are held, all answered by one wake; a platform restart keeps a sleeping
// app asleep, a wake hint wakes it; an always-on project never sleeps.
func TestAppSleepsAndWakes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("Dozy", pyApp("v1"))
	d := e.deploy(p)
	e.mustLive(d)
	svc, table, addr := e.sleepy(3 * time.Second)
	// Restored in the background after the restart.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if code, body := fetch(t, addr, "dozy", "/"); code == 200 && body == "v1 " {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("awake: %d %q", code, body)
		}
	}
	port := appAddr(t, table, "dozy")

	// Requests keep it awake.
	for range 8 {
		time.Sleep(500 * time.Millisecond)
		if code, _ := fetch(t, addr, "dozy", "/"); code != 200 {
			t.Fatalf("got %d while awake", code)
		}
	}
	if site, _ := table.Lookup("dozy"); site.ProxyTarget == "" {
		t.Fatal("an app in use fell asleep")
	}

	e.waitAsleep(table, "dozy", d.ID)
	e.waitLog(d.ID, "App asleep after 3s without a request: the next request wakes it")
	if c, err := net.Dial("tcp", port); err == nil {
		c.Close()
		t.Fatalf("a sleeping app still listens on %s", port)
	}
	if pr, _ := e.db.FindProject(ctx, e.user.ID, p.ID); !pr.Sleeping {
		t.Error("the project does not say its app sleeps")
	}

	// Held requests are all answered, by one wake.
	const n = 12
	var wg sync.WaitGroup
	codes, bodies := make([]int, n), make([]string, n)
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); codes[i], bodies[i] = fetch(t, addr, "dozy", "/") }()
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 200 || bodies[i] != "v1 " {
			t.Fatalf("held request %d: %d %q\n%s", i, codes[i], bodies[i], strings.Join(e.logs(d.ID), "\n"))
		}
	}
	t.Logf("%d requests answered %s after the app was woken", n, time.Since(start))
	if got := strings.Count(strings.Join(e.logs(d.ID), "\n"), "Woken by a request"); got != 1 {
		t.Errorf("%d wakes, want 1", got)
	}
	if got, _ := e.db.FindDeployment(ctx, "", d.ID); got.Sleeping || got.Status != gantry.DeploymentLive {
		t.Errorf("after the wake: status %q sleeping %v", got.Status, got.Sleeping)
	}

	// A restart keeps a sleeping app asleep (nothing started) until a
	// request or a wake hint comes.
	e.waitAsleep(table, "dozy", d.ID)
	svc, table, addr = e.sleepy(time.Hour)
	if site, _ := table.Lookup("dozy"); site.ProxyTarget != "" || site.App == nil {
		t.Fatalf("after a restart a sleeping app is %+v", site)
	}
	if waking, err := svc.WakeHint(ctx, "nope"); gantry.ErrorCode(err) != gantry.ENOTFOUND || waking {
		t.Errorf("hint for an unknown app: %v %v", waking, err)
	}
	if waking, err := svc.WakeHint(ctx, d.ID); err != nil || !waking {
		t.Fatalf("hint: %v %v", waking, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for site, _ := table.Lookup("dozy"); site.ProxyTarget == ""; site, _ = table.Lookup("dozy") {
		if time.Now().After(deadline) {
			t.Fatalf("the hint did not wake the app:\n%s", strings.Join(e.logs(d.ID), "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := fetch(t, addr, "dozy", "/"); code != 200 || body != "v1 " {
		t.Fatalf("after the hint: %d %q", code, body)
	}
	if waking, err := svc.WakeHint(ctx, d.ID); err != nil || waking {
		t.Errorf("hint for an awake app: %v %v", waking, err)
	}

	// Always on: it does not sleep.
	p.AlwaysOn = true
	if err := e.db.UpdateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	_, table, addr = e.sleepy(time.Second)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if code, _ := fetch(t, addr, "dozy", "/"); code == 200 {
			break
		} else if time.Now().After(deadline) {
			t.Fatal("an always-on app did not start again after the restart")
		}
	}
	time.Sleep(2500 * time.Millisecond)
	if site, _ := table.Lookup("dozy"); site.ProxyTarget == "" {
		t.Fatal("an always-on app fell asleep")
	}
	if code, _ := fetch(t, addr, "dozy", "/"); code != 200 {
		t.Fatalf("always on: %d", code)
	}
}
