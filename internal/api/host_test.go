package api_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/edge"
)

// TestUnknownHostGetsNoPlatform mounts issue 24's phishing frame: a
// stranger points their own domain (or a domain removed from its project
// still points) at the platform, and the platform must not answer it with
// the dashboard, the sign-in page or the API. Every such name gets the
// edge's plain "No site here" 404; the public host keeps working.
func TestUnknownHostGetsNoPlatform(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	live := edge.New("apps.example.com", edge.NewTable(), "https://gantry.example.com")
	e.srv.PublicHost, e.srv.LiveDomain, e.srv.LiveHandler = "gantry.example.com", "apps.example.com", live
	// A custom domain that was verified once, then removed from its project.
	live.SetDomains([]gantry.DomainRoute{{Name: "shop.example.org", Subdomain: "shop", Serve: true}})
	live.SetDomains(nil)

	login := `{"email":"alice@example.com","password":"` + alicePass + `"}`
	for _, host := range []string{"phish.example.net", "login-gantry.example.net:443", "gantry.example.com.phish.net",
		"shop.example.org", "203.0.113.7", "127.0.0.1:8080", "[::1]", "localhost", ""} {
		for _, rq := range []request{
			{method: "GET", url: "/"},
			{method: "GET", url: "/login"},
			{method: "GET", url: "/api/health"},
			{method: "POST", url: "/api/auth/login", body: login},
			{method: "GET", url: "/api/auth/me", headers: bearer(e.token)},
		} {
			rec := e.doHost(rq, host)
			body := rec.Body.String()
			if rec.Code != 404 || !strings.Contains(body, "No site here") || strings.Contains(body, "id=root") ||
				strings.Contains(body, `"success"`) || strings.Contains(body, "alice") {
				t.Errorf("Host %q %s %s: got %d %.300s, want the edge's No site here 404", host, rq.method, rq.url, rec.Code, body)
			}
			if rec.Header().Get("Set-Cookie") != "" {
				t.Errorf("Host %q %s: set a cookie %q", host, rq.url, rec.Header().Get("Set-Cookie"))
			}
		}
	}
	// The public host itself, on any port and in any case, is the platform.
	for _, host := range []string{"gantry.example.com", "GANTRY.example.com.:8443"} {
		if rec := e.doHost(request{method: "POST", url: "/api/auth/login", body: login}, host); rec.Code != 200 {
			t.Errorf("Host %q: sign-in got %d %s", host, rec.Code, rec.Body.String())
		}
		if rec := e.doHost(request{method: "GET", url: "/login"}, host); rec.Code != 200 || !strings.Contains(rec.Body.String(), "id=root") {
			t.Errorf("Host %q: /login got %d %.200s", host, rec.Code, rec.Body.String())
		}
	}
}

// doHost is do with the Host header host ("" for none).
func (e *testEnv) doHost(r request, host string) *httptest.ResponseRecorder {
	var body io.Reader = http.NoBody
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req := httptest.NewRequest(r.method, r.url, body)
	req.Host = host
	req.RemoteAddr = "192.0.2.10:1234"
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	return rec
}

// TestLoopbackAliases: with the public host localhost (the default, and
// the browser journeys'), the loopback literals are the platform too: only
// the machine itself can send them. With a public name, they are not.
func TestLoopbackAliases(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.LiveHandler = edge.New("localhost", edge.NewTable(), "http://localhost:8080")
	for _, host := range []string{"localhost:8080", "127.0.0.1:8080", "127.0.0.1", "[::1]:8080", "[::1]", "LOCALHOST."} {
		if rec := e.doHost(request{method: "GET", url: "/api/health"}, host); rec.Code != 200 {
			t.Errorf("Host %q: got %d %.200s, want the API", host, rec.Code, rec.Body.String())
		}
	}
	for _, host := range []string{"192.0.2.1:8080", "localhost.example.net", "127.0.0.1.nip.io"} {
		if rec := e.doHost(request{method: "GET", url: "/api/health"}, host); rec.Code != 404 || !strings.Contains(rec.Body.String(), "No site here") {
			t.Errorf("Host %q: got %d %.200s, want No site here", host, rec.Code, rec.Body.String())
		}
	}
}

// TestAPINeverPlainText: paths ServeMux would redirect (its plain 307) and
// heads over 64 KiB (net/http's plain 431) are answered with the JSON
// envelope under /api, through a real http.Server as gantry serve sets it.
func TestAPINeverPlainText(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ts := httptest.NewUnstartedServer(e.srv)
	ts.Config.MaxHeaderBytes = api.ReadHeaderBytes
	ts.Start()
	defer ts.Close()

	send := func(method, target, extra string) (*http.Response, string) {
		t.Helper()
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: localhost:8080\r\n%sContent-Length: 0\r\nConnection: close\r\n\r\n", method, target, extra)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s %s: %v", method, target, err)
		}
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	envelope := func(res *http.Response, body string) (bool, string) {
		var env struct {
			Success *bool
			Message string
		}
		err := json.Unmarshal([]byte(body), &env)
		return err == nil && env.Success != nil && !*env.Success && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"), env.Message
	}
	for _, target := range []string{"/api/./health", "/api//health", "/api/projects/../health", "/api/projects/x/../../auth/me"} {
		for _, method := range []string{"GET", "POST"} {
			res, body := send(method, target, "")
			ok, msg := envelope(res, body)
			if res.StatusCode != 400 || !ok || res.Header.Get("Location") != "" || !strings.Contains(msg, "call /api/") {
				t.Errorf("%s %s: got %d %q %q, want 400 with the JSON envelope", method, target, res.StatusCode, res.Header.Get("Location"), body)
			}
		}
	}
	big := "X-Big: " + strings.Repeat("a", 70<<10) + "\r\n"
	res, body := send("GET", "/api/health", big)
	if ok, msg := envelope(res, body); res.StatusCode != 431 || !ok || !strings.Contains(msg, "64 KiB") {
		t.Errorf("big head on /api: got %d %q", res.StatusCode, body)
	}
	// Elsewhere the 431 stays plain; within the limit all is well.
	if res, body := send("GET", "/dashboard", big); res.StatusCode != 431 || strings.Contains(body, "success") {
		t.Errorf("big head on /dashboard: got %d %q", res.StatusCode, body)
	}
	if res, body := send("GET", "/api/health", "X-Fine: "+strings.Repeat("a", 60<<10)+"\r\n"); res.StatusCode != 200 {
		t.Errorf("60 KiB head: got %d %q", res.StatusCode, body)
	}
}

// TestPlatformCookies: over https (here through a trusted proxy) and on
// localhost the visitor cookie is __Host-gantry_visitor, and a cookie of
// the unprefixed name, which an app on a sibling domain can set for the
// whole registrable domain, is not read; over plain http on another name,
// where browsers drop Secure cookies, it goes unprefixed and not Secure.
func TestPlatformCookies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	apps := seedGallery(t, e)
	e.srv.PublicHost, e.srv.TrustProxy = "gantry.example.com", true
	status := "/api/deployments/public/" + apps[0].id + "/like-status"
	cookieOf := func(rec *httptest.ResponseRecorder) *http.Cookie {
		for _, c := range rec.Result().Cookies() {
			return c
		}
		return nil
	}
	// Over https, a tossed visitor cookie (unprefixed, as a sibling domain
	// can set it) is ignored: the visitor gets a fresh id of its own.
	tossed := strings.Repeat("t", 22)
	rec := e.doHost(request{method: "GET", url: status, headers: map[string]string{
		"X-Forwarded-Proto": "https", "Cookie": "gantry_visitor=" + tossed}}, "gantry.example.com")
	if c := cookieOf(rec); rec.Code != 200 || c == nil || c.Name != "__Host-gantry_visitor" || !c.Secure || c.Path != "/" ||
		c.Domain != "" || c.Value == tossed {
		t.Errorf("https: %d cookie %+v, want a fresh __Host-gantry_visitor, Secure, Path=/", rec.Code, c)
	}
	// Plain http on a name: unprefixed and not Secure (browsers would drop it).
	rec = e.doHost(request{method: "GET", url: status}, "gantry.example.com")
	if c := cookieOf(rec); rec.Code != 200 || c == nil || c.Name != "gantry_visitor" || c.Secure {
		t.Errorf("plain http: %d cookie %+v, want gantry_visitor, not Secure", rec.Code, c)
	}
}
