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
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/objstore/s3test"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sitecache"
)

const placementLease = 600 * time.Millisecond

// takeoverWithin bounds a takeover: 3 leases of silence, a beat, the
// workspace's restore and the app's start, which deploytest allows 30 s
// (a Python app took 18 s to answer on a loaded machine).
const takeoverWithin = 3*placementLease + 30*time.Second + 30*time.Second

// placed returns old's configuration as node's deploy service over its own
// edge table, holding its apps' placements in e's database.
func (e *env) placed(old *deploy.Service, node string) (*deploy.Service, *edge.Table) {
	e.t.Helper()
	return e.placedIn(old, node, old.DataDir)
}

// placedIn is placed with the data folder dir.
func (e *env) placedIn(old *deploy.Service, node, dir string) (*deploy.Service, *edge.Table) {
	e.t.Helper()
	table := edge.NewTable()
	svc := deploytest.Restarted(old, table)
	svc.DataDir = dir
	svc.NodeID, svc.PeerAddr = node, node+".peer:9000"
	svc.Placements, svc.PlacementLease = e.db.Placements(), placementLease
	if err := svc.Open(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	return svc, table
}

// answer asks the app of sub for / through an edge over table.
func answer(t *testing.T, table *edge.Table, sub string) (int, string) {
	t.Helper()
	return answerPath(t, table, sub, "/")
}

// App placement and takeover between two nodes on one database and one
// data folder (the workspace shared, as the object store will share it):
// the app built on A is homed on A; B, starting, routes it to A's peer
// address and starts no copy. A dies (its service closed, its app with
// it): after 3 leases without A's heartbeat B takes the app over (one
// generation more), starts it and serves it. A, started again, leaves it
// to B. When a third node takes it over while B is cut off, B's next
// renewal finds the generation changed and stops its copy at once.
func TestAppTakenOverFromASilentNode(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.svc.Close()
	a, tableA := e.placed(e.svc, "a")
	e.svc, e.table = a, tableA
	p := e.project("Placed API", pyApp("v1"))
	d := e.deploy(p)
	e.mustLive(d)
	pl := e.db.Placements()
	home := func() gantry.AppPlacement {
		t.Helper()
		hs, err := pl.Homes(ctx, d.ID)
		if err != nil || len(hs) != 1 {
			t.Fatalf("homes: %v %v", hs, err)
		}
		return hs[0]
	}
	if h := home(); h.Node != "a" || h.Generation != 1 || h.PeerAddr != "a.peer:9000" {
		t.Fatalf("placement after the build: %+v; want a's, generation 1", h)
	}

	b, tableB := e.placed(a, "b")
	defer func() { b.Close() }()
	if site, _ := tableB.Lookup(p.Subdomain); site.Home != "a.peer:9000" || site.HomeNode != "a" || site.ProxyTarget != "" {
		t.Fatalf("b routes the app to %+v; want a's peer address, no copy of its own", site)
	}

	a.Close() // A dies: its app stops, its heartbeat ends
	deadline := time.Now().Add(takeoverWithin)
	for {
		if code, body := answer(t, tableB, p.Subdomain); code == http.StatusOK && strings.HasPrefix(body, "v1") {
			break
		}
		if time.Now().After(deadline) {
			site, _ := tableB.Lookup(p.Subdomain)
			t.Fatalf("b did not take the app over: its route %+v, placement %+v\n%s", site, home(), strings.Join(e.logs(d.ID), "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if h := home(); h.Node != "b" || h.Generation != 2 {
		t.Fatalf("placement after the takeover: %+v; want b's, generation 2", h)
	}
	if !strings.Contains(strings.Join(e.logs(d.ID), "\n"), "Node a stopped: node b took this app over (generation 2)") {
		t.Fatalf("no takeover line in the log:\n%s", strings.Join(e.logs(d.ID), "\n"))
	}

	a2, tableA2 := e.placed(a, "a") // A comes back
	defer a2.Close()
	if site, _ := tableA2.Lookup(p.Subdomain); site.HomeNode != "b" || site.ProxyTarget != "" {
		t.Fatalf("a, started again, routes the app to %+v; want b's home, no copy", site)
	}

	// Node c takes the app over while b is cut off: b stops its copy at
	// its next renewal and forwards to c.
	site, _ := tableB.Lookup(p.Subdomain)
	if _, ok, err := pl.Claim(ctx, d.ID, "c", placementLease, true); !ok || err != nil {
		t.Fatal(ok, err)
	}
	deadline = time.Now().Add(15 * time.Second) // a beat every third of a lease, on a loaded machine
	for {
		now, _ := tableB.Lookup(p.Subdomain)
		if now.HomeNode == "c" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b still routes the app to %+v after c took it over", now)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if resp, err := http.Get("http://" + site.ProxyTarget + "/"); err == nil {
		resp.Body.Close()
		t.Fatalf("b's copy of the app still answers at %s after losing it", site.ProxyTarget)
	}
	if !strings.Contains(strings.Join(e.logs(d.ID), "\n"), "Stopped on node b: another node took this app over") {
		t.Fatalf("no fencing line in the log:\n%s", strings.Join(e.logs(d.ID), "\n"))
	}
}

// B6 with the object store: the node taking the app over has its own data
// folder, without the app's workspace; it restores the workspace from the
// object store (each file checked), starts the app from it and serves it,
// one generation more.
func TestAppTakenOverFromTheObjectStore(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	srv := s3test.Start(t)
	e.svc.Close()
	e.svc.Remote = &sitecache.Remote{Store: srv.Store("w")}
	a, tableA := e.placed(e.svc, "a")
	e.svc, e.table = a, tableA
	p := e.project("Stored API", pyApp("v2"))
	d := e.deploy(p)
	e.mustLive(d)

	dir, err := os.MkdirTemp("", "gantry-placement-b-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { _ = sandbox.RemoveTree(dir) })
	b, tableB := e.placedIn(a, "b", dir)
	defer func() { b.Close() }()
	if site, _ := tableB.Lookup(p.Subdomain); site.HomeNode != "a" {
		t.Fatalf("b routes the app to %+v; want a", site)
	}
	a.Close()
	deadline := time.Now().Add(takeoverWithin)
	for {
		if code, body := answer(t, tableB, p.Subdomain); code == http.StatusOK && strings.HasPrefix(body, "v2") {
			break
		}
		if time.Now().After(deadline) {
			site, _ := tableB.Lookup(p.Subdomain)
			t.Fatalf("b did not take the app over from the object store: its route %+v\n%s", site, strings.Join(e.logs(d.ID), "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	hs, _ := e.db.Placements().Homes(ctx, d.ID)
	if len(hs) != 1 || hs[0].Node != "b" || hs[0].Generation != 2 {
		t.Fatalf("placement: %+v; want b's, generation 2", hs)
	}
	if _, err := os.Stat(filepath.Join(sandbox.FilesDir(b.WorkDir(d.ID)), "app.py")); err != nil {
		t.Fatalf("the restored workspace: %v", err)
	}
}

// TestTakenOverAppGetsItsDataSnapshot mounts issue 28's point 5 on
// replicas: the app's /data stays on its home node, so the node taking
// it over restores the folder's newest snapshot from the object store
// and says in the deployment's log how old it was; the rows written
// after that snapshot are the ones lost.
func TestTakenOverAppGetsItsDataSnapshot(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	srv := s3test.Start(t)
	e.svc.Close()
	e.svc.Remote = &sitecache.Remote{Store: srv.Store("d")}
	a, tableA := e.placed(e.svc, "a")
	e.svc, e.table = a, tableA
	p := e.project("Notes", dataApp("v1"))
	d := e.deploy(p)
	e.mustLive(d)
	for _, want := range []string{"1", "2"} {
		if _, body := answerPath(t, tableA, p.Subdomain, "/add"); body != want {
			t.Fatalf("add on a: %q, want %s", body, want)
		}
	}
	deploy.TakeSnapshots(a, ctx)
	answerPath(t, tableA, p.Subdomain, "/add") // the third row, after the snapshot

	dir, err := os.MkdirTemp("", "gantry-placement-b-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { _ = sandbox.RemoveTree(dir) })
	b, tableB := e.placedIn(a, "b", dir)
	defer func() { b.Close() }()
	a.Close()
	deadline := time.Now().Add(takeoverWithin)
	for {
		if code, body := answerPath(t, tableB, p.Subdomain, "/count"); code == http.StatusOK {
			if body != "2" {
				t.Fatalf("after the takeover the count is %q, want the snapshot's 2", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b did not take the app over:\n%s", strings.Join(e.logs(d.ID), "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if logs := strings.Join(e.logs(d.ID), "\n"); !strings.Contains(logs, "Restored /data from its snapshot of ") {
		t.Fatalf("no restore line in the log:\n%s", logs)
	}
}

// answerPath asks the app of sub for path through an edge over table.
func answerPath(t *testing.T, table *edge.Table, sub, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	edge.New("localhost", table, "http://localhost:8080").ServeHTTP(rec, httptest.NewRequest("GET", "http://"+sub+".localhost"+path, nil))
	return rec.Code, rec.Body.String()
}

// A server app stopped through another node stops on its home as soon as
// the home applies the change from the feed: before, the home's edge
// showed the stopped page but its app kept running.
func TestAppStoppedThroughAnotherNode(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.svc.Close()
	a, tableA := e.placed(e.svc, "a")
	e.svc, e.table = a, tableA
	p := e.project("Stopped API", pyApp("v3"))
	d := e.deploy(p)
	e.mustLive(d)
	site, _ := tableA.Lookup(p.Subdomain)
	since, err := e.db.Feed().RouteSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := e.placed(a, "b")
	defer b.Close()
	if _, err := b.Stop(ctx, e.user.ID, p.Subdomain, d.ID); err != nil {
		t.Fatal(err)
	}
	deploy.NewReplica(a, e.db.Feed(), since).CatchUpRoutes(ctx)
	if now, _ := tableA.Lookup(p.Subdomain); now.Status != gantry.DeploymentStopped {
		t.Fatalf("a routes the stopped app to %+v", now)
	}
	if resp, err := http.Get("http://" + site.ProxyTarget + "/"); err == nil {
		resp.Body.Close()
		t.Fatalf("a's app still answers at %s after its deployment was stopped through b", site.ProxyTarget)
	}
}
