package clustertest

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// goLiveBound is how soon after a go-live's commit the other replica's
// edge serves it (SCALING.md §9 B2).
const goLiveBound = 2 * time.Second

// answer is one answer of an edge, and when it came.
type answer struct {
	at   time.Time
	code int
	body string
}

// watcher asks one replica's edge for one host again and again, as a
// visitor reloading would, and keeps every answer.
type watcher struct {
	mu      sync.Mutex
	answers []answer
	stop    chan struct{}
	done    chan struct{}
}

// watch starts asking r for host every 10 ms until stop.
func watch(r *replica, host string) *watcher {
	w := &watcher{stop: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Timeout: 10 * time.Second}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			code, body := get(client, r, host, "/", "")
			w.mu.Lock()
			w.answers = append(w.answers, answer{time.Now(), code, body})
			w.mu.Unlock()
		}
	}()
	return w
}

// until waits for an answer holding want (within the bound after since)
// and stops asking; it fails t unless every answer before it was 200 with
// old ("" for none: answers before the first one are not checked) and
// returns how long after since it came.
func (w *watcher) until(t *testing.T, node, what, old, want string, since time.Time) time.Duration {
	t.Helper()
	for deadline := since.Add(goLiveBound + 5*time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		w.mu.Lock()
		n := len(w.answers)
		found := n > 0 && strings.Contains(w.answers[n-1].body, want)
		w.mu.Unlock()
		if found {
			break
		}
	}
	close(w.stop)
	<-w.done
	for i, a := range w.answers {
		switch {
		case a.code == 200 && strings.Contains(a.body, want):
			took := a.at.Sub(since)
			if took > goLiveBound {
				t.Fatalf("replica %s served %s %s after its go-live on the other replica, want at most %s", node, what, took.Round(time.Millisecond), goLiveBound)
			}
			return took
		case old != "" && (a.code != 200 || !strings.Contains(a.body, old)):
			t.Fatalf("replica %s answered %d %q %s after %s went live on the other replica (answer %d of %d), want %q until %q",
				node, a.code, a.body, a.at.Sub(since).Round(time.Millisecond), what, i+1, len(w.answers), old, want)
		}
	}
	t.Fatalf("replica %s never served %s (%d answers over %s after its go-live on the other replica)", node, what, len(w.answers), goLiveBound+5*time.Second)
	return 0
}

// liveAt returns when the deployment went live: its "Deployment is live"
// line's time, taken just before the go-live's transaction.
func liveAt(t *testing.T, r *replica, token, id string) time.Time {
	t.Helper()
	d := waitDone(t, r, token, id, 90*time.Second)
	for _, l := range d.BuildLogs {
		if strings.HasPrefix(l.Message, "Deployment is live") {
			return l.Timestamp
		}
	}
	t.Fatalf("deployment %s: %s, want live\n%s", id, d.Status, d.log())
	return time.Time{}
}

// TestGoLiveSeenByOtherReplica (B2): a site that goes live on replica A
// is served by replica B's edge at most 2 s after A's go-live, and B
// serves the version before it until then, never a 404 or a "no app
// here" page: a redeploy of a live site, and a new commit of a live
// preview's branch (the first preview too: from nothing to served within
// the bound). Only A builds (B leaves out the builder role); B fetches the
// files from the object store. Before the change feed B's edge never
// heard of A's go-lives.
func TestGoLiveSeenByOtherReplica(t *testing.T) {
	c, _ := objectStoreCluster(t)
	a := c.start("a")
	b := c.startWith("b", map[string]string{"GANTRY_ROLES": "api,edge,runner"})
	token := register(t, a, "gil")
	url, cmd := c.slowSite("gil", "site", 1, "prod-one")
	p := createProject(t, a, token, url, "site", cmd)
	first := deploy(t, a, token, p.ID)
	host := p.Subdomain + ".localhost:8080"
	w := watch(b, host)
	took := w.until(t, "b", "the first deployment", "", "prod-one", liveAt(t, a, token, first))
	t.Logf("first deployment served by b %s after its go-live on a", took.Round(time.Millisecond))

	w = watch(b, host)
	second := deployBuilding(t, a, token, p.ID, "node build.js 1 prod-two")
	took = w.until(t, "b", "the redeploy", "prod-one", "prod-two", liveAt(t, a, token, second))
	t.Logf("redeploy served by b %s after its go-live on a", took.Round(time.Millisecond))

	// Previews of branch "feature", through the project's deploy hook.
	preview := func(n int) (id, label string) {
		c.git.Repo(t, "gil/site", "feature", fmt.Sprintf("preview %d", n), map[string]string{
			"build.js": fmt.Sprintf(`require("fs").mkdirSync("dist", { recursive: true });
require("fs").writeFileSync("dist/index.html", "<h1>preview-%d</h1>");
`, n),
		})
		var pr struct {
			Project struct{ DeployHookURL string }
		}
		a.call(t, "GET", "/api/projects/"+p.ID, token, "", &pr)
		_, hook, ok := strings.Cut(pr.Project.DeployHookURL, "/api/hooks/deploy/")
		if !ok {
			t.Fatalf("the project's deploy hook URL: %q", pr.Project.DeployHookURL)
		}
		var d struct {
			Deployment struct {
				ID string `json:"_id"`
			}
		}
		if code := a.call(t, "POST", "/api/hooks/deploy/"+hook+"?branch=feature", "", "", &d); code != 201 {
			t.Fatalf("preview %d through the deploy hook: %d", n, code)
		}
		var got struct {
			Deployment struct{ Subdomain string }
		}
		a.call(t, "GET", "/api/deployments/"+d.Deployment.ID, token, "", &got)
		return d.Deployment.ID, got.Deployment.Subdomain + ".localhost:8080"
	}
	id, label := preview(1)
	w = watch(b, label)
	took = w.until(t, "b", "the first preview", "", "preview-1", liveAt(t, a, token, id))
	t.Logf("first preview served by b %s after its go-live on a", took.Round(time.Millisecond))

	w = watch(b, label)
	id, again := preview(2)
	if again != label {
		t.Fatalf("the branch's second preview is on %s, the first on %s", again, label)
	}
	took = w.until(t, "b", "the preview's new commit", "preview-1", "preview-2", liveAt(t, a, token, id))
	t.Logf("the preview's new commit served by b %s after its go-live on a", took.Round(time.Millisecond))
}
