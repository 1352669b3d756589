package build_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gantryhq/gantry/internal/build"
)

// npmTarball packs files as an npm package tarball (everything under
// package/).
func npmTarball(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// npmRegistry serves one package, name at version 1.0.0 made of files, as
// an npm registry does (its metadata document and its tarball), on
// 127.0.0.1. The tarball's address is written from the Host the client
// asked, as registries do. hits counts requests.
func npmRegistry(t *testing.T, name string, files map[string]string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	tgz := npmTarball(t, files)
	sum1 := sha1.Sum(tgz)
	sum512 := sha512.Sum512(tgz)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/" + name:
			doc := map[string]any{
				"name":      name,
				"dist-tags": map[string]string{"latest": "1.0.0"},
				"versions": map[string]any{"1.0.0": map[string]any{
					"name": name, "version": "1.0.0", "main": "index.js",
					"dist": map[string]string{
						"tarball":   "http://" + r.Host + "/" + name + "/-/" + name + "-1.0.0.tgz",
						"shasum":    hex.EncodeToString(sum1[:]),
						"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum512[:]),
					},
				}},
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(doc)
		case "/" + name + "/-/" + name + "-1.0.0.tgz":
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(tgz)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// wheel packs a pure-Python wheel of module mod (one __init__.py holding
// src) as project dist at version 1.0, with its dist-info and RECORD.
func wheel(t *testing.T, dist, mod, src string) (string, []byte) {
	t.Helper()
	norm := strings.ReplaceAll(dist, "-", "_")
	info := norm + "-1.0.dist-info/"
	files := []struct{ name, body string }{
		{mod + "/__init__.py", src},
		{info + "METADATA", "Metadata-Version: 2.1\nName: " + dist + "\nVersion: 1.0\n"},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: gantry-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var record strings.Builder
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(f.body))
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString(info + "RECORD,,\n")
	w, err := zw.Create(info + "RECORD")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return norm + "-1.0-py3-none-any.whl", buf.Bytes()
}

// pipIndex serves one wheel from a PEP 503 simple index on 127.0.0.1:
// /simple/<dist>/ lists it, /files/<wheel> is it.
func pipIndex(t *testing.T, dist, mod, src string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	name, whl := wheel(t, dist, mod, src)
	sum := sha256.Sum256(whl)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/simple/" + dist + "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<!DOCTYPE html><html><body><a href=\"/files/%s#sha256=%s\">%s</a></body></html>\n", name, hex.EncodeToString(sum[:]), name)
		case "/files/" + name:
			_, _ = w.Write(whl)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestBuildInstallsFromRegistriesOnHostLoopback builds a project whose
// dependencies come from the operator's package mirrors on the host's
// loopback, named as operators name verdaccio and devpi
// (GANTRY_NPM_REGISTRY=http://localhost:PORT/, GANTRY_PIP_INDEX_URL=
// http://localhost:PORT/simple/): an npm registry and a PEP 503 index the
// test serves on 127.0.0.1. The install reaches both through their one
// port each, and the built site holds what the packages say; another port
// of the host's loopback stays shut.
func TestBuildInstallsFromRegistriesOnHostLoopback(t *testing.T) {
	e := newEnv(t)
	npm, npmHits := npmRegistry(t, "gantry-greeting", map[string]string{
		"package.json": `{"name":"gantry-greeting","version":"1.0.0","main":"index.js"}`,
		"index.js":     `module.exports = "hello from the local registry";`,
	})
	pip, pipHits := pipIndex(t, "gantry-greeting", "gantry_greeting", `GREETING = "hello from the local index"`+"\n")
	local := func(srv *httptest.Server) string { return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) }
	// Another service of the host's loopback (the platform's API, say)
	// stays out of reach.
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	otherPort := other.URL[strings.LastIndex(other.URL, ":")+1:]

	job := e.job(t, "mirrors", map[string]string{
		"package.json": `{"name":"site","version":"1.0.0","private":true,"dependencies":{"gantry-greeting":"1.0.0"}}`,
	})
	job.Project.InstallCommand = "npm install --no-audit --no-fund && python3 -m pip install --no-cache-dir --disable-pip-version-check --target py gantry-greeting==1.0"
	job.Project.BuildCommand = `mkdir -p dist && node -e 'console.log(require("gantry-greeting"))' > dist/index.html && PYTHONPATH=py python3 -c 'import gantry_greeting; print(gantry_greeting.GREETING)' >> dist/index.html` +
		` && { bash -c 'exec 3<>/dev/tcp/127.0.0.1/` + otherPort + `' 2>/dev/null && echo "reached another loopback port" >> dist/index.html; true; }`
	job.Project.OutputDirectory = "dist"
	job.NpmRegistry = local(npm) + "/"
	job.PipIndexURL = local(pip) + "/simple/"
	res, l, err := e.run(t, job)
	if err != nil {
		t.Fatalf("build: %v\nlog:\n%s", err, l)
	}
	b, err := os.ReadFile(filepath.Join(res.SiteDir, "index.html"))
	if want := "hello from the local registry\nhello from the local index\n"; err != nil || string(b) != want {
		t.Errorf("index.html = %q, %v; want %q\nlog:\n%s", b, err, want, l)
	}
	if npmHits.Load() == 0 || pipHits.Load() == 0 {
		t.Errorf("the registries got %d (npm) and %d (pip) requests", npmHits.Load(), pipHits.Load())
	}
}

func TestLoopbackPort(t *testing.T) {
	for raw, want := range map[string]int{
		"http://localhost:4873/":                   4873,
		"http://LOCALHOST.:3141/root/pypi/+simple": 3141,
		"http://127.0.0.1/simple/":                 80,
		"https://[::1]/":                           443,
		"http://npm.localhost:8080/":               8080,
		"http://10.20.0.5:4873/":                   0,
		"https://mirror.campus.edu/simple/":        0,
		"ftp://localhost:21/":                      0,
	} {
		got, ok := build.LoopbackPort(raw)
		if !ok {
			got = 0
		}
		if got != want {
			t.Errorf("LoopbackPort(%q) = %d, %v; want %d", raw, got, ok, want)
		}
	}
}
