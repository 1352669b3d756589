package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/ghhook"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/githost/githubtest"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
	"github.com/gantryhq/gantry/internal/secret"
	"github.com/gantryhq/gantry/internal/store"
)

// BenchmarkGitHubPushToLive measures push to live through GitHub's
// webhook for a static site with no build step: from the signed push
// delivery's arrival at POST /api/webhooks/github to the first request the
// edge answers with the pushed commit's page, minus what plain git takes
// to clone that commit (`git clone --depth=1` from the same fake GitHub,
// timed in the same run right after). The push names its commit, so no
// branch lookup is made. The API, the deploy service, the edge and
// ghhook.Service are wired as gantry serve wires them (the deploy service
// is the hooks' Deployer and reports finished builds to them); GitHub is
// the fake of internal/githost/githubtest on loopback. It reports the
// medians as live-ms, hook-ms (the delivery's 202), git-ms and
// overhead-ms (target: overhead under 300 ms).
func BenchmarkGitHubPushToLive(b *testing.B) {
	sb := sandboxtest.Require(b, sandbox.Config{})
	data, err := os.MkdirTemp("", "gantry-ghpushbench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sandbox.RemoveTree(data) })
	os.Chmod(data, 0o755)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(data, "gantry.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })

	gh := githubtest.NewServer(b)
	ghUser := gh.AddUser("bench-gh")
	repo := gh.AddRepo(b, githubtest.Repo{Owner: "bench-gh", Name: "site"}, map[string]string{"index.html": "<h1>0</h1>", "style.css": "body{margin:0}"})
	hosts, err := githost.New(githost.Config{AllowHosts: []string{"127.0.0.1"}, Sandbox: sb,
		GitHubAPIURL: gh.APIURL(), GitHubWebURL: gh.URL})
	if err != nil {
		b.Fatal(err)
	}
	stack := deploytest.New(b, deploytest.Options{DB: db, Sandbox: sb, Repos: hosts, Workers: true, Poll: 5 * time.Millisecond})

	u := &gantry.User{FullName: "Bench", Username: "bench", Email: "bench@example.com", PasswordHash: "x", IsActive: true,
		Subscription: gantry.Subscription{Plan: "pro", MaxProjects: 100, MaxDeployments: 100, MaxStorage: 100 << 30}}
	if err := db.CreateUser(ctx, u); err != nil {
		b.Fatal(err)
	}
	sealed, err := stack.Tokens.Seal(ghUser.Token)
	if err != nil {
		b.Fatal(err)
	}
	if err := db.SetGitHubLink(ctx, u.ID, gantry.GitHubLink{ID: ghUser.ID, Username: "bench-gh", AccessToken: sealed}); err != nil {
		b.Fatal(err)
	}
	if u, err = db.FindUserByID(ctx, u.ID); err != nil {
		b.Fatal(err)
	}
	cloneURL := gh.URL + "/bench-gh/site.git"
	p := &gantry.Project{UserID: u.ID, Name: "site", Type: "static", Branch: "main", AutoDeploy: true,
		BuildConfig: gantry.BuildConfig{OutputDirectory: "."},
		Repository: gantry.Repository{ID: strconv.FormatInt(repo.ID, 10), Name: "site", FullName: "bench-gh/site",
			DefaultBranch: "main", URL: gh.URL + "/bench-gh/site", CloneURL: cloneURL}}
	if err := db.CreateProject(ctx, p); err != nil {
		b.Fatal(err)
	}

	srv := api.NewServer()
	srv.Deploys, srv.Projects = stack.Deploys, stack.Projects
	srv.PublicHost, srv.LiveDomain = "localhost", "localhost"
	client, err := githost.NewGitHub(gh.APIURL(), gh.URL, nil)
	if err != nil {
		b.Fatal(err)
	}
	box, err := secret.New(deploytest.DefaultKey, secret.GitHubHooks)
	if err != nil {
		b.Fatal(err)
	}
	hooks := &ghhook.Service{Store: db, GitHub: client, Deployer: stack.Deploys, Secrets: box,
		Decrypt: stack.Tokens.Open, PublicURL: "http://localhost:8080"}
	b.Cleanup(hooks.Close)
	stack.Deploys.Finished = hooks.DeploymentFinished
	srv.Webhooks = hooks
	hooks.Register(ctx, u, p)
	hs := gh.Hooks("bench-gh/site")
	if len(hs) != 1 {
		b.Fatalf("hooks %+v", hs)
	}
	ed := edge.New("localhost", stack.Table, "http://localhost:8080")
	served := func(want string) {
		for deadline := time.Now().Add(2 * time.Minute); ; {
			rec := httptest.NewRecorder()
			ed.ServeHTTP(rec, httptest.NewRequest("GET", "http://"+p.Subdomain+".localhost:8080/", nil))
			if rec.Code == 200 && rec.Body.String() == want {
				return
			}
			if time.Now().After(deadline) {
				b.Fatalf("the site never served %q (last: %d %q)", want, rec.Code, rec.Body.String())
			}
			time.Sleep(time.Millisecond)
		}
	}

	var lives, clones, answers []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		page := fmt.Sprintf("<h1>%d</h1>", i+1)
		gh.Push(b, "bench-gh/site", "main", fmt.Sprintf("site %d", i+1), map[string]string{"index.html": page})
		body, err := json.Marshal(gh.PushPayload(b, "bench-gh/site", "main", ""))
		if err != nil {
			b.Fatal(err)
		}
		sig := githubtest.Sign(hs[0].Secret, body)
		id := githubtest.NewDeliveryID()
		b.StartTimer()
		start := time.Now()
		req := httptest.NewRequest("POST", "http://localhost:8080"+ghhook.WebhookPath, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "push")
		req.Header.Set("X-GitHub-Delivery", id)
		req.Header.Set("X-GitHub-Hook-ID", strconv.FormatInt(hs[0].ID, 10))
		req.Header.Set("X-Hub-Signature-256", sig)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusAccepted {
			b.Fatalf("delivery: %d %s", rec.Code, rec.Body.String())
		}
		answers = append(answers, time.Since(start))
		served(page)
		lives = append(lives, time.Since(start))

		// git's own part: the same clone.
		dir := filepath.Join(data, "clone")
		start = time.Now()
		if out, err := exec.Command("git", "clone", "-q", "--depth=1", "--single-branch", "--branch", "main", "--no-tags", cloneURL, dir).CombinedOutput(); err != nil {
			b.Fatalf("git clone: %v\n%s", err, out)
		}
		clones = append(clones, time.Since(start))
		os.RemoveAll(dir)
	}
	b.StopTimer()
	hooks.Wait()
	lm, gm := median(lives), median(clones)
	b.ReportMetric(float64(lm.Microseconds())/1000, "live-ms")
	b.ReportMetric(float64(median(answers).Microseconds())/1000, "hook-ms")
	b.ReportMetric(float64(gm.Microseconds())/1000, "git-ms")
	b.ReportMetric(float64((lm-gm).Microseconds())/1000, "overhead-ms")
}
