package clustertest

import (
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/objstore/s3test"
)

// objectStoreCluster is a cluster whose replicas share an object store:
// a real S3-compatible server (cmd/s3serve) the test can stop.
func objectStoreCluster(t *testing.T) (*cluster, *s3test.Server) {
	t.Helper()
	srv := s3test.Start(t)
	env := map[string]string{}
	for _, kv := range srv.Env("cluster") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return newCluster(t, env), srv
}

// waitServed polls r's edge until subdomain answers 200 with want.
func waitServed(t *testing.T, r *replica, subdomain, want string, within time.Duration) {
	t.Helper()
	var code int
	var body string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if code, body = r.site(t, subdomain); code == 200 && strings.Contains(body, want) {
			return
		}
	}
	t.Fatalf("%s on %s: %d %q after %s, want 200 with %q", subdomain, r.node, code, short(body), within, want)
}

// TestObjectStoreDown (B10): a site built on one replica is served by
// both (the other fetches it from the object store). With the store
// stopped, cached sites still answer 200 on both; a site the other
// replica has not fetched yet answers 503 "temporarily unavailable",
// never 404; a new build fails saying its files could not be stored, and
// nothing goes live. Once the store is back the next build goes live and
// both serve it.
func TestObjectStoreDown(t *testing.T) {
	c, srv := objectStoreCluster(t)
	a, b := c.start("a"), c.start("b")
	byNode := map[string]*replica{"a": a, "b": b}
	token := register(t, a, "ola")

	url, cmd := c.slowSite("ola", "warm", 1, "warm-v1")
	warm := createProject(t, a, token, url, "warm", cmd)
	id := deploy(t, a, token, warm.ID)
	if d := waitDone(t, a, token, id, 90*time.Second); d.Status != "live" {
		t.Fatalf("warm site: %s\n%s", d.Status, d.log())
	}
	for _, r := range []*replica{a, b} {
		waitServed(t, r, warm.Subdomain, "warm-v1", 5*time.Second)
	}

	url, cmd = c.slowSite("ola", "cold", 1, "cold-v1")
	cold := createProject(t, b, token, url, "cold", cmd)
	coldID := deploy(t, b, token, cold.ID)
	if d := waitDone(t, b, token, coldID, 90*time.Second); d.Status != "live" {
		t.Fatalf("cold site: %s\n%s", d.Status, d.log())
	}
	node, _ := c.claim(coldID)
	builtOn := byNode[node]
	other := a
	if builtOn == a {
		other = b
	}

	srv.Stop()
	for _, r := range []*replica{a, b} {
		if code, body := r.site(t, warm.Subdomain); code != 200 || !strings.Contains(body, "warm-v1") {
			t.Fatalf("a cached site on %s with the store down: %d %q", r.node, code, body)
		}
	}
	if code, body := builtOn.site(t, cold.Subdomain); code != 200 || !strings.Contains(body, "cold-v1") {
		t.Fatalf("the cold site on %s, which built it, with the store down: %d %q", builtOn.node, code, body)
	}
	// The change feed may take a moment to bring the route: never a 404
	// once it did, and a 503 that says why.
	var code int
	var body string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if code, body = other.site(t, cold.Subdomain); code != 404 {
			break
		}
	}
	if code != 503 || !strings.Contains(body, "temporarily unavailable") {
		t.Fatalf("a site %s has not fetched, with the store down: %d %q, want 503 temporarily unavailable", other.node, code, short(body))
	}

	id = deploy(t, a, token, warm.ID)
	d := waitDone(t, a, token, id, 90*time.Second)
	if d.Status != "failed" || !d.hasLine("could not be stored in the object store") {
		t.Fatalf("a build with the store down: %s, want failed for the object store\n%s", d.Status, d.log())
	}
	for _, r := range []*replica{a, b} {
		if code, body := r.site(t, warm.Subdomain); code != 200 || !strings.Contains(body, "warm-v1") {
			t.Fatalf("the live site on %s after a failed build: %d %q", r.node, code, body)
		}
	}

	srv.Restart()
	// Misses fail at once for sitecache.DefaultStoreRetry after a fetch
	// found the store down.
	waitServed(t, other, cold.Subdomain, "cold-v1", 20*time.Second)
	id = deploy(t, b, token, warm.ID)
	if d := waitDone(t, b, token, id, 90*time.Second); d.Status != "live" {
		t.Fatalf("a build once the store is back: %s\n%s", d.Status, d.log())
	}
	for _, r := range []*replica{a, b} {
		waitServed(t, r, warm.Subdomain, "warm-v1", 5*time.Second)
	}
}

// short is the start of a page, for a failure's message.
func short(body string) string {
	if i := strings.Index(body, "<h1>"); i >= 0 {
		body = body[i:]
	}
	if len(body) > 160 {
		body = body[:160] + "…"
	}
	return body
}
