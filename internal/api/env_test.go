package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
)

func TestProjectEnv(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, true)
	const secretValue = "sk_live_0123456789abcdef"
	url := d.git.Repo(t, "alice/envsite", "main", "env", map[string]string{
		"package.json": `{"name":"envsite","version":"1.0.0","scripts":{"build":"node build.js"}}`,
		"build.js": `const fs = require('fs'); fs.mkdirSync('dist', {recursive: true});
console.log('api key is ' + process.env.API_KEY + ' and mode is ' + process.env.MODE);
fs.writeFileSync('dist/index.html', '<p>' + process.env.MODE + '</p>');`,
	})
	project := d.createProject(t, url, "envsite")
	put := func(token, body string) (int, string) {
		rec := e.do(request{method: "PUT", url: "/api/projects/" + project + "/env", headers: bearer(token), body: body})
		if rec.Code != 200 {
			return rec.Code, decodeAnswer(t, rec).Message
		}
		return rec.Code, rec.Body.String()
	}

	envURL := "/api/projects/" + project + "/env"
	runScenariosOn(t, e, []scenario{
		{name: "bad name", auth: true, request: request{method: "PUT", url: envURL,
			body: `{"variables":[{"key":"1X","value":"a","isSecret":false}]}`},
			wantStatus: 400, wantMessage: `Invalid variable name "1X": use letters, digits and underscores, not starting with a digit, at most 128 characters`},
		{name: "reserved", auth: true, request: request{method: "PUT", url: envURL,
			body: `{"variables":[{"key":"PORT","value":"1","isSecret":false}]}`},
			wantStatus: 400, wantMessage: "PORT is set by Gantry and cannot be changed"},
		{name: "twice", auth: true, request: request{method: "PUT", url: envURL,
			body: `{"variables":[{"key":"A","value":"1","isSecret":false},{"key":"A","value":"2","isSecret":false}]}`},
			wantStatus: 400, wantMessage: "Variable A is listed twice"},
		{name: "wrong type", auth: true, request: request{method: "PUT", url: envURL, body: `{"variables":[{"key":"A","value":1}]}`},
			wantStatus: 400, wantFailure: true},
		{name: "bob sets alice's env", setup: func(t *testing.T, e *testEnv) string { return e.otherToken(t) },
			request: request{method: "PUT", url: envURL, body: `{"variables":[]}`}, wantStatus: 404},
	})

	code, body := put(e.token, `{"variables":[{"key":"MODE","value":"production-ish","isSecret":false},{"key":"API_KEY","value":"`+secretValue+`","isSecret":true}]}`)
	if code != 200 || strings.Contains(body, secretValue) || !strings.Contains(body, "••••••••") {
		t.Fatalf("put: %d %s", code, body)
	}
	// The stored value is sealed.
	stored, _ := e.db.ProjectEnv(context.Background(), project)
	for _, v := range stored {
		if v.Key == "API_KEY" && (v.Value == secretValue || !strings.HasPrefix(v.Value, "v1:")) {
			t.Fatalf("secret stored as %q", v.Value)
		}
	}
	// Saving the masked list back keeps the secret.
	if code, _ := put(e.token, `{"variables":[{"key":"MODE","value":"production-ish","isSecret":false},{"key":"API_KEY","value":"••••••••","isSecret":true}]}`); code != 200 {
		t.Fatalf("put masked: %d", code)
	}

	rec := e.do(request{method: "POST", url: "/api/deployments", headers: bearer(e.token), body: `{"projectId":"` + project + `"}`})
	dep := d.waitDeployment(t, dataField[gantry.Deployment](t, rec, "deployment").ID)
	if dep.Status != gantry.DeploymentLive {
		t.Fatalf("deployment %s: %s", dep.Status, dep.Error)
	}
	var sawLine bool
	for _, l := range dep.BuildLogs {
		if strings.Contains(l.Message, secretValue) {
			t.Fatalf("secret in log line %q", l.Message)
		}
		if strings.Contains(l.Message, "api key is •••••••• and mode is production-ish") {
			sawLine = true
		}
	}
	if !sawLine {
		t.Fatalf("the build's line with the redacted secret is missing: %+v", dep.BuildLogs)
	}
	raw := e.do(request{method: "GET", url: "/api/deployments/" + dep.ID, headers: bearer(e.token)}).Body.String()
	if strings.Contains(raw, secretValue) || !strings.Contains(raw, `"key":"API_KEY","value":"••••••••","isSecret":true`) {
		t.Fatalf("deployment answer: %s", raw)
	}
	if code, body := func() (int, string) {
		rec := e.do(request{method: "GET", url: "/api/projects/" + project + "/env", headers: bearer(e.token)})
		return rec.Code, rec.Body.String()
	}(); code != 200 || strings.Contains(body, secretValue) {
		t.Fatalf("get env: %d %s", code, body)
	}
}
