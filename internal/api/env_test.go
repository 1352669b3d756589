package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
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

// TestEnvMaskKeepsSecret mounts the attacks on saved secrets: the list the
// API shows (secrets masked) is sent back with one scope changed, with a
// renamed secret, and bodies without variables. The mask is never stored:
// the built app still gets the original secret, and the refused bodies
// change nothing.
func TestEnvMaskKeepsSecret(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, true)
	const secretValue = "sk_live_keep_me_0123456789"
	url := d.git.Repo(t, "alice/masksite", "main", "env", map[string]string{
		"package.json": `{"name":"masksite","version":"1.0.0","scripts":{"build":"node build.js"}}`,
		"build.js": `const fs = require('fs'); const crypto = require('crypto');
const v = process.env.API_KEY;
fs.mkdirSync('dist', {recursive: true});
fs.writeFileSync('dist/index.html', v === undefined ? 'unset' : 'sha256:' + crypto.createHash('sha256').update(v).digest('hex'));`,
	})
	project := d.createProject(t, url, "masksite")
	envURL := "/api/projects/" + project + "/env"
	get := func() string {
		rec := e.do(request{method: "GET", url: envURL, headers: bearer(e.token)})
		if rec.Code != 200 {
			t.Fatalf("get env: %d %s", rec.Code, rec.Body.String())
		}
		return string(decodeAnswer(t, rec).Data)
	}
	put := func(body string) *httptest.ResponseRecorder {
		return e.do(request{method: "PUT", url: envURL, headers: bearer(e.token), body: body})
	}
	if rec := put(`{"variables":[{"key":"MODE","value":"demo","isSecret":false},{"key":"API_KEY","value":"` + secretValue + `","isSecret":true}]}`); rec.Code != 200 {
		t.Fatalf("put: %d %s", rec.Code, rec.Body.String())
	}

	// GET, change the secret's scope to production, PUT the list back.
	shown := get()
	var list struct {
		Variables []gantry.EnvVar `json:"variables"`
	}
	if err := json.Unmarshal([]byte(shown), &list); err != nil {
		t.Fatal(err)
	}
	for i, v := range list.Variables {
		if v.Key == "API_KEY" {
			if v.Value != gantry.SecretMask {
				t.Fatalf("API_KEY shown as %q", v.Value)
			}
			list.Variables[i].Scope = gantry.EnvScopeProduction
		}
	}
	edited, _ := json.Marshal(list)
	if rec := put(string(edited)); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"key":"API_KEY","value":"••••••••","isSecret":true,"scope":"production"`) {
		t.Fatalf("put with the scope changed: %d %s", rec.Code, rec.Body.String())
	}
	saved := get()

	// The production build gets the original secret.
	rec := e.do(request{method: "POST", url: "/api/deployments", headers: bearer(e.token), body: `{"projectId":"` + project + `"}`})
	dep := d.waitDeployment(t, dataField[gantry.Deployment](t, rec, "deployment").ID)
	if dep.Status != gantry.DeploymentLive {
		t.Fatalf("deployment %s: %s", dep.Status, dep.Error)
	}
	sum := sha256.Sum256([]byte(secretValue))
	page := e.do(request{method: "GET", url: "/dist/index.html", host: dep.Subdomain + ".localhost:8080"})
	if want := "sha256:" + hex.EncodeToString(sum[:]); page.Body.String() != want {
		t.Fatalf("the built app saw %q, want %q (the original secret)", page.Body.String(), want)
	}

	// Refused, and nothing changes: no variables, a renamed or new secret
	// whose value is the mask (or empty, as the web editor sends it).
	rename := strings.Replace(string(edited), `"API_KEY"`, `"API_TOKEN"`, 1)
	runScenariosOn(t, e, []scenario{
		{name: "empty object", auth: true, request: request{method: "PUT", url: envURL, body: `{}`}, wantStatus: 400,
			wantMessage: `Variables are required: send {"variables":[…]} with every variable to keep ([] removes them all)`},
		{name: "null variables", auth: true, request: request{method: "PUT", url: envURL, body: `{"variables":null}`}, wantStatus: 400,
			wantMessage: `Variables are required: send {"variables":[…]} with every variable to keep ([] removes them all)`},
		{name: "renamed secret, masked", auth: true, request: request{method: "PUT", url: envURL, body: rename}, wantStatus: 400,
			wantMessage: "Enter the value of API_TOKEN: no secret of that name is saved, and a secret's value is never shown, so a new or renamed secret needs its value typed again"},
		{name: "new secret, empty", auth: true, request: request{method: "PUT", url: envURL,
			body: `{"variables":[{"key":"API_KEY","value":"••••••••","isSecret":true,"scope":"production"},{"key":"OTHER","value":"","isSecret":true}]}`}, wantStatus: 400,
			wantMessage: "Enter the value of OTHER: no secret of that name is saved, and a secret's value is never shown, so a new or renamed secret needs its value typed again"},
		{name: "masked plain value", auth: true, request: request{method: "PUT", url: envURL,
			body: `{"variables":[{"key":"API_KEY","value":"••••••••","isSecret":false,"scope":"production"}]}`}, wantStatus: 400,
			wantMessage: "Enter the value of API_KEY again to make it a plain variable"},
	})
	if after := get(); after != saved {
		t.Fatalf("a refused PUT changed the variables:\n%s\n%s", saved, after)
	}
}
