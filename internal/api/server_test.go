package api_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/deadline/deadlinetest"
)

var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; img-src 'self' data: https:; style-src 'self' 'unsafe-inline'; " +
		"connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "strict-origin-when-cross-origin",
	"X-Frame-Options":        "DENY",
}

func withHeaders(extra map[string]string) map[string]string { return merge(securityHeaders, extra) }

func TestSPA(t *testing.T) {
	t.Parallel()
	get := func(url string) request { return request{method: "GET", url: url} }
	index := "<div id=root></div>"
	indexHeaders := withHeaders(map[string]string{"Cache-Control": "no-cache", "Content-Type": "text/html; charset=utf-8"})
	immutable := "public, max-age=31536000, immutable"
	runScenarios(t, []scenario{
		{name: "root", request: get("/"), wantStatus: 200, wantContains: []string{index}, wantHeaders: indexHeaders},
		{name: "index.html", request: get("/index.html"), wantStatus: 200, wantContains: []string{index}, wantHeaders: indexHeaders},
		{name: "client route", request: get("/dashboard"), wantStatus: 200, wantContains: []string{index}, wantHeaders: indexHeaders},
		{name: "nested client route", request: get("/projects/0190/edit?x=1"), wantStatus: 200, wantContains: []string{index}, wantHeaders: indexHeaders},
		// The callback page's address carries a token until the app reads it:
		// no referrer to anyone, no copy in any cache.
		{name: "github callback with token", request: get("/github-callback?token=abc"), wantStatus: 200, wantContains: []string{index},
			wantHeaders: withHeaders(map[string]string{"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"})},
		{name: "github callback in another case", request: get("/GitHub-Callback/?token=abc"), wantStatus: 200, wantContains: []string{index},
			wantHeaders: map[string]string{"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}},
		{name: "unknown file", request: get("/robots.txt"), wantStatus: 200, wantContains: []string{index}},
		{name: "path that looks like api", request: get("/apis"), wantStatus: 200, wantContains: []string{index}},
		{name: "traversal", request: get("/../../etc/passwd"), wantStatus: 200, wantContains: []string{index}},
		{name: "hidden file", request: get("/.gitkeep"), wantStatus: 200, wantContains: []string{index}},
		{name: "hashed script", request: get("/assets/index-AbC123.js"), wantStatus: 200, wantContains: []string{"console.log('app')"},
			wantHeaders: withHeaders(map[string]string{"Cache-Control": immutable, "Content-Type": "text/javascript; charset=utf-8"})},
		{name: "hashed style", request: get("/assets/index-AbC123.css"), wantStatus: 200,
			wantHeaders: withHeaders(map[string]string{"Cache-Control": immutable, "Content-Type": "text/css; charset=utf-8"})},
		{name: "missing asset is a 404, not the app", request: get("/assets/index-Old999.js"), wantStatus: 404, wantAbsent: []string{index}},
		{name: "favicon", request: get("/favicon.svg"), wantStatus: 200,
			wantHeaders: withHeaders(map[string]string{"Cache-Control": "no-cache", "Content-Type": "image/svg+xml"})},
		{name: "HEAD", request: request{method: "HEAD", url: "/dashboard"}, wantStatus: 200, wantHeaders: indexHeaders},
		{name: "POST", request: request{method: "POST", url: "/dashboard", body: "{}"}, wantStatus: 405,
			wantHeaders: withHeaders(map[string]string{"Allow": "GET, HEAD"})},
	})
}

func TestSPAConditionalGet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(request{method: "GET", url: "/"})
	etag := rec.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on index.html")
	}
	rec = e.do(request{method: "GET", url: "/settings", headers: map[string]string{"If-None-Match": etag}})
	if rec.Code != http.StatusNotModified {
		t.Errorf("revalidation: got %d, want 304", rec.Code)
	}
}

func TestSPANotBuilt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.Web = fstest.MapFS{".gitkeep": {}}
	rec := e.do(request{method: "GET", url: "/dashboard"})
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "make build") {
		t.Errorf("got %d %s", rec.Code, rec.Body.String())
	}
	// The API still works.
	if rec := e.do(request{method: "GET", url: "/api/health"}); rec.Code != 200 {
		t.Errorf("health: got %d", rec.Code)
	}
}

func TestAPINotFound(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{name: "unknown path", request: request{method: "GET", url: "/api/nope"}, wantStatus: 404,
			wantMessage: "Not found: no API endpoint at /api/nope", wantHeaders: securityHeaders},
		{name: "bare /api", request: request{method: "GET", url: "/api"}, wantStatus: 404, wantMessage: "Not found: no API endpoint at /api"},
		{name: "trailing slash", request: request{method: "GET", url: "/api/auth/me/"}, wantStatus: 404, wantContains: []string{`"success":false`}},
		{name: "wrong method", request: request{method: "DELETE", url: "/api/auth/me"}, wantStatus: 405,
			wantMessage: "Method DELETE is not allowed here", wantHeaders: map[string]string{"Allow": "GET"}},
		{name: "profile with POST", request: request{method: "POST", url: "/api/users/profile"}, wantStatus: 405,
			wantHeaders: map[string]string{"Allow": "PUT"}},
	})
}

func TestLiveHostRouting(t *testing.T) {
	t.Parallel()
	live := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Live", "yes")
		w.Write([]byte("live site for " + r.Host + r.URL.Path))
	})
	served := func(host, path string, wantLive bool) scenario {
		want := map[string]string{"X-Live": ""}
		if wantLive {
			// The platform's CSP is not set on a live site.
			want = map[string]string{"X-Live": "yes", "Content-Security-Policy": ""}
		}
		return scenario{name: host + path,
			setup:   func(_ *testing.T, e *testEnv) string { e.srv.LiveHandler = live; return "" },
			request: request{method: "GET", url: path, host: host}, wantHeaders: want}
	}
	runScenarios(t, []scenario{
		served("blog.localhost:8080", "/", true),
		served("blog.localhost", "/api/health", true), // a site's own /api is the site's
		served("BLOG.LocalHost.:8080", "/x", true),
		served("a.b.localhost:8080", "/", true),
		served("localhost:8080", "/", false),
		served("localhost", "/api/health", false),
		served("127.0.0.1:8080", "/", false),
		served("[::1]:8080", "/", false),
		// Every other name is the edge's too (it answers "No site here").
		served("evil-localhost:8080", "/", true),
		served(".localhost", "/", true),
		served("gantry.example.com", "/api/health", true),
	})

	t.Run("public host under the live domain", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.srv.LiveHandler = live
		e.srv.PublicHost, e.srv.LiveDomain = "gantry.example.com", "example.com"
		if rec := e.do(request{method: "GET", url: "/api/health", host: "gantry.example.com"}); rec.Code != 200 || rec.Header().Get("X-Live") != "" {
			t.Errorf("public host: got %d %s", rec.Code, rec.Body.String())
		}
		if rec := e.do(request{method: "GET", url: "/", host: "blog.example.com"}); rec.Header().Get("X-Live") != "yes" {
			t.Errorf("a site: got %d %s", rec.Code, rec.Body.String())
		}
	})
}

func TestDefaultLiveHandler(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(request{method: "GET", url: "/", host: "nothing-here.localhost:8080"})
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), "No deployment lives at this address") ||
		!strings.Contains(rec.Body.String(), "nothing-here.localhost") || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Errorf("got %d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	rec = e.do(request{method: "GET", url: "/", host: "<script>.localhost"})
	if strings.Contains(rec.Body.String(), "<script>") {
		t.Error("the host name is not escaped")
	}
}

func TestRequestLogAndPanic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.LiveHandler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	e.do(request{method: "GET", url: "/api/health?x=1"})
	rec := e.do(request{method: "GET", url: "/", host: "crash.localhost"})
	if rec.Code != 500 || decodeAnswer(t, rec).Message != "Internal error." {
		t.Errorf("panic: got %d %s", rec.Code, rec.Body.String())
	}

	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("got %d request lines, want 2:\n%s", len(lines), e.logs.String())
	}
	l := lines[0]
	if l["method"] != "GET" || l["path"] != "/api/health" || l["status"] != float64(200) || l["ip"] != "192.0.2.10" ||
		l["bytes"].(float64) < 10 || l["duration"] == nil || l["level"] != "INFO" {
		t.Errorf("request line: %v", l)
	}
	if l := lines[1]; l["status"] != float64(500) || l["level"] != "ERROR" {
		t.Errorf("panic line: %v", l)
	}
	if !strings.Contains(e.logs.String(), `"panic":"boom"`) {
		t.Errorf("the panic was not logged:\n%s", e.logs.String())
	}
}

// TestRequestLogUpgrade: a live-site handler that takes the connection
// over (the edge tunnelling a WebSocket) is logged with status 101.
func TestRequestLogUpgrade(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.LiveHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		c.Close()
	})
	srv := httptest.NewServer(e.srv)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "GET /ws HTTP/1.1\r\nHost: app.localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil || resp.StatusCode != 101 {
		t.Fatalf("got %v, %v", resp, err)
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(e.logs.String(), `"path":"/ws","status":101`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no request line with status 101:\n%s", e.logs.String())
		}
	}
}

func TestEmbeddedWebApp(t *testing.T) {
	t.Parallel()
	s := api.NewServer()
	if _, err := fs.Stat(s.Web, "index.html"); err != nil {
		t.Skip("web/dist has not been built")
	}
	s.PublicHost, s.LiveDomain = "localhost", "localhost"
	s.Logger = slog.New(slog.DiscardHandler)
	e := &testEnv{srv: s}
	rec := e.do(request{method: "GET", url: "/dashboard"})
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "<div id=\"root\">") {
		t.Errorf("got %d %.200s", rec.Code, rec.Body.String())
	}
}

// TestSlowBody: a request to the public host whose body trickles in is cut
// off once BodyTimeout has passed — answered 408 when its handler reads
// the body, and its connection closed either way; a body sent at once is
// read as usual.
func TestSlowBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.BodyTimeout = time.Second
	srv := httptest.NewServer(e.srv)
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	for _, target := range []string{"/api/auth/login", "/api/nowhere", "/dashboard"} {
		d, got := deadlinetest.Trickle(t, addr, "POST", "localhost:8080", target)
		if d > 2500*time.Millisecond {
			t.Errorf("%s: connection held %v, want about 1 s (the body would take 20 s)", target, d)
		}
		if target == "/api/auth/login" && (!strings.HasPrefix(got, "HTTP/1.1 408 ") ||
			!strings.Contains(got, `{"success":false,"message":"Request body did not arrive in time"}`)) {
			t.Errorf("%s: got %q, want a 408 answer", target, got)
		}
	}

	body := fmt.Sprintf(`{"email":"alice@example.com","password":%q}`, alicePass)
	if got := send(t, srv, "POST", "/api/auth/login", "", body); got != 200 {
		t.Errorf("login with the body sent at once: got %d, want 200", got)
	}
}

// A replica whose GANTRY_ROLES leave out api or edge (issue 26, point 7)
// answers that traffic 421 Misdirected Request, saying where to send it;
// /api/health stays up for load balancers.
func TestReplicaRoles(t *testing.T) {
	t.Parallel()
	live := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Live", "yes") })
	t.Run("no edge", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.srv.LiveHandler, e.srv.NoEdge = live, true
		rec := e.do(request{method: "GET", url: "/", host: "blog.localhost:8080"})
		if rec.Code != http.StatusMisdirectedRequest || rec.Header().Get("X-Live") != "" ||
			!strings.Contains(rec.Body.String(), "serves no live sites or apps (GANTRY_ROLES leaves out edge)") {
			t.Errorf("a live host: %d %q", rec.Code, rec.Body.String())
		}
		if rec := e.do(request{method: "GET", url: "/api/health"}); rec.Code != 200 {
			t.Errorf("the API on a replica without edge: %d", rec.Code)
		}
	})
	t.Run("no api", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.srv.LiveHandler, e.srv.NoAPI = live, true
		rec := e.do(request{method: "GET", url: "/api/projects", headers: bearer(e.token)})
		if rec.Code != http.StatusMisdirectedRequest || decodeAnswer(t, rec).Message !=
			"This server serves no API or web app (GANTRY_ROLES leaves out api): send the public host's traffic to the servers with the api role" {
			t.Errorf("the API: %d %s", rec.Code, rec.Body.String())
		}
		if rec := e.do(request{method: "GET", url: "/"}); rec.Code != http.StatusMisdirectedRequest {
			t.Errorf("the web app: %d", rec.Code)
		}
		if rec := e.do(request{method: "GET", url: "/api/health"}); rec.Code != 200 {
			t.Errorf("health: %d", rec.Code)
		}
		if rec := e.do(request{method: "GET", url: "/", host: "blog.localhost:8080"}); rec.Header().Get("X-Live") != "yes" {
			t.Errorf("a live host on a replica without api: %d", rec.Code)
		}
	})
}
