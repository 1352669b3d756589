package build_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/gittest"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
	"github.com/google/go-cmp/cmp"
)

// logLine is one line a build logged.
type logLine struct{ Level, Message string }

type logs struct {
	mu    sync.Mutex
	lines []logLine
}

func (l *logs) Log(level, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, logLine{level, message})
}

func (l *logs) all() []logLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]logLine(nil), l.lines...)
}

func (l *logs) last() logLine {
	all := l.all()
	if len(all) == 0 {
		return logLine{}
	}
	return all[len(all)-1]
}

func (l *logs) has(level, message string) bool {
	for _, x := range l.all() {
		if x.Level == level && x.Message == message {
			return true
		}
	}
	return false
}

func (l *logs) hasPrefix(level, prefix string) bool {
	for _, x := range l.all() {
		if x.Level == level && strings.HasPrefix(x.Message, prefix) {
			return true
		}
	}
	return false
}

func (l *logs) String() string {
	var b strings.Builder
	for _, x := range l.all() {
		fmt.Fprintf(&b, "%-7s %s\n", x.Level, x.Message)
	}
	return b.String()
}

// env is a test's platform: a git server, a data folder laid out as the
// platform does (0711), and a pipeline with the real sandbox.
type env struct {
	git   *gittest.Server
	data  string
	sites string
	p     *build.Pipeline
}

func newEnv(t *testing.T) *env {
	t.Helper()
	sb := sandboxtest.Require(t, sandbox.Config{})
	data := t.TempDir()
	for _, d := range []string{filepath.Dir(data), data} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	// The platform's cloner: git runs in the sandbox.
	hosts, err := githost.New(githost.Config{AllowHosts: []string{"127.0.0.1"}, Sandbox: sb, DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	return &env{
		git:   gittest.NewServer(t),
		data:  data,
		sites: filepath.Join(data, "sites"),
		p:     &build.Pipeline{Sandbox: sb, Cloner: hosts},
	}
}

// job returns a job for repository files, committed as "first" on main.
func (e *env) job(t *testing.T, id string, files map[string]string) build.Job {
	t.Helper()
	url := e.git.Repo(t, "alice/"+id, "main", "first", files)
	return build.Job{
		DeploymentID: id,
		CloneURL:     url,
		Branch:       "main",
		Workspace:    filepath.Join(e.data, "builds", id),
		SitesDir:     e.sites,
		BlobDir:      filepath.Join(e.data, "blobs", "alice"), // as the platform publishes
		Timeout:      2 * time.Minute,
	}
}

func (e *env) run(t *testing.T, job build.Job) (*build.Result, *logs, error) {
	t.Helper()
	l := &logs{}
	res, err := e.p.Run(context.Background(), job, l)
	return res, l, err
}

// tree lists the files under dir, relative, sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// assertFailed checks the build failed with msg as its error and log line,
// followed by its diagnosis as the last line, published nothing and
// removed its workspace.
func assertFailed(t *testing.T, e *env, job build.Job, l *logs, err error, msg string) {
	t.Helper()
	var be *build.Error
	if !errors.As(err, &be) {
		t.Fatalf("got error %v, want a *build.Error %q\nlog:\n%s", err, msg, l)
	}
	if err.Error() != msg {
		t.Errorf("got error %q, want %q\nlog:\n%s", err.Error(), msg, l)
	}
	all := l.all()
	if len(all) < 2 || all[len(all)-2] != (logLine{gantry.LevelError, msg}) {
		t.Errorf("got log %v, want {error %q} before the diagnosis", all, msg)
	}
	if be.Diagnosis == nil || l.last() != (logLine{gantry.LevelError, be.Diagnosis.Text()}) ||
		!strings.HasPrefix(l.last().Message, "Why it failed: ") {
		t.Errorf("got last log line %v, want the diagnosis %+v", l.last(), be.Diagnosis)
	}
	if _, err := os.Stat(filepath.Join(e.sites, job.DeploymentID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed build published a site (%v)", err)
	}
	if entries, _ := os.ReadDir(e.sites); len(entries) > 0 {
		t.Errorf("the sites folder holds %v after a failed build", entries)
	}
	if _, err := os.Stat(job.Workspace); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the workspace was not removed (%v)", err)
	}
}

var bigHTML = "<!doctype html><title>Site</title>" + strings.Repeat("<p>Hello from a static site.</p>\n", 100)

func TestStaticSiteWithoutBuild(t *testing.T) {
	e := newEnv(t)
	job := e.job(t, "site", map[string]string{
		"index.html":          bigHTML,
		"style.css":           "body{color:red}",
		"about/index.html":    "<h1>About</h1>",
		"latest.html@symlink": "index.html",
		"passwd.txt@symlink":  "/etc/passwd",
		"up.txt@symlink":      "../../../../../../etc/hostname",
		"docs@symlink":        "about",
	})
	res, l, err := e.run(t, job)
	if err != nil {
		t.Fatalf("build: %v\nlog:\n%s", err, l)
	}
	if res.Detection.Framework != "static" {
		t.Errorf("got framework %q, want static", res.Detection.Framework)
	}
	for _, want := range []logLine{
		{gantry.LevelInfo, "Cloning alice/site (branch main)…"},
		{gantry.LevelInfo, "Detected framework: Static HTML"},
		{gantry.LevelWarning, "Skipped symlink 'passwd.txt': it points outside the output directory"},
		{gantry.LevelWarning, "Skipped symlink 'up.txt': it points outside the output directory"},
		{gantry.LevelWarning, "Skipped symlink 'docs': only links to files are published"},
	} {
		if !l.has(want.Level, want.Message) {
			t.Errorf("missing log line %v\nlog:\n%s", want, l)
		}
	}
	if !l.hasPrefix(gantry.LevelInfo, "Commit "+res.Commit.SHA[:7]+": first (Test Author)") {
		t.Errorf("missing the commit line\nlog:\n%s", l)
	}
	if last := l.last(); last.Level != gantry.LevelSuccess || !strings.HasPrefix(last.Message, "Build completed in ") {
		t.Errorf("got last line %v, want the success line", last)
	}
	site := filepath.Join(e.sites, "site")
	if res.SiteDir != site {
		t.Errorf("got site dir %q, want %q", res.SiteDir, site)
	}
	want := []string{"about/index.html", "index.html", "index.html.br", "index.html.gz", "latest.html", "latest.html.br", "latest.html.gz", "style.css"}
	if diff := cmp.Diff(want, tree(t, site)); diff != "" {
		t.Errorf("published files (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(site, "latest.html")); string(b) != bigHTML {
		t.Error("latest.html is not a copy of index.html")
	}
	if fi, _ := os.Lstat(filepath.Join(site, "latest.html")); fi == nil || !fi.Mode().IsRegular() {
		t.Error("latest.html is not a regular file")
	}
	wantSize := int64(2*len(bigHTML) + len("body{color:red}") + len("<h1>About</h1>"))
	if res.Size != wantSize || res.Files != 4 {
		t.Errorf("got %d files, %d bytes, want 4 files, %d bytes", res.Files, res.Size, wantSize)
	}
	if _, err := os.Stat(job.Workspace); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the workspace was not removed (%v)", err)
	}
	if res.Commit == nil || res.Commit.Message != "first" || res.Commit.Author != "Test Author" {
		t.Errorf("got commit %+v", res.Commit)
	}
}

// nodeRepo is a package with a build script and no dependencies, so npm
// needs no registry.
func nodeRepo(buildJS string) map[string]string {
	return map[string]string{
		"package.json": `{"name":"t","version":"1.0.0","private":true,
  "scripts":{"build":"node build.js","postinstall":"node -e \"console.log('install NODE_ENV=' + (process.env.NODE_ENV || 'unset'))\""}}`,
		"build.js": buildJS,
	}
}

const writeDist = `const fs = require('fs');
fs.mkdirSync('dist/assets', {recursive: true});
fs.writeFileSync('dist/index.html', '<h1>' + process.env.GREETING + ' CI=' + process.env.CI + ' NODE_ENV=' + process.env.NODE_ENV + '</h1>');
fs.writeFileSync('dist/assets/app.3f9a2c1d.js', 'console.log(1);'.repeat(200));
console.log('\x1b[32mbuilt!\x1b[0m');
console.error('warning: something is deprecated');
`

func TestNodeBuild(t *testing.T) {
	e := newEnv(t)
	job := e.job(t, "node", nodeRepo(writeDist))
	job.Project = gantry.BuildConfig{InstallCommand: "npm install", BuildCommand: "npm run build", OutputDirectory: "dist"}
	job.Env = []gantry.EnvVar{{Key: "GREETING", Value: "hello"}, {Key: "NODE_ENV", Value: "production"}}
	res, l, err := e.run(t, job)
	if err != nil {
		t.Fatalf("build: %v\nlog:\n%s", err, l)
	}
	for _, want := range []logLine{
		{gantry.LevelInfo, "Installing dependencies: npm install"},
		{gantry.LevelInfo, "install NODE_ENV=unset"},
		{gantry.LevelInfo, "Building: npm run build"},
		{gantry.LevelInfo, "built!"},
		{gantry.LevelWarning, "warning: something is deprecated"},
		{gantry.LevelInfo, "Published 2 files (3.0 KB)"},
	} {
		if !l.has(want.Level, want.Message) {
			t.Errorf("missing log line %v\nlog:\n%s", want, l)
		}
	}
	want := gantry.BuildConfig{InstallCommand: "npm install", BuildCommand: "npm run build", OutputDirectory: "dist"}
	if diff := cmp.Diff(want, res.Config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	index, err := os.ReadFile(filepath.Join(res.SiteDir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(index), "<h1>hello CI=true NODE_ENV=production</h1>"; got != want {
		t.Errorf("got index.html %q, want %q", got, want)
	}
	wantFiles := []string{"assets/app.3f9a2c1d.js", "assets/app.3f9a2c1d.js.br", "assets/app.3f9a2c1d.js.gz", "index.html"}
	if diff := cmp.Diff(wantFiles, tree(t, res.SiteDir)); diff != "" {
		t.Errorf("published files (-want +got):\n%s", diff)
	}
}

func TestDeployCallOverridesProject(t *testing.T) {
	e := newEnv(t)
	files := nodeRepo(`require('fs').mkdirSync('out'); require('fs').writeFileSync('out/index.html', 'from out');`)
	job := e.job(t, "override", files)
	job.Project = gantry.BuildConfig{BuildCommand: "exit 9", OutputDirectory: "dist"}
	job.Override = gantry.BuildConfig{BuildCommand: "node build.js", OutputDirectory: "out"}
	res, l, err := e.run(t, job)
	if err != nil {
		t.Fatalf("build: %v\nlog:\n%s", err, l)
	}
	if res.Config.BuildCommand != "node build.js" || res.Config.OutputDirectory != "out" {
		t.Errorf("got config %+v, want the deploy call's build command and output", res.Config)
	}
	if b, _ := os.ReadFile(filepath.Join(res.SiteDir, "index.html")); string(b) != "from out" {
		t.Errorf("got %q", b)
	}
}

func TestNpmCiFallsBackToInstall(t *testing.T) {
	e := newEnv(t)
	files := nodeRepo(writeDist)
	files["package.json"] = `{"name":"t","version":"1.0.0","private":true,"scripts":{"build":"node build.js"},
  "dependencies":{"local-lib":"file:./local-lib"}}`
	files["local-lib/package.json"] = `{"name":"local-lib","version":"1.0.0"}`
	files["package-lock.json"] = `{"name":"t","version":"1.0.0","lockfileVersion":3,"requires":true,
  "packages":{"":{"name":"t","version":"1.0.0"}}}`
	job := e.job(t, "fallback", files)
	job.Project = gantry.BuildConfig{InstallCommand: "npm ci", BuildCommand: "npm run build", OutputDirectory: "dist"}
	_, l, err := e.run(t, job)
	if err != nil {
		t.Fatalf("build: %v\nlog:\n%s", err, l)
	}
	if !l.has(gantry.LevelWarning, "npm ci failed because package-lock.json is out of sync with package.json; falling back to npm install") {
		t.Errorf("missing the fallback warning\nlog:\n%s", l)
	}
}

func TestInstallFails(t *testing.T) {
	e := newEnv(t)
	files := nodeRepo(writeDist)
	files["package.json"] = `{"name":"t","version":"1.0.0","scripts":{"postinstall":"echo 'npm error something broke' >&2; exit 1"}}`
	files["package-lock.json"] = `{"name":"t","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"t","version":"1.0.0"}}}`
	job := e.job(t, "installfail", files)
	job.Project = gantry.BuildConfig{InstallCommand: "npm ci", BuildCommand: "npm run build", OutputDirectory: "dist"}
	_, l, err := e.run(t, job)
	assertFailed(t, e, job, l, err, "npm ci exited with code 1")
	if l.hasPrefix(gantry.LevelWarning, "npm ci failed because") {
		t.Errorf("fell back to npm install for a failure unrelated to the lockfile\nlog:\n%s", l)
	}
}

func TestBuildFails(t *testing.T) {
	e := newEnv(t)
	job := e.job(t, "fails", nodeRepo(`console.error("Error: cannot find module './App'"); process.exit(1);`))
	job.Project = gantry.BuildConfig{BuildCommand: "npm run build", OutputDirectory: "dist"}
	_, l, err := e.run(t, job)
	assertFailed(t, e, job, l, err, "npm run build exited with code 1")
	if !l.has(gantry.LevelError, "Error: cannot find module './App'") {
		t.Errorf("missing the build's own error line\nlog:\n%s", l)
	}
}

func TestBuildTimesOut(t *testing.T) {
	e := newEnv(t)
	job := e.job(t, "slow", nodeRepo(``))
	job.Project = gantry.BuildConfig{BuildCommand: "echo started; sleep 4301 & sleep 4301", OutputDirectory: "dist"}
	job.Timeout = 3 * time.Second
	start := time.Now()
	_, l, err := e.run(t, job)
	assertFailed(t, e, job, l, err, "Build timed out after 3s")
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestBuildRunsOutOfMemory(t *testing.T) {
	e := newEnv(t)
	job := e.job(t, "hog", nodeRepo(`const a = []; for (let i = 0; i < 64; i++) a.push(Buffer.alloc(16 << 20, 1)); console.log('survived');`))
	job.Project = gantry.BuildConfig{BuildCommand: "node build.js", OutputDirectory: "dist"}
	job.Memory = 128 << 20
	_, l, err := e.run(t, job)
	assertFailed(t, e, job, l, err, "Build ran out of memory (limit 128 MiB)")
}

// TestBuildForkBomb: a fork bomb is stopped as soon as it reaches the
// build's process limit, not left retrying its forks until the timeout.
func TestBuildForkBomb(t *testing.T) {
	e := newEnv(t)
	e.p.Limits.Pids = 64
	job := e.job(t, "bomb", nodeRepo(``))
	job.Project = gantry.BuildConfig{BuildCommand: "bomb() { bomb | bomb & }; bomb; sleep 4303", OutputDirectory: "dist"}
	start := time.Now()
	_, l, err := e.run(t, job)
	assertFailed(t, e, job, l, err, "Build reached the limit of 64 processes and threads, and was stopped: make it start fewer at once (for example make -j4)")
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the fork bomb ran %v before it was stopped (timeout %v)", d, job.Timeout)
	}
}

func TestCancelStopsBuild(t *testing.T) {
	e := newEnv(t)
	job := e.job(t, "stopped", nodeRepo(``))
	job.Project = gantry.BuildConfig{BuildCommand: "echo started; sleep 4302", OutputDirectory: "dist"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := &logs{}
	var at time.Time
	start := time.Now()
	_, err := e.p.Run(ctx, job, build.LoggerFunc(func(level, msg string) {
		l.Log(level, msg)
		if msg == "started" {
			at = time.Now()
			cancel()
		}
	}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled\nlog:\n%s", err, l)
	}
	if at.IsZero() || time.Since(at) > 5*time.Second || time.Since(start) > 60*time.Second {
		t.Errorf("stop took too long")
	}
	if l.last().Level == gantry.LevelError {
		t.Errorf("a stopped build logged an error line: %v", l.last())
	}
}

func TestOutputDirectoryEscapes(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, output, build string
		files               map[string]string
		msg                 string
	}{
		{name: "parent", output: "../x", msg: "Output directory '../x' must be inside the repository"},
		{name: "parent-clean", output: "dist/../../x", msg: "Output directory 'dist/../../x' must be inside the repository"},
		{name: "absolute", output: "/etc", msg: "Output directory '/etc' must be a relative path inside the repository"},
		{name: "symlink-etc", output: "dist", files: map[string]string{"dist@symlink": "/etc"}, msg: "Output directory 'dist' resolves outside the repository"},
		{name: "symlink-up", output: "dist", files: map[string]string{"dist@symlink": "../.."}, msg: "Output directory 'dist' resolves outside the repository"},
		{name: "built-symlink", output: "dist", build: "ln -s /etc dist", msg: "Output directory 'dist' resolves outside the repository"},
		{name: "missing", output: "build", msg: "Output directory 'build' was not found after the build"},
		{name: "file", output: "index.html", msg: "Output directory 'index.html' is not a folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"index.html": "<h1>hi</h1>"}
			for k, v := range tc.files {
				files[k] = v
			}
			job := e.job(t, "escape-"+tc.name, files)
			job.Project = gantry.BuildConfig{BuildCommand: tc.build, OutputDirectory: tc.output}
			_, l, err := e.run(t, job)
			assertFailed(t, e, job, l, err, tc.msg)
		})
	}
}

func TestSymlinksInsideOutputAreConfined(t *testing.T) {
	e := newEnv(t)
	job := e.job(t, "links", map[string]string{"README.md": "x"})
	job.Project = gantry.BuildConfig{
		BuildCommand: `mkdir -p dist/sub && echo ok > dist/index.html && echo secret > notpublic.txt &&
ln -s ../notpublic.txt dist/leak.txt && ln -s /etc/passwd dist/passwd && ln -s ../../../../../../../etc/hostname dist/sub/host &&
ln -s ../index.html dist/sub/copy.html && ln -s nowhere dist/dangling && mkfifo dist/fifo`,
		OutputDirectory: "dist",
	}
	res, l, err := e.run(t, job)
	if err != nil {
		t.Fatalf("build: %v\nlog:\n%s", err, l)
	}
	if diff := cmp.Diff([]string{"index.html", "sub/copy.html"}, tree(t, res.SiteDir)); diff != "" {
		t.Errorf("published files (-want +got):\n%s\nlog:\n%s", diff, l)
	}
	for _, want := range []string{
		"Skipped symlink 'leak.txt': it points outside the output directory",
		"Skipped symlink 'passwd': it points outside the output directory",
		"Skipped symlink 'sub/host': it points outside the output directory",
		"Skipped symlink 'dangling': its target does not exist",
		"Skipped 'fifo': not a regular file",
	} {
		if !l.has(gantry.LevelWarning, want) {
			t.Errorf("missing warning %q\nlog:\n%s", want, l)
		}
	}
}

func TestNothingToBuild(t *testing.T) {
	e := newEnv(t)
	job := e.job(t, "empty", map[string]string{"README.md": "# notes"})
	_, l, err := e.run(t, job)
	assertFailed(t, e, job, l, err, "No supported framework detected: add an index.html or a package.json")
}

func TestLogCap(t *testing.T) {
	e := newEnv(t)
	e.p.MaxLogLines = 10
	job := e.job(t, "chatty", map[string]string{"index.html": "hi"})
	job.Project = gantry.BuildConfig{BuildCommand: "for i in $(seq 50); do echo line $i; done", OutputDirectory: "."}
	_, l, err := e.run(t, job)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	var lines, truncated int
	for _, x := range l.all() {
		if strings.HasPrefix(x.Message, "line ") {
			lines++
		}
		if x == (logLine{gantry.LevelWarning, build.TruncatedMessage}) {
			truncated++
		}
	}
	if lines != 10 || truncated != 1 {
		t.Errorf("got %d output lines and %d truncation lines, want 10 and 1\nlog:\n%s", lines, truncated, l)
	}
	if l.last().Level != gantry.LevelSuccess {
		t.Errorf("got last line %v, want the success line after truncation", l.last())
	}
}

// TestViteBuild installs Vite from the npm registry and builds a tiny app.
func TestViteBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("installs vite from the npm registry")
	}
	e := newEnv(t)
	job := e.job(t, "vite", map[string]string{
		"package.json": `{"name":"vite-app","private":true,"version":"0.0.0","type":"module",
  "scripts":{"dev":"vite","build":"vite build"},"devDependencies":{"vite":"8.3.8"}}`,
		"index.html":    `<!doctype html><html><head><title>Vite</title></head><body><div id="app"></div><script type="module" src="/src/main.js"></script></body></html>`,
		"src/main.js":   `import './style.css'; import {items} from './items.js'; document.querySelector('#app').innerHTML = items.join('<br>');`,
		"src/items.js":  "export const items = [" + items(300) + "];",
		"src/style.css": `body { font-family: system-ui; }` + strings.Repeat("\n.x{color:red}", 100),
	})
	job.Timeout = 5 * time.Minute
	job.Env = []gantry.EnvVar{{Key: "NODE_ENV", Value: "production"}} // must not drop vite (a devDependency)
	res, l, err := e.run(t, job)
	if err != nil {
		t.Fatalf("build: %v\nlog:\n%s", err, l)
	}
	files := tree(t, res.SiteDir)
	var js, brJS bool
	for _, f := range files {
		js = js || strings.HasPrefix(f, "assets/index-") && strings.HasSuffix(f, ".js")
		brJS = brJS || strings.HasPrefix(f, "assets/index-") && strings.HasSuffix(f, ".js.br")
	}
	if !js || !brJS || !contains(files, "index.html") {
		t.Errorf("got files %v, want index.html and a fingerprinted JS bundle with a .br variant\nlog:\n%s", files, l)
	}
	t.Logf("vite build took %v (detected %s, %+v)", res.Duration, res.Detection.Framework, res.Config)
	if res.Config.BuildCommand == "" || res.Config.OutputDirectory != "dist" {
		t.Errorf("got config %+v from detection, want a build into dist", res.Config)
	}
}

// items returns n distinct quoted strings, so that a bundle cannot
// shrink them away.
func items(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%q,", fmt.Sprintf("item number %d of the list", i*7919%10007))
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestBuildWritesTooMuch: the ways a size poller was outrun — bytes into
// a folder named .git, empty files by the hundred thousand — are stopped by
// the kernel at the workspace's limits, with a line a student understands.
func TestBuildWritesTooMuch(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, command, msg string
	}{
		{"git-folder", "mkdir -p x/.git && for i in 1 2 3 4 5 6; do head -c 20000000 /dev/zero > x/.git/f$i; done; sleep 30",
			"The build wrote more than 64 MiB (the limit): make it write less, or leave large files out of the repository"},
		{"inode-flood", "seq 1 3000 | xargs touch; sleep 30",
			"The build created more than 500 files (the limit): make it create fewer"},
		{"tmp", "head -c 100000000 /dev/zero > /tmp/blob; sleep 30",
			"The build wrote more than 64 MiB (the limit): make it write less, or leave large files out of the repository"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := e.job(t, "hog-"+tc.name, nodeRepo(``))
			job.Project = gantry.BuildConfig{OutputDirectory: "dist", BuildCommand: "set -e; " + tc.command}
			job.Disk = sandbox.Disk{Bytes: 64 << 20, Inodes: 500}
			start := time.Now()
			_, l, err := e.run(t, job)
			assertFailed(t, e, job, l, err, tc.msg)
			if d := time.Since(start); d > 25*time.Second {
				t.Errorf("the disk hog ran %v before it was stopped", d)
			}
			if _, err := os.Stat(job.Workspace + ".img"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the workspace's image was left behind (%v)", err)
			}
		})
	}
}

// A build whose output has more files than a site may publish fails
// before the platform copies any of them, saying what to do.
func TestSiteFileLimit(t *testing.T) {
	e := newEnv(t)
	job := e.job(t, "many-files", nodeRepo(``))
	job.Project = gantry.BuildConfig{OutputDirectory: "dist", BuildCommand: fmt.Sprintf("mkdir -p dist && cd dist && seq 1 %d | xargs touch && echo '<h1>x</h1>' > index.html", build.MaxSiteFiles)}
	_, l, err := e.run(t, job)
	assertFailed(t, e, job, l, err, "The output folder has more than 20,000 files, the most a site may publish: "+
		"bundle the scripts (a bundler such as Vite makes a few files of thousands of modules) or leave generated files out of it")
}

// TestCloneRunsInTheSandbox checks that git itself ran as the sandbox
// user: the pipeline gives the workspace to that user before the clone and
// never after, so every file of the checkout, .git included, is the
// sandbox user's only if git wrote it as that user.
func TestCloneRunsInTheSandbox(t *testing.T) {
	e := newEnv(t)
	job := e.job(t, "owned", map[string]string{"index.html": "<h1>hi</h1>", "about/index.html": "about"})
	job.KeepWorkspace = true
	t.Cleanup(func() { _ = sandbox.RemoveVolume(job.Workspace) })
	res, l, err := e.run(t, job)
	if err != nil {
		t.Fatalf("build: %v\nlog:\n%s", err, l)
	}
	n := 0
	err = filepath.WalkDir(res.Workspace, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != e.p.Sandbox.UID() {
			t.Errorf("%s belongs to uid %d, want the sandbox user %d", p, uid, e.p.Sandbox.UID())
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 6 {
		t.Errorf("the workspace holds %d entries; want the checkout and its .git", n)
	}
}

// TestCloneFromDumbHost builds a site from a host that speaks only dumb
// HTTP (a bare repository served as plain files): the cloner clones it in
// full, since such a host cannot make shallow clones.
func TestCloneFromDumbHost(t *testing.T) {
	e := newEnv(t)
	dumb := gittest.NewDumbServer(t)
	dumb.Repo(t, "alice/plain", "main", "first", map[string]string{"index.html": "<h1>one</h1>"})
	job := e.job(t, "plain", nil)
	job.CloneURL = dumb.Repo(t, "alice/plain", "main", "second", map[string]string{"index.html": "<h1>two</h1>"})
	res, l, err := e.run(t, job)
	if err != nil {
		t.Fatalf("build: %v\nlog:\n%s", err, l)
	}
	if res.Commit == nil || res.Commit.Message != "second" {
		t.Errorf("got commit %+v, want second", res.Commit)
	}
	if b, err := os.ReadFile(filepath.Join(res.SiteDir, "index.html")); err != nil || string(b) != "<h1>two</h1>" {
		t.Errorf("published index.html = %q, %v", b, err)
	}
}

// clonerFunc adapts a function to a build.Cloner.
type clonerFunc func(ctx context.Context, url, branch, dir, token string, uid, gid uint32) (*gantry.Commit, error)

func (f clonerFunc) Clone(ctx context.Context, url, branch, dir, token string, uid, gid uint32) (*gantry.Commit, error) {
	return f(ctx, url, branch, dir, token, uid, gid)
}

// TestCloneFailureIsASentence: the clone step tells the cloner's sentence,
// and of a fault of the platform's own only that it happened, never its
// words (which the Error keeps for the server log).
func TestCloneFailureIsASentence(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"sentence", gantry.Errorf(gantry.ENOTFOUND, "Repository not found: http://git.example.org/alice/x"),
			"Could not clone alice/x (branch main): Repository not found: http://git.example.org/alice/x"},
		{"platform fault", errors.New("git clone: the sandbox failed: exited with code 1: bwrap: Can't find source path"),
			"Could not clone alice/x (branch main): the platform could not run git; try again, and tell its operator if this persists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := *e.p
			p.Cloner = clonerFunc(func(context.Context, string, string, string, string, uint32, uint32) (*gantry.Commit, error) {
				return nil, tc.err
			})
			job := e.job(t, "x"+strings.ReplaceAll(tc.name, " ", ""), nil)
			job.Repository = "alice/x"
			l := &logs{}
			_, err := p.Run(context.Background(), job, l)
			assertFailed(t, e, job, l, err, tc.want)
			var be *build.Error
			if errors.As(err, &be) && be.Err != tc.err {
				t.Errorf("build.Error.Err = %v, want the cloner's error for the log", be.Err)
			}
		})
	}
}

// A build whose command ignores its failed writes ends well on a full
// disk, and a later step fails: "Why it failed" names the limit reached,
// not the missing output folder.
func TestFullDiskIsDiagnosed(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, command, title, warning string
	}{
		{"inodes", "seq 1 3000 | xargs touch; ls | wc -l",
			"The build created more files than its limit of 500",
			"The build's disk is full: it created 500 files and folders, the limit; creating more failed"},
		{"bytes", "head -c 100000000 /dev/zero > blob; ls -l blob",
			"The build filled its 64 MiB of disk space",
			"The build's disk is full: it wrote 64 MiB, the limit; writing more failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := e.job(t, "full-"+tc.name, nodeRepo(``))
			job.Project = gantry.BuildConfig{OutputDirectory: "dist", BuildCommand: tc.command}
			job.Disk = sandbox.Disk{Bytes: 64 << 20, Inodes: 500}
			_, l, err := e.run(t, job)
			var be *build.Error
			if !errors.As(err, &be) || be.Diagnosis == nil {
				t.Fatalf("got %v, want a failed build with a diagnosis\n%s", err, l)
			}
			if be.Diagnosis.Cause != "disk" || be.Diagnosis.Title != tc.title {
				t.Errorf("diagnosed %q: %q, want %q\n%s", be.Diagnosis.Cause, be.Diagnosis.Title, tc.title, l)
			}
			if !l.has(gantry.LevelWarning, tc.warning) {
				t.Errorf("no warning %q when the build ended\n%s", tc.warning, l)
			}
			if !strings.HasPrefix(l.last().Message, "Why it failed: "+tc.title) {
				t.Errorf("got last line %q", l.last().Message)
			}
		})
	}
}

// "Why it failed" reads the workspace only: an index.html the build
// linked to a file of the host does not make its folder a site folder.
func TestDiagnosisStaysInTheWorkspace(t *testing.T) {
	e := newEnv(t)
	outside := filepath.Join(e.data, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "index.html"), []byte("host file"), 0o644); err != nil {
		t.Fatal(err)
	}
	job := e.job(t, "links-out", nodeRepo(``))
	job.Project = gantry.BuildConfig{OutputDirectory: "dist", BuildCommand: "mkdir -p site/sub && ln -s " + outside + "/index.html site/index.html && ln -s " + outside + "/index.html site/sub/index.html"}
	_, l, err := e.run(t, job)
	var be *build.Error
	if !errors.As(err, &be) || be.Diagnosis == nil {
		t.Fatalf("got %v, want a failed build with a diagnosis\n%s", err, l)
	}
	if be.Diagnosis.Cause != "output" || strings.Contains(be.Diagnosis.Detail, "`site") {
		t.Errorf("diagnosis %q %q %q: it followed a link out of the workspace\n%s", be.Diagnosis.Cause, be.Diagnosis.Title, be.Diagnosis.Detail, l)
	}
}

// helperThreads returns the scheduling policy (field 41 of stat) of each
// thread of each build helper this process runs (see helper.go), by pid.
// It reads this process's children only (/proc/self/task/*/children).
func helperThreads() map[string][]int {
	helpers := map[string][]int{}
	lists, _ := filepath.Glob("/proc/self/task/*/children")
	for _, list := range lists {
		b, _ := os.ReadFile(list)
		for _, pid := range strings.Fields(string(b)) {
			env, err := os.ReadFile(filepath.Join("/proc", pid, "environ"))
			if err != nil || !strings.Contains(string(env), "GANTRY_BUILD_HELPER=1\x00") {
				continue
			}
			tasks, _ := os.ReadDir(filepath.Join("/proc", pid, "task"))
			for _, t := range tasks {
				stat, err := os.ReadFile(filepath.Join("/proc", pid, "task", t.Name(), "stat"))
				if err != nil {
					continue
				}
				f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
				if len(f) > 38 {
					var policy int
					fmt.Sscan(f[38], &policy) // field 41, counted after the command
					helpers[pid] = append(helpers[pid], policy)
				}
			}
		}
	}
	return helpers
}

// A build that writes thousands of small scripts does not make the
// platform's process compress them: precompression runs in a helper
// process in the idle scheduling class, within its bytes per deployment
// (largest files first), and the others are published as they are.
func TestPrecompressionCostIsBounded(t *testing.T) {
	e := newEnv(t)
	defer build.SetCompressBounds(1<<20, 256<<10)()
	job := e.job(t, "many-scripts", nodeRepo(``))
	job.Project = gantry.BuildConfig{OutputDirectory: "dist", BuildCommand: `node -e '
const fs = require("fs"); fs.mkdirSync("dist");
fs.writeFileSync("dist/index.html", "<h1>many</h1>");
for (let i = 0; i < 3000; i++) {
  let s = "export const m" + i + " = [";
  while (s.length < 1500 + i % 500) s += JSON.stringify(Math.random().toString(36)) + ",";
  fs.writeFileSync("dist/m" + i + ".js", s + "];\n");
}'`}

	last := map[string][]int{} // each helper's threads when last seen running
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				maps.Copy(last, helperThreads())
			}
		}
	}()
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	res, l, err := e.run(t, job)
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	close(stop)
	<-polled
	if err != nil {
		t.Fatalf("build failed: %v\n%s", err, l)
	}
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	// Compressing the 5 MB in the process, as before, took 25 s or more
	// of its CPU; the rest of a build takes it about a second.
	t.Logf("the platform's process spent %s of CPU on the build", cpu)
	if cpu > 10*time.Second {
		t.Errorf("the platform's process spent %s of CPU on the build, want it out of the process", cpu)
	}
	if !l.hasPrefix(gantry.LevelInfo, "Precompressed ") || !strings.Contains(l.String(), " of 3,000 text files (1 MiB, the limit per deployment, largest first)") {
		t.Errorf("the log does not say what was precompressed:\n%s", l)
	}
	var compressed, largestLeft, smallestDone int64
	smallestDone = 1 << 62
	for _, f := range tree(t, res.SiteDir) {
		if !strings.HasSuffix(f, ".js") {
			continue
		}
		fi, err := os.Stat(filepath.Join(res.SiteDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(res.SiteDir, f+".gz")); err == nil {
			compressed += fi.Size()
			smallestDone = min(smallestDone, fi.Size())
		} else {
			largestLeft = max(largestLeft, fi.Size())
		}
	}
	if compressed == 0 || compressed > 1<<20 {
		t.Errorf("%d bytes of scripts precompressed, want some and at most 1 MiB", compressed)
	}
	if largestLeft > smallestDone {
		t.Errorf("a %d-byte script was left uncompressed while a %d-byte one was not: want the largest first", largestLeft, smallestDone)
	}
	if len(last) == 0 {
		t.Fatal("no build helper was seen running")
	}
	// (Until the helper's init has run, its threads keep the policy they
	// were started with: its last sighting is after that.)
	for pid, policies := range last {
		for _, policy := range policies {
			if policy != 5 { // SCHED_IDLE
				t.Fatalf("helper %s ran a thread with scheduling policy %d, want SCHED_IDLE (5)", pid, policy)
			}
		}
	}
}
