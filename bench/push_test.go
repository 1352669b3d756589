package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/gittest"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/store"
)

// pushStack is a deploy stack behind the API and the edge, as gantry serve
// wires them, with one static site project of a pro user.
type pushStack struct {
	db    *store.DB
	git   *gittest.Server
	url   string
	svc   *deploy.Service
	srv   *api.Server
	edge  *edge.Edge
	user  *gantry.User
	proj  *gantry.Project
	data  string
	hooks string // the project's deploy hook path
}

func newPushStack(b *testing.B) *pushStack {
	pl := newPipeline(b, roomyPlan)
	stack := pl.stack
	s := &pushStack{db: pl.db, git: pl.git, data: pl.dir, svc: stack.Deploys, user: pl.user}
	s.url = s.git.Repo(b, "bench/site", "main", "site 0", map[string]string{"index.html": "<h1>0</h1>", "style.css": "body{margin:0}"})
	ctx := context.Background()
	var err error
	name := "site"
	if s.proj, err = stack.Projects.CreatePublic(ctx, s.user, project.Input{Repository: &project.RepositoryInput{URL: s.url}, Name: &name,
		BuildConfig: &gantry.BuildConfig{OutputDirectory: "."}}); err != nil {
		b.Fatal(err)
	}
	s.hooks = strings.TrimPrefix(s.proj.DeployHookURL, "http://localhost:8080")
	s.srv = api.NewServer()
	s.srv.Deploys, s.srv.Projects = stack.Deploys, stack.Projects
	s.srv.PublicHost, s.srv.LiveDomain = "localhost", "localhost"
	s.srv.DeployHooks = nil
	s.edge = edge.New("localhost", stack.Table, "http://localhost:8080")
	return s
}

// served polls the project's subdomain until it serves want.
func (s *pushStack) served(b *testing.B, want string) {
	for deadline := time.Now().Add(2 * time.Minute); ; {
		req := httptest.NewRequest("GET", "http://site.localhost:8080/", nil)
		rec := httptest.NewRecorder()
		s.edge.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Result().Body)
		if rec.Code == 200 && string(body) == want {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the site never served %q (last: %d %q)", want, rec.Code, body)
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkPushToLive measures push to live for a static site with no
// build step: from the deploy hook POST's arrival to the first request the
// edge answers with the new commit's page, minus what plain git takes for
// the same work in the same run — `git ls-remote` of the branch (the hook
// looks its head up) and `git clone --depth=1` — the part that is git's,
// not Gantry's. It reports the medians as live-ms, hook-ms (the hook's
// answer), git-ms and overhead-ms (target: overhead under 300 ms).
func BenchmarkPushToLive(b *testing.B) {
	s := newPushStack(b)
	s.srv.DeployHooks = nil // no rate limit here
	var lives, clones, hooks []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		page := fmt.Sprintf("<h1>%d</h1>", i+1)
		s.git.Repo(b, "bench/site", "main", fmt.Sprintf("site %d", i+1), map[string]string{"index.html": page})
		b.StartTimer()
		start := time.Now()
		req := httptest.NewRequest("POST", "http://localhost:8080"+s.hooks, nil)
		rec := httptest.NewRecorder()
		s.srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("deploy hook: %d %s", rec.Code, rec.Body.String())
		}
		hooks = append(hooks, time.Since(start))
		s.served(b, page)
		lives = append(lives, time.Since(start))

		// git's own part: the branch head's lookup and the clone.
		dir := filepath.Join(s.data, "clone")
		start = time.Now()
		if out, err := exec.Command("git", "ls-remote", "--heads", s.url, "refs/heads/main").CombinedOutput(); err != nil {
			b.Fatalf("git ls-remote: %v\n%s", err, out)
		}
		if out, err := exec.Command("git", "clone", "-q", "--depth=1", "--single-branch", "--branch", "main", "--no-tags", s.url, dir).CombinedOutput(); err != nil {
			b.Fatalf("git clone: %v\n%s", err, out)
		}
		clones = append(clones, time.Since(start))
		os.RemoveAll(dir)
	}
	b.StopTimer()
	lm, gm := median(lives), median(clones)
	b.ReportMetric(float64(lm.Microseconds())/1000, "live-ms")
	b.ReportMetric(float64(median(hooks).Microseconds())/1000, "hook-ms")
	b.ReportMetric(float64(gm.Microseconds())/1000, "git-ms")
	b.ReportMetric(float64((lm-gm).Microseconds())/1000, "overhead-ms")
}

// BenchmarkPromote measures a rollback: from the promote call to the first
// request the edge answers with the promoted deployment's page, switching
// production between two earlier deployments back and forth (no build).
// It reports the median as promote-ms (target: under 100 ms).
func BenchmarkPromote(b *testing.B) {
	s := newPushStack(b)
	ctx := context.Background()
	var ids []string
	for i := range 2 {
		page := fmt.Sprintf("<h1>v%d</h1>", i)
		s.git.Repo(b, "bench/site", "main", fmt.Sprintf("v%d", i), map[string]string{"index.html": page})
		d, err := s.svc.Trigger(ctx, gantry.DeployTrigger{ProjectID: s.proj.ID, Trigger: gantry.TriggerPush})
		if err != nil {
			b.Fatal(err)
		}
		s.served(b, page)
		ids = append(ids, d.ID)
	}
	var times []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := i % 2 // v1 is live at first: promote v0, then v1, …
		page := fmt.Sprintf("<h1>v%d</h1>", n)
		start := time.Now()
		if _, err := s.svc.Promote(ctx, s.user.ID, ids[n]); err != nil {
			b.Fatal(err)
		}
		s.served(b, page)
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64(median(times).Microseconds())/1000, "promote-ms")
}
