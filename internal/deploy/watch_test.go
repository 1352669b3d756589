package deploy_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/project"
)

// stalledGitHost is a git host that accepts connections and never
// answers; it returns its address.
func stalledGitHost(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// TestCommitWatcherStalledHost mounts issue 24's point 18: two watched
// projects on a git host that never answers are due before a project on a
// working host that has a new commit; the watcher deploys it within
// seconds, not after the stalled host's timeouts one by one.
func TestCommitWatcherStalledHost(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	on := true
	stalled := stalledGitHost(t)
	for i := range 2 { // a Free account has 3 projects
		p := e.project(fmt.Sprintf("Stuck %d", i), map[string]string{"index.html": "stuck"})
		if _, err := e.projects().UpdateProject(ctx, e.user.ID, p.ID, project.Input{WatchCommits: &on}); err != nil {
			t.Fatal(err)
		}
		p, err := e.db.FindProject(ctx, "", p.ID)
		if err != nil {
			t.Fatal(err)
		}
		p.Repository.URL = fmt.Sprintf("http://%s/ada/stuck-%d.git", stalled, i)
		p.Repository.CloneURL = p.Repository.URL
		if err := e.db.UpdateProject(ctx, p); err != nil {
			t.Fatal(err)
		}
		// Due first.
		if err := e.db.FinishWatch(ctx, p.ID, e.git.Head(t, fmt.Sprintf("ada/stuck-%d", i), "main"), time.Now().Add(-time.Hour), 0); err != nil {
			t.Fatal(err)
		}
	}
	p := e.project("Watched", map[string]string{"index.html": "one"})
	if _, err := e.projects().UpdateProject(ctx, e.user.ID, p.ID, project.Input{WatchCommits: &on}); err != nil {
		t.Fatal(err)
	}
	if err := e.db.FinishWatch(ctx, p.ID, e.git.Head(t, "ada/watched", "main"), time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	// The new commit is there when the watcher starts, so its first
	// check of the project deploys it (its back-off never comes in).
	e.git.Repo(t, "ada/watched", "main", "second", map[string]string{"index.html": "two"})
	e.svc.Close() // the stack's own service runs no watcher
	svc := deploytest.Restarted(e.svc, e.table)
	svc.WatchInterval, svc.Branches = 100*time.Millisecond, e.hosts.Git
	start := time.Now()
	if err := svc.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	e.svc = svc

	for {
		ds, err := e.db.ListDeployments(ctx, e.user.ID, gantry.DeploymentFilter{ProjectID: p.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) > 0 {
			t.Logf("deployment queued %s after the watcher started", time.Since(start).Round(100*time.Millisecond))
			if d := e.live(ds[0]); d.Metadata.CommitMessage != "second" {
				t.Fatalf("watched deployment metadata %+v", d.Metadata)
			}
			break
		}
		// The stalled host holds the old single watcher 60 s per project
		// (githost's timeout), so 2 minutes; the margin is for loaded CI.
		if time.Since(start) > 50*time.Second {
			t.Fatalf("the watcher deployed nothing %s after it started: it waits on the stalled host", time.Since(start).Round(time.Second))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, body := e.get("watched", "/"); body != "two" {
		t.Fatalf("production serves %q", body)
	}
}
