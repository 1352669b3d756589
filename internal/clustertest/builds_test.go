package clustertest

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

const restartLine = "Build restarted: the server building it stopped (attempt 2)"

// TestSecondReplicaStartsMidBuild (SCALING.md §1.1): a replica starting
// while another builds leaves that build alone; it goes live as attempt 1
// of the replica that claimed it. Before build leases the newcomer's
// start-up failed every build in progress ("the platform restarted").
func TestSecondReplicaStartsMidBuild(t *testing.T) {
	c := newCluster(t, nil)
	a := c.start("a")
	token := register(t, a, "ada")
	url, cmd := c.slowSite("ada", "startup", 4001, "built-by-a")
	p := createProject(t, a, token, url, "startup", cmd)
	id := deploy(t, a, token, p.ID)
	builder(t, "build.js 4001", 60*time.Second, a)

	b := c.start("b")
	d := waitDone(t, b, token, id, 90*time.Second)
	if d.Status != "live" || d.hasLine("interrupted") || d.hasLine("restarted") {
		t.Fatalf("A's build after replica B started: %s, want live without a restart\n%s", d.Status, d.log())
	}
	if node, attempt := c.claim(id); node != "a" || attempt != 1 {
		t.Fatalf("built by %q as attempt %d, want a, attempt 1", node, attempt)
	}
	if code, body := a.site(t, p.Subdomain); code != 200 || !strings.Contains(body, "built-by-a") {
		t.Fatalf("the site on A: %d %q", code, body)
	}
}

// TestKilledBuilderTakenOver (B3): the replica building is killed
// (SIGKILL); the other takes the build over once its lease lapsed and
// makes it live as attempt 2, saying why in the log, and serves it. The
// killed replica, restarted while the other builds attempt 2, leaves that
// build alone.
func TestKilledBuilderTakenOver(t *testing.T) {
	c, token, p, id, dead, other := buildOnTwo(t, "bob", "killed", 4002, "finished")
	dead.kill()
	// Attempt 2: the takeover (a lease and a reaper tick), then the same
	// clone and sandbox start attempt 1 was given 60 s for.
	builder(t, "build.js 4002", 60*time.Second, other)
	c.restart(dead)
	d := waitDone(t, other, token, id, 90*time.Second)
	if d.Status != "live" || !d.hasLine(restartLine) || d.hasLine("Build failed") || d.hasLine("interrupted") {
		t.Fatalf("after %s was killed mid-build: %s, want live with %q\n%s", dead.node, d.Status, restartLine, d.log())
	}
	if node, attempt := c.claim(id); node != other.node || attempt != 2 {
		t.Fatalf("built by %q as attempt %d, want %s, attempt 2", node, attempt, other.node)
	}
	var live int
	if err := c.db.QueryRow("SELECT count(*) FROM deployments WHERE project_id = $1 AND status = 'live'", p.ID).Scan(&live); err != nil || live != 1 {
		t.Fatalf("live deployments of the project: %d (%v), want 1", live, err)
	}
	if code, body := other.site(t, p.Subdomain); code != 200 || !strings.Contains(body, "finished") {
		t.Fatalf("the site on %s, which built it: %d %q", other.node, code, body)
	}
}

// TestPausedBuilderFencedOff (B4): the replica building is paused
// (SIGSTOP) past its lease while its build runs on and ends; the other
// replica takes the build over and makes it live as attempt 2; resumed
// (SIGCONT), the paused one's late outcome is refused: the deployment
// stays live once, by the other.
func TestPausedBuilderFencedOff(t *testing.T) {
	c, token, p, id, zombie, other := buildOnTwo(t, "cyd", "paused", 3003, "outcome")
	zombie.signal(syscall.SIGSTOP)
	// The other replica builds attempt 2; the zombie's own build process
	// (not paused) ends meanwhile, so its outcome waits for the zombie.
	builder(t, "build.js 3003", 60*time.Second, other) // as in B3
	zombie.signal(syscall.SIGCONT)

	d := waitDone(t, other, token, id, 90*time.Second)
	time.Sleep(2 * lease) // whatever the resumed replica still does
	var after struct{ Deployment deployment }
	other.call(t, "GET", "/api/deployments/"+id, token, "", &after)
	if d.Status != "live" || after.Deployment.Status != "live" || !d.hasLine(restartLine) ||
		after.Deployment.hasLine("Build failed") || strings.Count(after.Deployment.log(), "Deployment is live") != 1 {
		t.Fatalf("after %s was paused past its lease: %s then %s, want live once\n%s", zombie.node, d.Status, after.Deployment.Status, after.Deployment.log())
	}
	if node, attempt := c.claim(id); node != other.node || attempt != 2 {
		t.Fatalf("built by %q as attempt %d, want %s, attempt 2", node, attempt, other.node)
	}
	if code, body := other.site(t, p.Subdomain); code != 200 || !strings.Contains(body, "outcome") {
		t.Fatalf("the site on %s, which built it: %d %q", other.node, code, body)
	}
}

// buildOnTwo starts replicas a and b and deploys a slow site of user's
// (its build waits ms, then writes text) through a; it returns once one of
// them builds it: that one, and the other.
func buildOnTwo(t *testing.T, user, name string, ms int, text string) (c *cluster, token string, p project, id string, building, other *replica) {
	c = newCluster(t, nil)
	a, b := c.start("a"), c.start("b")
	token = register(t, a, user)
	url, cmd := c.slowSite(user, name, ms, text)
	p = createProject(t, a, token, url, name, cmd)
	id = deploy(t, a, token, p.ID)
	building = builder(t, fmt.Sprintf("build.js %d", ms), 60*time.Second, a, b)
	return c, token, p, id, building, map[*replica]*replica{a: b, b: a}[building]
}
