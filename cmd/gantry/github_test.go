package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/githost/githubtest"
)

// TestServeGitHubConnect runs `gantry serve` against a fake GitHub and
// connects an account through the whole OAuth flow as a browser would
// (cookies kept, redirects followed by hand), checking the wiring of
// cmd: the callback URL, the sealed state and the sealed token.
func TestServeGitHubConnect(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	gh := githubtest.NewServer(t)
	ghUser := gh.AddUser("ada-gh")
	gh.AddRepo(t, githubtest.Repo{Owner: "ada-gh", Name: "private-site", Private: true}, nil)
	site := gh.AddRepo(t, githubtest.Repo{Owner: "ada-gh", Name: "site"}, map[string]string{"index.html": "<h1>v1</h1>"})

	var logs lockedBuffer
	ready := make(chan net.Addr, 1)
	const secretKey = "a-test-secret-key-that-is-long-enough-0123456789"
	m := &Main{
		Stdout: io.Discard, Stderr: &logs,
		Getenv: testEnv(map[string]string{
			"GANTRY_DATA_DIR":             filepath.Join(reachableDir(t), "data"),
			"GANTRY_PASSWORD_COST":        "1",
			"GANTRY_SECRET_KEY":           secretKey,
			"GANTRY_PUBLIC_URL":           "http://gantry.test",
			"GANTRY_GITHUB_CLIENT_ID":     gh.ClientID,
			"GANTRY_GITHUB_CLIENT_SECRET": gh.ClientSecret,
			"GANTRY_GITHUB_API_URL":       gh.APIURL(),
			"GANTRY_GITHUB_WEB_URL":       gh.URL,
			"GANTRY_SANDBOX":              "none",
		}),
		Ready: func(a net.Addr) { ready <- a },
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() { exit <- m.Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--log-format", "json"}) }()
	// The platform answers only on its public host, gantry.test: the
	// client reaches the server under that name.
	const base = "http://gantry.test"
	var addr string
	select {
	case a := <-ready:
		addr = a.String()
	case code := <-exit:
		t.Fatalf("serve exited with %d:\n%s", code, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start:\n%s", logs.String())
	}
	defer func() {
		cancel()
		<-exit
	}()

	jar, _ := cookiejar.New(nil)
	dialer := &net.Dialer{}
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, hostport string) (net.Conn, error) {
			if hostport == "gantry.test:80" {
				hostport = addr
			}
			return dialer.DialContext(ctx, network, hostport)
		}}}
	call := func(method, path, token, body string) (*http.Response, map[string]json.RawMessage) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var env struct{ Data map[string]json.RawMessage }
		json.NewDecoder(res.Body).Decode(&env)
		return res, env.Data
	}

	res, data := call("POST", "/api/auth/register", "", `{"username":"ada","email":"ada@example.com","password":"secret1","fullName":"Ada"}`)
	var token string
	json.Unmarshal(data["token"], &token)
	if res.StatusCode != 201 || token == "" {
		t.Fatalf("register: %d", res.StatusCode)
	}
	res, data = call("GET", "/api/auth/github/url", token, "")
	var authURL string
	json.Unmarshal(data["authUrl"], &authURL)
	if res.StatusCode != 200 || !strings.HasPrefix(authURL, gh.URL+"/login/oauth/authorize?") {
		t.Fatalf("url: %d %q", res.StatusCode, authURL)
	}
	if q, _ := url.Parse(authURL); q.Query().Get("redirect_uri") != "http://gantry.test/api/auth/github/callback" {
		t.Fatalf("redirect_uri %q, want <public URL>/api/auth/github/callback", q.Query().Get("redirect_uri"))
	}
	res, err := browser.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	back, _ := url.Parse(res.Header.Get("Location"))
	// gantry.test is this server.
	res, _ = call("GET", back.Path+"?"+back.RawQuery, "", "")
	page, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != 302 || page.Path != "/github-callback" || page.Query().Get("code") == "" || page.Query().Get("token") != "" {
		t.Fatalf("callback: %d %s\n%s", res.StatusCode, page, logs.String())
	}
	// The web app finishes the sign-in with the session that started it
	// (and, over plain http on a name, the unprefixed nonce cookie).
	finish, _ := json.Marshal(map[string]string{"code": page.Query().Get("code"), "state": page.Query().Get("state")})
	if res, _ = call("POST", "/api/auth/github/callback", token, string(finish)); res.StatusCode != 200 {
		t.Fatalf("finish: %d\n%s", res.StatusCode, logs.String())
	}
	res, data = call("GET", "/api/auth/me", token, "")
	if res.StatusCode != 200 || !strings.Contains(string(data["user"]), `"connected":true,"id":`+jsonInt(ghUser.ID)+`,"username":"ada-gh"`) ||
		!strings.Contains(string(data["user"]), `"fullName":"ada-gh/private-site"`) {
		t.Fatalf("me: %d %s", res.StatusCode, data["user"])
	}
	for _, secret := range []string{ghUser.Token, gh.ClientSecret, secretKey, page.Query().Get("code")} {
		if strings.Contains(logs.String(), secret) || strings.Contains(string(data["user"]), ghUser.Token) {
			t.Errorf("%q leaked into the logs or the answer", secret)
		}
	}

	// Push to deploy: creating a project from the repository registers
	// its webhook at <public URL>/api/webhooks/github; a signed delivery is
	// taken (202) and recorded on the Git card; deleting the project
	// removes the webhook.
	res, data = call("POST", "/api/projects", token, `{"repositoryId":`+jsonInt(site.ID)+`}`)
	var project struct {
		ID string `json:"_id"`
	}
	json.Unmarshal(data["project"], &project)
	if res.StatusCode != 201 || project.ID == "" {
		t.Fatalf("create from GitHub: %d %s\n%s", res.StatusCode, data, logs.String())
	}
	hooks := gh.Hooks("ada-gh/site")
	if len(hooks) != 1 || hooks[0].URL != "http://gantry.test/api/webhooks/github" || hooks[0].Secret == "" {
		t.Fatalf("hooks %+v", hooks)
	}
	body, _ := json.Marshal(gh.PushPayload(t, "ada-gh/site", "main", ""))
	req, _ := http.NewRequest("POST", base+"/api/webhooks/github", strings.NewReader(string(body)))
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-GitHub-Delivery", githubtest.NewDeliveryID())
	req.Header.Set("X-GitHub-Hook-ID", strconv.FormatInt(hooks[0].ID, 10))
	req.Header.Set("X-Hub-Signature-256", githubtest.Sign(hooks[0].Secret, body))
	if res, err := browser.Do(req); err != nil || res.StatusCode != http.StatusAccepted {
		t.Fatalf("delivery: %v %v", res, err)
	}
	var last json.RawMessage
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, data = call("GET", "/api/projects/"+project.ID+"/github", token, "")
		if last = data["webhook"]; strings.Contains(string(last), `"event":"push"`) {
			break
		}
	}
	if !strings.Contains(string(last), `"active":true`) || !strings.Contains(string(last), `"event":"push"`) {
		t.Fatalf("webhook %s", last)
	}
	if res, _ := call("DELETE", "/api/projects/"+project.ID, token, ""); res.StatusCode != 200 {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	if hooks := gh.Hooks("ada-gh/site"); len(hooks) != 0 {
		t.Fatalf("hooks after delete %+v", hooks)
	}
	if strings.Contains(logs.String(), hooks[0].Secret) {
		t.Error("the webhook secret leaked into the logs")
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }
