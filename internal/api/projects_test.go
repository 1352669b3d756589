package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/gittest"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
)

// deployEnv adds the deployment stack to e: a loopback git host (allowed
// although it is on 127.0.0.1), the sandboxed pipeline and the edge. With
// workers it also starts the build workers.
type deployEnv struct {
	*testEnv
	git      *gittest.Server
	svc      *deploy.Service
	projects *project.Service
	table    *edge.Table
}

func withDeploys(t *testing.T, e *testEnv, workers bool) *deployEnv {
	t.Helper()
	sb := sandbox.New(sandbox.Config{})
	if workers {
		sb = sandboxtest.Require(t, sandbox.Config{})
	}
	// Creating a project looks its repository up (a sandboxed clone): give
	// it room on a loaded machine.
	hosts, err := githost.New(githost.Config{AllowHosts: []string{"127.0.0.1"}, Sandbox: sb, Detect: build.Suggest, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stack := deploytest.New(t, deploytest.Options{DB: e.db, Sandbox: sb, Repos: hosts, Apps: true, Workers: workers,
		Notify: e.accounts.Notify, Key: testSecret,
		// Every account under a uid of its own, as gantry serve runs them.
		UIDs: sandbox.UIDRange{First: 240000, Count: 1000}})
	d := &deployEnv{testEnv: e, git: gittest.NewServer(t), svc: stack.Deploys, projects: stack.Projects, table: stack.Table}
	e.srv.Deploys, e.srv.Projects = d.svc, d.projects
	e.srv.LiveHandler = edge.New("localhost", d.table, "http://localhost:8080")
	return d
}

// site pushes a static site to the git host and returns its clone URL.
func (d *deployEnv) site(t *testing.T, name, marker string) string {
	return d.git.Repo(t, "alice/"+name, "main", "add "+marker, map[string]string{"index.html": "<h1>" + marker + "</h1>"})
}

// createProject creates a project of alice's from url and returns its id.
func (d *deployEnv) createProject(t *testing.T, url, name string) string {
	t.Helper()
	rec := d.do(request{method: "POST", url: "/api/projects/public", headers: bearer(d.token),
		body: fmt.Sprintf(`{"repository":{"url":%q},"name":%q,"description":"demo","branch":"main","buildConfig":{"outputDirectory":"."}}`, url, name)})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create project: %d %s", rec.Code, rec.Body.String())
	}
	return dataField[gantry.Project](t, rec, "project").ID
}

// otherToken registers bob and returns his token.
func (e *testEnv) otherToken(t *testing.T) string {
	t.Helper()
	_, token, err := e.accounts.Register(context.Background(), "198.51.100.2", gantry.Registration{
		Username: "bob", Email: "bob@example.com", Password: "secret123", FullName: "Bob Builder",
	})
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func TestPublicRepoLookup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, false)
	url := d.site(t, "portfolio", "hello")
	// A server that redirects every request to a private address.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.1.2.3"+r.URL.Path, http.StatusFound)
	}))
	defer redirector.Close()
	port := strings.TrimPrefix(d.git.URL, "http://127.0.0.1:")

	var lookups []scenario
	for _, tc := range []struct {
		name, url   string
		wantStatus  int
		wantMessage string // substring
	}{
		{"empty", "  ", 400, "Please enter a repository URL"},
		{"file scheme", "file:///etc/passwd", 400, "http"},
		{"ssh scheme", "ssh://git@github.com/a/b.git", 400, "http"},
		{"scp form", "git@github.com:a/b.git", 400, ""},
		{"ext transport", "ext::sh -c touch% /tmp/pwned", 400, ""},
		{"credentials", "https://user:pass@example.com/a/b", 400, "credentials"},
		{"local path", "/srv/git/a.git", 400, ""},
		{"metadata address", "http://169.254.169.254/latest/meta-data", 400, "not allowed"},
		{"private address", "http://10.0.0.5/team/app", 400, "not allowed"},
		{"name resolving to loopback", "http://localhost:" + port + "/alice/portfolio.git", 400, "not allowed"},
		{"redirect to private", redirector.URL + "/alice/app.git", 400, ""},
		{"not found", d.git.URL + "/alice/missing.git", 404, "not found"},
	} {
		body, _ := json.Marshal(map[string]string{"repoUrl": tc.url})
		lookups = append(lookups, scenario{name: tc.name, auth: true,
			request:    request{method: "POST", url: "/api/projects/public-repo", body: string(body)},
			wantStatus: tc.wantStatus, wantFailure: true,
			after: func(t *testing.T, _ *testEnv, rec *httptest.ResponseRecorder) {
				if a := decodeAnswer(t, rec); !strings.Contains(strings.ToLower(a.Message), strings.ToLower(tc.wantMessage)) {
					t.Errorf("got message %q, want one with %q", a.Message, tc.wantMessage)
				}
			}})
	}
	runScenariosOn(t, e, lookups)

	rec := e.do(request{method: "POST", url: "/api/projects/public-repo", headers: bearer(e.token),
		body: fmt.Sprintf(`{"repoUrl":%q}`, strings.TrimSuffix(url, ".git")+"/")})
	if rec.Code != 200 {
		t.Fatalf("lookup: %d %s", rec.Code, rec.Body.String())
	}
	var got githost.LookupResult
	if err := json.Unmarshal(decodeAnswer(t, rec).Data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Repository.FullName != "alice/portfolio" || got.SuggestedName != "portfolio" || got.Framework != "static" ||
		got.Repository.DefaultBranch != "main" || got.Repository.LastCommit == nil || got.Repository.LastCommit.Message != "add hello" {
		t.Fatalf("got %+v", got)
	}
	if rec := e.do(request{method: "POST", url: "/api/projects/public-repo", body: `{"repoUrl":"x"}`}); rec.Code != 401 {
		t.Fatalf("without a token: got %d, want 401", rec.Code)
	}
}

func TestProjectsAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, false)
	url := d.site(t, "site", "v1")
	bob := e.otherToken(t)

	id := d.createProject(t, url, "My Site")
	rec := e.do(request{method: "GET", url: "/api/projects/" + id, headers: bearer(e.token)})
	p := dataField[gantry.Project](t, rec, "project")
	if p.Name != "My Site" || p.Repository.FullName != "alice/site" || p.Subdomain != "my-site" || p.Status != "draft" ||
		p.BuildConfig.OutputDirectory != "." || p.Branch != "main" {
		t.Fatalf("got %+v", p)
	}
	list := dataField[[]gantry.Project](t, e.do(request{method: "GET", url: "/api/projects", headers: bearer(e.token)}), "projects")
	if len(list) != 1 || list[0].ID != id {
		t.Fatalf("got list %+v", list)
	}

	var refusals []scenario
	for _, tc := range []struct {
		name        string
		r           request
		wantStatus  int
		wantMessage string
	}{
		{"bob reads", request{method: "GET", url: "/api/projects/" + id, headers: bearer(bob)}, 404, "Project not found"},
		{"bob updates", request{method: "PUT", url: "/api/projects/" + id, headers: bearer(bob), body: `{"name":"x"}`}, 404, "Project not found"},
		{"bob deletes", request{method: "DELETE", url: "/api/projects/" + id, headers: bearer(bob)}, 404, "Project not found"},
		{"bob syncs", request{method: "POST", url: "/api/projects/" + id + "/sync", headers: bearer(bob)}, 404, "Project not found"},
		{"unknown id", request{method: "GET", url: "/api/projects/nope", headers: bearer(e.token)}, 404, "Project not found"},
		{"empty name", request{method: "PUT", url: "/api/projects/" + id, headers: bearer(e.token), body: `{"name":"  "}`}, 400, "Project name is required"},
		{"long name", request{method: "PUT", url: "/api/projects/" + id, headers: bearer(e.token), body: `{"name":"` + strings.Repeat("a", 101) + `"}`}, 400, "Project name cannot exceed 100 characters"},
		{"bad branch", request{method: "PUT", url: "/api/projects/" + id, headers: bearer(e.token), body: `{"branch":"a..b"}`}, 400, `Invalid branch name: "a..b"`},
		{"escaping output", request{method: "PUT", url: "/api/projects/" + id, headers: bearer(e.token), body: `{"buildConfig":{"outputDirectory":"../../etc"}}`}, 400, "Output directory must be a relative path inside the repository"},
		{"wrong type", request{method: "PUT", url: "/api/projects/" + id, headers: bearer(e.token), body: `{"name":42}`}, 400, ""},
		{"unknown field", request{method: "PUT", url: "/api/projects/" + id, headers: bearer(e.token), body: `{"owner":"bob"}`}, 400, ""},
		{"malformed", request{method: "POST", url: "/api/projects/public", headers: bearer(e.token), body: `{"repository":`}, 400, ""},
		{"no repository", request{method: "POST", url: "/api/projects/public", headers: bearer(e.token), body: `{"name":"x"}`}, 400, "Please select a repository"},
		{"hostile repository", request{method: "POST", url: "/api/projects/public", headers: bearer(e.token), body: `{"repository":{"url":"file:///etc"},"name":"x"}`}, 400, ""},
	} {
		refusals = append(refusals, scenario{name: tc.name, request: tc.r, wantStatus: tc.wantStatus,
			wantMessage: tc.wantMessage, wantFailure: true})
	}
	runScenariosOn(t, e, refusals)
	// Nothing above changed the project.
	if again := dataField[gantry.Project](t, e.do(request{method: "GET", url: "/api/projects/" + id, headers: bearer(e.token)}), "project"); again.Name != "My Site" || again.Branch != "main" {
		t.Fatalf("project changed: %+v", again)
	}

	rec = e.do(request{method: "PUT", url: "/api/projects/" + id, headers: bearer(e.token),
		body: `{"name":"Renamed","description":"new","branch":"main","buildConfig":{"installCommand":"","buildCommand":"","outputDirectory":"public"}}`})
	if p := dataField[gantry.Project](t, rec, "project"); p.Name != "Renamed" || p.BuildConfig.OutputDirectory != "public" || p.Subdomain != "my-site" {
		t.Fatalf("update: %d %+v", rec.Code, p)
	}

	d.site(t, "site", "v2")
	rec = e.do(request{method: "POST", url: "/api/projects/" + id + "/sync", headers: bearer(e.token)})
	if p := dataField[gantry.Project](t, rec, "project"); p.Repository.LastCommit == nil || p.Repository.LastCommit.Message != "add v2" {
		t.Fatalf("sync: %d %s", rec.Code, rec.Body.String())
	}

	// The plan allows 3 projects.
	d.createProject(t, url, "two")
	d.createProject(t, url, "three")
	rec = e.do(request{method: "POST", url: "/api/projects/public", headers: bearer(e.token), body: fmt.Sprintf(`{"repository":{"url":%q},"name":"four"}`, url)})
	if a := decodeAnswer(t, rec); rec.Code != 403 || a.Message != "Your Free plan allows 3 projects. Delete a project or upgrade your plan to create another." {
		t.Fatalf("fourth project: %d %q", rec.Code, a.Message)
	}

	if rec := e.do(request{method: "DELETE", url: "/api/projects/" + id, headers: bearer(e.token)}); rec.Code != 200 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body.String())
	}
	if rec := e.do(request{method: "GET", url: "/api/projects/" + id, headers: bearer(e.token)}); rec.Code != 404 {
		t.Fatalf("after delete: %d", rec.Code)
	}
}
