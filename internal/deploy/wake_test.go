package deploy_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
)

// crashyApp is pyApp, except that it exits at start-up while the variable
// CRASH is set (the project's variables are read at each start).
func crashyApp(version string) map[string]string {
	files := pyApp(version)
	files["app.py"] = "import os, sys\nif os.environ.get('CRASH'):\n    print('Error: told to crash', file=sys.stderr, flush=True)\n    sys.exit(1)\n" + files["app.py"]
	return files
}

// TestFailedWakeKeepsTheDeploymentLive: a sleeping app that does not
// start when a request wakes it leaves its deployment live and asleep;
// the request gets 503 with Retry-After, a request within the back-off
// starts nothing, the owner is notified after WakeNotifyAfter failures in
// a row, and once the app starts again a request wakes it.
func TestFailedWakeKeepsTheDeploymentLive(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("Waky", crashyApp("v1"))
	d := e.deploy(p)
	e.mustLive(d)
	rec := &recorder{}
	e.svc.Notify = rec
	_, table, addr := e.sleepy(2 * time.Second)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if code, _ := fetch(t, addr, "waky", "/"); code == 200 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("not awake after the restart: %d", code)
		}
	}
	e.waitAsleep(table, "waky", d.ID)
	rec.take()
	setCrash := func(on bool) {
		t.Helper()
		var vars []gantry.EnvVar
		if on {
			vars = []gantry.EnvVar{{Key: "CRASH", Value: "1"}}
		}
		if _, err := e.projects().SetEnv(ctx, e.user.ID, p.ID, vars); err != nil {
			t.Fatal(err)
		}
	}
	setCrash(true)
	starts := func() int { return strings.Count(strings.Join(e.logs(d.ID), "\n"), "Starting the app") }
	for failures := 1; failures <= deploy.WakeNotifyAfter; failures++ {
		before := starts()
		code, body, retry := fetchRetry(t, addr, "waky", "/")
		if code != http.StatusServiceUnavailable || retry == "" || !strings.Contains(body, "did not wake up") {
			t.Fatalf("wake %d of a broken app: %d Retry-After %q\n%s", failures, code, retry, body)
		}
		if starts() != before+1 {
			t.Fatalf("wake %d started the app %d times", failures, starts()-before)
		}
		got, err := e.db.FindDeployment(ctx, "", d.ID)
		if err != nil || got.Status != gantry.DeploymentLive || !got.Sleeping {
			t.Fatalf("after failed wake %d: %s sleeping=%v (%v)", failures, got.Status, got.Sleeping, err)
		}
		if site, _ := table.Lookup("waky"); site.ProxyTarget != "" || site.App == nil || site.Status != gantry.DeploymentLive {
			t.Fatalf("after failed wake %d the site is %+v, want asleep", failures, site)
		}
		// Within the back-off a request starts nothing.
		if code, _, retry2 := fetchRetry(t, addr, "waky", "/"); code != http.StatusServiceUnavailable || retry2 == "" || starts() != before+1 {
			t.Fatalf("a request within the back-off: %d Retry-After %q, %d starts", code, retry2, starts()-before)
		}
		secs, err := strconv.Atoi(retry)
		if err != nil || secs < 1 || secs > 60 {
			t.Fatalf("Retry-After %q", retry)
		}
		lines, _ := rec.take()
		if failures < deploy.WakeNotifyAfter && len(lines) != 0 {
			t.Fatalf("notified after %d failures: %v", failures, lines)
		}
		if failures == deploy.WakeNotifyAfter {
			if want := "error App does not wake up /deployments/" + d.ID; len(lines) != 1 || lines[0] != want {
				t.Fatalf("after %d failures notified %v, want %q", failures, lines, want)
			}
		} else {
			time.Sleep(time.Duration(secs) * time.Second)
		}
	}
	e.waitLog(d.ID, fmt.Sprintf("The app did not start when a request woke it (%d times in a row)", deploy.WakeNotifyAfter))

	// Fixed: once the back-off has passed, a request wakes it.
	setCrash(false)
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		code, body, _ := fetchRetry(t, addr, "waky", "/")
		if code == 200 && body == "v1 " {
			break
		}
		if code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("after the fix: %d %q\n%s", code, body, strings.Join(e.logs(d.ID), "\n"))
		}
	}
	if got, _ := e.db.FindDeployment(ctx, "", d.ID); got.Status != gantry.DeploymentLive || got.Sleeping {
		t.Fatalf("after the wake: %s sleeping=%v", got.Status, got.Sleeping)
	}
}

// TestWakesAreLimitedPerAccount: requests to every sleeping app of an
// account at once start them one at a time (AccountWakes 1): no two
// starts overlap, and every request is answered by its app.
func TestWakesAreLimitedPerAccount(t *testing.T) {
	e := newEnv(t)
	e.withPlan(5)
	var subs []string
	var ids []string
	for i := range 3 {
		p := e.project(fmt.Sprintf("Herd%d", i), pyApp(fmt.Sprintf("h%d", i)))
		d := e.deploy(p)
		e.mustLive(d)
		subs, ids = append(subs, p.Subdomain), append(ids, d.ID)
	}
	e.svc.AccountWakes = 1
	_, table, addr := e.sleepy(2 * time.Second)
	for i, sub := range subs {
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if code, _ := fetch(t, addr, sub, "/"); code == 200 {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("%s not awake after the restart: %d", sub, code)
			}
		}
		_ = i
	}
	for i, sub := range subs {
		e.waitAsleep(table, sub, ids[i])
	}
	var wg sync.WaitGroup
	codes, bodies := make([]int, len(subs)), make([]string, len(subs))
	for i, sub := range subs {
		wg.Go(func() { codes[i], bodies[i] = fetch(t, addr, sub, "/") })
	}
	wg.Wait()
	type span struct{ from, to time.Time }
	var spans []span
	for i := range subs {
		if codes[i] != 200 || bodies[i] != fmt.Sprintf("h%d ", i) {
			t.Fatalf("%s: %d %q", subs[i], codes[i], bodies[i])
		}
		logs, err := e.db.Logs(context.Background(), ids[i], 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The wake's start: its last "Starting the app" and the answer after it.
		var sp span
		for _, l := range logs {
			switch {
			case strings.HasPrefix(l.Message, "Starting the app"):
				sp = span{from: l.Timestamp}
			case strings.HasPrefix(l.Message, "App answered"):
				sp.to = l.Timestamp
			}
		}
		if sp.from.IsZero() || sp.to.IsZero() {
			t.Fatalf("%s: no start in its log", subs[i])
		}
		spans = append(spans, sp)
	}
	for i := range spans {
		for j := range spans {
			if i != j && spans[i].from.Before(spans[j].to) && spans[j].from.Before(spans[i].to) {
				t.Fatalf("the wakes of %s (%v–%v) and %s (%v–%v) overlap with AccountWakes 1", subs[i],
					spans[i].from.Format("15:04:05.000"), spans[i].to.Format("15:04:05.000"), subs[j],
					spans[j].from.Format("15:04:05.000"), spans[j].to.Format("15:04:05.000"))
			}
		}
	}
}
