package build_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
)

// cacheRepo is an npm project with one local dependency (npm links it
// from node_modules: no registry needed) whose build counts, in a
// framework-style cache folder (.next/cache), how many builds it has seen,
// and checks that Vite's cache inside node_modules came back with it.
func cacheRepo(lockSuffix string) map[string]string {
	return map[string]string{
		"package.json": `{"name":"t","version":"1.0.0","private":true,"scripts":{"build":"node build.js"},
  "dependencies":{"local-lib":"file:./local-lib"}}`,
		"local-lib/package.json": `{"name":"local-lib","version":"1.0.0"}`,
		"local-lib/index.js":     `module.exports = 'lib';`,
		"package-lock.json": `{"name":"t","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{
  "":{"name":"t","version":"1.0.0","dependencies":{"local-lib":"file:./local-lib"}},
  "local-lib":{"version":"1.0.0"},
  "node_modules/local-lib":{"resolved":"local-lib","link":true}}}` + lockSuffix,
		"build.js": `const fs = require('fs');
require('local-lib');
fs.mkdirSync('.next/cache', {recursive: true});
let n = 0; try { n = +fs.readFileSync('.next/cache/count', 'utf8'); } catch {}
fs.writeFileSync('.next/cache/count', String(n + 1));
const vite = fs.existsSync('node_modules/.vite/deps') ? 'vite-cached' : 'vite-cold';
fs.mkdirSync('node_modules/.vite/deps', {recursive: true});
fs.mkdirSync('dist', {recursive: true});
fs.writeFileSync('dist/index.html', 'build ' + (n + 1) + ' ' + vite);
`,
	}
}

func cacheLine(l *logs, prefix string) string {
	for _, x := range l.all() {
		if strings.HasPrefix(x.Message, prefix) {
			return x.Message
		}
	}
	return ""
}

func page(t *testing.T, res *build.Result) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(res.SiteDir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBuildCache(t *testing.T) {
	e := newEnv(t)
	cacheDir := filepath.Join(e.data, "caches", "project-1")
	build1 := func(id, lockSuffix string, noCache bool) (*build.Result, *logs) {
		t.Helper()
		job := e.job(t, id, cacheRepo(lockSuffix))
		job.Project = gantry.BuildConfig{InstallCommand: "npm ci", BuildCommand: "npm run build", OutputDirectory: "dist"}
		job.CacheDir, job.NoCache = cacheDir, noCache
		res, l, err := e.run(t, job)
		if err != nil {
			t.Fatalf("build %s: %v\nlog:\n%s", id, err, l)
		}
		return res, l
	}

	// The first build has no cache, and saves one.
	res, l := build1("first", "", false)
	if !l.has(gantry.LevelInfo, "No build cache yet: this build saves one for the next") {
		t.Errorf("missing the no-cache line\nlog:\n%s", l)
	}
	saved := cacheLine(l, "Saved build cache: ")
	if !strings.Contains(saved, "node_modules (") || !strings.Contains(saved, ".next/cache (") {
		t.Errorf("got save line %q\nlog:\n%s", saved, l)
	}
	// node_modules is kept for the lockfile, so npm's cache, which would
	// only rebuild it, is not; every file is a plain tar.
	if strings.Contains(saved, ".npm") {
		t.Errorf("npm's cache saved beside node_modules: %q", saved)
	}
	if files, _ := filepath.Glob(filepath.Join(cacheDir, "*.tar*")); len(files) == 0 || slices.ContainsFunc(files, func(f string) bool {
		return !strings.HasSuffix(f, ".tar") || strings.Contains(f, "npm")
	}) {
		t.Errorf("stored %v, want plain tars and no npm cache", files)
	}
	if got := page(t, res); got != "build 1 vite-cold" {
		t.Errorf("first build wrote %q", got)
	}
	if res.CacheSize <= 0 || res.CacheSize != build.CacheSize(cacheDir) {
		t.Errorf("got cache size %d, stored %d", res.CacheSize, build.CacheSize(cacheDir))
	}
	// Stored root's and private, outside every sandbox.
	entries, _ := os.ReadDir(cacheDir)
	for _, x := range entries {
		fi, _ := x.Info()
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != uint32(os.Getuid()) || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: uid %d mode %v, want the platform's and private", x.Name(), st.Uid, fi.Mode())
		}
	}
	if fi, err := os.Stat(cacheDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("cache folder: %v %v", fi.Mode(), err)
	}

	// An unchanged redeploy restores node_modules and the framework's
	// cache; with no install scripts in package.json, the install would
	// change nothing and is skipped.
	res, l = build1("second", "", false)
	restored := cacheLine(l, "Restored build cache: ")
	if !strings.Contains(restored, "node_modules (") || !strings.Contains(restored, "lockfile unchanged") || !strings.Contains(restored, ".next/cache (") {
		t.Errorf("got restore line %q\nlog:\n%s", restored, l)
	}
	if !l.has(gantry.LevelInfo, "Dependencies up to date: node_modules restored for the unchanged package-lock.json, so the install is skipped") ||
		cacheLine(l, "Installing dependencies") != "" {
		t.Errorf("the install was not skipped over a restored node_modules\nlog:\n%s", l)
	}
	if got := page(t, res); got != "build 2 vite-cached" {
		t.Errorf("second build wrote %q, want the caches restored", got)
	}

	// A lockfile change invalidates node_modules; the other caches stay.
	res, l = build1("third", "\n", false)
	if !l.has(gantry.LevelInfo, "Build cache not restored: node_modules (lockfile changed)") {
		t.Errorf("node_modules was not invalidated\nlog:\n%s", l)
	}
	if !l.has(gantry.LevelInfo, "Installing dependencies: npm ci") {
		t.Errorf("want npm ci after a lockfile change\nlog:\n%s", l)
	}
	if got := page(t, res); got != "build 3 vite-cold" {
		t.Errorf("third build wrote %q", got)
	}

	// NoCache skips the restore, and saves.
	res, l = build1("fourth", "\n", true)
	if cacheLine(l, "Restored build cache") != "" || !l.has(gantry.LevelInfo, "Build cache skipped (deploy without cache): this build saves a new one") {
		t.Errorf("NoCache restored\nlog:\n%s", l)
	}
	if got := page(t, res); got != "build 1 vite-cold" {
		t.Errorf("no-cache build wrote %q", got)
	}
	if cacheLine(l, "Saved build cache: ") == "" {
		t.Errorf("NoCache did not save\nlog:\n%s", l)
	}
	res, _ = build1("fifth", "\n", false)
	if got := page(t, res); got != "build 2 vite-cached" {
		t.Errorf("after a no-cache build: %q", got)
	}
}

// Without a lockfile node_modules is keyed by package.json as the
// repository has it, not by the lockfile npm install writes. The project
// has a postinstall script: the install is not skipped (npm install runs
// over the restored node_modules, and runs the script).
func TestBuildCacheWithoutLockfile(t *testing.T) {
	e := newEnv(t)
	cacheDir := filepath.Join(e.data, "caches", "project-3")
	files := cacheRepo("")
	delete(files, "package-lock.json")
	files["package.json"] = `{"name":"t","version":"1.0.0","private":true,"scripts":{"build":"node build.js","postinstall":"echo postinstall ran"},
  "dependencies":{"local-lib":"file:./local-lib"}}`
	for i, id := range []string{"one", "two"} {
		job := e.job(t, id, files)
		job.Project = gantry.BuildConfig{InstallCommand: "npm install", BuildCommand: "npm run build", OutputDirectory: "dist"}
		job.CacheDir = cacheDir
		res, l, err := e.run(t, job)
		if err != nil {
			t.Fatalf("build %s: %v\nlog:\n%s", id, err, l)
		}
		if i == 1 {
			if line := cacheLine(l, "Restored build cache: "); !strings.Contains(line, "node_modules (") || !strings.Contains(line, "package.json unchanged, no lockfile") {
				t.Errorf("got restore line %q\nlog:\n%s", line, l)
			}
			if got := page(t, res); got != "build 2 vite-cached" {
				t.Errorf("second build wrote %q", got)
			}
			if !l.has(gantry.LevelInfo, "Installing dependencies: npm install --prefer-offline") || !l.has(gantry.LevelInfo, "postinstall ran") {
				t.Errorf("the install, with its postinstall script, did not run\nlog:\n%s", l)
			}
		}
	}
}

// The operator's package registries reach install and build.
func TestRegistriesReachTheBuild(t *testing.T) {
	e := newEnv(t)
	job := e.job(t, "registries", map[string]string{"index.html": "hi"})
	job.Project = gantry.BuildConfig{
		InstallCommand:  `echo "install npm=$npm_config_registry pip=$PIP_INDEX_URL"`,
		BuildCommand:    `echo "build npm=$npm_config_registry pip=$PIP_INDEX_URL pipcache=$PIP_CACHE_DIR"`,
		OutputDirectory: ".",
	}
	job.NpmRegistry, job.PipIndexURL = "http://10.20.0.5:4873/", "https://mirror.campus.edu/simple/"
	_, l, err := e.run(t, job)
	if err != nil {
		t.Fatalf("build: %v\nlog:\n%s", err, l)
	}
	for _, want := range []string{
		"install npm=http://10.20.0.5:4873/ pip=https://mirror.campus.edu/simple/",
		"build npm=http://10.20.0.5:4873/ pip=https://mirror.campus.edu/simple/ pipcache=/tmp/.cache/pip",
	} {
		if !l.has(gantry.LevelInfo, want) {
			t.Errorf("missing %q\nlog:\n%s", want, l)
		}
	}
}
