package deploy_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/project"
)

// localRegistry serves packages (name → files, package/ in the tarball)
// at version 1.0.0 as an npm registry does, on the host's loopback; the
// metadata holds name, version and main only, so a package.json field the
// registry does not repeat (libc, say) is seen only in node_modules.
func localRegistry(t *testing.T, pkgs map[string]map[string]string) string {
	t.Helper()
	tgz := map[string][]byte{}
	for name, files := range pkgs {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		for f, body := range files {
			if err := tw.WriteHeader(&tar.Header{Name: "package/" + f, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			_, _ = tw.Write([]byte(body))
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
		tgz[name] = buf.Bytes()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, file, isTarball := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/-/")
		b, ok := tgz[name]
		switch {
		case !ok:
			http.NotFound(w, r)
		case isTarball && file == name+"-1.0.0.tgz":
			_, _ = w.Write(b)
		case !isTarball:
			sum1, sum512 := sha1.Sum(b), sha512.Sum512(b)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"name": name, "dist-tags": map[string]string{"latest": "1.0.0"},
				"versions": map[string]any{"1.0.0": map[string]any{"name": name, "version": "1.0.0", "main": "index.js",
					"dist": map[string]string{
						"tarball":   "http://" + r.Host + "/" + name + "/-/" + name + "-1.0.0.tgz",
						"shasum":    hex.EncodeToString(sum1[:]),
						"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum512[:]),
					}}},
			})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/"
}

// pruneRegistry holds a runtime dependency, a large dev tool, and one
// native binary package per C library (as Next.js's SWC comes).
func pruneRegistry(t *testing.T) string {
	pkg := func(name, extra string) string {
		return `{"name":"` + name + `","version":"1.0.0","main":"index.js"` + extra + `}`
	}
	return localRegistry(t, map[string]map[string]string{
		"gantry-greeting": {"package.json": pkg("gantry-greeting", ""), "index.js": `module.exports = "hello from a dependency";`},
		"gantry-devtool": {"package.json": pkg("gantry-devtool", ""), "index.js": `module.exports = "hello from a dev dependency";`,
			"blob.txt": strings.Repeat("dev tool weight\n", 1<<19)}, // 8 MiB
		"gantry-native-linux-x64-gnu":  {"package.json": pkg("gantry-native-linux-x64-gnu", `,"os":["linux"],"libc":["glibc"]`), "index.js": `module.exports = "gnu";`},
		"gantry-native-linux-x64-musl": {"package.json": pkg("gantry-native-linux-x64-musl", `,"os":["linux"],"libc":["musl"]`), "index.js": `module.exports = "musl";`},
		"gantry-native-win32-x64":      {"package.json": pkg("gantry-native-win32-x64", `,"os":["win32"],"cpu":["x64"]`), "index.js": `module.exports = "windows";`},
	})
}

// nodeApp is a Node server answering / with what requires names.
func nodeApp(requires string, devInStart bool) map[string]string {
	start := "node server.js"
	if devInStart {
		start = "node -e 'require(\"gantry-devtool\")' && node server.js"
	}
	return map[string]string{
		"package.json": `{"name":"app","version":"1.0.0","private":true,"scripts":{"start":` + jsonString(start) + `},
"dependencies":{"gantry-greeting":"1.0.0"},
"optionalDependencies":{"gantry-native-linux-x64-gnu":"1.0.0","gantry-native-linux-x64-musl":"1.0.0","gantry-native-win32-x64":"1.0.0"},
"devDependencies":{"gantry-devtool":"1.0.0"}}`,
		"server.js": `const http = require("http");
const body = [` + requires + `].map((m) => require(m)).join(" / ");
http.createServer((req, res) => res.end(body)).listen(process.env.PORT);
`,
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestServerAppRunsWithoutDevDependencies deploys a Node server app whose
// install brings an 8 MiB dev dependency and native packages for other
// platforms: the live workspace holds neither, the build log says what was
// pruned and what it saved, nothing is left held, and the app answers.
func TestServerAppRunsWithoutDevDependencies(t *testing.T) {
	e := newEnv(t)
	e.svc.NpmRegistry = pruneRegistry(t)
	p := e.project("Lean API", nodeApp(`"gantry-greeting", "gantry-native-linux-x64-gnu"`, false))
	d := e.deploy(p)
	e.mustLive(d)
	if code, body := e.get(p.Subdomain, "/"); code != http.StatusOK || body != "hello from a dependency / gnu" {
		t.Fatalf("the app answers %d %q", code, body)
	}
	vol := e.svc.WorkDir(d.ID)
	nm := filepath.Join(vol, "workspace", "node_modules")
	for _, gone := range []string{"gantry-devtool", "gantry-native-linux-x64-musl", "gantry-native-win32-x64"} {
		if _, err := os.Lstat(filepath.Join(nm, gone)); err == nil {
			t.Errorf("the live workspace still holds %s", gone)
		}
	}
	for _, kept := range []string{"gantry-greeting", "gantry-native-linux-x64-gnu"} {
		if _, err := os.Lstat(filepath.Join(nm, kept)); err != nil {
			t.Errorf("the live workspace lost %s: %v", kept, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(vol, build.HeldFolder)); err == nil {
		t.Errorf("the unpruned node_modules is still held after the app answered")
	}
	logs := strings.Join(e.logs(d.ID), "\n")
	want := "info: Pruned 1 dev dependency (gantry-devtool) and 2 packages for other platforms (gantry-native-linux-x64-musl, gantry-native-win32-x64): node_modules "
	if !strings.Contains(logs, want) || !strings.Contains(logs, " MB saved") {
		t.Fatalf("no line %q…MB saved in the build log:\n%s", want, logs)
	}
	if d.BuildInfo.BuildSize > 1<<20 {
		t.Errorf("the app's workspace is %d bytes: the dev dependency's 8 MiB still counts", d.BuildInfo.BuildSize)
	}
	// What the account is charged for: the volume's image, which gave the
	// pruned blocks back (a fresh ext4 image holding the app takes about
	// 2.5 MB).
	got, err := e.db.FindDeployment(context.Background(), "", d.ID)
	if err != nil || got.FilesSize > 6<<20 {
		t.Errorf("the deployment's files count %d bytes (%v): the pruned 8 MiB are still charged", got.FilesSize, err)
	}
	// Each step's time is recorded (bench/redeploy_test.go reports them).
	for _, step := range []string{"clone", "install", "prune", "publish", "start"} {
		if _, ok := got.BuildInfo.Phases[step]; !ok {
			t.Errorf("no %q in the build's phases %v", step, got.BuildInfo.Phases)
		}
	}
}

// TestServerAppWhoseStartNeedsADevDependencyGoesLive deploys a Node app
// whose start command loads a dev dependency: it does not start on the
// pruned tree, so node_modules is put back as installed, and the app goes
// live with it.
func TestServerAppWhoseStartNeedsADevDependencyGoesLive(t *testing.T) {
	e := newEnv(t)
	e.svc.NpmRegistry = pruneRegistry(t)
	p := e.project("Dev Start", nodeApp(`"gantry-greeting", "gantry-devtool"`, true))
	d := e.deploy(p)
	e.mustLive(d)
	if code, body := e.get(p.Subdomain, "/"); code != http.StatusOK || body != "hello from a dependency / hello from a dev dependency" {
		t.Fatalf("the app answers %d %q", code, body)
	}
	logs := strings.Join(e.logs(d.ID), "\n")
	for _, want := range []string{"info: Pruned 1 dev dependency (gantry-devtool)",
		"warning: The app did not start without its dev dependencies: putting them back and starting it again",
		"info: The app runs with its dev dependencies: its start command needs them, so they are kept"} {
		if !strings.Contains(logs, want) {
			t.Fatalf("no %q in the log:\n%s", want, logs)
		}
	}
	if got, err := e.db.FindDeployment(context.Background(), "", d.ID); err != nil || got.Diagnosis != nil {
		t.Errorf("the live deployment keeps the first start's diagnosis: %+v, %v", got.Diagnosis, err)
	}
	vol := e.svc.WorkDir(d.ID)
	if _, err := os.Lstat(filepath.Join(vol, "workspace", "node_modules", "gantry-devtool", "blob.txt")); err != nil {
		t.Errorf("the dev dependency is not back in the workspace: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(vol, build.HeldFolder)); err == nil {
		t.Errorf("the held node_modules is still there beside the restored one")
	}
}

// TestServerAppKeepsDevDependenciesWhenTheProjectSaysSo: with the
// project's "Keep dev dependencies" on, the dev dependency stays in the
// live workspace (an app may load one only on a request), and packages for
// other platforms still go.
func TestServerAppKeepsDevDependenciesWhenTheProjectSaysSo(t *testing.T) {
	e := newEnv(t)
	e.svc.NpmRegistry = pruneRegistry(t)
	p := e.project("Keeps Dev", nodeApp(`"gantry-greeting"`, false))
	if _, err := e.projects().UpdateProject(context.Background(), e.user.ID, p.ID, project.Input{
		BuildConfig: &gantry.BuildConfig{KeepDevDependencies: true}}); err != nil {
		t.Fatal(err)
	}
	d := e.deploy(p)
	e.mustLive(d)
	if code, body := e.get(p.Subdomain, "/"); code != http.StatusOK || body != "hello from a dependency" {
		t.Fatalf("the app answers %d %q", code, body)
	}
	nm := filepath.Join(e.svc.WorkDir(d.ID), "workspace", "node_modules")
	if _, err := os.Lstat(filepath.Join(nm, "gantry-devtool", "blob.txt")); err != nil {
		t.Errorf("the kept dev dependency is gone: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(nm, "gantry-native-linux-x64-musl")); err == nil {
		t.Errorf("the package for another C library is still there")
	}
	logs := strings.Join(e.logs(d.ID), "\n")
	for _, want := range []string{`info: Dev dependencies kept: the project's setting "Keep dev dependencies" is on`,
		"info: Pruned 2 packages for other platforms (gantry-native-linux-x64-musl, gantry-native-win32-x64): node_modules "} {
		if !strings.Contains(logs, want) {
			t.Fatalf("no %q in the log:\n%s", want, logs)
		}
	}
}
