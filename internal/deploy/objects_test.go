package deploy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/blobs"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/cachesync"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/objstore/s3test"
	"github.com/gantryhq/gantry/internal/sitecache"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// siteBuilder publishes a fixed site as the build pipeline does: files
// stored by content in the account's blob store, linked into the site's
// folder, with a manifest. "{id}" in a file is the deployment's id.
type siteBuilder struct{ files map[string]string }

func (b siteBuilder) Run(_ context.Context, job build.Job, _ build.Logger) (*build.Result, error) {
	dir := filepath.Join(job.SitesDir, job.DeploymentID)
	w, err := (&blobs.Store{Dir: job.BlobDir}).Begin()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	var es []blobs.Entry
	for p, body := range b.files {
		dst := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		e, err := w.Copy(strings.NewReader(strings.ReplaceAll(body, "{id}", job.DeploymentID)), dst, false)
		if err != nil {
			return nil, err
		}
		e.Path = p
		es = append(es, e)
	}
	return &build.Result{}, w.WriteManifest(job.DeploymentID, es)
}

// waitStatus waits for deployment id to reach live or failed.
func waitStatus(t *testing.T, svc *deploy.Service, id string) *gantry.Deployment {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		d, err := svc.Store.FindDeployment(context.Background(), "", id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status == gantry.DeploymentLive || d.Status == gantry.DeploymentFailed {
			return d
		}
	}
	t.Fatalf("deployment %s never ended", id)
	return nil
}

func get(e *edge.Edge, sub, path string) (int, string) {
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://"+sub+".localhost"+path, nil))
	return rec.Code, rec.Body.String()
}

// TestSiteServedByAReplicaWithoutItsFiles: a site built on replica A is
// uploaded before it goes live; replica B, with its own data folder and
// none of the files, serves it from the object store. Deleting the
// deployment deletes its objects. Before, B had nothing to serve (404).
func TestSiteServedByAReplicaWithoutItsFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	srv := s3test.Start(t)
	remote := &sitecache.Remote{Store: srv.Store("t")}
	a := deploytest.New(t, deploytest.Options{DB: db, Builder: siteBuilder{map[string]string{
		"index.html": "<h1>{id} built on A</h1>", "app.js": "console.log('A')"}}, Poll: 20 * time.Millisecond}).Deploys
	a.NodeID, a.Remote = "node-a", remote
	user, p, d := openAndDeploy(t, a, db)
	if d = waitStatus(t, a, d.ID); d.Status != gantry.DeploymentLive {
		t.Fatalf("deployment %s: %s", d.Status, d.Error)
	}
	if ok, err := remote.Store.Has(ctx, sitecache.ManifestKey(d.ID)); !ok || err != nil {
		t.Fatalf("manifest in the store: %v %v", ok, err)
	}

	// Replica B starts on the same database with its own data folder.
	stack := deploytest.New(t, deploytest.Options{DB: db, Poll: 20 * time.Millisecond})
	b := stack.Deploys
	cache, err := sitecache.Open(filepath.Join(stack.DataDir, "site-cache"), 64<<20, remote)
	if err != nil {
		t.Fatal(err)
	}
	cache.OnEvict = stack.Table.Reopen
	b.NodeID, b.NoBuilds, b.Remote, b.SiteCache = "node-b", true, remote, cache
	b.Sites = deploy.EdgeSites{Table: stack.Table, Cache: cache}
	if err := b.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	edgeB := edge.New("localhost", stack.Table, "http://localhost:8080")
	edgeB.ConfigureFetch(cache)
	if code, body := get(edgeB, d.Subdomain, "/"); code != 200 || body != "<h1>"+d.ID+" built on A</h1>" {
		t.Fatalf("replica B: %d %q, want A's site", code, body)
	}
	if code, body := get(edgeB, d.Subdomain, "/app.js"); code != 200 || body != "console.log('A')" {
		t.Fatalf("replica B /app.js: %d %q", code, body)
	}

	// A redeploy on A; the first deployment, stopped, is restarted
	// through B (a load balancer sent the click there): B has never had
	// its files but the object store has.
	d2, err := a.Create(ctx, user.ID, deploy.CreateRequest{ProjectID: p.ID})
	if err != nil {
		t.Fatal(err)
	}
	if d2 = waitStatus(t, a, d2.ID); d2.Status != gantry.DeploymentLive {
		t.Fatalf("second deployment %s: %s", d2.Status, d2.Error)
	}
	deploy.Settled(a, d2.ID)
	if _, err := b.Restart(ctx, user.ID, d.Subdomain, d.ID); err != nil {
		t.Fatalf("restart through B: %v", err)
	}
	if code, body := get(edgeB, d.Subdomain, "/"); code != 200 || body != "<h1>"+d.ID+" built on A</h1>" {
		t.Fatalf("replica B after the restart: %d %q", code, body)
	}
	if _, err := b.Restart(ctx, user.ID, d2.Subdomain, d2.ID); err != nil {
		t.Fatalf("restart of the second through B: %v", err)
	}
	if err := a.Delete(ctx, user.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	if ok, err := remote.Store.Has(ctx, sitecache.ManifestKey(d.ID)); ok || err != nil {
		t.Fatalf("manifest still in the store after delete: %v %v", ok, err)
	}
}

// TestUploadFailureFailsDeployment: with the object store down, a site
// does not go live half-stored: its deployment fails with a reason that
// says so, and nothing is served.
func TestUploadFailureFailsDeployment(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpenDB(t)
	srv := s3test.Start(t)
	remote := &sitecache.Remote{Store: srv.Store("t")}
	srv.Stop()
	stack := deploytest.New(t, deploytest.Options{DB: db, Builder: siteBuilder{map[string]string{"index.html": "x"}},
		Poll: 20 * time.Millisecond})
	a := stack.Deploys
	a.Remote = remote
	_, _, d := openAndDeploy(t, a, db)
	d = waitStatus(t, a, d.ID)
	if d.Status != gantry.DeploymentFailed || !strings.Contains(d.Error, "could not be stored in the object store") {
		t.Fatalf("deployment %s: %q, want failed for the object store", d.Status, d.Error)
	}
	if code, _ := get(edge.New("localhost", stack.Table, ""), d.Subdomain, "/"); code == 200 {
		t.Fatal("the site is served although its upload failed")
	}
}

// openAndDeploy opens svc (closed at the test's end), makes an account
// and a static project of it, and queues a deployment of the project.
func openAndDeploy(t *testing.T, svc *deploy.Service, db *store.DB) (*gantry.User, *gantry.Project, *gantry.Deployment) {
	t.Helper()
	ctx := context.Background()
	if err := svc.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	user, p := siteOwner(t, db)
	d, err := svc.Create(ctx, user.ID, deploy.CreateRequest{ProjectID: p.ID})
	if err != nil {
		t.Fatal(err)
	}
	return user, p, d
}

// siteOwner makes an account and a static project of it.
func siteOwner(t *testing.T, db interface {
	CreateUser(context.Context, *gantry.User) error
	CreateProject(context.Context, *gantry.Project) error
}) (*gantry.User, *gantry.Project) {
	t.Helper()
	ctx := context.Background()
	u := &gantry.User{FullName: "Ada", Username: "ada", Email: "ada@example.com", PasswordHash: "x", IsActive: true,
		Subscription: gantry.Subscription{Plan: "free", MaxProjects: 3, MaxDeployments: 5}}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	p := &gantry.Project{UserID: u.ID, Name: "ada-site", Branch: "main", Type: "static",
		Repository: gantry.Repository{FullName: "ada/site", CloneURL: "http://127.0.0.1/ada/site.git"}}
	if err := db.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	return u, p
}

// TestBuildCacheFollowsTheProject: with an object store, the caches a
// build saved reach a server that does not have them (here: the same
// replica whose local caches folder is gone, as on a replica that never
// built the project): its next build restores them. Before, it started
// without ("No build cache yet").
func TestBuildCacheFollowsTheProject(t *testing.T) {
	e := newEnv(t)
	srv := s3test.Start(t)
	e.svc.Caches = &cachesync.Sync{Store: srv.Store("c")}
	p := e.project("cached", cachedRepo)
	if d := e.deploy(p); d.Status != gantry.DeploymentLive {
		t.Fatalf("first deploy %s\n%s", d.Status, strings.Join(e.logs(d.ID), "\n"))
	}
	deploy.WaitCacheSaves(e.svc)
	if err := os.RemoveAll(e.svc.CacheDir(p.ID)); err != nil {
		t.Fatal(err)
	}
	d := e.deploy(p)
	if logs := e.logs(d.ID); !hasLine(logs, "info: Restored build cache: ") {
		t.Fatalf("a build without the local caches restored nothing from the object store:\n%s", strings.Join(logs, "\n"))
	}
	// Deleting the project deletes its caches from the store too.
	deploy.WaitCacheSaves(e.svc)
	if err := e.projects().DeleteProject(context.Background(), e.user.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	if keys, err := srv.Store("c").List(context.Background(), "caches/"+p.ID+"/"); err != nil || len(keys) != 0 {
		t.Fatalf("the project's caches in the store after it was deleted: %v %v", keys, err)
	}
}

// TestAppWorkspaceInObjectStore: a server app's workspace is uploaded
// before its go-live, and another server restores it from the store
// (sitecache.Remote.Fill: what a replica taking the app over starts it
// from) with the app's files as built; deleting the deployment deletes
// its objects. With the store down the app does not go live.
func TestAppWorkspaceInObjectStore(t *testing.T) {
	e := newEnv(t)
	srv := s3test.Start(t)
	remote := &sitecache.Remote{Store: srv.Store("w")}
	e.svc.Remote = remote
	ctx := context.Background()
	p := e.project("Py API", pyApp("v1"))
	d := e.deploy(p)
	if d.Status != gantry.DeploymentLive {
		t.Fatalf("deploy %s\n%s", d.Status, strings.Join(e.logs(d.ID), "\n"))
	}
	dir := filepath.Join(t.TempDir(), "restored")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := remote.Fill(ctx, sitecache.App, d.ID, dir); err != nil {
		t.Fatalf("restore the workspace: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "app.py")); err != nil || !strings.Contains(string(b), `VERSION = "v1"`) {
		t.Fatalf("restored app.py: %v %.60q", err, b)
	}
	if err := e.svc.Delete(ctx, e.user.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	if ok, err := remote.Has(ctx, sitecache.App, d.ID); ok || err != nil {
		t.Fatalf("the workspace's manifest after the delete: %v %v", ok, err)
	}

	srv.Stop()
	d = e.deploy(p)
	if d.Status != gantry.DeploymentFailed || !strings.Contains(d.Error, "app's files could not be stored in the object store") {
		t.Fatalf("deploy with the store down: %s %q", d.Status, d.Error)
	}
	if code, _ := get(e.edge, d.Subdomain, "/"); code == 200 {
		t.Fatal("the app is served although its upload failed")
	}
}

// TestReplicaFetchesBeforeSwitching (SCALING.md §9 B2 with an object
// store): a go-live on A of a deployment whose files B does not have
// reaches B's edge through the change feed; B fetches the files first and
// serves the previous version meanwhile, never "no app here" and never a
// folder still being fetched. Before, B switched at once to a folder it
// did not have (its requests then waited for the fetch).
func TestReplicaFetchesBeforeSwitching(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var u *gantry.User
	var p *gantry.Project
	var v1, v3 *gantry.Deployment
	r := newReplicas(t, func(db *store.DB, dir string) {
		u, p, v1, _ = siteProject(t, db, dir)
		// v3 was built elsewhere and is stopped (no worker claims it):
		// its files are in the object store only.
		v3 = &gantry.Deployment{ProjectID: p.ID, UserID: u.ID, Version: "1.0.3", Subdomain: p.Subdomain,
			URL: "http://" + p.Subdomain + ".localhost:8080"}
		if err := db.CreateDeployment(ctx, v3); err != nil {
			t.Fatal(err)
		}
		for _, step := range []struct {
			d    *gantry.Deployment
			from string
		}{{v3, gantry.DeploymentPending}, {v1, gantry.DeploymentStopped}} {
			if _, err := db.GoLive(ctx, step.d.ID, step.from, gantry.Change{}); err != nil {
				t.Fatal(err)
			}
		}
	})
	srv := s3test.Start(t)
	remote := &sitecache.Remote{Store: srv.Store("b2")}
	cache, err := sitecache.Open(filepath.Join(t.TempDir(), "site-cache"), 64<<20, remote)
	if err != nil {
		t.Fatal(err)
	}
	cache.OnEvict = r.b.Table.Reopen
	r.b.Deploys.SiteCache = cache
	r.b.Deploys.Sites = deploy.EdgeSites{Table: r.b.Table, Cache: cache}

	elsewhere := t.TempDir()
	local := blobs.Open(filepath.Join(elsewhere, "blobs"), u.ID)
	site := filepath.Join(elsewhere, "sites", v3.ID)
	if _, err := (siteBuilder{map[string]string{"index.html": "v3 {id}"}}).Run(ctx,
		build.Job{SitesDir: filepath.Join(elsewhere, "sites"), BlobDir: local.Dir, DeploymentID: v3.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if err := remote.Publish(ctx, sitecache.Site, local, u.ID, v3.ID, site); err != nil {
		t.Fatal(err)
	}
	if _, err := r.db.GoLive(ctx, v3.ID, gantry.DeploymentStopped, gantry.Change{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		s, ok := r.b.Table.Lookup(p.Subdomain)
		if ok && s.DeploymentID == v3.ID {
			if _, err := os.Stat(filepath.Join(s.Dir, "index.html")); err != nil {
				t.Fatalf("B switched to v3 before its files were here: %v", err)
			}
			break
		}
		if !ok || s.DeploymentID != v1.ID {
			t.Fatalf("B served %q during the go-live, want v1 then v3", s.DeploymentID)
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("B still serves v1 5 s after the go-live of v3")
		}
		time.Sleep(time.Millisecond)
	}
	edgeB := edge.New("localhost", r.b.Table, "http://localhost:8080")
	edgeB.ConfigureFetch(cache)
	if code, body := get(edgeB, p.Subdomain, "/"); code != 200 || body != "v3 "+v3.ID {
		t.Fatalf("B after the switch: %d %q", code, body)
	}
}
