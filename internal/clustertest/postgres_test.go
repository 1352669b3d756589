package clustertest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// apiBound is how long a signed-in call may wait for a database that
// does not answer (api.SessionTimeout).
const apiBound = 10 * time.Second

// pgServer is the throwaway PostgreSQL cluster scripts/with-postgres runs
// (Debian's pg_virtualenv, which exports PG_CLUSTER_CONF_ROOT and PGPORT):
// the test stops it and starts it again, same port, same data.
type pgServer struct {
	t                *testing.T
	version, cluster string
}

// postgresServer finds the cluster scripts/with-postgres started, and
// starts it again when the test ends if it is stopped; it skips t when
// the tests run on another server.
func postgresServer(t *testing.T) *pgServer {
	t.Helper()
	if os.Getenv("PG_CLUSTER_CONF_ROOT") == "" {
		t.Skip("stopping PostgreSQL needs the cluster scripts/with-postgres starts (run make test-cluster)")
	}
	out, err := exec.Command("pg_lsclusters", "--no-header").Output()
	if err != nil {
		t.Fatalf("pg_lsclusters: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[2] == os.Getenv("PGPORT") {
			pg := &pgServer{t: t, version: f[0], cluster: f[1]}
			t.Cleanup(func() { pg.ctl("start") }) // a failed test leaves it running for the next
			return pg
		}
	}
	t.Fatalf("no PostgreSQL cluster on port %s in:\n%s", os.Getenv("PGPORT"), out)
	return nil
}

// ctl runs pg_ctlcluster's action (stop: fast shutdown, ending every
// connection; start: waits until it accepts them).
func (pg *pgServer) ctl(action string) {
	args := []string{pg.version, pg.cluster, action}
	if action == "stop" {
		args = append(args, "-m", "fast")
	}
	out, err := exec.Command("pg_ctlcluster", args...).CombinedOutput()
	if err != nil && !(action == "start" && strings.Contains(string(out), "already running")) {
		pg.t.Errorf("pg_ctlcluster %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// freeze pauses (SIGSTOP) every process of the server, as a server cut
// off by the network or hung looks to its clients: connections are
// taken, nothing is answered. thaw resumes them.
func (pg *pgServer) freeze() { pg.signal(syscall.SIGSTOP) }
func (pg *pgServer) thaw()   { pg.signal(syscall.SIGCONT) }

func (pg *pgServer) signal(sig syscall.Signal) {
	out, err := exec.Command("pg_lsclusters", "--no-header", pg.version, pg.cluster).Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) < 6 {
		pg.t.Fatalf("pg_lsclusters %s %s: %v %q", pg.version, pg.cluster, err, out)
	}
	pidFile, err := os.ReadFile(filepath.Join(f[5], "postmaster.pid"))
	if err != nil {
		pg.t.Fatal(err)
	}
	postmaster, _ := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, _ := strconv.Atoi(filepath.Base(p))
		if pid == postmaster || parentOf(pid) == postmaster {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// get asks r for path on host (the edge for a site's host, the API for
// the public one) and returns the status and body; status 0 when no
// answer came within the client's timeout.
func get(client *http.Client, r *replica, host, path, token string) (int, string) {
	req, _ := http.NewRequest("GET", r.base+path, nil)
	req.Host = host
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// deployBuilding queues a deployment of the project through r with
// another build command, for this deployment only.
func deployBuilding(t *testing.T, r *replica, token, projectID, buildCommand string) string {
	t.Helper()
	var d struct {
		Deployment struct {
			ID string `json:"_id"`
		}
	}
	body := fmt.Sprintf(`{"projectId":%q,"buildCommand":%q}`, projectID, buildCommand)
	if code := r.call(t, "POST", "/api/deployments", token, body, &d); code != 201 {
		t.Fatalf("deploy: %d", code)
	}
	return d.Deployment.ID
}

// followResuming reads the deployment's log stream on r as the web app
// does: from the first line, and again from the last line it got
// (Last-Event-ID) whenever the stream ends or cannot be opened, until ctx
// ends.
func followResuming(ctx context.Context, r *replica, token, id string, mu *sync.Mutex, got *[]received) {
	for ctx.Err() == nil {
		mu.Lock()
		last := int64(0)
		if n := len(*got); n > 0 {
			last = (*got)[n-1].Seq
		}
		mu.Unlock()
		streamFrom(ctx, r, token, id, last, mu, got)
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// TestPostgresRestarted (B9): PostgreSQL is stopped for a few leases while
// two replicas serve, then started again on the same port and data.
// Meanwhile every replica's edge serves every site it served before,
// unchanged, and the API answers 503 with a message at once rather than
// claiming an internal error (or, signing in, too many attempts). Once it is back, a build that was running
// when it stopped goes live once (attempt 2: its builder could not renew
// the lease), a build queued afterwards goes live, and the build's log
// followed on A across the restart (resuming from the last line it got)
// has every line B stored, in order, once. Then PostgreSQL freezes
// (SIGSTOP: it takes connections and answers nothing, as a server cut off
// looks): the edges still answer as before, and a signed-in call answers
// 503 within 10 s rather than hanging. Thawed, a rollback made through A
// is served by B within 2 s (B's change feed listens again).
//
// Only B builds (A leaves out the builder role); A fetches the sites from
// the object store the two share.
func TestPostgresRestarted(t *testing.T) {
	pg := postgresServer(t)
	c, _ := objectStoreCluster(t)
	a := c.startWith("a", map[string]string{"GANTRY_ROLES": "api,edge,runner"})
	b := c.start("b")
	token := register(t, a, "pat")
	url, cmd := c.slowSite("pat", "site", 10, "first")
	p := createProject(t, a, token, url, "site", cmd)
	v1 := deploy(t, a, token, p.ID)
	if d := waitDone(t, a, token, v1, 90*time.Second); d.Status != "live" {
		t.Fatalf("first deployment: %s\n%s", d.Status, d.log())
	}
	v2 := deployBuilding(t, a, token, p.ID, "node build.js 10 second")
	if d := waitDone(t, a, token, v2, 90*time.Second); d.Status != "live" {
		t.Fatalf("second deployment: %s\n%s", d.Status, d.log())
	}
	host := p.Subdomain + ".localhost:8080"
	client := &http.Client{Timeout: 10 * time.Second}
	before := map[*replica]string{}
	for _, r := range []*replica{a, b} {
		waitServed(t, r, p.Subdomain, "second", goLiveBound)
		code, body := get(client, r, host, "/", "")
		before[r] = fmt.Sprintf("%d %s", code, body)
	}

	// A slow build, running on B when PostgreSQL stops; its log followed on A.
	slowURL, slowCmd := c.slowSite("pat", "slow", 5004, "slow-done")
	slow := createProject(t, a, token, slowURL, "slow", slowCmd)
	running := deploy(t, a, token, slow.ID)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var followed []received
	go followResuming(ctx, a, token, running, &mu, &followed)
	builder(t, "build.js 5004", 60*time.Second, b)

	pg.ctl("stop")
	down := time.Now()
	// While it is down (3 leases): the edges answer as before, every time.
	var apiChecked bool
	for n := 0; time.Since(down) < 3*lease; n++ {
		for _, r := range []*replica{a, b} {
			code, body := get(client, r, host, "/", "")
			if got := fmt.Sprintf("%d %s", code, body); got != before[r] {
				t.Fatalf("replica %s's edge answered %q %s after PostgreSQL stopped (request %d); before: %q",
					r.node, got, time.Since(down).Round(time.Millisecond), n, before[r])
			}
		}
		if !apiChecked {
			apiChecked = true
			for _, r := range []*replica{a, b} {
				start := time.Now()
				code, body := get(client, r, "127.0.0.1", "/api/deployments/"+v2, token)
				var env struct {
					Success *bool
					Message string
				}
				_ = json.Unmarshal([]byte(body), &env)
				if code != 503 || env.Success == nil || *env.Success || !strings.Contains(env.Message, "database") ||
					time.Since(start) > 3*time.Second {
					t.Fatalf("replica %s's API with PostgreSQL stopped: %d %q after %s; want 503 saying the database is unavailable, within 3 s",
						r.node, code, body, time.Since(start).Round(time.Millisecond))
				}
				t.Logf("replica %s's API with PostgreSQL stopped: %d in %s", r.node, code, time.Since(start).Round(time.Millisecond))
			}
			// Signing in: not "too many attempts" for want of the limits' buckets.
			req, _ := http.NewRequest("POST", a.base+"/api/auth/login", strings.NewReader(`{"email":"pat@example.com","password":"secret123"}`))
			req.Header.Set("Content-Type", "application/json")
			if res, err := client.Do(req); err != nil {
				t.Fatalf("sign in on a with PostgreSQL stopped: %v", err)
			} else {
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 503 || !strings.Contains(string(body), "database") {
					t.Fatalf("sign in on a with PostgreSQL stopped: %d %s, want 503 saying the database is unavailable", res.StatusCode, body)
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	pg.ctl("start")
	up := time.Now()
	for deadline := up.Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		codeA, _ := get(client, a, "127.0.0.1", "/api/deployments/"+v2, token)
		codeB, _ := get(client, b, "127.0.0.1", "/api/deployments/"+v2, token)
		if codeA == 200 && codeB == 200 {
			t.Logf("both APIs answer again %s after PostgreSQL started", time.Since(up).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("15 s after PostgreSQL started again the APIs answer %d (a) and %d (b)", codeA, codeB)
		}
	}

	// The build running when PostgreSQL stopped, and one queued now.
	after := deployBuilding(t, a, token, p.ID, "node build.js 10 third")
	d := waitDone(t, a, token, running, 90*time.Second)
	if d.Status != "live" || strings.Count(d.log(), "Deployment is live") != 1 {
		t.Fatalf("the build running when PostgreSQL stopped: %s, want live once\n%s", d.Status, d.log())
	}
	node, attempt := c.claim(running)
	t.Logf("the build running when PostgreSQL stopped went live as attempt %d on %s", attempt, node)
	if d := waitDone(t, a, token, after, 90*time.Second); d.Status != "live" {
		t.Fatalf("a build queued after PostgreSQL restarted: %s\n%s", d.Status, d.log())
	}
	var live int
	if err := c.db.QueryRow("SELECT count(*) FROM deployments WHERE project_id = $1 AND status = 'live'", slow.ID).Scan(&live); err != nil || live != 1 {
		t.Fatalf("live deployments of the slow project: %d (%v), want 1", live, err)
	}

	// A's stream of that build, resumed across the restart.
	var stored struct{ Logs []received }
	b.call(t, "GET", "/api/deployments/"+running+"/logs?limit=5000", token, "", &stored)
	var want, got []int64
	for _, l := range stored.Logs {
		want = append(want, l.Seq)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		got = got[:0]
		for _, l := range followed {
			got = append(got, l.Seq)
		}
		mu.Unlock()
		if slices.Equal(got, want) || time.Now().After(deadline) {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("replica a's stream of the build, resumed across the restart, delivered seqs %v; b stored %v", got, want)
	}

	// Frozen (SIGSTOP: it takes connections and answers nothing, as when
	// cut off): the edges answer as before, and a signed-in call answers
	// 503 once its session check gave up, never hanging.
	for _, r := range []*replica{a, b} {
		waitServed(t, r, p.Subdomain, "third", goLiveBound)
		code, body := get(client, r, host, "/", "")
		before[r] = fmt.Sprintf("%d %s", code, body)
	}
	pg.freeze()
	frozen := time.Now()
	api := make(chan string, 1)
	go func() {
		start := time.Now()
		code, body := get(&http.Client{Timeout: 60 * time.Second}, a, "127.0.0.1", "/api/deployments/"+v2, token)
		api <- fmt.Sprintf("%d %s after %s", code, strings.TrimSpace(body), time.Since(start).Round(time.Millisecond))
	}()
	var answered string
	for answered == "" && time.Since(frozen) < apiBound+3*time.Second {
		for _, r := range []*replica{a, b} {
			code, body := get(client, r, host, "/", "")
			if got := fmt.Sprintf("%d %s", code, body); got != before[r] {
				pg.thaw()
				t.Fatalf("replica %s's edge answered %q %s after PostgreSQL froze; before: %q", r.node, got, time.Since(frozen).Round(time.Millisecond), before[r])
			}
		}
		select {
		case answered = <-api:
		case <-time.After(20 * time.Millisecond):
		}
	}
	pg.thaw()
	if !strings.HasPrefix(answered, "503 ") || !strings.Contains(answered, "database") {
		t.Fatalf("replica a's API with PostgreSQL frozen for %s: %q; want 503 saying the database is unavailable within %s",
			time.Since(frozen).Round(time.Millisecond), answered, apiBound)
	}
	t.Logf("replica a's API with PostgreSQL frozen: %s", answered)

	// A rollback made through A, served by B within 2 s, the third
	// deployment until then.
	sent := time.Now()
	if code := a.call(t, "POST", "/api/deployments/"+v1+"/promote", token, "", nil); code != 200 {
		t.Fatalf("promote the first deployment through a: %d", code)
	}
	for {
		code, body := get(client, b, host, "/", "")
		if code == 200 && strings.Contains(body, "first") {
			t.Logf("the rollback made on a served by b %s after it was asked for", time.Since(sent).Round(time.Millisecond))
			break
		}
		if code != 200 || !strings.Contains(body, "third") {
			t.Fatalf("replica b answered %d %q %s after a rollback made on a; want the third deployment until the first", code, body, time.Since(sent))
		}
		if time.Since(sent) > goLiveBound {
			t.Fatalf("replica b still serves the third deployment %s after a rollback made on a after PostgreSQL restarted and froze, want at most 2s", time.Since(sent))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
