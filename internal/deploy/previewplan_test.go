package deploy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
)

// TestPreviewsSleepAndCount: a preview's server app sleeps after
// PreviewIdle (sooner than production's AppIdle, and also when the
// project is always on), its label wakes it; and previews count against
// the plan's live deployments, so deploy hooks with ?branch= cannot run
// more apps than the plan allows.
func TestPreviewsSleepAndCount(t *testing.T) {
	e := newEnv(t)
	e.withPlan(2)
	ctx := context.Background()
	p := e.project("Nappy", pyApp("main"))
	prod := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID}))
	e.git.Repo(t, "ada/nappy", "feature", "feature", pyApp("feature"))
	pre := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Branch: "feature", Trigger: gantry.TriggerHook}))

	// A second branch would be a third live deployment: refused when it
	// is asked for, as a deploy hook's ?branch= is.
	e.git.Repo(t, "ada/nappy", "other", "other", pyApp("other"))
	_, err := e.svc.Trigger(ctx, gantry.DeployTrigger{ProjectID: p.ID, Branch: "other", Trigger: gantry.TriggerHook})
	if gantry.ErrorCode(err) != gantry.EFORBIDDEN || gantry.ErrorMessage(err) != gantry.ErrorMessage(gantry.ErrLiveLimit(e.user.Subscription)) {
		t.Fatalf("a third live deployment: %v", err)
	}
	// A new commit of the live preview's branch replaces it: allowed.
	e.git.Repo(t, "ada/nappy", "feature", "feature 2", pyApp("feature2"))
	pre2 := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Branch: "feature", Trigger: gantry.TriggerHook}))
	e.deploymentStatus(pre.ID, gantry.DeploymentStopped)

	// Always on keeps production awake, not previews.
	p.AlwaysOn = true
	if err := e.db.UpdateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	_, table, addr := e.sleepyPreviews(time.Hour, 2*time.Second)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code, body := fetch(t, addr, pre2.Subdomain, "/")
		if code == 200 && body == "feature2 " {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("preview after the restart: %d %q", code, body)
		}
	}
	e.waitAsleep(table, pre2.Subdomain, pre2.ID)
	e.waitLog(pre2.ID, "App asleep after 2s without a request")
	if site, _ := table.Lookup(p.Subdomain); site.ProxyTarget == "" {
		t.Fatal("the always-on production app fell asleep")
	}
	if d, _ := e.db.FindDeployment(ctx, "", prod.ID); d.Sleeping || d.Status != gantry.DeploymentLive {
		t.Fatalf("production: %s sleeping=%v", d.Status, d.Sleeping)
	}
	// Its label wakes it.
	if code, body := fetch(t, addr, pre2.Subdomain, "/"); code != 200 || body != "feature2 " {
		t.Fatalf("woken preview: %d %q\n%s", code, body, strings.Join(e.logs(pre2.ID), "\n"))
	}
	if code, body := fetch(t, addr, p.Subdomain, "/"); code != 200 || body != "main " {
		t.Fatalf("production: %d %q", code, body)
	}
}
