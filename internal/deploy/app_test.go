package deploy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/events"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/secret"
)

// pyApp is a Python standard-library server (no requirements.txt: Debian's
// python3 runs it). It answers / with its version and GREETING, /env/KEY
// with a variable, /read?path=P with what reading P gave, /crash by
// exiting 1. It prints its greeting at start-up, so logs can be checked for
// redaction.
func pyApp(version string) map[string]string {
	return map[string]string{"app.py": `import os, sys, urllib.parse, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = "` + version + `"

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path == "/crash":
            print("Error: crashing on request", file=sys.stderr, flush=True)
            os._exit(1)
        if url.path == "/uid":
            body = str(os.getuid())
        elif url.path.startswith("/env/"):
            body = os.environ.get(url.path[5:], "")
        elif url.path == "/fetch":
            try:
                with urllib.request.urlopen(urllib.parse.parse_qs(url.query)["url"][0], timeout=3) as r:
                    body = "fetched: %s" % r.read().decode()
            except Exception as e:
                body = "denied: %s" % e
        elif url.path == "/read":
            path = urllib.parse.parse_qs(url.query)["path"][0]
            try:
                with open(path, "rb") as f:
                    body = "read %d bytes" % len(f.read())
            except OSError as e:
                body = "denied: %s" % e
        else:
            body = "%s %s" % (VERSION, os.environ.get("GREETING", ""))
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body.encode())))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, fmt, *args):
        pass

print("booting with greeting", os.environ.get("GREETING", ""), flush=True)
ThreadingHTTPServer(("0.0.0.0", int(os.environ["PORT"])), Handler).serve_forever()
`}
}

// withSecrets lets the service store secret variables.
func (e *env) withSecrets() {
	e.t.Helper()
	box, err := secret.New(strings.Repeat("k", 32), secret.EnvSecrets)
	if err != nil {
		e.t.Fatal(err)
	}
	e.svc.Secrets = box
}

// waitLog waits until a log line of the deployment contains substr.
func (e *env) waitLog(id, substr string) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(strings.Join(e.logs(id), "\n"), substr) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("no log line with %q:\n%s", substr, strings.Join(e.logs(id), "\n"))
}

// runtimeLogs returns the deployment's runtime entries.
func (e *env) runtimeLogs(id string) []string {
	logs, err := e.db.Logs(context.Background(), id, 0, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, l := range logs {
		if l.Type == gantry.LogRuntime {
			out = append(out, l.Level+": "+l.Message)
		}
	}
	return out
}

func (e *env) mustLive(d *gantry.Deployment) {
	e.t.Helper()
	if d.Status != gantry.DeploymentLive {
		e.t.Fatalf("got status %q (%s), want live; logs:\n%s", d.Status, d.Error, strings.Join(e.logs(d.ID), "\n"))
	}
}

func TestPythonAppLifecycle(t *testing.T) {
	e := newEnv(t)
	e.withSecrets()
	ctx := context.Background()
	p := e.project("Py API", pyApp("v1"))
	if _, err := e.projects().SetEnv(ctx, e.user.ID, p.ID, []gantry.EnvVar{
		{Key: "GREETING", Value: "hunter2-secret", IsSecret: true}, {Key: "MODE", Value: "demo"},
	}); err != nil {
		t.Fatal(err)
	}
	d1 := e.deploy(p)
	e.mustLive(d1)
	if d1.BuildInfo.StartCommand != "python3 app.py" || d1.BuildInfo.Framework != "python" || d1.BuildInfo.BuildSize <= 0 {
		t.Fatalf("got build info %+v", d1.BuildInfo)
	}
	if code, body := e.get("py-api", "/"); code != 200 || body != "v1 hunter2-secret" {
		t.Fatalf("edge: got %d %q", code, body)
	}
	if _, body := e.get("py-api", "/env/MODE"); body != "demo" {
		t.Fatalf("MODE: got %q", body)
	}
	// The secret reached the app, never the logs.
	e.waitLog(d1.ID, "booting with greeting")
	all := strings.Join(e.logs(d1.ID), "\n")
	if strings.Contains(all, "hunter2") {
		t.Fatalf("a secret value is in the logs:\n%s", all)
	}
	if rt := e.runtimeLogs(d1.ID); len(rt) == 0 || rt[0] != "info: booting with greeting "+gantry.SecretMask {
		t.Fatalf("got runtime logs %q", rt)
	}
	for _, want := range []string{"info: Starting the app: python3 app.py (PORT=", "info: App answered on port"} {
		if !strings.Contains(all, want) {
			t.Fatalf("no %q in the logs:\n%s", want, all)
		}
	}

	// A crash restarts it.
	e.get("py-api", "/crash")
	e.waitLog(d1.ID, "App restarted and answering on port")
	if code, body := e.get("py-api", "/"); code != 200 || body != "v1 hunter2-secret" {
		t.Fatalf("after the crash: got %d %q", code, body)
	}
	rt := strings.Join(e.runtimeLogs(d1.ID), "\n")
	for _, want := range []string{"error: Error: crashing on request", "error: App exited with code 1; restarting in 100ms"} {
		if !strings.Contains(rt, want) {
			t.Fatalf("no %q in the runtime logs:\n%s", want, rt)
		}
	}

	// Stop: the process ends and the subdomain answers 503.
	addr := appAddr(t, e.table, "py-api")
	if _, err := e.svc.Stop(ctx, e.user.ID, "py-api", ""); err != nil {
		t.Fatal(err)
	}
	if code, body := e.get("py-api", "/"); code != http.StatusServiceUnavailable || !strings.Contains(body, "stopped") {
		t.Fatalf("stopped app: got %d %q", code, body)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("something still listens on %s after stop", addr)
	}
	// Restart: it answers again, from the same build.
	if _, err := e.svc.Restart(ctx, e.user.ID, "py-api", ""); err != nil {
		t.Fatal(err)
	}
	if code, body := e.get("py-api", "/"); code != 200 || body != "v1 hunter2-secret" {
		t.Fatalf("restarted: got %d %q", code, body)
	}
	// Delete: gone, workspace too.
	addr = appAddr(t, e.table, "py-api")
	if err := e.svc.Delete(ctx, e.user.ID, d1.ID); err != nil {
		t.Fatal(err)
	}
	if code, _ := e.get("py-api", "/"); code != http.StatusNotFound {
		t.Fatalf("deleted app answers %d, want 404", code)
	}
	if _, err := os.Stat(e.svc.WorkDir(d1.ID)); !os.IsNotExist(err) {
		t.Fatalf("workspace of a deleted app remains: %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("something still listens on %s after delete", addr)
	}
}

// appAddr returns the address the edge proxies sub to.
func appAddr(t *testing.T, table *edge.Table, sub string) string {
	t.Helper()
	site, ok := table.Lookup(sub)
	if !ok || site.ProxyTarget == "" {
		t.Fatalf("%s is not proxied: %+v", sub, site)
	}
	return site.ProxyTarget
}

func TestAppStartFailures(t *testing.T) {
	e := newEnv(t)
	e.svc.Apps.StartTimeout = 2 * time.Second

	// Never listens: fails after the bounded wait, saying what to do.
	p := e.project("Mute", map[string]string{"main.py": "import time\nprint('thinking', flush=True)\ntime.sleep(600)\n"})
	d := e.deploy(p)
	if d.Status != gantry.DeploymentFailed {
		t.Fatalf("got %q, want failed", d.Status)
	}
	logs := e.logs(d.ID)
	if last := logs[len(logs)-1]; !strings.HasPrefix(last, "error: App did not answer on port ") ||
		!strings.HasSuffix(last, " within 2s: make sure it listens on the PORT environment variable") {
		t.Fatalf("got last line %q\n%s", last, strings.Join(logs, "\n"))
	}
	if !strings.Contains(strings.Join(logs, "\n"), "error:   thinking") {
		t.Fatalf("the app's last output is not in the log:\n%s", strings.Join(logs, "\n"))
	}
	if code, _ := e.get("mute", "/"); code != http.StatusNotFound {
		t.Fatalf("a never-live app's subdomain answers %d, want 404", code)
	}

	// Exits during start-up: fails at once with its code and output.
	p = e.project("Crashy", map[string]string{"app.py": "import sys\nprint('KeyError: DATABASE_URL', file=sys.stderr)\nsys.exit(4)\n"})
	start := time.Now()
	d = e.deploy(p)
	if d.Status != gantry.DeploymentFailed || d.Error != "App exited with code 4 during start-up" {
		t.Fatalf("got %q %q", d.Status, d.Error)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("failing took %s", took)
	}
	all := strings.Join(e.logs(d.ID), "\n")
	for _, want := range []string{"error: KeyError: DATABASE_URL", "error: Last output of the app:", "error:   KeyError: DATABASE_URL",
		"error: App exited with code 4 during start-up"} {
		if !strings.Contains(all, want) {
			t.Fatalf("no %q in:\n%s", want, all)
		}
	}
	if _, err := e.svc.Restart(context.Background(), e.user.ID, "crashy", d.ID); err == nil {
		t.Fatal("restart of a failed app succeeded")
	}
}

func TestAppIsolation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// Stand-ins for the platform's database and key in its data folder.
	for _, f := range []string{"gantry.db", "secret.key"} {
		if err := os.WriteFile(filepath.Join(e.svc.DataDir, f), []byte("SQLite format 3\x00 private"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := e.deploy(e.project("Alpha", pyApp("alpha")))
	e.mustLive(a)
	pb := e.project("Beta", pyApp("beta"))
	if _, err := e.projects().SetEnv(ctx, e.user.ID, pb.ID, []gantry.EnvVar{
		{Key: "DB_PATH", Value: filepath.Join(e.svc.DataDir, "gantry.db")},
		{Key: "OTHER_APP", Value: filepath.Join(e.svc.WorkDir(a.ID), "app.py")},
	}); err != nil {
		t.Fatal(err)
	}
	b := e.deploy(pb)
	e.mustLive(b)
	for _, target := range []string{
		filepath.Join(e.svc.DataDir, "gantry.db"),
		filepath.Join(e.svc.DataDir, "secret.key"),
		filepath.Join(e.svc.WorkDir(a.ID), "app.py"),
		"../" + a.ID + "/app.py",
		"/proc/1/root/etc/hostname",
		"/root/.bashrc",
	} {
		_, body := e.get("beta", "/read?path="+target)
		if !strings.HasPrefix(body, "denied: ") {
			t.Errorf("beta read %s: %q", target, body)
		}
	}
	// The host's loopback services (the platform's API, a database, other
	// apps) are out of reach: only its own forwarded port leads in.
	platform := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "platform secrets")
	}))
	defer platform.Close()
	for _, target := range []string{platform.URL, "http://" + appAddr(t, e.table, "alpha") + "/"} {
		if _, body := e.get("beta", "/fetch?url="+target); !strings.HasPrefix(body, "denied: ") {
			t.Errorf("beta fetched %s: %q", target, body)
		}
	}
	// Its own files are readable.
	if _, body := e.get("beta", "/read?path=app.py"); !strings.HasPrefix(body, "read ") {
		t.Errorf("beta cannot read its own app.py: %q", body)
	}
}

func TestRedeployUnderLoadDropsNothing(t *testing.T) {
	e := newEnv(t)
	p := e.project("Busy", pyApp("v1"))
	e.mustLive(e.deploy(p))
	srv := httptest.NewServer(e.edge)
	defer srv.Close()

	var (
		ok, failed atomic.Int64
		sawV2      atomic.Bool
		mu         sync.Mutex
		failures   []string
		stop       = make(chan struct{})
		wg         sync.WaitGroup
	)
	client := &http.Client{Timeout: 10 * time.Second}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", srv.URL+"/", nil)
				req.Host = "busy.localhost:8080"
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failed.Add(1)
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%d %.80s", resp.StatusCode, b))
					mu.Unlock()
					continue
				}
				ok.Add(1)
				if strings.HasPrefix(string(b), "v2") {
					sawV2.Store(true)
				}
			}
		}()
	}
	e.git.Repo(t, "ada/busy", "main", "v2", pyApp("v2"))
	d2 := e.deploy(p)
	e.mustLive(d2)
	time.Sleep(500 * time.Millisecond) // the old app is drained and stopped meanwhile
	close(stop)
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d requests failed during the redeploy: %q", failed.Load(), failed.Load()+ok.Load(), failures[:min(len(failures), 5)])
	}
	if !sawV2.Load() || ok.Load() < 20 {
		t.Fatalf("got %d answers, v2 seen %v", ok.Load(), sawV2.Load())
	}
}

func TestAppsStartAgainAfterPlatformRestart(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("Phoenix", pyApp("v1"))
	d := e.deploy(p)
	e.mustLive(d)
	old := appAddr(t, e.table, "phoenix")
	e.svc.Close()
	if c, err := net.Dial("tcp", old); err == nil {
		c.Close()
		t.Fatal("the app still runs after the platform closed")
	}
	if got, _ := e.db.FindDeployment(ctx, "", d.ID); got.Status != gantry.DeploymentLive {
		t.Fatalf("closing the platform made the app %q", got.Status)
	}

	table := edge.NewTable()
	fresh := deploytest.Restarted(e.svc, table)
	fresh.Hub = events.NewHub()
	if err := fresh.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	ed := edge.New("localhost", table, "http://localhost:8080")
	deadline := time.Now().Add(30 * time.Second)
	for {
		req := httptest.NewRequest("GET", "http://phoenix.localhost:8080/", nil)
		rec := httptest.NewRecorder()
		ed.ServeHTTP(rec, req)
		if rec.Code == 200 && rec.Body.String() == "v1 " {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the app did not come back: %d %q\n%s", rec.Code, rec.Body.String(), strings.Join(e.logs(d.ID), "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Count(strings.Join(e.logs(d.ID), "\n"), "Build started") != 1 {
		t.Fatal("the app was rebuilt")
	}
}

func TestCrashLoopFailsTheDeployment(t *testing.T) {
	e := newEnv(t)
	e.svc.Apps.CrashLimit = 3
	// The project's start command replaces the detected one: the app
	// answers, then dies three seconds later, every time (time enough to
	// start on a busy machine: one that dies before it answers fails its
	// start instead, a different path).
	p := e.project("Flaky", pyApp("v1"))
	p.BuildConfig.StartCommand = "timeout 3 python3 app.py; exit 7"
	if err := e.db.UpdateProject(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	d := e.deploy(p)
	if d.BuildInfo.StartCommand != p.BuildConfig.StartCommand {
		t.Fatalf("got start command %q", d.BuildInfo.StartCommand)
	}
	e.mustLive(d)
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, _ := e.db.FindDeployment(context.Background(), "", d.ID)
		if got.Status == gantry.DeploymentFailed {
			if !strings.Contains(got.Error, "App stopped after crashing 3 times in a row (exited with code 7)") {
				t.Fatalf("got error %q", got.Error)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %q after a minute of crashes:\n%s", got.Status, strings.Join(e.logs(d.ID), "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, _ := e.get("flaky", "/"); code != http.StatusServiceUnavailable {
		t.Fatalf("crash-looped app answers %d, want 503", code)
	}
	e.projectStatus(p, gantry.ProjectFailed)
	rt := strings.Join(e.runtimeLogs(d.ID), "\n")
	if !strings.Contains(rt, "error: App exited with code 7; it crashed 3 times within 10 minutes, so it was stopped") {
		t.Fatalf("no give-up line:\n%s", rt)
	}
}

func TestRuntimeLogsAreCapped(t *testing.T) {
	e := newEnv(t)
	e.svc.RuntimeLogLimit = 50
	files := pyApp("v1")
	files["app.py"] = "for i in range(300):\n    print('line', i)\n" + files["app.py"]
	p := e.project("Chatty", files)
	d := e.deploy(p)
	e.mustLive(d)
	e.waitLog(d.ID, "line 299")
	if _, err := e.svc.Stop(context.Background(), e.user.ID, "chatty", ""); err != nil {
		t.Fatal(err)
	}
	rt := e.runtimeLogs(d.ID)
	if len(rt) != 50 || !strings.Contains(strings.Join(rt, "\n"), "info: line 299") || strings.Contains(strings.Join(rt, "\n"), "line 200\n") {
		t.Fatalf("got %d runtime entries, want the newest 50:\n%s", len(rt), strings.Join(rt, "\n"))
	}
	if all := strings.Join(e.logs(d.ID), "\n"); !strings.Contains(all, "Build started") {
		t.Fatal("build entries were trimmed too")
	}
}

func TestOldAppWorkspacesArePruned(t *testing.T) {
	e := newEnv(t)
	p := e.project("Prune", pyApp("v1"))
	var ids []string
	for i := 0; i < gantry.KeepAppDeployments+2; i++ {
		d := e.deploy(p)
		e.mustLive(d)
		ids = append(ids, d.ID)
	}
	// Pruning follows the switch to live: give it a moment.
	deadline := time.Now().Add(10 * time.Second)
	for i, id := range ids {
		// The live one and the newest KeepAppDeployments replaced ones keep theirs.
		keep := i >= len(ids)-1-gantry.KeepAppDeployments
		_, err := os.Stat(e.svc.WorkDir(id))
		for !keep && err == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			_, err = os.Stat(e.svc.WorkDir(id))
		}
		if keep != (err == nil) {
			t.Errorf("deployment %d of %d: workspace kept = %v, want %v", i+1, len(ids), err == nil, keep)
		}
	}
	if _, err := e.svc.Restart(context.Background(), e.user.ID, p.Subdomain, ids[0]); gantry.ErrorCode(err) != gantry.ECONFLICT ||
		gantry.ErrorMessage(err) != gantry.MsgPruned {
		t.Fatalf("restart of a pruned app: got %v, want ECONFLICT %q", err, gantry.MsgPruned)
	}
	if d, _ := e.svc.Store.FindDeployment(context.Background(), "", ids[0]); d.PrunedAt == nil || d.FilesSize != 0 {
		t.Fatalf("pruned app record: pruned at %v, files %d; want marked, 0", d.PrunedAt, d.FilesSize)
	}
	if all := strings.Join(e.logs(ids[0]), "\n"); !strings.Contains(all, deploy.MsgPrunedLine) {
		t.Fatalf("no pruning line in the log:\n%s", all)
	}
	// The live app's workspace volume counts what its image holds on disk.
	live, _ := e.svc.Store.FindDeployment(context.Background(), "", ids[len(ids)-1])
	if u, err := e.db.StorageUsage(context.Background(), e.user.ID); err != nil || live.FilesSize <= 0 || u.Files < live.FilesSize {
		t.Fatalf("live app: files %d, account usage %+v, %v; want its volume measured and counted", live.FilesSize, u, err)
	}
}

// TestAccountsRunUnderUIDsOfTheirOwn: two accounts' apps run, and their
// built files lie, under two different uids of the configured range; the
// workspaces are closed to everyone else.
func TestAccountsRunUnderUIDsOfTheirOwn(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.deploy(e.project("Alpha", pyApp("alpha")))
	e.mustLive(a)
	other := &gantry.User{FullName: "Bob", Username: "bob", Email: "bob@example.com", PasswordHash: "x", IsActive: true}
	if err := e.db.CreateUser(ctx, other); err != nil {
		t.Fatal(err)
	}
	url := e.git.Repo(t, "bob/beta", "main", "initial commit", pyApp("beta"))
	name := "Beta"
	pb, err := e.projects().CreatePublic(ctx, other, project.Input{Repository: &project.RepositoryInput{URL: url, DefaultBranch: "main"}, Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.svc.Create(ctx, other.ID, deploy.CreateRequest{ProjectID: pb.ID, Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	b := e.wait(d.ID)
	e.mustLive(b)
	owner := func(dep *gantry.Deployment) (uint32, os.FileMode) {
		t.Helper()
		fi, err := os.Stat(filepath.Join(e.svc.WorkDir(dep.ID), "workspace", "app.py"))
		if err != nil {
			t.Fatal(err)
		}
		ws, err := os.Stat(filepath.Join(e.svc.WorkDir(dep.ID), "workspace"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Uid, ws.Mode().Perm()
	}
	ua, ma := owner(a)
	ub, mb := owner(b)
	if ua == ub || ua < 230000 || ub < 230000 || ua >= 231000 || ub >= 231000 {
		t.Fatalf("accounts' files belong to uids %d and %d, want two different uids of 230000-230999", ua, ub)
	}
	if ma != 0o700 || mb != 0o700 {
		t.Errorf("workspaces are mode %o and %o, want 0700", ma, mb)
	}
	// The running apps' processes carry their account's uid.
	_, body := e.get("beta", "/uid")
	if body != fmt.Sprint(ub) {
		t.Errorf("beta's app runs as uid %q, want %d", body, ub)
	}
}
