package deploy_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
)

// recorder is a gantry.Notifier that keeps what it is told.
type recorder struct {
	mu   sync.Mutex
	sent []*gantry.Notification
}

func (r *recorder) Notify(ctx context.Context, n *gantry.Notification) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, n)
}

// take returns and forgets what was sent, as "type title action" lines.
func (r *recorder) take() ([]string, []*gantry.Notification) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lines []string
	for _, n := range r.sent {
		lines = append(lines, n.Type+" "+n.Title+" "+n.ActionURL)
	}
	sent := r.sent
	r.sent = nil
	return lines, sent
}

// TestEventNotifications checks that the service tells owners about
// interrupted builds, new projects, deployments that go live or fail, and
// deleted projects, and about nothing they did themselves on a deployment
// (stop, restart, delete).
func TestEventNotifications(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("site", map[string]string{"index.html": "ok"})
	e.svc.Close()

	// A build cut off by a crash fails at the next start, with a notification.
	cut := &gantry.Deployment{ProjectID: p.ID, UserID: e.user.ID, Version: "1.0.0", Subdomain: p.Subdomain,
		Status: gantry.DeploymentBuilding}
	if err := e.db.CreateDeployment(ctx, cut); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	old := e.svc
	e.svc = deploytest.Restarted(old, edge.NewTable())
	e.svc.Notify = rec
	if err := e.svc.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.svc.Close() })
	lines, sent := rec.take()
	if diff := cmp.Diff([]string{"error Deployment failed /deployments/" + cut.ID}, lines); diff != "" {
		t.Fatalf("after a restart (-want +got):\n%s", diff)
	}
	if n := sent[0]; n.UserID != e.user.ID || !strings.HasPrefix(n.Message, "site failed: Build interrupted") {
		t.Errorf("got %+v", n)
	}

	live := e.deploy(p)
	broken := e.project("broken", map[string]string{
		"package.json": `{"name":"broken","version":"1.0.0","scripts":{"build":"echo compiling; exit 1"}}`,
	})
	failed := e.deploy(broken)
	if live.Status != gantry.DeploymentLive || failed.Status != gantry.DeploymentFailed {
		t.Fatalf("got %s and %s, want live and failed", live.Status, failed.Status)
	}
	lines, sent = rec.take()
	want := []string{
		"success Deployment live /deployments/" + live.ID,
		"project Project created /projects/" + broken.ID,
		"error Deployment failed /deployments/" + failed.ID,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if msg := sent[2].Message; msg != "broken failed: "+failed.Error || !strings.Contains(failed.Error, "exited with code 1") {
		t.Errorf("failed message %q, error %q: want the reason the build failed", msg, failed.Error)
	}

	// The owner's own actions on a deployment say nothing.
	if _, err := e.svc.Stop(ctx, e.user.ID, p.Subdomain, live.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Restart(ctx, e.user.ID, p.Subdomain, live.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Delete(ctx, e.user.ID, failed.ID); err != nil {
		t.Fatal(err)
	}
	if lines, _ := rec.take(); len(lines) != 0 {
		t.Fatalf("stop, restart and delete notified %v", lines)
	}

	if err := e.projects().DeleteProject(ctx, e.user.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	lines, sent = rec.take()
	if diff := cmp.Diff([]string{"project Project deleted /projects"}, lines); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// site had the cut-off build and the live one.
	if msg := sent[0].Message; msg != "site and its 2 deployments were deleted; its address no longer serves a site." {
		t.Errorf("deleted message %q", msg)
	}
}
