package deploy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// storageEnv is a deployment service over a real database and data folder
// that never builds: deployments are made through the store, with their
// published files written by hand.
type storageEnv struct {
	t     *testing.T
	db    *store.DB
	svc   *deploy.Service
	table *edge.Table
	user  *gantry.User
	p     *gantry.Project
}

func newStorageEnv(t *testing.T) *storageEnv {
	t.Helper()
	e := &storageEnv{t: t, db: storetest.MustOpenDB(t)}
	var mu sync.Mutex
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e.db.Now = func() time.Time { // one second per call: deployments are ordered
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	ctx := context.Background()
	e.user = &gantry.User{FullName: "Ada", Username: "ada", Email: "ada@example.com", PasswordHash: "x", IsActive: true}
	if err := e.db.CreateUser(ctx, e.user); err != nil {
		t.Fatal(err)
	}
	e.p = &gantry.Project{UserID: e.user.ID, Name: "site", Branch: "main",
		Repository: gantry.Repository{FullName: "ada/site", CloneURL: "http://127.0.0.1/ada/site.git"}}
	if err := e.db.CreateProject(ctx, e.p); err != nil {
		t.Fatal(err)
	}
	stack := deploytest.New(t, deploytest.Options{DB: e.db, Poll: time.Hour})
	e.svc, e.table = stack.Deploys, stack.Table
	return e
}

// built stores a deployment of the project that ended with status, with a
// published site of size bytes on disk (its size not recorded yet, as
// before sizes were recorded).
func (e *storageEnv) built(status string, size int) *gantry.Deployment {
	e.t.Helper()
	ctx := context.Background()
	d := &gantry.Deployment{ProjectID: e.p.ID, UserID: e.user.ID, Version: "1.0.0", Subdomain: e.p.Subdomain,
		URL: "http://" + e.p.Subdomain + ".localhost:8080"}
	if err := e.db.CreateDeployment(ctx, d); err != nil {
		e.t.Fatal(err)
	}
	d.Status = status
	if err := e.db.UpdateDeployment(ctx, d); err != nil {
		e.t.Fatal(err)
	}
	dir := e.svc.SiteDir(d.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(strings.Repeat("x", size)), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return d
}

func (e *storageEnv) find(id string) *gantry.Deployment {
	e.t.Helper()
	d, err := e.db.FindDeployment(context.Background(), "", id)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

func TestStartUpMeasuresAndPrunes(t *testing.T) {
	t.Parallel()
	e := newStorageEnv(t)
	ctx := context.Background()
	var stopped []*gantry.Deployment
	for i := 0; i < 13; i++ {
		stopped = append(stopped, e.built(gantry.DeploymentStopped, 10_000+i))
	}
	live := e.built(gantry.DeploymentLive, 5000)
	if err := e.db.SetActiveDeployment(ctx, e.p.ID, live.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.svc.Close() })

	var total int64
	for i, d := range stopped {
		got := e.find(d.ID)
		_, statErr := os.Stat(e.svc.SiteDir(d.ID))
		if i < 3 { // the oldest three of 13
			if got.PrunedAt == nil || got.FilesSize != 0 || statErr == nil {
				t.Errorf("stopped #%d: pruned at %v, files %d, folder err %v; want pruned, 0, gone", i, got.PrunedAt, got.FilesSize, statErr)
			}
			if logs, _ := e.db.Logs(ctx, d.ID, 0, 0); len(logs) != 1 || logs[0].Message != deploy.MsgPrunedLine {
				t.Errorf("stopped #%d: got log %+v, want the pruning line", i, logs)
			}
			continue
		}
		// Measured in allocated blocks: at least the file, at most a few blocks more.
		if got.PrunedAt != nil || got.FilesSize < int64(10_000+i) || got.FilesSize > 64<<10 || statErr != nil {
			t.Errorf("stopped #%d: pruned at %v, files %d, folder err %v; want kept and measured", i, got.PrunedAt, got.FilesSize, statErr)
		}
		total += got.FilesSize
	}
	lv := e.find(live.ID)
	if lv.PrunedAt != nil || lv.FilesSize < 5000 {
		t.Fatalf("live deployment: pruned at %v, files %d; want kept and measured", lv.PrunedAt, lv.FilesSize)
	}
	u, err := e.db.StorageUsage(ctx, e.user.ID)
	if err != nil || u.Files != total+lv.FilesSize {
		t.Fatalf("usage: got %+v, %v; want files %d", u, err, total+lv.FilesSize)
	}

	// A pruned deployment cannot be rolled back to; a kept one can.
	_, err = e.svc.Restart(ctx, e.user.ID, e.p.Subdomain, stopped[0].ID)
	if gantry.ErrorCode(err) != gantry.ECONFLICT || gantry.ErrorMessage(err) != gantry.MsgPruned {
		t.Fatalf("restart of a pruned deployment: got %v, want ECONFLICT %q", err, gantry.MsgPruned)
	}
	if got := e.find(stopped[0].ID); got.Status != gantry.DeploymentStopped {
		t.Fatalf("refused restart changed the status to %q", got.Status)
	}
	d, err := e.svc.Restart(ctx, e.user.ID, e.p.Subdomain, stopped[3].ID)
	if err != nil || d.Status != gantry.DeploymentLive {
		t.Fatalf("rollback to a kept deployment: got %+v, %v", d, err)
	}
	if site, ok := e.table.Lookup(e.p.Subdomain); !ok || site.DeploymentID != stopped[3].ID {
		t.Fatalf("the subdomain serves %+v, want the rolled-back deployment", site)
	}
}

func TestDeployRefusedWhenStorageFull(t *testing.T) {
	t.Parallel()
	e := newStorageEnv(t)
	ctx := context.Background()
	big := e.built(gantry.DeploymentLive, 10)
	if err := e.db.SetDeploymentFiles(ctx, big.ID, gantry.GiB+gantry.GiB/50); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Create(ctx, e.user.ID, deploy.CreateRequest{ProjectID: e.p.ID})
	want := "Your projects use 1.02 GB of your 1 GB storage, all of it in live deployments and logs (site 1.02 GB). Stop or delete a project, or clear its logs, then deploy again."
	if gantry.ErrorCode(err) != gantry.EFORBIDDEN || gantry.ErrorMessage(err) != want {
		t.Fatalf("got %v, want EFORBIDDEN %q", err, want)
	}
	if ds, _ := e.db.ListDeployments(ctx, e.user.ID, gantry.DeploymentFilter{}); len(ds) != 1 {
		t.Fatalf("got %d deployments after the refusal, want 1 (nothing queued)", len(ds))
	}

	// Exactly at the budget is full too; one byte under is not.
	for _, tc := range []struct {
		size    int64
		refused bool
	}{{gantry.GiB, true}, {gantry.GiB - 1, false}} {
		if err := e.db.SetDeploymentFiles(ctx, big.ID, tc.size); err != nil {
			t.Fatal(err)
		}
		_, err := e.svc.Create(ctx, e.user.ID, deploy.CreateRequest{ProjectID: e.p.ID})
		if refused := gantry.ErrorCode(err) == gantry.EFORBIDDEN; refused != tc.refused {
			t.Fatalf("usage %d of %d: refused %v (%v), want %v", tc.size, gantry.GiB, refused, err, tc.refused)
		}
	}
	if ds, _ := e.db.ListDeployments(ctx, e.user.ID, gantry.DeploymentFilter{Status: gantry.DeploymentPending}); len(ds) != 1 {
		t.Fatalf("got %d queued deployments, want the 1 allowed", len(ds))
	}
}
