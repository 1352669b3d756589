package deploy_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
)

// roomFiles records size as what d's kept files take, as a big build's
// would (the files on disk stay small).
func (e *env) roomFiles(d *gantry.Deployment, size int64) {
	e.t.Helper()
	if err := e.db.SetDeploymentFiles(context.Background(), d.ID, size); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) mustDeploy(p *gantry.Project) *gantry.Deployment {
	e.t.Helper()
	d := e.deploy(p)
	if d.Status != gantry.DeploymentLive {
		e.t.Fatalf("deploy of %s: %s\n%s", p.Name, d.Status, strings.Join(e.logs(d.ID), "\n"))
	}
	return d
}

// roomLine is the line of d's log that says what was freed for it.
func (e *env) roomLine(d *gantry.Deployment) string {
	e.t.Helper()
	for _, l := range e.logs(d.ID) {
		if strings.HasPrefix(l, "info: Storage was full, so ") {
			return l
		}
	}
	e.t.Fatalf("no line saying what was freed in the log of %s:\n%s", d.ID, strings.Join(e.logs(d.ID), "\n"))
	return ""
}

// pruned checks that d lost its files to make room, with the line saying
// so in its own log, or that it kept them.
func (e *env) pruned(d *gantry.Deployment, want bool) {
	e.t.Helper()
	got := e.find(d.ID)
	_, statErr := os.Stat(e.svc.SiteDir(d.ID))
	if want {
		if got.PrunedAt == nil || got.FilesSize != 0 || statErr == nil {
			e.t.Errorf("%s: pruned at %v, files %d, folder err %v; want pruned, 0, gone", d.ID, got.PrunedAt, got.FilesSize, statErr)
		}
		if logs := e.logs(d.ID); !hasLine(logs, "info: "+deploy.MsgRoomLine) {
			e.t.Errorf("%s: no line saying why its files went:\n%s", d.ID, strings.Join(logs, "\n"))
		}
		return
	}
	if got.PrunedAt != nil || got.FilesSize == 0 || statErr != nil {
		e.t.Errorf("%s: pruned at %v, files %d, folder err %v; want its files kept", d.ID, got.PrunedAt, got.FilesSize, statErr)
	}
}

func (e *env) find(id string) *gantry.Deployment {
	e.t.Helper()
	d, err := e.db.FindDeployment(context.Background(), "", id)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

// An account whose stopped deployments, kept only for rollback, fill its
// 1 GB budget is not locked out: the next deploy removes the oldest of
// them (beyond each project's newest stopped one) first, names them in
// its log and goes live; when those are not enough, the projects' newest
// stopped ones go too, oldest first. Live deployments are never touched.
func TestRollbacksMakeRoom(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	site := e.project("site", map[string]string{"index.html": "<h1>site</h1>"})
	blog := e.project("blog", map[string]string{"index.html": "<h1>blog</h1>"})
	s1, s2 := e.mustDeploy(site), e.mustDeploy(site)
	b1 := e.mustDeploy(blog)
	s3 := e.mustDeploy(site)
	b2 := e.mustDeploy(blog)
	// site: s1, s2 stopped, s3 live; blog: b1 stopped, b2 live.
	e.roomFiles(s1, 500<<20)
	e.roomFiles(s2, 300<<20)
	e.roomFiles(b1, 400<<20)
	if u, _ := e.db.StorageUsage(ctx, e.user.ID); !u.Full() {
		t.Fatalf("usage %+v: want the budget full", u)
	}

	// The oldest rollback beyond site's newest stopped one is enough.
	s4 := e.mustDeploy(site)
	line := e.roomLine(s4)
	if !strings.Contains(line, "removed the files of 1 older deployment kept for rollback: site 1.0.0 (commit ") ||
		!strings.Contains(line, "stopped deployment of "+s1.CreatedAt.UTC().Format("2006-01-02 15:04")+" UTC, 500 MB)") {
		t.Errorf("got %q, want s1 named", line)
	}
	e.pruned(s1, true)
	e.pruned(s2, false)
	e.pruned(b1, false)
	if u, _ := e.db.StorageUsage(ctx, e.user.ID); u.Full() {
		t.Errorf("usage %+v after making room: want under the budget", u)
	}

	// Rollbacks beyond the newest are not enough: blog's newest stopped
	// deployment (older than site's) goes too; live ones stay.
	e.roomFiles(b1, gantry.GiB)
	s5 := e.mustDeploy(site)
	line = e.roomLine(s5)
	if !strings.Contains(line, "removed the files of 2 older deployments kept for rollback: site 1.0.0 (") ||
		!strings.Contains(line, "; blog 1.0.0 (") || !strings.Contains(line, ", 1 GB)") {
		t.Errorf("got %q, want s2 and b1 named", line)
	}
	e.pruned(s2, true)
	e.pruned(b1, true)
	e.pruned(s3, false) // site's newest stopped one
	for _, d := range []*gantry.Deployment{b2, s5} {
		if got := e.find(d.ID); got.Status != gantry.DeploymentLive || got.FilesSize == 0 {
			t.Errorf("%s: %s with files %d, want live with its files", d.ID, got.Status, got.FilesSize)
		}
	}
	if code, body := e.get(site.Subdomain, "/"); code != 200 || !strings.Contains(body, "site") {
		t.Errorf("site: got %d %q", code, body)
	}
	_ = s4
}

// When live deployments alone fill the budget, a deploy is refused with
// the biggest projects named, and nothing kept for rollback is removed
// for a deploy that cannot happen anyway.
func TestLiveDeploymentsFillStorage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	site := e.project("site", map[string]string{"index.html": "<h1>site</h1>"})
	shop := e.project("shop", map[string]string{"index.html": "<h1>shop</h1>"})
	old := e.mustDeploy(site)
	e.mustDeploy(site)
	big := e.mustDeploy(shop)
	e.roomFiles(big, gantry.GiB+gantry.GiB/10)
	e.roomFiles(old, 200<<20)

	_, err := e.svc.Create(ctx, e.user.ID, deploy.CreateRequest{ProjectID: site.ID, Version: "1.0.0"})
	msg := gantry.ErrorMessage(err)
	if gantry.ErrorCode(err) != gantry.EFORBIDDEN ||
		!strings.HasPrefix(msg, "Your projects use 1.3 GB of your 1 GB storage, all of it in live deployments and logs (shop 1.1 GB, site ") ||
		!strings.HasSuffix(msg, "). Stop or delete a project, or clear its logs, then deploy again.") {
		t.Fatalf("got %v, want EFORBIDDEN naming shop then site", err)
	}
	e.pruned(old, false)
	if ds, _ := e.db.ListDeployments(ctx, e.user.ID, gantry.DeploymentFilter{ProjectID: site.ID}); len(ds) != 2 {
		t.Errorf("got %d deployments of site after the refusal, want 2 (nothing queued)", len(ds))
	}

	// Stopping the big project makes its files a rollback: the next deploy
	// frees them and goes through.
	if _, err := e.svc.Stop(ctx, e.user.ID, shop.Subdomain, big.ID); err != nil {
		t.Fatal(err)
	}
	d := e.mustDeploy(site)
	if line := e.roomLine(d); !strings.Contains(line, "shop 1.0.0 (") {
		t.Errorf("got %q, want shop's stopped deployment named", line)
	}
	e.pruned(big, true)
}
