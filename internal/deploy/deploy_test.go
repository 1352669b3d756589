package deploy_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/gittest"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// env is a whole deployment stack: database, git host, sandboxed builder,
// edge.
type env struct {
	t     *testing.T
	db    *store.DB
	git   *gittest.Server
	svc   *deploy.Service
	table *edge.Table
	edge  *edge.Edge
	user  *gantry.User
	hosts *githost.Service // the project service's Repos
	stack *deploytest.Stack
	// restarted is the service the last restart opened (trigger_test.go).
	restarted *env
}

// projects is the stack's project service beside e.svc, as cmd/gantry
// wires one (following e.svc when a test replaced it).
func (e *env) projects() *project.Service {
	p := e.stack.Projects
	p.Deployments, p.Notify, p.Decrypt, p.Secrets = e.svc, e.svc.Notify, e.svc.Decrypt, e.svc.Secrets
	return p
}

func newEnv(t *testing.T) *env {
	t.Helper()
	sb := sandboxtest.Require(t, sandbox.Config{})
	e := &env{t: t, db: storetest.MustOpenDB(t), git: gittest.NewServer(t)}
	hosts, err := githost.New(githost.Config{AllowHosts: []string{"127.0.0.1"}, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	e.user = &gantry.User{FullName: "Ada", Username: "ada", Email: "ada@example.com", PasswordHash: "x", IsActive: true}
	if err := e.db.CreateUser(context.Background(), e.user); err != nil {
		t.Fatal(err)
	}
	e.stack = deploytest.New(t, deploytest.Options{DB: e.db, Sandbox: sb, Repos: hosts, Apps: true, Workers: true,
		// Every account under a uid of its own, as gantry serve runs them.
		UIDs: sandbox.UIDRange{First: 230000, Count: 1000}})
	e.svc, e.table = e.stack.Deploys, e.stack.Table
	e.hosts = hosts
	e.edge = edge.New("localhost", e.table, "http://localhost:8080")
	return e
}

func (e *env) project(name string, files map[string]string) *gantry.Project {
	e.t.Helper()
	url := e.git.Repo(e.t, "ada/"+gantry.SubdomainBase(name), "main", "initial commit", files)
	in := project.Input{Repository: &project.RepositoryInput{URL: url, DefaultBranch: "main"}, Name: &name}
	p, err := e.projects().CreatePublic(context.Background(), e.user, in)
	if err != nil {
		e.t.Fatalf("create project: %v", err)
	}
	return p
}

// deploy queues a deployment and waits until it is no longer in progress.
func (e *env) deploy(p *gantry.Project) *gantry.Deployment {
	e.t.Helper()
	d, err := e.svc.Create(context.Background(), e.user.ID, deploy.CreateRequest{ProjectID: p.ID, Version: "1.0.0"})
	if err != nil {
		e.t.Fatalf("create deployment: %v", err)
	}
	if d.Status != gantry.DeploymentPending {
		e.t.Fatalf("got status %q at creation, want pending", d.Status)
	}
	return e.wait(d.ID)
}

// projectStatus waits for p's status to become want: the service sets it
// from the latest deployment just after that deployment's own update.
func (e *env) projectStatus(p *gantry.Project, want string) {
	e.t.Helper()
	var got string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		pr, err := e.db.FindProject(context.Background(), e.user.ID, p.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		if got = pr.Status; got == want {
			return
		}
	}
	e.t.Fatalf("got project status %q, want %q", got, want)
}

// deploymentStatus waits for deployment id's status to become want: a
// replaced deployment is marked stopped just after its successor goes live.
func (e *env) deploymentStatus(id, want string) {
	e.t.Helper()
	var got string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		d, err := e.db.FindDeployment(context.Background(), "", id)
		if err != nil {
			e.t.Fatal(err)
		}
		if got = d.Status; got == want {
			return
		}
	}
	e.t.Fatalf("deployment %s is %q, want %q", id, got, want)
}

func (e *env) wait(id string) *gantry.Deployment {
	e.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		d, err := e.db.FindDeployment(context.Background(), "", id)
		if err != nil {
			e.t.Fatal(err)
		}
		if !d.InProgress() {
			// The worker applies the routes and starts the caches' save
			// after the store's transition committed.
			deploy.Settled(e.svc, id)
			deploy.WaitCacheSaves(e.svc) // its log ends with what the save did
			return e.find(id)
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("deployment %s still in progress after 2 minutes", id)
	return nil
}

func (e *env) logs(id string) []string {
	logs, err := e.db.Logs(context.Background(), id, 0, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, l := range logs {
		out = append(out, l.Level+": "+l.Message)
	}
	return out
}

// get fetches path from the edge for sub.
func (e *env) get(sub, path string) (int, string) {
	req := httptest.NewRequest("GET", "http://"+sub+".localhost:8080"+path, nil)
	rec := httptest.NewRecorder()
	e.edge.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

func TestStaticDeployLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("My Site", map[string]string{"index.html": "<h1>version one</h1>"})
	if p.Subdomain != "my-site" {
		t.Fatalf("got subdomain %q, want my-site", p.Subdomain)
	}
	d1 := e.deploy(p)
	if d1.Status != gantry.DeploymentLive {
		t.Fatalf("got status %q, want live; logs:\n%s", d1.Status, strings.Join(e.logs(d1.ID), "\n"))
	}
	logs := e.logs(d1.ID)
	if last := logs[len(logs)-1]; last != "success: Deployment is live at http://my-site.localhost:8080" {
		t.Fatalf("got last log line %q", last)
	}
	if d1.Metadata.CommitMessage != "initial commit" || len(d1.Metadata.CommitHash) != 40 || d1.Metadata.Author != "Test Author" {
		t.Fatalf("got metadata %+v", d1.Metadata)
	}
	if d1.BuildInfo.StartTime == nil || d1.BuildInfo.EndTime == nil || d1.BuildInfo.BuildSize != int64(len("<h1>version one</h1>")) {
		t.Fatalf("got build info %+v", d1.BuildInfo)
	}
	if code, body := e.get("my-site", "/"); code != 200 || body != "<h1>version one</h1>" {
		t.Fatalf("edge: got %d %q", code, body)
	}
	e.projectStatus(p, gantry.ProjectDeployed)

	// A new commit and a redeploy: the new one takes the subdomain, the old one stops.
	e.git.Repo(t, "ada/my-site", "main", "second", map[string]string{"index.html": "<h1>version two</h1>"})
	d2 := e.deploy(p)
	if d2.Status != gantry.DeploymentLive {
		t.Fatalf("redeploy: got %q; logs:\n%s", d2.Status, strings.Join(e.logs(d2.ID), "\n"))
	}
	if _, body := e.get("my-site", "/"); body != "<h1>version two</h1>" {
		t.Fatalf("after redeploy edge serves %q", body)
	}
	e.deploymentStatus(d1.ID, gantry.DeploymentStopped) // the replaced one

	// Restart of the old one is a rollback.
	if _, err := e.svc.Restart(ctx, e.user.ID, "my-site", d1.ID); err != nil {
		t.Fatal(err)
	}
	if _, body := e.get("my-site", "/"); body != "<h1>version one</h1>" {
		t.Fatalf("after rollback edge serves %q", body)
	}
	e.deploymentStatus(d2.ID, gantry.DeploymentStopped) // the rolled-back-from one

	// Stop: 503. Restart: 200 again. Delete: 404 and files gone.
	if _, err := e.svc.Stop(ctx, e.user.ID, "my-site", ""); err != nil {
		t.Fatal(err)
	}
	if code, _ := e.get("my-site", "/"); code != http.StatusServiceUnavailable {
		t.Fatalf("stopped site answers %d, want 503", code)
	}
	if _, err := e.svc.Restart(ctx, e.user.ID, "my-site", ""); err != nil {
		t.Fatal(err)
	}
	if code, _ := e.get("my-site", "/"); code != 200 {
		t.Fatalf("restarted site answers %d, want 200", code)
	}
	if err := e.svc.Delete(ctx, e.user.ID, d1.ID); err != nil {
		t.Fatal(err)
	}
	if code, _ := e.get("my-site", "/"); code != http.StatusNotFound {
		t.Fatalf("deleted site answers %d, want 404", code)
	}
	if _, err := os.Stat(e.svc.SiteDir(d1.ID)); !os.IsNotExist(err) {
		t.Fatalf("site files of a deleted deployment remain: %v", err)
	}
}

func TestFailedBuild(t *testing.T) {
	e := newEnv(t)
	p := e.project("broken", map[string]string{
		"package.json": `{"name":"broken","version":"1.0.0","scripts":{"build":"node -e \"console.error('boom'); process.exit(3)\""}}`,
	})
	d := e.deploy(p)
	if d.Status != gantry.DeploymentFailed {
		t.Fatalf("got %q, want failed", d.Status)
	}
	logs := e.logs(d.ID)
	if last := logs[len(logs)-2]; !strings.HasPrefix(last, "error: ") || !strings.Contains(last, "exited with code 3") {
		t.Fatalf("got line %q, want an error saying the build exited with code 3", last)
	}
	// Why it failed: the last line, recorded with the lines that show it.
	if last := logs[len(logs)-1]; !strings.HasPrefix(last, "error: Why it failed: ") {
		t.Fatalf("got last line %q, want the diagnosis", last)
	}
	if d.Diagnosis == nil || d.Diagnosis.Title != "npm run build exited with code 3" || len(d.Diagnosis.Lines) == 0 {
		t.Fatalf("got diagnosis %+v", d.Diagnosis)
	}
	entries, err := e.db.Logs(context.Background(), d.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range entries {
		if l.Seq == d.Diagnosis.Lines[len(d.Diagnosis.Lines)-1] && !strings.Contains(l.Message, "boom") && !strings.Contains(l.Message, "npm error") {
			t.Errorf("highlighted line %d is %q", l.Seq, l.Message)
		}
	}
	e.projectStatus(p, gantry.ProjectFailed)
	if _, err := e.svc.Restart(context.Background(), e.user.ID, p.Subdomain, d.ID); err == nil {
		t.Fatal("restart of a failed deployment succeeded")
	}
}

func TestStopDuringBuild(t *testing.T) {
	e := newEnv(t)
	p := e.project("slow", map[string]string{
		"package.json": `{"name":"slow","version":"1.0.0","scripts":{"build":"node -e \"setTimeout(()=>{}, 600000)\""}}`,
	})
	d, err := e.svc.Create(context.Background(), e.user.ID, deploy.CreateRequest{ProjectID: p.ID})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		logs := strings.Join(e.logs(d.ID), "\n")
		if strings.Contains(logs, "npm run build") || strings.Contains(logs, "Building") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("build never started:\n%s", logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	start := time.Now()
	if _, err := e.svc.Stop(context.Background(), e.user.ID, "slow", d.ID); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("stop took %v", took)
	}
	got := e.wait(d.ID)
	if got.Status != gantry.DeploymentStopped {
		t.Fatalf("got %q, want stopped", got.Status)
	}
	if _, err := os.Stat(filepath.Join(e.svc.DataDir, "builds", d.ID)); !os.IsNotExist(err) {
		t.Fatalf("workspace of a stopped build remains: %v", err)
	}
}

func TestRecoveryAfterRestart(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("site", map[string]string{"index.html": "ok"})
	live := e.deploy(p)
	e.svc.Close()

	// A build that was cut off by a crash.
	cut := &gantry.Deployment{ProjectID: p.ID, UserID: e.user.ID, Version: "1.0.0", Subdomain: p.Subdomain, Status: gantry.DeploymentBuilding}
	if err := e.db.CreateDeployment(ctx, cut); err != nil {
		t.Fatal(err)
	}
	table := edge.NewTable()
	old := e.svc
	fresh := deploytest.Restarted(old, table)
	if err := fresh.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	got, _ := e.db.FindDeployment(ctx, "", cut.ID)
	if got.Status != gantry.DeploymentFailed || !strings.Contains(got.Error, "restarted") {
		t.Fatalf("cut-off build: got %q %q, want failed with a reason", got.Status, got.Error)
	}
	if site, ok := table.Lookup(p.Subdomain); !ok || site.DeploymentID != live.ID {
		t.Fatalf("live site not restored: %+v %v", site, ok)
	}
}

// withPlan makes e's user a new account whose plan allows maxLive live
// deployments (and 20 projects).
func (e *env) withPlan(maxLive int) {
	e.t.Helper()
	u := &gantry.User{FullName: "Ada Plan", Username: fmt.Sprintf("ada%d", maxLive), Email: fmt.Sprintf("ada%d@example.com", maxLive),
		PasswordHash: "x", IsActive: true,
		Subscription: gantry.Subscription{Plan: gantry.PlanFree, MaxProjects: 20, MaxDeployments: maxLive}}
	if err := e.db.CreateUser(context.Background(), u); err != nil {
		e.t.Fatal(err)
	}
	e.user = u
}
