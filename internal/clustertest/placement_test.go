package clustertest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// appProject makes a server app's repository and project through r: a
// Node server answering "hello from <text>, run <id>" on PORT, the id
// drawn at each start of the process (every app is pid 3 in its sandbox).
func (c *cluster) appProject(r *replica, token, name, text string) project {
	t := c.t
	t.Helper()
	url := c.git.Repo(t, "ada/"+name, "main", "app", map[string]string{
		"package.json": `{"name":"` + name + `","version":"1.0.0","private":true,"scripts":{"start":"node server.js"}}`,
		"server.js": `const run = Math.random().toString(36).slice(2);
require("http").createServer((q, s) => s.end("hello from ` + text + `, run " + run))
  .listen(Number(process.env.PORT), "127.0.0.1");
`,
	})
	var p struct{ Project project }
	body := fmt.Sprintf(`{"repository":{"url":%q},"name":%q,"buildConfig":{"installCommand":"","buildCommand":"","outputDirectory":"","startCommand":"node server.js"}}`, url, name)
	if code := r.call(t, "POST", "/api/projects/public", token, body, &p); code != 201 {
		t.Fatalf("create app project %s: %d", name, code)
	}
	return p.Project
}

// placement reads deployment id's home node and generation.
func (c *cluster) placement(id string) (node string, gen int) {
	c.t.Helper()
	if err := c.db.QueryRow(`SELECT node_id, generation FROM app_placements WHERE deployment_id = $1`, id).Scan(&node, &gen); err != nil {
		c.t.Fatalf("placement of %s: %v", id, err)
	}
	return node, gen
}

// B5 and B7 (SCALING.md §9): a server app built and started on A is
// served through B, whose edge forwards it to A's peer port over the
// signed hop, also when B started after the app went live (B's start-up
// leaves it to its home and runs no copy); A's peer port refuses a
// request without the hop's signature. With GANTRY_APP_IDLE=3s the app
// falls asleep on A; a request through B wakes it on A — the same home,
// generation and no second copy — and gets its answer.
func TestAppServedThroughItsHome(t *testing.T) {
	c := newCluster(t, map[string]string{"GANTRY_APP_IDLE": "3s"})
	a := c.start("a")
	token := register(t, a, "ada")
	p := c.appProject(a, token, "hello", "the app")
	id := deploy(t, a, token, p.ID)
	if d := waitDone(t, a, token, id, 3*time.Minute); d.Status != "live" {
		t.Fatalf("the app did not go live: %s\n%s", d.Status, d.log())
	}
	b := c.start("b") // after the go-live: its start-up finds the app live on A

	// B5: through B, the answer of A's app.
	waitServed(t, b, p.Subdomain, "hello from the app", 10*time.Second)
	if node, gen := c.placement(id); node != "a" || gen != 1 {
		t.Fatalf("placement: %s generation %d; want a, 1", node, gen)
	}
	code, body := a.site(t, p.Subdomain)
	if code != 200 || !strings.HasPrefix(body, "hello from the app") {
		t.Fatalf("through a: %d %s", code, short(body))
	}
	_, viaB := b.site(t, p.Subdomain)
	if runOf(body) != runOf(viaB) {
		t.Fatalf("a and b answered from two copies of the app: %q and %q", body, viaB)
	}
	if n := c.starts(id); n != 1 {
		t.Fatalf("the app was started %d times, want once (on a)", n)
	}
	// A's peer port without the hop's signature: 403, and nothing served.
	req, _ := http.NewRequest("GET", "http://"+a.peer+"/", nil)
	req.Host = p.Subdomain + ".localhost:8080"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(raw), `"success":false`) || strings.Contains(string(raw), "hello") {
		t.Fatalf("unsigned request at a's peer port: %d %s; want 403", res.StatusCode, raw)
	}

	// B7: asleep on A, woken through B on A.
	deadline := time.Now().Add(30 * time.Second)
	for !c.sleeping(id) {
		if time.Now().After(deadline) {
			t.Fatalf("the app did not fall asleep on a:\n%s", a.warnings())
		}
		time.Sleep(200 * time.Millisecond)
	}
	code, body = b.site(t, p.Subdomain)
	if code != 200 || !strings.HasPrefix(body, "hello from the app") {
		t.Fatalf("a request through b for the sleeping app: %d %s; want the woken app's answer", code, short(body))
	}
	if runOf(body) == runOf(viaB) {
		t.Fatalf("the app answered from the process that went to sleep (run %s)", runOf(body))
	}
	if node, gen := c.placement(id); node != "a" || gen != 1 {
		t.Fatalf("placement after the wake: %s generation %d; want a, 1", node, gen)
	}
	if n := c.starts(id); n != 2 {
		t.Fatalf("the app was started %d times, want twice (built, then woken once)", n)
	}
	if code, again := a.site(t, p.Subdomain); code != 200 || runOf(again) != runOf(body) {
		t.Fatalf("a answers %d %q after the wake through b, want the same process as %q", code, again, body)
	}
}

// sleeping reads whether deployment id's app is marked asleep.
func (c *cluster) sleeping(id string) bool {
	var s bool
	if err := c.db.QueryRow(`SELECT sleeping FROM deployments WHERE id = $1`, id).Scan(&s); err != nil {
		c.t.Fatal(err)
	}
	return s
}

func runOf(body string) string {
	_, run, _ := strings.Cut(body, ", run ")
	return run
}

// starts counts the times deployment id's app was started (its log's
// "Starting the app" lines, whichever replica wrote them).
func (c *cluster) starts(id string) int {
	var n int
	if err := c.db.QueryRow(`SELECT count(*) FROM deployment_logs WHERE deployment_id = $1 AND message LIKE 'Starting the app%'`, id).Scan(&n); err != nil {
		c.t.Fatal(err)
	}
	return n
}

// B6 (SCALING.md §9): the home of a server app is killed (SIGKILL). Requests
// through the other replica answer 503 meanwhile, never 404; 3 leases after
// the last heartbeat the other replica takes the app over (generation 2),
// restores its workspace from the object store and serves it. The killed
// replica, started again, forwards to the new home and starts no copy.
func TestKilledHomeAppTakenOver(t *testing.T) {
	c, _ := objectStoreCluster(t)
	a := c.start("a")
	token := register(t, a, "ada")
	p := c.appProject(a, token, "phoenix", "the phoenix")
	id := deploy(t, a, token, p.ID)
	if d := waitDone(t, a, token, id, 3*time.Minute); d.Status != "live" {
		t.Fatalf("the app did not go live: %s\n%s", d.Status, d.log())
	}
	b := c.start("b")
	waitServed(t, b, p.Subdomain, "hello from the phoenix", 10*time.Second)

	a.kill()
	// 3 leases of silence, a beat, the restore and the app's start (the
	// runtime allows 60 s).
	deadline := time.Now().Add(3*lease + 90*time.Second)
	for {
		code, body := b.site(t, p.Subdomain)
		if code == 200 && strings.HasPrefix(body, "hello from the phoenix") {
			break
		}
		if code == 404 {
			t.Fatalf("b answered 404 while the app moved: %s", short(body))
		}
		if time.Now().After(deadline) {
			t.Fatalf("b did not take the app over: %d %s", code, short(body))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if node, gen := c.placement(id); node != "b" || gen != 2 {
		t.Fatalf("placement after the takeover: %s generation %d; want b, 2", node, gen)
	}
	_, viaB := b.site(t, p.Subdomain)

	a2 := c.restart(a)
	waitServed(t, a2, p.Subdomain, "hello from the phoenix", 10*time.Second)
	if _, viaA := a2.site(t, p.Subdomain); runOf(viaA) != runOf(viaB) {
		t.Fatalf("a, started again, answered from another copy: %q, b %q", viaA, viaB)
	}
	if n := c.starts(id); n != 2 {
		t.Fatalf("the app was started %d times, want twice (built on a, taken over by b)", n)
	}
	if node, gen := c.placement(id); node != "b" || gen != 2 {
		t.Fatalf("placement after a's restart: %s generation %d; want b, 2", node, gen)
	}
}
