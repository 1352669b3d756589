package api_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/auth"
)

func TestPushToDeployAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, true)
	e.srv.DeployHooks = auth.NewLimiter(3, time.Hour) // builds on a loaded machine take minutes
	id := d.createProject(t, d.site(t, "site", "first"), "My Site")
	bob := e.otherToken(t)

	get := func(token string) gantry.Project {
		return dataField[gantry.Project](t, e.do(request{method: "GET", url: "/api/projects/" + id, headers: bearer(token)}), "project")
	}
	p := get(e.token)
	if !p.AutoDeploy || p.WatchCommits || !strings.HasPrefix(p.DeployHookURL, "http://localhost:8080/api/hooks/deploy/") {
		t.Fatalf("project %+v", p)
	}
	hook := strings.TrimPrefix(p.DeployHookURL, "http://localhost:8080")
	if again := get(e.token); again.DeployHookURL != p.DeployHookURL {
		t.Fatalf("the deploy hook URL changed between reads: %q, %q", p.DeployHookURL, again.DeployHookURL)
	}
	fail := func(name string, r request, status int, message string) scenario {
		return scenario{name: name, request: r, wantStatus: status, wantMessage: message, wantFailure: true}
	}
	runScenariosOn(t, e, []scenario{
		fail("unknown hook", request{method: "POST", url: "/api/hooks/deploy/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, 404, "Deploy hook not found"),
		fail("hook of another shape", request{method: "POST", url: "/api/hooks/deploy/x"}, 404, "Deploy hook not found"),
		fail("hook with a bad branch", request{method: "POST", url: hook + "?branch=-x"}, 400, `Invalid branch name: "-x"`),
		fail("hook with a misspelt parameter", request{method: "POST", url: hook + "?BRANCH=feature"}, 400, `Unknown query parameter "BRANCH": a deploy hook takes only ?branch=`),
		fail("hook with branch twice", request{method: "POST", url: hook + "?branch=main&branch=feature"}, 400, `Query parameter "branch" is given more than once`),
		fail("hook with a missing branch", request{method: "POST", url: hook + "?branch=nope"}, 404, "Branch not found"),
		fail("bob's promote", request{method: "POST", url: "/api/deployments/" + id + "/promote", headers: bearer(bob)}, 404, "Deployment not found"),
		fail("bob's redeploy", request{method: "POST", url: "/api/deployments/" + id + "/redeploy", headers: bearer(bob)}, 404, "Deployment not found"),
		fail("bob's previews", request{method: "GET", url: "/api/projects/" + id + "/previews", headers: bearer(bob)}, 404, "Project not found"),
		fail("bob's rotation", request{method: "POST", url: "/api/projects/" + id + "/deploy-hook", headers: bearer(bob)}, 404, "Project not found"),
		fail("promote without a token", request{method: "POST", url: "/api/deployments/" + id + "/promote"}, 401, ""),
		fail("bad target", request{method: "GET", url: "/api/deployments?target=staging", headers: bearer(e.token)}, 400, "target must be production or preview"),
		fail("bad autoDeploy", request{method: "PUT", url: "/api/projects/" + id, headers: bearer(e.token), body: `{"autoDeploy":"yes"}`}, 400, `Invalid value for field "autoDeploy": expected boolean`),
		{name: "no previews yet", request: request{method: "GET", url: "/api/projects/" + id + "/previews", headers: bearer(e.token)}, wantStatus: 200, wantData: map[string]string{"previews": `[]`}},
		{name: "bob's project list hides the hook", request: request{method: "GET", url: "/api/projects", headers: bearer(bob)}, wantStatus: 200, wantAbsent: []string{hook}},
	})

	// The hook deploys the production branch.
	rec := e.do(request{method: "POST", url: hook})
	if rec.Code != http.StatusCreated {
		t.Fatalf("hook: %d %s", rec.Code, rec.Body.String())
	}
	type hookAnswer struct {
		ID         string `json:"_id"`
		Status     string `json:"status"`
		Target     string `json:"target"`
		Branch     string `json:"branch"`
		CommitHash string `json:"commitHash"`
	}
	hd := dataField[hookAnswer](t, rec, "deployment")
	if hd.ID == "" || hd.Status != "pending" || hd.Target != "production" || hd.Branch != "main" || len(hd.CommitHash) != 40 {
		t.Fatalf("hook answered %s", rec.Body.String())
	}
	first := d.waitDeployment(t, hd.ID)
	if first.Status != gantry.DeploymentLive || first.Metadata.Trigger != gantry.TriggerHook {
		t.Fatalf("hook deployment %+v", first)
	}
	// ?branch= makes a preview.
	d.git.Repo(t, "alice/site", "feature", "add feature", map[string]string{"index.html": "<h1>feature</h1>"})
	rec = e.do(request{method: "POST", url: hook + "?branch=feature"})
	if rec.Code != http.StatusCreated || dataPath(t, rec, "deployment.target") != `"preview"` {
		t.Fatalf("hook ?branch=: %d %s", rec.Code, rec.Body.String())
	}
	preview := d.waitDeployment(t, dataField[hookAnswer](t, rec, "deployment").ID)
	if preview.Status != gantry.DeploymentLive || preview.Subdomain != "my-site--feature" {
		t.Fatalf("preview %+v", preview)
	}
	if rec := e.do(request{method: "GET", url: "/", host: "my-site--feature.localhost:8080"}); !strings.Contains(rec.Body.String(), "feature") {
		t.Fatalf("preview serves %d %s", rec.Code, rec.Body.String())
	}
	previews := dataField[[]gantry.Deployment](t, e.do(request{method: "GET", url: "/api/projects/" + id + "/previews", headers: bearer(e.token)}), "previews")
	if len(previews) != 1 || previews[0].ID != preview.ID || previews[0].Metadata.Branch != "feature" {
		t.Fatalf("previews %+v", previews)
	}
	list := dataField[[]gantry.Deployment](t, e.do(request{method: "GET", url: "/api/deployments?target=production", headers: bearer(e.token)}), "deployments")
	if len(list) != 1 || list[0].ID != first.ID {
		t.Fatalf("production deployments %+v", list)
	}
	runScenariosOn(t, e, []scenario{
		fail("promote a preview", request{method: "POST", url: "/api/deployments/" + preview.ID + "/promote", headers: bearer(e.token)}, 409,
			"A preview cannot be promoted to production: it was built with the preview's environment variables. Redeploy its commit to production instead."),
		fail("redeploy with a bad body", request{method: "POST", url: "/api/deployments/" + first.ID + "/redeploy", headers: bearer(e.token), body: `{"noCache":1}`}, 400, `Invalid value for field "noCache": expected boolean`),
		fail("redeploy with an unknown field", request{method: "POST", url: "/api/deployments/" + first.ID + "/redeploy", headers: bearer(e.token), body: `{"commit":"x"}`}, 400, `Unknown field "commit"`),
		{name: "the hook's limit", request: request{method: "POST", url: hook}, wantStatus: 429, wantFailure: true,
			wantMessage: "Too many deployments from this deploy hook. Please wait a minute and try again.",
			after: func(t *testing.T, e *testEnv, rec *httptest.ResponseRecorder) {
				if ra, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || ra < 1 || ra > 3600 {
					t.Errorf("Retry-After %q", rec.Header().Get("Retry-After"))
				}
			}},
	})

	// Redeploy, then promote the first deployment back.
	rec = e.do(request{method: "POST", url: "/api/deployments/" + first.ID + "/redeploy", headers: bearer(e.token), body: `{"noCache":true}`})
	if rec.Code != http.StatusCreated {
		t.Fatalf("redeploy: %d %s", rec.Code, rec.Body.String())
	}
	second := d.waitDeployment(t, dataField[gantry.Deployment](t, rec, "deployment").ID)
	if second.Status != gantry.DeploymentLive || second.Metadata.CommitHash != first.Metadata.CommitHash || second.Metadata.Trigger != gantry.TriggerRedeploy {
		t.Fatalf("redeployed %+v", second)
	}
	rec = e.do(request{method: "POST", url: "/api/deployments/" + first.ID + "/promote", headers: bearer(e.token)})
	if rec.Code != 200 || dataPath(t, rec, "deployment.status") != `"live"` || dataPath(t, rec, "deployment.promotedAt") == "null" {
		t.Fatalf("promote: %d %s", rec.Code, rec.Body.String())
	}

	// The token is a credential: the request log never holds it.
	if token := strings.TrimPrefix(hook, "/api/hooks/deploy/"); strings.Contains(e.logs.String(), token) {
		t.Fatalf("the deploy hook's token is in the log")
	}
	if !strings.Contains(e.logs.String(), `"path":"/api/hooks/deploy/[token]"`) {
		t.Fatalf("no request line of the deploy hook: %s", e.logs.String())
	}

	// Rotation: the old URL stops working. Auto-deploy off: the hook is refused.
	rec = e.do(request{method: "POST", url: "/api/projects/" + id + "/deploy-hook", headers: bearer(e.token)})
	rotated := dataField[gantry.Project](t, rec, "project")
	if rec.Code != 200 || rotated.DeployHookURL == p.DeployHookURL || rotated.DeployHookURL == "" {
		t.Fatalf("rotate: %d %s", rec.Code, rec.Body.String())
	}
	e.srv.DeployHooks = auth.NewLimiter(3, time.Hour) // builds on a loaded machine take minutes
	if rec := e.do(request{method: "POST", url: hook}); rec.Code != 404 {
		t.Fatalf("old hook after rotation: %d", rec.Code)
	}
	rec = e.do(request{method: "PUT", url: "/api/projects/" + id, headers: bearer(e.token), body: `{"autoDeploy":false,"watchCommits":true}`})
	if rec.Code != 200 || dataPath(t, rec, "project.autoDeploy") != "false" || dataPath(t, rec, "project.watchCommits") != "true" {
		t.Fatalf("settings: %d %s", rec.Code, rec.Body.String())
	}
	newHook := strings.TrimPrefix(rotated.DeployHookURL, "http://localhost:8080")
	if rec := e.do(request{method: "POST", url: newHook}); rec.Code != 403 {
		t.Fatalf("hook with auto-deploy off: %d %s", rec.Code, rec.Body.String())
	}
}
