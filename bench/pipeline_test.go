package bench

import (
	"context"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/gittest"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
	"github.com/gantryhq/gantry/internal/store"
)

// An app is one of the pinned fixtures in testdata/<dir> (each with its
// package-lock.json, so every run installs the same packages from the npm
// registry), and the one-line change a redeploy after an edit commits.
type app struct {
	name, dir string
	// file, from, to: the edit, one line of one source file.
	file, from, to string
}

// The fixtures: a Next.js server app (next start), an Angular app, a Vite
// React app and an Express app.
var (
	nextServerApp = app{name: "nextjs", dir: "nextjs", file: "app/page.js",
		from: "A student's portfolio, rendered by next start.", to: "A student's portfolio, edited and rendered by next start."}
	angularApp = app{name: "angular", dir: "angular", file: "src/app/app.ts",
		from: "Hello from Angular", to: "Hello again from Angular"}
	viteReactApp = app{name: "vite-react", dir: "vite", file: "src/App.jsx",
		from: "<h1>Vite + React</h1>", to: "<h1>Vite + React, edited</h1>"}
	expressApp = app{name: "express", dir: "express", file: "server.js",
		from: "res.send('Hello from Express')", to: "res.send('Hello again from Express')"}
)

// files reads the fixture's files, by path relative to its folder.
func (a app) files(tb testing.TB) map[string]string {
	tb.Helper()
	root := filepath.Join("testdata", a.dir)
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil || len(files) == 0 {
		tb.Fatalf("fixture %s: %v (%d files)", a.dir, err, len(files))
	}
	return files
}

// edited is the fixture's changed file after its one-line change.
func (a app) edited(tb testing.TB) map[string]string {
	tb.Helper()
	body := a.files(tb)[a.file]
	if strings.Count(body, a.from) != 1 {
		tb.Fatalf("fixture %s: %q is not once in %s", a.dir, a.from, a.file)
	}
	return map[string]string{a.file: strings.Replace(body, a.from, a.to, 1)}
}

// pipeline is the real deployment pipeline on this machine (sandboxed
// builds that install from the npm registry, server apps, a SQLite file)
// with projects cloned from a git server on loopback, and one account.
type pipeline struct {
	dir   string // the folder of the database, removed at the end
	db    *store.DB
	stack *deploytest.Stack
	git   *gittest.Server
	user  *gantry.User
}

// newPipeline builds the pipeline for an account on sub.
func newPipeline(tb testing.TB, sub gantry.Subscription) *pipeline {
	tb.Helper()
	sb := sandboxtest.Require(tb, sandbox.Config{})
	data, err := os.MkdirTemp("", "gantry-bench-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sandbox.RemoveTree(data) })
	os.Chmod(data, 0o755)
	db, err := store.Open(context.Background(), filepath.Join(data, "gantry.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() }) // after the stack's service closes
	git := gittest.NewServer(tb)
	hosts, err := githost.New(githost.Config{AllowHosts: []string{"127.0.0.1"}, Sandbox: sb})
	if err != nil {
		tb.Fatal(err)
	}
	stack := deploytest.New(tb, deploytest.Options{DB: db, Sandbox: sb, Repos: hosts, Workers: true, Apps: true, Poll: 5 * time.Millisecond})
	stack.Deploys.BuildTimeout = 10 * time.Minute
	stack.Deploys.Apps.StartTimeout = 2 * time.Minute // next start on a busy machine
	u := &gantry.User{FullName: "Bench", Username: "bench", Email: "bench@example.com", PasswordHash: "x", IsActive: true, Subscription: sub}
	if err := db.CreateUser(context.Background(), u); err != nil {
		tb.Fatal(err)
	}
	return &pipeline{dir: data, db: db, stack: stack, git: git, user: u}
}

// account is pl for a new account on sub, named name.
func (pl *pipeline) account(tb testing.TB, name string, sub gantry.Subscription) *pipeline {
	tb.Helper()
	u := &gantry.User{FullName: name, Username: name, Email: name + "@example.com", PasswordHash: "x", IsActive: true, Subscription: sub}
	if err := pl.db.CreateUser(context.Background(), u); err != nil {
		tb.Fatal(err)
	}
	other := *pl
	other.user = u
	return &other
}

// freePlan is the Free plan's subscription, as a new account has it.
var freePlan = gantry.Subscription{Plan: gantry.PlanFree, MaxProjects: gantry.DefaultMaxProjects,
	MaxDeployments: gantry.DefaultMaxDeployments, MaxStorage: gantry.PlanMaxStorage(gantry.PlanFree)}

// roomyPlan is a plan whose budget the benchmarks never fill.
var roomyPlan = gantry.Subscription{Plan: gantry.PlanPro, MaxProjects: 100, MaxDeployments: 100, MaxStorage: 25 * gantry.GiB}

// project pushes the fixture to the git server and creates its project.
func (pl *pipeline) project(tb testing.TB, a app) *gantry.Project {
	tb.Helper()
	url := pl.git.Repo(tb, pl.user.Username+"/"+a.name, "main", a.name, a.files(tb))
	name := a.name
	p, err := pl.stack.Projects.CreatePublic(context.Background(), pl.user, project.Input{Repository: &project.RepositoryInput{URL: url}, Name: &name})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// edit commits the fixture's one-line change.
func (pl *pipeline) edit(tb testing.TB, a app) {
	tb.Helper()
	pl.git.Repo(tb, pl.user.Username+"/"+a.name, "main", "edit one line", a.edited(tb))
}

// deploy deploys the project's branch head and waits until it is live:
// the deployment as it is then and the time from the create call. A
// deployment that ends otherwise is an error with its log.
func (pl *pipeline) deploy(tb testing.TB, p *gantry.Project) (*gantry.Deployment, time.Duration, error) {
	tb.Helper()
	ctx := context.Background()
	start := time.Now()
	d, err := pl.stack.Deploys.Create(ctx, pl.user.ID, deploy.CreateRequest{ProjectID: p.ID})
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", p.Name, err)
	}
	for {
		got, err := pl.db.FindDeployment(ctx, "", d.ID)
		if err != nil {
			tb.Fatal(err)
		}
		if got.Status == gantry.DeploymentLive {
			return got, time.Since(start), nil
		}
		if !got.InProgress() {
			return nil, 0, fmt.Errorf("%s: deployment ended %s: %s\n%s", p.Name, got.Status, got.Error, strings.Join(pl.logs(d.ID), "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settle waits until what the live deployment d's build left behind is
// put away, so that what is on disk and counted is what d keeps: a
// site's build folder, removed once its build caches are saved (after it
// went live); a server app's caches held in its volume for that save
// (caches.held, internal/build), after which its volume is measured
// again — until the account's storage has not moved for 1.5 s.
func (pl *pipeline) settle(tb testing.TB, d *gantry.Deployment) {
	tb.Helper()
	gone := pl.stack.Deploys.WorkDir(d.ID)
	if d.BuildInfo.StartCommand != "" {
		gone = filepath.Join(gone, "caches.held")
	}
	deadline := time.Now().Add(3 * time.Minute)
	for ; ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Lstat(gone); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: %s is still there 3 minutes after %s went live", d.Subdomain, gone, d.ID)
		}
	}
	for last, still := int64(-1), 0; still < 3; time.Sleep(500 * time.Millisecond) {
		used := pl.usage(tb).Used
		if used == last {
			still++
		} else {
			last, still = used, 0
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: the account's storage still moves 3 minutes after %s went live", d.Subdomain, d.ID)
		}
	}
}

// logs are the deployment's log lines, "level: message".
func (pl *pipeline) logs(id string) []string {
	ls, _ := pl.db.Logs(context.Background(), id, 0, 0)
	var out []string
	for _, l := range ls {
		out = append(out, l.Level+": "+l.Message)
	}
	return out
}

// usage is the account's storage as the platform counts it.
func (pl *pipeline) usage(tb testing.TB) *gantry.StorageUsage {
	tb.Helper()
	u, err := pl.db.StorageUsage(context.Background(), pl.user.ID)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// du is the bytes the data folder takes on its disk without the build
// caches: what the deployments (and the database) keep, each hard-linked
// file once (du's own rule), app volumes as their image files allocate
// (du does not descend into the mounted volumes).
func (pl *pipeline) du(tb testing.TB) int64 {
	tb.Helper()
	out, err := exec.Command("du", "-s", "-x", "-B1", "--exclude="+filepath.Join(pl.stack.DataDir, "caches"), pl.stack.DataDir).Output()
	if err != nil {
		tb.Fatalf("du %s: %v", pl.stack.DataDir, err)
	}
	n, err := strconv.ParseInt(strings.Fields(string(out))[0], 10, 64)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// get asks the edge for the subdomain's / and returns the status and body.
func (pl *pipeline) get(tb testing.TB, sub string) (int, string) {
	tb.Helper()
	rec := httptest.NewRecorder()
	edge.New("localhost", pl.stack.Table, "http://localhost:8080").ServeHTTP(rec, httptest.NewRequest("GET", "http://"+sub+".localhost:8080/", nil))
	return rec.Code, rec.Body.String()
}

// phaseNames are the steps reported, in order (gantry.BuildInfo.Phases).
var phaseNames = []string{"clone", "restore", "install", "build", "prune", "publish", "save", "start"}

// phases formats a deployment's step times: "clone 0.4 install 31.2 …".
func phases(d *gantry.Deployment) string {
	var parts []string
	seen := map[string]bool{}
	for _, n := range phaseNames {
		if ms, ok := d.BuildInfo.Phases[n]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1f", n, float64(ms)/1000))
			seen[n] = true
		}
	}
	var other []string
	for n := range d.BuildInfo.Phases {
		if !seen[n] {
			other = append(other, n)
		}
	}
	sort.Strings(other)
	for _, n := range other {
		parts = append(parts, fmt.Sprintf("%s %.1f", n, float64(d.BuildInfo.Phases[n])/1000))
	}
	return strings.Join(parts, " ")
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// chosenApps is apps, or those GANTRY_BENCH_APPS names (comma-separated).
func chosenApps(apps ...app) []app {
	only := os.Getenv("GANTRY_BENCH_APPS")
	if only == "" {
		return apps
	}
	var out []app
	for _, a := range apps {
		for _, n := range strings.Split(only, ",") {
			if strings.TrimSpace(n) == a.name {
				out = append(out, a)
			}
		}
	}
	return out
}
