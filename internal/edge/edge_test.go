package edge_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/edge"
)

var bigHTML = "<!doctype html><title>Home</title>" + strings.Repeat("<p>Welcome to the home page.</p>\n", 60)

var bundleJS = strings.Repeat("console.log('bundle');\n", 120)

const secret = "TOPSECRET-platform-key"

// fixture writes the files of a test platform: two sites, a stopped one,
// and a secret next to them.
func fixture(t testing.TB) (*edge.Edge, *edge.Table, string) {
	t.Helper()
	base := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(base, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(base, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	write("secret.key", secret)
	write("sites/a/index.html", bigHTML)
	write("sites/a/index.html.gz", gz(bigHTML))
	write("sites/a/index.html.br", br(bigHTML))
	write("sites/a/about/index.html", "<h1>About</h1>")
	write("sites/a/docs.html", "<h1>Docs</h1>")
	write("sites/a/assets/index-BFfRB1bB.js", bundleJS)
	write("sites/a/assets/index-BFfRB1bB.js.gz", gz(bundleJS))
	write("sites/a/assets/index-BFfRB1bB.js.br", br(bundleJS))
	write("sites/a/assets/app.3f9a2c1d.css", "body{color:red}")
	write("sites/a/logo.png", "\x89PNG\r\n\x1a\n0000")
	write("sites/a/robots.txt", "User-agent: *")
	write("sites/a/empty.txt", "")
	write("sites/a/404.html", "<h1>Custom 404</h1>")
	link("/etc", "sites/a/etc")
	link("/etc/passwd", "sites/a/passwd")
	link("../../secret.key", "sites/a/secret")
	link("index.html", "sites/a/inner.html")
	link("about", "sites/a/dirlink")
	write("sites/spa/index.html", `<div id="root">spa</div>`)
	write("sites/spa/assets/main.js", "render()")
	write("sites/off/index.html", "stopped site")

	tbl := edge.NewTable()
	tbl.Set("site", edge.Site{DeploymentID: "a", Dir: filepath.Join(base, "sites/a"), Status: gantry.DeploymentLive})
	tbl.Set("spa", edge.Site{DeploymentID: "spa", Dir: filepath.Join(base, "sites/spa"), Status: gantry.DeploymentLive, SPA: true})
	tbl.Set("off", edge.Site{DeploymentID: "off", Dir: filepath.Join(base, "sites/off"), Status: gantry.DeploymentStopped})
	tbl.Set("gone", edge.Site{DeploymentID: "gone", Dir: filepath.Join(base, "sites/gone"), Status: gantry.DeploymentLive})
	return edge.New("localhost", tbl, "http://localhost:8080"), tbl, base
}

func gz(s string) string {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

func br(s string) string {
	var b bytes.Buffer
	w := brotli.NewWriterLevel(&b, brotli.BestCompression)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

// request builds a request for target as a client would send it; targets
// Go's parser refuses (raw backslashes) get their path set directly.
func request(method, host, target string, headers map[string]string) *http.Request {
	var r *http.Request
	func() {
		defer func() {
			if recover() != nil {
				r = httptest.NewRequest(method, "/", nil)
				r.URL = &url.URL{Path: target}
				r.RequestURI = target
			}
		}()
		r = httptest.NewRequest(method, target, nil)
	}()
	r.Host = host
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	return r
}

func serve(e *edge.Edge, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	return w
}

// decoded returns the response body, decompressed per Content-Encoding.
func decoded(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var r io.Reader = bytes.NewReader(w.Body.Bytes())
	switch w.Header().Get("Content-Encoding") {
	case "br":
		r = brotli.NewReader(r)
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// edges returns the ways the edge serves the fixture: from a Table, whose
// folders stay open and whose small files are cached in memory (first
// pass fills the cache, second is served from it), and from another
// Resolver (folders opened per request, nothing cached).
func edges(t testing.TB) []struct {
	name string
	e    *edge.Edge
} {
	e, tbl, _ := fixture(t)
	m := mapResolver{}
	for _, sub := range []string{"site", "spa", "off", "gone"} {
		m[sub], _ = tbl.Lookup(sub)
	}
	return []struct {
		name string
		e    *edge.Edge
	}{{"table", e}, {"table warm", e}, {"resolver", edge.New("localhost", m, "http://localhost:8080")}}
}

func TestServe(t *testing.T) {
	for _, mode := range edges(t) {
		t.Run(mode.name, func(t *testing.T) { testServe(t, mode.e) })
	}
}

func testServe(t *testing.T, e *edge.Edge) {
	const (
		site = "site.localhost:8080"
		spa  = "spa.localhost:8080"
	)
	absent := "<absent>"
	for _, tc := range []struct {
		name, method, host, target string
		headers                    map[string]string
		status                     int
		body                       string // exact, after decoding; "" = not checked
		contains                   string
		lacks                      []string          // strings the body must not hold
		header                     map[string]string // value absent means the header must be missing
	}{
		// Index files, clean URLs, redirects.
		{name: "root", target: "/", status: 200, body: bigHTML, header: map[string]string{
			"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache", "Vary": "Accept-Encoding",
			"Content-Encoding": absent, "X-Content-Type-Options": "nosniff"}},
		{name: "index by name", target: "/index.html", status: 200, body: bigHTML},
		{name: "dot segment", target: "/./index.html", status: 200, body: bigHTML},
		{name: "folder index", target: "/about/", status: 200, body: "<h1>About</h1>"},
		{name: "folder without slash", target: "/about", status: 301, header: map[string]string{"Location": "/about/"}},
		{name: "folder redirect keeps query", target: "/about?x=1&y=2", status: 301, header: map[string]string{"Location": "/about/?x=1&y=2"}},
		{name: "clean URL", target: "/docs", status: 200, body: "<h1>Docs</h1>"},
		{name: "protocol-relative is no redirect", target: "//evil.example/", status: 404, header: map[string]string{"Location": absent}},
		{name: "HEAD", method: "HEAD", target: "/", status: 200, body: "", header: map[string]string{"Content-Length": fmt.Sprint(len(bigHTML))}},
		{name: "POST", method: "POST", target: "/", status: 405, header: map[string]string{"Allow": "GET, HEAD"}},

		// Traversal: nothing outside the site's folder, whatever the encoding.
		{name: "dotdot", target: "/../../secret.key", status: 404, body: "<h1>Custom 404</h1>"},
		{name: "encoded dotdot", target: "/%2e%2e/%2e%2e/secret.key", status: 404, body: "<h1>Custom 404</h1>"},
		{name: "encoded slashes", target: "/%2e%2e%2f%2e%2e%2fsecret.key", status: 404, body: "<h1>Custom 404</h1>"},
		{name: "mixed", target: "/..%2f..%2f..%2fsecret.key", status: 404, body: "<h1>Custom 404</h1>"},
		{name: "inside then out", target: "/about/../../../secret.key", status: 404, body: "<h1>Custom 404</h1>"},
		{name: "many slashes", target: "////etc/passwd", status: 404, body: "<h1>Custom 404</h1>"},
		{name: "double encoded", target: "/%252e%252e/%252e%252e/secret.key", status: 404, body: "<h1>Custom 404</h1>"},
		{name: "backslash", target: `/..\..\secret.key`, status: 400},
		{name: "encoded backslash", target: "/..%5c..%5csecret.key", status: 400},
		{name: "encoded NUL", target: "/index.html%00.png", status: 400},
		{name: "symlink to a secret", target: "/secret", status: 404, body: "<h1>Custom 404</h1>"},
		{name: "symlink to /etc/passwd", target: "/passwd", status: 404, body: "<h1>Custom 404</h1>"},
		{name: "through a symlink to /etc", target: "/etc/passwd", status: 404, body: "<h1>Custom 404</h1>"},
		{name: "symlinked folder outside", target: "/etc/", status: 404, body: "<h1>Custom 404</h1>"},
		{name: "symlink inside", target: "/inner.html", status: 200, body: bigHTML},
		{name: "symlinked folder inside", target: "/dirlink/", status: 200, body: "<h1>About</h1>"},

		// Not found.
		{name: "custom 404", target: "/missing", status: 404, body: "<h1>Custom 404</h1>", header: map[string]string{"Cache-Control": "no-cache", "Content-Type": "text/html; charset=utf-8"}},
		{name: "custom 404 for an asset", target: "/missing.js", status: 404, body: "<h1>Custom 404</h1>"},
		{name: "custom 404 HEAD", method: "HEAD", target: "/missing", status: 404, body: ""},
		{name: "file as folder", target: "/robots.txt/x", status: 404, body: "<h1>Custom 404</h1>"},

		// Single-page apps.
		{name: "SPA route", host: spa, target: "/dashboard/settings", status: 200, body: `<div id="root">spa</div>`, header: map[string]string{"Cache-Control": "no-cache"}},
		{name: "SPA root", host: spa, target: "/", status: 200, body: `<div id="root">spa</div>`},
		{name: "SPA route with a dot, navigated", host: spa, target: "/users/jane.doe", headers: map[string]string{"Accept": "text/html,application/xhtml+xml"}, status: 200, body: `<div id="root">spa</div>`},
		{name: "SPA missing asset", host: spa, target: "/assets/missing.js", status: 404, contains: "Page not found"},
		{name: "SPA asset", host: spa, target: "/assets/main.js", status: 200, body: "render()", header: map[string]string{"Content-Type": "text/javascript; charset=utf-8"}},
		{name: "SPA traversal", host: spa, target: "/%2e%2e/%2e%2e/secret.key", status: 404, contains: "Page not found"},
		{name: "SPA traversal navigated", host: spa, target: "/%2e%2e/%2e%2e/secret.key", headers: map[string]string{"Accept": "text/html"}, status: 200, body: `<div id="root">spa</div>`},

		// Caching and types.
		{name: "vite bundle", target: "/assets/index-BFfRB1bB.js", status: 200, body: bundleJS, header: map[string]string{
			"Cache-Control": "public, max-age=31536000, immutable", "Content-Type": "text/javascript; charset=utf-8"}},
		{name: "webpack css", target: "/assets/app.3f9a2c1d.css", status: 200, header: map[string]string{
			"Cache-Control": "public, max-age=31536000, immutable", "Content-Type": "text/css; charset=utf-8", "Vary": absent}},
		{name: "plain asset", target: "/logo.png", status: 200, header: map[string]string{
			"Cache-Control": "public, max-age=0, must-revalidate", "Content-Type": "image/png"}},
		{name: "text", target: "/robots.txt", status: 200, header: map[string]string{"Content-Type": "text/plain; charset=utf-8"}},

		// Compression.
		{name: "brotli", target: "/", headers: map[string]string{"Accept-Encoding": "gzip, deflate, br, zstd"}, status: 200, body: bigHTML,
			header: map[string]string{"Content-Encoding": "br", "Vary": "Accept-Encoding", "Content-Length": fmt.Sprint(len(br(bigHTML)))}},
		{name: "gzip", target: "/", headers: map[string]string{"Accept-Encoding": "gzip"}, status: 200, body: bigHTML,
			header: map[string]string{"Content-Encoding": "gzip", "Vary": "Accept-Encoding"}},
		{name: "brotli refused", target: "/", headers: map[string]string{"Accept-Encoding": "br;q=0, gzip;q=0.8"}, status: 200, body: bigHTML,
			header: map[string]string{"Content-Encoding": "gzip"}},
		{name: "all refused", target: "/", headers: map[string]string{"Accept-Encoding": "identity"}, status: 200, body: bigHTML,
			header: map[string]string{"Content-Encoding": absent, "Vary": "Accept-Encoding"}},
		{name: "star", target: "/", headers: map[string]string{"Accept-Encoding": "*"}, status: 200, body: bigHTML,
			header: map[string]string{"Content-Encoding": "br"}},
		{name: "bundle brotli", target: "/assets/index-BFfRB1bB.js", headers: map[string]string{"Accept-Encoding": "br"}, status: 200, body: bundleJS,
			header: map[string]string{"Content-Encoding": "br", "Content-Type": "text/javascript; charset=utf-8"}},
		{name: "small file uncompressed", target: "/about/", headers: map[string]string{"Accept-Encoding": "br"}, status: 200,
			header: map[string]string{"Content-Encoding": absent, "Vary": absent}},
		{name: "range is never compressed", target: "/", headers: map[string]string{"Accept-Encoding": "br", "Range": "bytes=0-14"}, status: 206,
			body: bigHTML[:15], header: map[string]string{"Content-Encoding": absent, "Content-Range": fmt.Sprintf("bytes 0-14/%d", len(bigHTML))}},
		{name: "range suffix", target: "/robots.txt", headers: map[string]string{"Range": "bytes=-3"}, status: 206, body: ": *"},
		{name: "range not satisfiable", target: "/robots.txt", headers: map[string]string{"Range": "bytes=999-"}, status: 416},

		// Conditional requests.
		{name: "if-modified-since", target: "/robots.txt", headers: map[string]string{"If-Modified-Since": time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}, status: 304},
		{name: "if-modified-since old", target: "/robots.txt", headers: map[string]string{"If-Modified-Since": time.Unix(0, 0).UTC().Format(http.TimeFormat)}, status: 200},
		{name: "if-none-match other", target: "/robots.txt", headers: map[string]string{"If-None-Match": `"nope"`}, status: 200},

		// Subdomains.
		{name: "unknown subdomain", host: "nope.localhost:8080", target: "/", status: 404, contains: "No app lives at nope.localhost yet",
			header: map[string]string{"Cache-Control": "no-store", "Content-Type": "text/html; charset=utf-8"}},
		{name: "link to the platform", host: "nope.localhost", target: "/", status: 404, contains: `href="http://localhost:8080"`},
		{name: "stopped", host: "off.localhost", target: "/", status: 503, contains: "This app is stopped"},
		{name: "stopped HEAD", method: "HEAD", host: "off.localhost", target: "/", status: 503, body: ""},
		{name: "bare domain", host: "localhost:8080", target: "/", status: 404, contains: "No site here"},
		{name: "deeper name", host: "a.site.localhost", target: "/", status: 404, contains: "No site here"},
		{name: "case and port", host: "SITE.LocalHost:8080", target: "/robots.txt", status: 200, body: "User-agent: *"},
		{name: "trailing dot", host: "site.localhost.", target: "/robots.txt", status: 200, body: "User-agent: *"},
		{name: "markup in host", host: "<script>.localhost", target: "/", status: 404, contains: "No site here"},
		// A name the platform does not serve: a plain page that names
		// neither the host nor the platform and links nowhere.
		{name: "other domain", host: "site.example.com", target: "/", status: 404, contains: "No site here",
			header: map[string]string{"Cache-Control": "no-store", "Content-Type": "text/html; charset=utf-8"}},
		{name: "other domain no link", host: "site.example.com", target: "/", status: 404, lacks: []string{"<a ", "Gantry", "site.example.com"}},
		{name: "folder gone", host: "gone.localhost", target: "/", status: 404, contains: "Page not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = "GET"
			}
			host := tc.host
			if host == "" {
				host = site
			}
			w := serve(e, request(method, host, tc.target, tc.headers))
			if w.Code != tc.status {
				t.Fatalf("got status %d, want %d\nheaders: %v\nbody: %.300s", w.Code, tc.status, w.Header(), w.Body.String())
			}
			got := decoded(t, w)
			if strings.Contains(got, secret) || strings.Contains(got, "root:x:0:0") {
				t.Fatalf("leaked a file from outside the site: %.200s", got)
			}
			if tc.body != "" && got != tc.body || tc.body == "" && (method == "HEAD" && got != "") {
				t.Errorf("got body %.200q, want %.200q", got, tc.body)
			}
			if tc.contains != "" && !strings.Contains(got, tc.contains) {
				t.Errorf("got body %.300q, want it to contain %q", got, tc.contains)
			}
			for _, l := range tc.lacks {
				if strings.Contains(got, l) {
					t.Errorf("got body %.300q, want it without %q", got, l)
				}
			}
			for k, want := range tc.header {
				vals, ok := w.Header()[http.CanonicalHeaderKey(k)]
				if want == absent {
					if ok {
						t.Errorf("got header %s: %v, want none", k, vals)
					}
					continue
				}
				if got := w.Header().Get(k); got != want {
					t.Errorf("got header %s: %q, want %q", k, got, want)
				}
			}
			if w.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Error("missing X-Content-Type-Options: nosniff")
			}
		})
	}
}

func TestETag(t *testing.T) {
	for _, mode := range edges(t) {
		t.Run(mode.name, func(t *testing.T) { testETag(t, mode.e) })
	}
}

func testETag(t *testing.T, e *edge.Edge) {
	get := func(headers map[string]string) *httptest.ResponseRecorder {
		return serve(e, request("GET", "site.localhost", "/", headers))
	}
	plain := get(nil)
	etag := plain.Header().Get("ETag")
	if !strings.HasPrefix(etag, `"`) || strings.HasPrefix(etag, "W/") {
		t.Fatalf("got ETag %q, want a strong ETag", etag)
	}
	brotli := get(map[string]string{"Accept-Encoding": "br"})
	brTag := brotli.Header().Get("ETag")
	if brTag == etag || !strings.HasSuffix(brTag, `-br"`) {
		t.Errorf("got ETag %q for brotli and %q plain, want distinct tags per encoding", brTag, etag)
	}
	for _, tc := range []struct {
		name    string
		headers map[string]string
		status  int
	}{
		{"match", map[string]string{"If-None-Match": etag}, 304},
		{"match in list", map[string]string{"If-None-Match": `"x", ` + etag}, 304},
		{"star", map[string]string{"If-None-Match": "*"}, 304},
		{"brotli match", map[string]string{"If-None-Match": brTag, "Accept-Encoding": "br"}, 304},
		{"brotli tag, identity requested", map[string]string{"If-None-Match": brTag}, 200},
		{"stale", map[string]string{"If-None-Match": `"0-0"`}, 200},
		{"if-range match", map[string]string{"If-Range": etag, "Range": "bytes=0-3"}, 206},
		{"if-range stale", map[string]string{"If-Range": `"0-0"`, "Range": "bytes=0-3"}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := get(tc.headers)
			if w.Code != tc.status {
				t.Errorf("got %d, want %d", w.Code, tc.status)
			}
			if w.Code == 304 && w.Body.Len() != 0 {
				t.Error("304 with a body")
			}
		})
	}
}

func TestTableSwitchIsAtomic(t *testing.T) {
	e, tbl, base := fixture(t)
	a := edge.Site{DeploymentID: "a", Dir: filepath.Join(base, "sites/a"), Status: gantry.DeploymentLive}
	b := edge.Site{DeploymentID: "spa", Dir: filepath.Join(base, "sites/spa"), Status: gantry.DeploymentLive}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				tbl.Set("flip", a)
			} else {
				tbl.Set("flip", b)
			}
			tbl.Set(fmt.Sprint("other", i%10), a)
		}
	}()
	for range 300 {
		w := serve(e, request("GET", "flip.localhost", "/", nil))
		if w.Code == 404 && strings.Contains(w.Body.String(), "No app lives") {
			continue // before the first Set
		}
		if body := w.Body.String(); w.Code != 200 || body != bigHTML && body != `<div id="root">spa</div>` {
			t.Fatalf("got %d %.80q, want one site or the other", w.Code, body)
		}
	}
	close(stop)
	wg.Wait()
	tbl.Delete("flip")
	if _, ok := tbl.Lookup("flip"); ok {
		t.Error("Delete left the site")
	}
	tbl.Replace(map[string]edge.Site{"only": a})
	if tbl.Len() != 1 {
		t.Errorf("got %d sites after Replace, want 1", tbl.Len())
	}
	var zero edge.Table
	if _, ok := zero.Lookup("x"); ok || zero.Len() != 0 {
		t.Error("the zero Table is not empty")
	}
}

func TestSubdomain(t *testing.T) {
	e := edge.New("Apps.Example.com", edge.NewTable(), "")
	for host, want := range map[string]string{
		"blog.apps.example.com":       "blog",
		"BLOG.apps.example.com:443":   "blog",
		"my-site-2.apps.example.com.": "my-site-2",
		"apps.example.com":            "",
		".apps.example.com":           "",
		"a.b.apps.example.com":        "",
		"blog.example.com":            "",
		"blog_x.apps.example.com":     "",
		"blogapps.example.com":        "",
		"[::1]:8080":                  "",
	} {
		got, ok := e.Subdomain(host)
		if got != want || ok != (want != "") {
			t.Errorf("Subdomain(%q): got %q %v, want %q", host, got, ok, want)
		}
	}
}

func BenchmarkSmallHTML(b *testing.B) {
	e, _, _ := fixture(b)
	r := request("GET", "site.localhost", "/about/", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}

func BenchmarkBrotliAsset(b *testing.B) {
	e, _, _ := fixture(b)
	r := request("GET", "site.localhost", "/assets/index-BFfRB1bB.js", map[string]string{"Accept-Encoding": "gzip, deflate, br"})
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}

// mapResolver is a Resolver that is not a Table: the edge opens each
// site's folder per request.
type mapResolver map[string]edge.Site

func (m mapResolver) Lookup(sub string) (edge.Site, bool) { s, ok := m[sub]; return s, ok }

func TestOtherResolver(t *testing.T) {
	_, _, base := fixture(t)
	e := edge.New("localhost", mapResolver{"site": {Dir: filepath.Join(base, "sites/a"), Status: gantry.DeploymentLive}}, "")
	for target, want := range map[string]int{"/": 200, "/about/": 200, "/secret": 404, "/%2e%2e/secret.key": 404} {
		if w := serve(e, request("GET", "site.localhost", target, nil)); w.Code != want || strings.Contains(w.Body.String(), secret) {
			t.Errorf("%s: got %d, want %d", target, w.Code, want)
		}
	}
}

// TestRawRequests sends attack paths over a real connection, exactly as
// written, so that no client library cleans them first.
func TestRawRequests(t *testing.T) {
	e, _, _ := fixture(t)
	srv := httptest.NewServer(e)
	defer srv.Close()
	for _, target := range []string{
		"/../../secret.key",
		"/..%2f..%2fsecret.key",
		"/%2e%2e/%2e%2e/secret.key",
		"/%2E%2E/%2E%2E/secret.key",
		"/.%2e/.%2e/secret.key",
		"/..;/..;/secret.key",
		"/%252e%252e%252f%252e%252e%252fsecret.key",
		"/..%5c..%5csecret.key",
		`/..\..\secret.key`,
		"/%c0%ae%c0%ae/%c0%ae%c0%ae/secret.key",
		"/secret",
		"/passwd",
		"/etc/passwd",
		"http://site.localhost/../../secret.key",
	} {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: site.localhost\r\nConnection: close\r\n\r\n", target)
		b, _ := io.ReadAll(conn)
		conn.Close()
		resp := string(b)
		if strings.Contains(resp, secret) || strings.Contains(resp, "root:x:0:0") {
			t.Errorf("%s leaked a file outside the site", target)
		}
		if !strings.HasPrefix(resp, "HTTP/1.1 4") {
			t.Errorf("%s: got %.40q, want a 4xx answer", target, resp)
		}
	}
}

// TestCacheFollowsSet checks that cached files never outlive a switch: a
// site set again (even to a folder replaced on disk at the same path)
// serves the new files at once.
func TestCacheFollowsSet(t *testing.T) {
	base := t.TempDir()
	publish := func(dir, content string) {
		tmp := filepath.Join(base, "tmp")
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, "index.html"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(dir)
		if err := os.Rename(tmp, dir); err != nil {
			t.Fatal(err)
		}
	}
	one, two := filepath.Join(base, "one"), filepath.Join(base, "two")
	publish(one, "first")
	publish(two, "second")
	tbl := edge.NewTable()
	e := edge.New("localhost", tbl, "")
	get := func() string {
		return serve(e, request("GET", "x.localhost", "/", nil)).Body.String()
	}
	tbl.Set("x", edge.Site{Dir: one, Status: gantry.DeploymentLive})
	if got := get() + get(); got != "firstfirst" {
		t.Fatalf("got %q", got)
	}
	tbl.Set("x", edge.Site{Dir: two, Status: gantry.DeploymentLive})
	if got := get(); got != "second" {
		t.Fatalf("after the switch got %q, want second", got)
	}
	publish(one, "first, republished")
	tbl.Set("x", edge.Site{Dir: one, Status: gantry.DeploymentLive})
	if got := get(); got != "first, republished" {
		t.Fatalf("after republishing got %q", got)
	}
	tbl.Set("x", edge.Site{Dir: one, Status: gantry.DeploymentStopped})
	if w := serve(e, request("GET", "x.localhost", "/", nil)); w.Code != 503 {
		t.Fatalf("stopped: got %d, want 503", w.Code)
	}
}
