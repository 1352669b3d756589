package api_test

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/gittest"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
)

// flakyHost serves a dumb git host's files (a bare repository served as
// plain files, no git-http-backend) until told to fail: its mode is "ok",
// "404", "401", "403", "stall" (every request hangs until the client gives
// up) or "stall-objects" (info/refs and HEAD are answered, every object and
// pack hangs, so the probe passes and git itself stalls).
type flakyHost struct {
	*gittest.Server // the dumb host whose files are served
	srv             *httptest.Server
	mode            atomic.Value
}

func newFlakyHost(t *testing.T) *flakyHost {
	t.Helper()
	f := &flakyHost{Server: gittest.NewDumbServer(t)}
	f.mode.Store("ok")
	files := http.FileServer(http.Dir(f.Root))
	hang := func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch f.mode.Load().(string) {
		case "404":
			http.NotFound(w, r)
		case "401":
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
		case "403":
			http.Error(w, "forbidden", http.StatusForbidden)
		case "stall":
			hang(r)
		case "stall-objects":
			if strings.HasSuffix(r.URL.Path, "/info/refs") || strings.HasSuffix(r.URL.Path, "/HEAD") {
				files.ServeHTTP(w, r)
				return
			}
			hang(r)
		default:
			files.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// url is the address of the repository fullName on the flaky host.
func (f *flakyHost) url(fullName string) string { return f.srv.URL + "/" + fullName + ".git" }

// headOf returns the commit branch points at in the bare repository
// fullName, read by git on the host's side.
func headOf(t *testing.T, gs *gittest.Server, fullName, branch string) string {
	t.Helper()
	return strings.TrimSpace(string(mustOutput(t, "git", "-C", filepath.Join(gs.Root, fullName+".git"), "rev-parse", "refs/heads/"+branch)))
}

// noRawGit fails when a message shown to users carries git's own words.
func noRawGit(t *testing.T, what, msg string) {
	t.Helper()
	for _, raw := range []string{"fatal:", "error:", "warning:", "remote:", "curl", "exit status", "Internal error"} {
		if strings.Contains(msg, raw) {
			t.Errorf("%s: message %q carries %q", what, msg, raw)
		}
	}
}

// lookup posts repoURL to the public repository lookup.
func (d *deployEnv) lookup(t *testing.T, repoURL string) (*httptest.ResponseRecorder, answer) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"repoUrl": repoURL})
	rec := d.do(request{method: "POST", url: "/api/projects/public-repo", headers: bearer(d.token), body: string(body)})
	return rec, decodeAnswer(t, rec)
}

// TestDumbGitHostLookupAndSync looks up and syncs a repository on a host
// that speaks only dumb HTTP, through the API: 200 and the branch's commit.
func TestDumbGitHostLookupAndSync(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, false)
	ds := gittest.NewDumbServer(t)
	url := ds.Repo(t, "alice/plain", "main", "add v1", map[string]string{"index.html": "<h1>v1</h1>"})

	rec, a := d.lookup(t, url)
	if rec.Code != 200 {
		t.Fatalf("lookup: %d %q", rec.Code, a.Message)
	}
	var got githost.LookupResult
	if err := json.Unmarshal(a.Data, &got); err != nil {
		t.Fatal(err)
	}
	want := headOf(t, ds, "alice/plain", "main")
	if got.Repository.LastCommit == nil || got.Repository.LastCommit.SHA != want || got.Repository.LastCommit.Message != "add v1" ||
		got.Branch != "main" || got.Repository.DefaultBranch != "main" || got.Framework != "static" {
		t.Fatalf("lookup = %+v, want main at %s (add v1), static", got, want)
	}

	id := d.createProject(t, url, "Plain")
	ds.Repo(t, "alice/plain", "main", "add v2", map[string]string{"index.html": "<h1>v2</h1>"})
	rec = d.do(request{method: "POST", url: "/api/projects/" + id + "/sync", headers: bearer(d.token)})
	p := dataField[gantry.Project](t, rec, "project")
	if want := headOf(t, ds, "alice/plain", "main"); rec.Code != 200 || p.Repository.LastCommit == nil ||
		p.Repository.LastCommit.SHA != want || p.Repository.LastCommit.Message != "add v2" {
		t.Fatalf("sync: %d %s; want the v2 commit %s", rec.Code, rec.Body.String(), want)
	}
}

// TestGitFailuresThroughAPI: every failure a git host can cause answers a
// sentence with a 4xx status (never a 500, never git's own lines), on
// lookup and on sync.
func TestGitFailuresThroughAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, false)
	// A small size limit, so that "too large" comes quickly; a short time
	// limit for the cases that stall (the others get time to spare on a
	// busy machine).
	sb := sandboxtest.Require(t, sandbox.Config{})
	hosts, err := githost.New(githost.Config{AllowHosts: []string{"127.0.0.1"}, Sandbox: sb,
		Detect: build.Suggest, Timeout: 30 * time.Second, LookupMaxSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	impatient, err := githost.New(githost.Config{AllowHosts: []string{"127.0.0.1"}, Sandbox: sb,
		Detect: build.Suggest, Timeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	d.projects.Repos = hosts
	f := newFlakyHost(t)
	f.Repo(t, "alice/site", "main", "first", map[string]string{"index.html": "<h1>hi</h1>"})
	big := make([]byte, 1<<20)
	rand.Read(big)
	f.Repo(t, "alice/big", "main", "big", map[string]string{"blob.bin": string(big)})
	hostPort := strings.TrimPrefix(f.srv.URL, "http://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close() // nothing listens there any more

	// Both projects are made while the host answers; the big one under
	// the default size limit (a create is a lookup too), then synced under
	// the small one.
	siteProject := d.createProject(t, f.url("alice/site"), "Site")
	roomy, err := githost.New(githost.Config{AllowHosts: []string{"127.0.0.1"}, Sandbox: sb,
		Detect: build.Suggest, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	d.projects.Repos = roomy
	bigProject := d.createProject(t, f.url("alice/big"), "Big")
	d.projects.Repos = hosts
	private := "Repository is private or requires authentication"
	timedOut := "Timed out after 4s while contacting " + hostPort
	// failing is the lookup of lookup and, given a project, its sync, while
	// the host is in mode: both answer status and message, in words of
	// Gantry's own.
	failing := func(name, mode, lookup, project string, status int, message string) []scenario {
		setup := func(t *testing.T, _ *testEnv) string {
			f.mode.Store(mode)
			t.Cleanup(func() { f.mode.Store("ok") })
			if strings.HasPrefix(mode, "stall") {
				d.projects.Repos = impatient
				t.Cleanup(func() { d.projects.Repos = hosts })
			}
			return ""
		}
		after := func(what string) func(t *testing.T, _ *testEnv, rec *httptest.ResponseRecorder) {
			return func(t *testing.T, _ *testEnv, rec *httptest.ResponseRecorder) {
				noRawGit(t, what, decodeAnswer(t, rec).Message)
			}
		}
		body, _ := json.Marshal(map[string]string{"repoUrl": lookup})
		scs := []scenario{{name: name + " lookup", setup: setup, auth: true,
			request:    request{method: "POST", url: "/api/projects/public-repo", body: string(body)},
			wantStatus: status, wantMessage: message, after: after("lookup")}}
		if project != "" {
			scs = append(scs, scenario{name: name + " sync", setup: setup, auth: true,
				request:    request{method: "POST", url: "/api/projects/" + project + "/sync"},
				wantStatus: status, wantMessage: message, after: after("sync")})
		}
		return scs
	}
	runScenariosOn(t, e, slices.Concat(
		failing("repository not found", "404", f.url("alice/site"), siteProject, 404, "Repository not found: "+strings.TrimSuffix(f.url("alice/site"), ".git")),
		failing("missing repository on a working host", "ok", f.url("alice/nope"), "", 404, "Repository not found: "+strings.TrimSuffix(f.url("alice/nope"), ".git")),
		failing("401", "401", f.url("alice/site"), siteProject, 400, private),
		failing("403", "403", f.url("alice/site"), siteProject, 400, private),
		failing("host unreachable", "ok", "http://"+closed+"/alice/site.git", "", 400, "Could not connect to "+closed+": check the URL, or try again later if the host is down"),
		failing("too large", "ok", f.url("alice/big"), bigProject, 400, "Repository is too large (limit 256 KiB)"),
		failing("host stalls", "stall", f.url("alice/site"), siteProject, 400, timedOut),
		failing("objects stall", "stall-objects", f.url("alice/site"), siteProject, 400, timedOut),
	))
	// The host goes away for good.
	f.srv.Close()
	rec := d.do(request{method: "POST", url: "/api/projects/" + siteProject + "/sync", headers: bearer(d.token)})
	a := decodeAnswer(t, rec)
	if want := "Could not connect to " + hostPort + ": check the URL, or try again later if the host is down"; rec.Code != 400 || a.Message != want {
		t.Errorf("sync from a host gone: got %d %q, want 400 %q", rec.Code, a.Message, want)
	}
	if logs := e.logs.String(); strings.Contains(logs, `"internal error"`) {
		t.Errorf("a git failure was an internal error:\n%s", logs)
	}
}

// TestDeployFromDumbGitHost deploys a repository from a host that speaks
// only dumb HTTP: the build clones it in the sandbox and the site goes
// live. A deployment from the same host once it answers 404 fails with the
// sentence, not git's words.
func TestDeployFromDumbGitHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, true)
	f := newFlakyHost(t)
	f.Repo(t, "alice/site", "main", "add dumb", map[string]string{"index.html": "<h1>served as plain files</h1>"})
	project := d.createProject(t, f.url("alice/site"), "My Site")

	deployNow := func() gantry.Deployment {
		t.Helper()
		rec := d.do(request{method: "POST", url: "/api/deployments", headers: bearer(d.token), body: fmt.Sprintf(`{"projectId":%q}`, project)})
		if rec.Code != http.StatusCreated {
			t.Fatalf("deploy: %d %s", rec.Code, rec.Body.String())
		}
		return d.waitDeployment(t, dataField[gantry.Deployment](t, rec, "deployment").ID)
	}
	dep := deployNow()
	if want := headOf(t, f.Server, "alice/site", "main"); dep.Status != gantry.DeploymentLive || dep.Metadata.CommitHash != want || dep.Metadata.CommitMessage != "add dumb" {
		t.Fatalf("deployment: %s %q, commit %s %q; want live at %s", dep.Status, dep.Error, dep.Metadata.CommitHash, dep.Metadata.CommitMessage, want)
	}
	if rec := d.liveGet("/"); rec.Code != 200 || !strings.Contains(rec.Body.String(), "served as plain files") {
		t.Fatalf("live site: %d %s", rec.Code, rec.Body.String())
	}

	f.mode.Store("404")
	dep = deployNow()
	want := "Could not clone alice/site (branch main): Repository not found: " + strings.TrimSuffix(f.url("alice/site"), ".git")
	if dep.Status != gantry.DeploymentFailed || dep.Error != want {
		t.Fatalf("deployment from a 404: %s %q, want failed %q", dep.Status, dep.Error, want)
	}
	noRawGit(t, "deployment error", dep.Error)

	// An object lost on the host: git itself fails, mid-clone.
	f.mode.Store("ok")
	sha := strings.TrimSpace(string(mustOutput(t, "git", "-C", filepath.Join(f.Root, "alice/site.git"), "rev-parse", "main:index.html")))
	if err := os.Remove(filepath.Join(f.Root, "alice/site.git/objects", sha[:2], sha[2:])); err != nil {
		t.Fatal(err)
	}
	dep = deployNow()
	want = "Could not clone alice/site (branch main): Could not fetch " + strings.TrimSuffix(f.url("alice/site"), ".git") +
		": its host is missing some of the repository's objects or sent damaged ones; if it serves the repository as plain files, run git update-server-info there after every push"
	if dep.Status != gantry.DeploymentFailed || dep.Error != want {
		t.Fatalf("deployment with an object missing: %s %q, want failed %q", dep.Status, dep.Error, want)
	}
	noRawGit(t, "deployment error", dep.Error)
	for _, l := range dep.BuildLogs {
		if l.Level == gantry.LevelError {
			noRawGit(t, "error log line", l.Message)
		}
	}
}

func mustOutput(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out
}
