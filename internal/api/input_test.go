package api_test

// What a client may say (issue 12): repository facts come from the
// server's lookup, every text field refuses control and invisible
// characters with a message naming it, overrides follow the project's
// rules, echoes are cut, and Discover lists only projects that show in it.
// Every test here also runs on PostgreSQL (scripts/with-postgres), which
// refuses NUL in text: none of these requests may be a 500 there.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// jsonBody marshals v: strings with control characters travel escaped, as
// a browser or script would send them.
func jsonBody(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// withProject is a fresh environment with the deployment stack (no
// workers) and one project of alice's from a site on the git host: its id.
func withProject(t *testing.T, name string) (*deployEnv, string) {
	t.Helper()
	d := withDeploys(t, newEnv(t), false)
	slug := strings.ToLower(name)
	return d, d.createProject(t, d.site(t, slug, "v1"), name)
}

// countProjects counts alice's projects in the database.
func (e *testEnv) countProjects(t *testing.T) int {
	t.Helper()
	n, err := e.db.CountProjects(context.Background(), e.alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPublicProjectFactsComeFromTheLookup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, false)
	url := d.site(t, "facts", "v1")

	// What the server itself finds for the URL.
	rec := e.do(request{method: "POST", url: "/api/projects/public-repo", headers: bearer(e.token), body: jsonBody(map[string]string{"repoUrl": url})})
	if rec.Code != 200 {
		t.Fatalf("lookup: %d %s", rec.Code, rec.Body.String())
	}
	lookedUp := dataField[gantry.Repository](t, rec, "repository")

	// A client that makes the rest up.
	body := jsonBody(map[string]any{
		"repository": map[string]any{
			"url": url, "id": "999", "name": "evil", "fullName": "evil/evil", "private": true,
			"defaultBranch": "--upload-pack=touch /tmp/x",
			"description":   strings.Repeat("a", 1_000_000),
			"lastCommit":    map[string]any{"sha": "deadbeef", "message": "<b>pwned</b>", "author": "Linus", "date": "2001-01-01T00:00:00Z"},
		},
		"name": "Facts", "description": "mine", "branch": "",
	})
	if len(body) >= 1<<20 {
		t.Fatalf("the body is %d bytes: the 1,000,000-character description should fit the 1 MiB limit", len(body))
	}
	rec = e.do(request{method: "POST", url: "/api/projects/public", headers: bearer(e.token), body: body})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %.300s", rec.Code, rec.Body.String())
	}
	if rec.Body.Len() > 8<<10 {
		t.Fatalf("the answer is %d bytes: the client's description was kept", rec.Body.Len())
	}
	p := dataField[gantry.Project](t, rec, "project")
	r := p.Repository
	if r.ID != lookedUp.ID || r.FullName != "alice/facts" || r.Name != "facts" || r.Private || r.Description != "" ||
		r.DefaultBranch != "main" || p.Branch != "main" || !p.ShowInDiscover {
		t.Fatalf("got repository %+v, branch %q, showInDiscover %v; want the lookup's %+v", r, p.Branch, p.ShowInDiscover, lookedUp)
	}
	if c := r.LastCommit; c == nil || lookedUp.LastCommit == nil || c.SHA != lookedUp.LastCommit.SHA || len(c.SHA) != 40 ||
		c.Message != "add v1" || c.Author == "Linus" {
		t.Fatalf("got last commit %+v, want the branch's real head %+v", c, lookedUp.LastCommit)
	}
	if p.Name != "Facts" || p.Description != "mine" {
		t.Fatalf("the fields a user sets: got name %q, description %q", p.Name, p.Description)
	}
	// Every later answer stays small too.
	for _, u := range []string{"/api/projects", "/api/projects/" + p.ID} {
		if rec := e.do(request{method: "GET", url: u, headers: bearer(e.token)}); rec.Code != 200 || rec.Body.Len() > 8<<10 ||
			strings.Contains(rec.Body.String(), "pwned") || strings.Contains(rec.Body.String(), "upload-pack") {
			t.Fatalf("GET %s: %d, %d bytes", u, rec.Code, rec.Body.Len())
		}
	}

	// A branch the client names is a branch the host has, read from it.
	d.git.Repo(t, "alice/facts", "dev", "on dev", map[string]string{"index.html": "dev"})
	rec = e.do(request{method: "POST", url: "/api/projects/public", headers: bearer(e.token),
		body: jsonBody(map[string]any{"repository": map[string]string{"url": url}, "name": "Dev", "branch": "dev"})})
	if p := dataField[gantry.Project](t, rec, "project"); rec.Code != 201 || p.Branch != "dev" ||
		p.Repository.LastCommit == nil || p.Repository.LastCommit.Message != "on dev" {
		t.Fatalf("create on dev: %d %s", rec.Code, rec.Body.String())
	}
	before := e.countProjects(t)
	branch := func(branch string, status int, message string) scenario {
		return scenario{name: "branch " + branch, auth: true, request: request{method: "POST", url: "/api/projects/public",
			body: jsonBody(map[string]any{"repository": map[string]string{"url": url}, "name": "x", "branch": branch})},
			wantStatus: status, wantMessage: message}
	}
	runScenariosOn(t, e, []scenario{
		branch("--upload-pack=touch /tmp/x", 400, `Invalid branch name: "--upload-pack=touch /tmp/x"`),
		branch("nope", 404, "Branch 'nope' not found in alice/facts"),
	})
	if n := e.countProjects(t); n != before {
		t.Fatalf("refused creations made projects: %d, want %d", n, before)
	}
}

// TestCreateChecksHosts: creating a project applies the lookup's host
// rules (the server looks the URL up itself), before anything is stored.
func TestCreateChecksHosts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, false)
	port := strings.TrimPrefix(d.git.URL, "http://127.0.0.1:")
	for _, url := range []string{
		"http://169.254.169.254/a/b",
		"http://10.0.0.1/a/b",
		"http://[::1]:" + port + "/alice/site.git",
		"http://localhost:" + port + "/alice/site.git",
		"file:///etc/passwd",
	} {
		rec := e.do(request{method: "POST", url: "/api/projects/public", headers: bearer(e.token),
			body: jsonBody(map[string]any{"repository": map[string]string{"url": url}, "name": "x"})})
		a := decodeAnswer(t, rec)
		if rec.Code != 400 || a.Success || (!strings.HasPrefix(url, "file:") && !strings.Contains(a.Message, "not allowed")) {
			t.Errorf("%s: got %d %q, want 400 Host not allowed", url, rec.Code, a.Message)
		}
	}
	if n := e.countProjects(t); n != 0 {
		t.Fatalf("got %d projects, want none", n)
	}
}

// TestTextRules sends control, invisible and overlong text to every
// endpoint that takes text, and checks the message names the field and
// nothing changed.
func TestTextRules(t *testing.T) {
	t.Parallel()
	d, project := withProject(t, "Rules")
	e := d.testEnv
	projectURL := "/api/projects/" + project
	snapshot := func() string {
		p, err := e.db.FindProject(context.Background(), e.alice.ID, project)
		if err != nil {
			t.Fatal(err)
		}
		vars, _ := e.db.ProjectEnv(context.Background(), project)
		u, _ := e.db.FindUserByID(context.Background(), e.alice.ID)
		deps, _ := e.db.ListDeployments(context.Background(), e.alice.ID, gantry.DeploymentFilter{})
		return fmt.Sprintf("%s|%s|%s|%v|%+v|%+v|%v|%s|%s|%s|%s|%d", p.Name, p.Description, p.Branch, p.ShowInDiscover,
			p.BuildConfig, vars, p.UpdatedAt, u.FullName, u.Email, u.Avatar, u.PasswordHash, len(deps))
	}
	before := snapshot()
	usersBefore := e.userCount(t)

	put := func(field string, v any) request {
		return request{method: "PUT", url: projectURL, body: jsonBody(map[string]any{field: v})}
	}
	build := func(field, v string) request {
		return request{method: "PUT", url: projectURL, body: jsonBody(map[string]any{"buildConfig": map[string]string{field: v}})}
	}
	profile := func(field, v string) request {
		return request{method: "PUT", url: "/api/users/profile", body: jsonBody(map[string]string{field: v})}
	}
	register := func(field, v string) request {
		r := map[string]string{"username": "mallory", "email": "mallory@example.com", "password": "secret123", "fullName": "Mallory"}
		r[field] = v
		return request{method: "POST", url: "/api/auth/register", body: jsonBody(r)}
	}
	deployWith := func(field, v string) request {
		return request{method: "POST", url: "/api/deployments", body: jsonBody(map[string]string{"projectId": project, field: v})}
	}
	env := func(key, value string) request {
		return request{method: "PUT", url: projectURL + "/env", body: jsonBody(map[string]any{
			"variables": []map[string]any{{"key": key, "value": value, "isSecret": false}}})}
	}
	get := func(u string) request { return request{method: "GET", url: u} }
	const nul, esc, rlo, zwsp = "\x00", "\x1b", "\u202e", "\u200b"

	var refusals []scenario
	for _, tc := range []struct {
		name       string
		r          request
		wantStatus int
		want       string
	}{
		// Accounts.
		{"register full name NUL", register("fullName", "Mal"+nul+"lory"), 400, "Full name cannot contain control or invisible characters (found U+0000)"},
		{"register full name zero-width space", register("fullName", zwsp), 400, "Full name is required"},
		{"register full name RLO", register("fullName", "Mal"+rlo+"lory"), 400, "Full name cannot contain control or invisible characters (found U+202E)"},
		{"register full name CR LF", register("fullName", "Mal\r\nlory"), 400, "Full name must be a single line"},
		{"register full name 101 characters", register("fullName", strings.Repeat("é", 101)), 400, "Full name cannot exceed 100 characters"},
		{"register email NUL", register("email", "mal"+nul+"@example.com"), 400, "Email cannot contain control or invisible characters (found U+0000)"},
		{"register email ESC", register("email", "mal"+esc+"@example.com"), 400, "Email cannot contain control or invisible characters (found U+001B)"},
		{"register username NUL", register("username", "mal"+nul+"lory"), 400, "Username can only contain letters, numbers, underscores, and hyphens"},
		{"register username zero-width spaces", register("username", zwsp+zwsp+zwsp), 400, "Username is required"},
		{"register password NUL", register("password", "secret"+nul+"123"), 400, "Password cannot contain control or invisible characters (found U+0000)"},
		{"login email NUL", request{method: "POST", url: "/api/auth/login", body: jsonBody(map[string]string{"email": "alice@example.com" + nul, "password": alicePass})}, 400, "Email cannot contain control or invisible characters (found U+0000)"},
		{"profile full name ESC", profile("fullName", "Alice"+esc+"[31m"), 400, "Full name cannot contain control or invisible characters (found U+001B)"},
		{"profile full name LRI", profile("fullName", "Alice\u2066"), 400, "Full name cannot contain control or invisible characters (found U+2066)"},
		{"profile full name zero-width space", profile("fullName", " "+zwsp+" "), 400, "Full name is required"},
		{"profile full name Hangul filler", profile("fullName", "\u3164"), 400, "Full name is required"},
		{"profile email NUL", profile("email", "alice"+nul+"@example.com"), 400, "Email cannot contain control or invisible characters (found U+0000)"},
		{"profile avatar bidi", profile("avatar", "https://example.com/"+rlo+"gnp.exe"), 400, "Avatar must be an https URL"},
		{"change password NUL", request{method: "PUT", url: "/api/auth/change-password", body: jsonBody(map[string]string{"currentPassword": alicePass, "newPassword": "new" + nul + "secret"})}, 400, "Password cannot contain control or invisible characters (found U+0000)"},

		// Projects.
		{"project name NUL", put("name", "Ru"+nul+"les"), 400, "Project name cannot contain control or invisible characters (found U+0000)"},
		{"project name ESC", put("name", esc+"[2J"), 400, "Project name cannot contain control or invisible characters (found U+001B)"},
		{"project name LF", put("name", "a\nb"), 400, "Project name must be a single line"},
		{"project name RLO", put("name", "evil"+rlo+"txt.exe"), 400, "Project name cannot contain control or invisible characters (found U+202E)"},
		{"project name zero-width space", put("name", zwsp), 400, "Project name is required"},
		{"project name BOM", put("name", "\ufeffname"), 400, "Project name cannot contain control or invisible characters (found U+FEFF)"},
		{"project name 101 characters", put("name", strings.Repeat("ü", 101)), 400, "Project name cannot exceed 100 characters"},
		{"description NUL", put("description", "a"+nul), 400, "Description cannot contain control or invisible characters (found U+0000)"},
		{"description 501 characters", put("description", strings.Repeat("ß", 501)), 400, "Description cannot exceed 500 characters"},
		{"branch NUL", put("branch", "main"+nul), 400, "Branch cannot contain control or invisible characters (found U+0000)"},
		{"branch option", put("branch", "--upload-pack=touch /tmp/x"), 400, `Invalid branch name: "--upload-pack=touch /tmp/x"`},
		{"branch bidi", put("branch", "main"+rlo), 400, "Branch cannot contain control or invisible characters (found U+202E)"},
		{"build command two lines", build("buildCommand", "echo one\necho two"), 400, "Build command must be a single line"},
		{"install command NUL", build("installCommand", "npm ci"+nul), 400, "Install command cannot contain control or invisible characters (found U+0000)"},
		{"start command CR", build("startCommand", "node a.js\rrm -rf /"), 400, "Start command must be a single line"},
		{"start command tab", build("startCommand", "node\ta.js"), 400, "Start command cannot contain control or invisible characters (found U+0009)"},
		{"build command 1001 characters", build("buildCommand", strings.Repeat("é", 1001)), 400, "Build command cannot exceed 1000 characters"},
		{"output directory NUL", build("outputDirectory", "dist"+nul), 400, "Output directory cannot contain control or invisible characters (found U+0000)"},
		{"output directory escapes", build("outputDirectory", "a/../../etc"), 400, "Output directory must be a relative path inside the repository"},
		{"output directory absolute", build("outputDirectory", "/etc"), 400, "Output directory must be a relative path inside the repository"},
		{"output directory root", build("outputDirectory", "/"), 400, "Output directory must be a relative path inside the repository"},
		{"project name not UTF-8", request{method: "PUT", url: projectURL, body: "{\"name\":\"Ru\xffles\"}"}, 400, "Request body must be valid UTF-8 text"},
		{"show in discover not a boolean", put("showInDiscover", "yes"), 400, `Invalid value for field "showInDiscover": expected boolean`},
		{"always on not a boolean", put("alwaysOn", 1), 400, `Invalid value for field "alwaysOn": expected boolean`},
		{"always on on the free plan", put("alwaysOn", true), 403, "Always on is part of the paid plans (Basic, Pro, Enterprise): on your Free plan an app that goes unused for a while sleeps, and wakes at its next visit"},
		{"repository cannot change", request{method: "PUT", url: projectURL, body: `{"repository":{"url":"https://github.com/a/b"}}`}, 400, "The repository of a project cannot be changed: create a new project"},
		{"create with framework", request{method: "POST", url: "/api/projects/public", body: `{"repository":{"url":"https://github.com/a/b"},"framework":"react"}`}, 400, `Unknown field "framework"`},
		{"create with name NUL", request{method: "POST", url: "/api/projects/public", body: jsonBody(map[string]any{"repository": map[string]string{"url": d.git.URL + "/alice/rules.git"}, "name": "a" + nul})}, 400, "Project name cannot contain control or invisible characters (found U+0000)"},
		{"GitHub create with name NUL", request{method: "POST", url: "/api/projects", body: jsonBody(map[string]any{"repositoryId": 1, "name": "a" + nul})}, 400, "Project name cannot contain control or invisible characters (found U+0000)"},

		// Deployments: the overrides follow the project's rules.
		{"override two lines", deployWith("buildCommand", "echo one\necho two"), 400, "Build command must be a single line"},
		{"override NUL", deployWith("buildCommand", "npm run build"+nul), 400, "Build command cannot contain control or invisible characters (found U+0000)"},
		{"override output escapes", deployWith("outputDirectory", "../x"), 400, "Output directory must be a relative path inside the repository"},
		{"override output NUL", deployWith("outputDirectory", nul), 400, "Output directory cannot contain control or invisible characters (found U+0000)"},
		{"override output absolute", deployWith("outputDirectory", "//dist/"), 400, "Output directory must be a relative path inside the repository"},
		{"version newline", deployWith("version", "1.0\n2.0"), 400, "Version must be a single line"},
		{"version NUL", deployWith("version", "1.0"+nul), 400, "Version cannot contain control or invisible characters (found U+0000)"},
		{"version HTML", deployWith("version", "<b>1</b>"), 400, "Version can only contain letters, numbers, dots, hyphens, underscores and plus signs, starting with a letter or number"},
		{"version 51 characters", deployWith("version", strings.Repeat("1", 51)), 400, "Version cannot exceed 50 characters"},
		{"version of accents", deployWith("version", strings.Repeat("é", 26)), 400, "Version can only contain letters, numbers, dots, hyphens, underscores and plus signs, starting with a letter or number"},
		{"project id NUL", request{method: "POST", url: "/api/deployments", body: jsonBody(map[string]string{"projectId": project + nul})}, 404, "Project not found"},
		{"stop with deployment id NUL", request{method: "POST", url: "/api/deployments/hosting/stop/rules", body: jsonBody(map[string]string{"deploymentId": nul})}, 404, "Deployment not found"},

		// Environment variables: values may hold tabs and line breaks, nothing else invisible.
		{"env value NUL", env("A", "x"+nul), 400, "The value of A cannot contain control or invisible characters (found U+0000)"},
		{"env value ESC", env("A", esc+"[0m"), 400, "The value of A cannot contain control or invisible characters (found U+001B)"},
		{"env value too long", env("A", strings.Repeat("é", gantry.EnvValueMaxLen+1)), 400, "The value of A cannot exceed 32768 characters"},
		{"env value not UTF-8", request{method: "PUT", url: projectURL + "/env", body: "{\"variables\":[{\"key\":\"A\",\"value\":\"\xc3(\",\"isSecret\":true}]}"}, 400, "Request body must be valid UTF-8 text"},
		{"env key NUL", env("A"+nul, "x"), 400, `Invalid variable name "A\x00": use letters, digits and underscores, not starting with a digit, at most 128 characters`},

		// Query parameters and paths.
		{"gallery search NUL", get("/api/deployments/public?search=%00zzzz"), 400, `Query parameter "search" cannot contain control or invisible characters (found U+0000)`},
		{"gallery search RLO", get("/api/deployments/public?search=%E2%80%AEx"), 400, `Query parameter "search" cannot contain control or invisible characters (found U+202E)`},
		{"gallery sort NUL", get("/api/deployments/public?sort=recent%00"), 400, `Query parameter "sort" cannot contain control or invisible characters (found U+0000)`},
		{"gallery search not UTF-8", get("/api/deployments/public?search=%FF"), 400, `Query parameter "search" must be valid UTF-8 text`},
		{"query parameter name NUL", get("/api/deployments/public?a%00=1"), 400, `Query parameter "a\x00" cannot contain control or invisible characters (found U+0000)`},
		{"deployments filter NUL", get("/api/deployments?projectId=%00"), 400, `Query parameter "projectId" cannot contain control or invisible characters (found U+0000)`},
		{"deployments status NUL", get("/api/deployments?status=live%00"), 400, `Query parameter "status" cannot contain control or invisible characters (found U+0000)`},
		{"deployments status bogus", get("/api/deployments?status=bogus"), 400, "status must be one of pending, building, deploying, live, failed, stopped"},
		{"deployments limit signed", get("/api/deployments?limit=%2B5"), 400, "limit must be a whole number from 1 to 1000"},
		{"notifications limit leading zero", get("/api/notifications?limit=05"), 400, "limit must be a whole number from 1 to 200"},
		{"notifications limit NUL", get("/api/notifications?limit=%00"), 400, `Query parameter "limit" cannot contain control or invisible characters (found U+0000)`},
		{"project id in path NUL", get("/api/projects/%00"), 400, "The request path cannot contain control or invisible characters (found U+0000)"},
		{"like id in path NUL", request{method: "POST", url: "/api/deployments/public/a%00/like"}, 400, "The request path cannot contain control or invisible characters (found U+0000)"},
	} {
		refusals = append(refusals, scenario{name: tc.name, auth: true, request: tc.r, wantStatus: tc.wantStatus, wantMessage: tc.want})
	}
	runScenariosOn(t, e, refusals)
	if after := snapshot(); after != before {
		t.Errorf("refused requests changed something:\nbefore %s\nafter  %s", before, after)
	}
	if n := e.userCount(t); n != usersBefore {
		t.Errorf("got %d users, want %d", n, usersBefore)
	}

	// What the rules let through.
	var accepted []scenario
	for _, tc := range []struct {
		name string
		r    request
		want int
	}{
		{"description on two lines", put("description", "Line one\r\nline two\twith a tab"), 200},
		{"name with an emoji sequence", put("name", "Dev 👩\u200d💻"), 200},
		{"env value of several lines", env("PEM", "-----BEGIN KEY-----\nabc\tdef\r\n-----END KEY-----"), 200},
		{"version with a build", deployWith("version", "v2.1.0-beta+3"), 201},
		{"version of 50 characters", deployWith("version", strings.Repeat("9", 50)), 201},
		{"gallery search with accents", get("/api/deployments/public?search=%C3%A9t%C3%A9"), 200},
	} {
		accepted = append(accepted, scenario{name: tc.name, auth: true, request: tc.r, wantStatus: tc.want})
	}
	runScenariosOn(t, e, accepted)
	p, _ := e.db.FindProject(context.Background(), e.alice.ID, project)
	if p.Description != "Line one\nline two\twith a tab" || p.Name != "Dev 👩\u200d💻" {
		t.Errorf("got description %q, name %q", p.Description, p.Name)
	}
	deps, _ := e.db.ListDeployments(context.Background(), e.alice.ID, gantry.DeploymentFilter{})
	if len(deps) != 2 || deps[0].Version != strings.Repeat("9", 50) || deps[1].Version != "v2.1.0-beta+3" {
		t.Errorf("got deployments %+v", deps)
	}
}

// TestEchoesAreCut: a message repeats at most 100 characters of the value
// it refuses, however long the value.
func TestEchoesAreCut(t *testing.T) {
	t.Parallel()
	d, project := withProject(t, "Echo")
	e := d.testEnv
	long := strings.Repeat("k", 600_000)
	cut := regexp.MustCompile(`"k{100}…"`)
	var echoes []scenario
	for _, tc := range []struct {
		name string
		r    request
	}{
		{"env key", request{method: "PUT", url: "/api/projects/" + project + "/env",
			body: jsonBody(map[string]any{"variables": []map[string]any{{"key": long, "value": "x", "isSecret": false}}})}},
		{"unknown field", request{method: "PUT", url: "/api/projects/" + project, body: `{"` + long + `":1}`}},
		{"nested unknown field", request{method: "PUT", url: "/api/projects/" + project, body: `{"buildConfig":{"` + long + `":1}}`}},
		// A URL stays within the 64 KiB head limit (431 past it).
		{"search", request{method: "GET", url: "/api/deployments/public?search=" + long[:60_000]}},
		{"branch", request{method: "PUT", url: "/api/projects/" + project, body: jsonBody(map[string]string{"branch": strings.Repeat("k", 200) + ".."})}},
	} {
		echoes = append(echoes, scenario{name: tc.name, auth: true, request: tc.r, wantStatus: 400, wantFailure: true,
			after: func(t *testing.T, _ *testEnv, rec *httptest.ResponseRecorder) {
				a := decodeAnswer(t, rec)
				if rec.Body.Len() > 1024 {
					t.Errorf("got %d bytes: %.300s", rec.Body.Len(), a.Message)
				}
				if tc.name != "search" && !cut.MatchString(a.Message) {
					t.Errorf("message %.300q does not quote the first 100 characters", a.Message)
				}
			}})
	}
	runScenariosOn(t, e, echoes)
}

// TestShowInDiscover: the owner's switch takes a live app out of Discover
// (the list, the landing page's featured apps, likes and views) and puts
// it back.
func TestShowInDiscover(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	withDeploys(t, e, false)
	ctx := context.Background()
	alice, err := e.db.FindUserByID(ctx, e.alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, dep := storetest.MustCreateApp(t, e.db, storetest.App{Owner: alice, Name: "Seen", Description: "a public app", Type: "static"})
	listed := func() []string {
		t.Helper()
		var ids []string
		for _, u := range []string{"/api/deployments/public", "/api/deployments/public?limit=3&sort=recent", "/api/deployments/public?search=seen"} {
			rec := e.do(request{method: "GET", url: u})
			for _, d := range dataField[[]gantry.PublicDeployment](t, rec, "deployments") {
				ids = append(ids, d.ID)
			}
		}
		return ids
	}
	like := func() int {
		return e.do(request{method: "POST", url: "/api/deployments/public/" + dep.ID + "/like"}).Code
	}
	set := func(body string) gantry.Project {
		t.Helper()
		rec := e.do(request{method: "PUT", url: "/api/projects/" + p.ID, headers: bearer(e.token), body: body})
		if rec.Code != 200 {
			t.Fatalf("PUT %s: %d %s", body, rec.Code, rec.Body.String())
		}
		return dataField[gantry.Project](t, rec, "project")
	}

	rec := e.do(request{method: "GET", url: "/api/projects/" + p.ID, headers: bearer(e.token)})
	if !strings.Contains(rec.Body.String(), `"showInDiscover":true`) {
		t.Fatalf("the project answer does not carry showInDiscover: %s", rec.Body.String())
	}
	if got := listed(); len(got) != 3 || like() != 200 {
		t.Fatalf("shown: listed %v", got)
	}
	if got := set(`{"showInDiscover":false}`); got.ShowInDiscover || got.Name != "Seen" {
		t.Fatalf("after hiding: %+v", got)
	}
	if got := listed(); len(got) != 0 {
		t.Fatalf("hidden, yet listed: %v", got)
	}
	if code := like(); code != 404 {
		t.Fatalf("like of a hidden app: got %d, want 404", code)
	}
	// Other edits keep the choice.
	if got := set(`{"name":"Seen Again","showInDiscover":null}`); got.ShowInDiscover {
		t.Fatalf("a rename showed the project again")
	}
	if got := set(`{"showInDiscover":true}`); !got.ShowInDiscover {
		t.Fatalf("after showing: %+v", got)
	}
	if got := listed(); len(got) != 3 || got[0] != dep.ID {
		t.Fatalf("shown again, listed %v", got)
	}
	if code := like(); code != 200 {
		t.Fatalf("like of a shown app: got %d", code)
	}
	// Another user's switch is not alice's to flip.
	bob := e.otherToken(t)
	if rec := e.do(request{method: "PUT", url: "/api/projects/" + p.ID, headers: bearer(bob), body: `{"showInDiscover":false}`}); rec.Code != 404 {
		t.Fatalf("bob hides alice's app: got %d", rec.Code)
	}
}

// TestKeepDevDependencies: the project setting is a boolean inside
// buildConfig; anything else is refused with the field named and changes
// nothing, and true is kept (and answered) until a buildConfig without it.
func TestKeepDevDependencies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	withDeploys(t, e, false)
	ctx := context.Background()
	alice, err := e.db.FindUserByID(ctx, e.alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := storetest.MustCreateApp(t, e.db, storetest.App{Owner: alice, Name: "Api", Type: "express"})
	put := func(body string) *httptest.ResponseRecorder {
		return e.do(request{method: "PUT", url: "/api/projects/" + p.ID, headers: bearer(e.token), body: body})
	}
	stored := func() gantry.BuildConfig {
		t.Helper()
		got, err := e.db.FindProject(ctx, alice.ID, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.BuildConfig
	}
	for _, bad := range []string{`"yes"`, `1`, `"true"`, `{}`} {
		rec := put(`{"name":"Renamed","buildConfig":{"startCommand":"npm start","keepDevDependencies":` + bad + `}}`)
		a := decodeAnswer(t, rec)
		if rec.Code != 400 || a.Success || a.Message != `Invalid value for field "buildConfig.keepDevDependencies": expected boolean` {
			t.Fatalf("keepDevDependencies %s: got %d %+v", bad, rec.Code, a)
		}
	}
	if got := stored(); got.KeepDevDependencies || got.StartCommand != "" {
		t.Fatalf("a refused update changed the project: %+v", got)
	}
	rec := put(`{"buildConfig":{"installCommand":"","buildCommand":"","outputDirectory":"","startCommand":"npm start","keepDevDependencies":true}}`)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"keepDevDependencies":true`) {
		t.Fatalf("turning it on: %d %s", rec.Code, rec.Body.String())
	}
	if got := stored(); !got.KeepDevDependencies || got.StartCommand != "npm start" {
		t.Fatalf("stored %+v", got)
	}
	if rec := put(`{"name":"Renamed"}`); rec.Code != 200 || !stored().KeepDevDependencies {
		t.Fatalf("a rename turned it off: %d %s", rec.Code, rec.Body.String())
	}
	if rec := put(`{"buildConfig":{"startCommand":"npm start","keepDevDependencies":false}}`); rec.Code != 200 || stored().KeepDevDependencies {
		t.Fatalf("turning it off: %d %s", rec.Code, rec.Body.String())
	}
}
