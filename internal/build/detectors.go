package build

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/gantryhq/gantry"
)

// maxManifestSize caps how much of package.json, requirements.txt,
// angular.json and similar files detection reads.
const maxManifestSize = 1 << 20

// ErrNoFramework is returned when no detector matches and the repository
// holds no HTML file at its root.
var ErrNoFramework = errors.New("No supported framework detected: add an index.html or a package.json")

// detectors is the ordered table detect walks, in the manner of flyctl's
// build resolver: each detector looks at the repository and either claims it
// (ok true) or says "not mine, try the next". The first claim wins, so
// stronger signals come first: a Django or Flask server before the
// package.json used for its CSS, a meta-framework (Next.js, Nuxt, Angular,
// SvelteKit, site generators) before the UI library it is built on, a
// frontend before a generic Node server, and plain HTML last.
var detectors = []struct {
	name   string
	detect func(r *repoFiles) (Detection, bool, error)
}{
	{"django", detectDjango},
	{"flask", detectFlask},
	{"nextjs", detectNext},
	{"nuxt", detectNuxt},
	{"angular", detectAngular},
	{"sveltekit", detectSvelteKit},
	{"site generators", detectGenerator},
	{"single-page apps", detectSPA},
	{"express", detectExpress},
	{"nodejs", detectNodeServer},
	{"python", detectPython},
	{"vanilla", detectVanilla},
	{"static", detectStatic},
}

// detect opens dir and returns the first detector's conclusion. Files are
// read through an os.Root, so a symlink in the repository cannot make
// detection read anything outside dir. A package.json that cannot be read
// or parsed is an error, whatever else the repository holds.
func detect(dir string) (Detection, error) {
	r, err := openRepoFiles(dir)
	if err != nil {
		return Detection{}, err
	}
	defer r.root.Close()
	for _, d := range detectors {
		det, ok, err := d.detect(r)
		if err != nil {
			return Detection{}, err
		}
		if ok {
			return det, nil
		}
	}
	return Detection{}, ErrNoFramework
}

// Suggest runs Detect on dir and returns the framework and the build
// settings to propose for a new project. Its signature matches
// githost.Detector.
func Suggest(dir string) (framework string, cfg gantry.BuildConfig, err error) {
	d, err := Detect(dir)
	if err != nil {
		return "", gantry.BuildConfig{}, err
	}
	return d.Framework, d.BuildConfig(), nil
}

// BuildConfig returns d's commands as a project's build settings.
func (d Detection) BuildConfig() gantry.BuildConfig {
	return gantry.BuildConfig{
		InstallCommand:  d.InstallCommand,
		BuildCommand:    d.BuildCommand,
		OutputDirectory: d.OutputDirectory,
		StartCommand:    d.StartCommand,
	}
}

// repoFiles is a read-only view of a checked-out repository.
type repoFiles struct {
	root *os.Root
	pkg  *packageJSON    // nil without a package.json
	reqs map[string]bool // normalised names from requirements.txt; nil without one
	pm   Detection       // package manager and install command, set with pkg
}

// packageJSON holds the fields of package.json detection uses.
type packageJSON struct {
	Main            string            `json:"main"`
	Scripts         map[string]string `json:"scripts"`
	Dependencies    map[string]string `json:"dependencies"`
	DevDependencies map[string]string `json:"devDependencies"`
	PackageManager  string            `json:"packageManager"`
}

func openRepoFiles(dir string) (*repoFiles, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("could not open the repository: %w", err)
	}
	r := &repoFiles{root: root}
	if r.present("package.json") {
		data, err := r.read("package.json")
		if err != nil {
			root.Close()
			return nil, err
		}
		var p packageJSON
		if err := json.Unmarshal(data, &p); err != nil {
			root.Close()
			return nil, fmt.Errorf("package.json is not valid JSON: %w", err)
		}
		r.pkg = &p
		r.pm = r.packageManager()
	}
	if r.present("requirements.txt") {
		data, err := r.read("requirements.txt")
		if err != nil {
			root.Close()
			return nil, err
		}
		r.reqs = parseRequirements(string(data))
	}
	return r, nil
}

// present reports whether name exists in the repository, even as a symlink
// that cannot be followed.
func (r *repoFiles) present(name string) bool {
	_, err := r.root.Lstat(name)
	return err == nil
}

// isFile reports whether name is a regular file inside the repository
// (symlinks are followed only while they stay inside).
func (r *repoFiles) isFile(name string) bool {
	fi, err := r.root.Stat(name)
	return err == nil && fi.Mode().IsRegular()
}

// read returns the contents of name, refusing files outside the repository,
// folders and files larger than maxManifestSize.
func (r *repoFiles) read(name string) ([]byte, error) {
	f, err := r.root.Open(name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("could not read %s: %w", name, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("could not read %s: not a regular file", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("could not read %s: %w", name, err)
	}
	if len(data) > maxManifestSize {
		return nil, fmt.Errorf("could not read %s: larger than 1 MiB", name)
	}
	return data, nil
}

// readOptional returns name's contents, or nil when it is missing or
// unreadable.
func (r *repoFiles) readOptional(name string) []byte {
	data, err := r.read(name)
	if err != nil {
		return nil
	}
	return data
}

// firstFile returns the first of names that is a file, or "".
func (r *repoFiles) firstFile(names ...string) string {
	for _, n := range names {
		if r.isFile(n) {
			return n
		}
	}
	return ""
}

// dep reports whether package.json lists name in dependencies or
// devDependencies.
func (r *repoFiles) dep(name string) bool {
	if r.pkg == nil {
		return false
	}
	_, a := r.pkg.Dependencies[name]
	_, b := r.pkg.DevDependencies[name]
	return a || b
}

// depVersion returns the version range package.json gives for name.
func (r *repoFiles) depVersion(name string) string {
	if r.pkg == nil {
		return ""
	}
	if v, ok := r.pkg.Dependencies[name]; ok {
		return v
	}
	return r.pkg.DevDependencies[name]
}

// script returns the npm script named name, or "".
func (r *repoFiles) script(name string) string {
	if r.pkg == nil {
		return ""
	}
	return strings.TrimSpace(r.pkg.Scripts[name])
}

// node returns a Detection for a package.json project: the package
// manager and install command, and "<pm> run build" when a build script
// exists.
func (r *repoFiles) node(framework string) Detection {
	d := r.pm
	d.Framework = framework
	if r.script("build") != "" {
		d.BuildCommand = r.run("build")
	}
	return d
}

// packageManager chooses the package manager by lockfile: yarn.lock →
// yarn ("yarn install --frozen-lockfile", or --immutable for Yarn 2+),
// pnpm-lock.yaml → pnpm ("pnpm install --frozen-lockfile"),
// package-lock.json → "npm ci", none → the packageManager field, else
// "npm install".
func (r *repoFiles) packageManager() Detection {
	var d Detection
	pmField := ""
	if r.pkg != nil {
		pmField, _, _ = strings.Cut(r.pkg.PackageManager, "@")
	}
	switch {
	case r.isFile("yarn.lock") || (pmField == "yarn" && !r.isFile("package-lock.json")):
		d.PackageManager = "yarn"
		d.InstallCommand = "yarn install --frozen-lockfile"
		if r.isFile(".yarnrc.yml") { // Yarn 2+ renamed the flag
			d.InstallCommand = "yarn install --immutable"
		}
		if !r.isFile("yarn.lock") {
			d.InstallCommand = "yarn install"
		}
	case r.isFile("pnpm-lock.yaml") || (pmField == "pnpm" && !r.isFile("package-lock.json")):
		d.PackageManager = "pnpm"
		d.InstallCommand = "pnpm install --frozen-lockfile"
		if !r.isFile("pnpm-lock.yaml") {
			d.InstallCommand = "pnpm install"
		}
	case r.isFile("package-lock.json") || r.isFile("npm-shrinkwrap.json"):
		d.PackageManager, d.InstallCommand = "npm", "npm ci"
	default:
		d.PackageManager, d.InstallCommand = "npm", "npm install"
	}
	return d
}

// run returns the command that runs an npm script with the project's
// package manager: "npm run build", "yarn build", "pnpm run build";
// "start" is "npm start", "yarn start", "pnpm start".
func (r *repoFiles) run(script string) string {
	pm := r.pm.PackageManager
	switch {
	case script == "start":
		return pm + " start"
	case pm == "yarn":
		return "yarn " + script
	}
	return pm + " run " + script
}

// devServer matches start scripts that serve files for development rather
// than run an application server.
var devServer = regexp.MustCompile(`\b(vite|serve|http-server|live-server|lite-server|parcel|webpack-dev-server|webpack\s+serve|browser-sync|react-scripts\s+start|ng\s+serve|vue-cli-service\s+serve|astro\s+dev|next\s+dev|snowpack\s+dev|five-server)\b`)

// serverStart returns the command that starts a Node server: the start
// script (unless it only runs a development server), node <main>, or node
// on a conventional entry file; "" when there is none.
func (r *repoFiles) serverStart() string {
	if s := r.script("start"); s != "" && !devServer.MatchString(s) {
		return r.run("start")
	}
	if main := r.mainFile(); main != "" {
		return "node " + main
	}
	if f := r.firstFile("server.js", "app.js", "index.js", "src/server.js", "src/index.js", "src/app.js"); f != "" {
		return "node " + f
	}
	return ""
}

// mainFile returns package.json's main when that file exists (also with
// ".js" added), or "".
func (r *repoFiles) mainFile() string {
	if r.pkg == nil || r.pkg.Main == "" {
		return ""
	}
	main := path.Clean(strings.TrimPrefix(r.pkg.Main, "./"))
	if path.IsAbs(main) || strings.HasPrefix(main, "..") {
		return ""
	}
	return r.firstFile(main, main+".js")
}

// listens matches JavaScript that starts a network server.
var listens = regexp.MustCompile(`\.listen\(|createServer\(`)

// serverDeps are Node server frameworks.
var serverDeps = []string{"express", "koa", "fastify", "@hapi/hapi", "@nestjs/core", "restify"}

// isServer reports whether package.json names a server framework and a way
// to start it; frontends bundled with their own server deploy as servers.
func (r *repoFiles) isServer() bool {
	for _, dep := range serverDeps {
		if r.dep(dep) {
			return r.serverStart() != ""
		}
	}
	return false
}

// detectNext: the "next" dependency. A static export (output: 'export' in
// next.config, or "next export" in the build script) publishes "out";
// anything else is a Next.js server started with the start script (or
// "npx next start"), which reads PORT itself. A server app has no output
// folder: the pipeline runs it from its workspace.
func detectNext(r *repoFiles) (Detection, bool, error) {
	if !r.dep("next") {
		return Detection{}, false, nil
	}
	d := r.node("nextjs")
	exported := strings.Contains(r.script("build"), "next export")
	for _, f := range []string{"next.config.js", "next.config.mjs", "next.config.ts", "next.config.cjs", "next.config.mts"} {
		if nextExport.Match(r.readOptional(f)) {
			exported = true
		}
	}
	if d.BuildCommand == "" {
		d.BuildCommand = "npx next build"
	}
	if exported {
		d.OutputDirectory = "out"
		return d, true, nil
	}
	d.StartCommand = "npx next start"
	if r.script("start") != "" {
		d.StartCommand = r.run("start")
	}
	return d, true, nil
}

var nextExport = regexp.MustCompile(`output\s*:\s*["'` + "`" + `]export["'` + "`" + `]`)

// detectNuxt: the "nuxt" dependency. With a generate script the site is
// prerendered (.output/public for Nuxt 3, dist for Nuxt 2); otherwise it is
// a Nuxt server.
func detectNuxt(r *repoFiles) (Detection, bool, error) {
	if !r.dep("nuxt") && !r.dep("nuxt3") {
		return Detection{}, false, nil
	}
	d := r.node("nuxt")
	nuxt2 := strings.HasPrefix(strings.TrimLeft(r.depVersion("nuxt"), "^~>=v "), "2")
	if r.script("generate") != "" {
		d.BuildCommand = r.run("generate")
		d.OutputDirectory = ".output/public"
		if nuxt2 {
			d.OutputDirectory = "dist"
		}
		return d, true, nil
	}
	d.StartCommand = "node .output/server/index.mjs"
	if nuxt2 {
		d.StartCommand = r.run("start")
	}
	return d, true, nil
}

// detectAngular: the "@angular/core" dependency. The output folder comes
// from angular.json (see angularOutput); the app is client-routed.
func detectAngular(r *repoFiles) (Detection, bool, error) {
	if !r.dep("@angular/core") {
		return Detection{}, false, nil
	}
	d := r.node("angular")
	if d.BuildCommand == "" {
		d.BuildCommand = "npx ng build"
	}
	d.OutputDirectory = angularOutput(r.readOptional("angular.json"))
	d.SPA = true
	return d, true, nil
}

// angularOutput reads angular.json: the default project (or the only, else
// the first application by name), its build target's outputPath (a string,
// or {base, browser}); the "application" builder (Angular 17+) writes the
// site to <outputPath>/browser, older builders to <outputPath>. Without a
// usable angular.json it answers "dist", which the pipeline searches for
// dist/<app>/browser and dist/<app>.
func angularOutput(data []byte) string {
	var cfg struct {
		DefaultProject string `json:"defaultProject"`
		Projects       map[string]struct {
			ProjectType string                   `json:"projectType"`
			Architect   map[string]angularTarget `json:"architect"`
			Targets     map[string]angularTarget `json:"targets"`
		} `json:"projects"`
	}
	if len(data) == 0 || json.Unmarshal(data, &cfg) != nil || len(cfg.Projects) == 0 {
		return "dist"
	}
	name := cfg.DefaultProject
	if _, ok := cfg.Projects[name]; !ok {
		names := make([]string, 0, len(cfg.Projects))
		for n, p := range cfg.Projects {
			if p.ProjectType == "" || p.ProjectType == "application" {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return "dist"
		}
		sort.Strings(names)
		name = names[0]
	}
	p := cfg.Projects[name]
	t, ok := p.Architect["build"]
	if !ok {
		t = p.Targets["build"]
	}
	application := strings.HasSuffix(t.Builder, ":application")
	out := "dist/" + name
	browser := "browser"
	var s string
	var obj struct {
		Base    string  `json:"base"`
		Browser *string `json:"browser"`
	}
	switch {
	case json.Unmarshal(t.Options.OutputPath, &s) == nil && s != "":
		out = s
	case json.Unmarshal(t.Options.OutputPath, &obj) == nil && obj.Base != "":
		out = obj.Base
		if obj.Browser != nil {
			browser = *obj.Browser
		}
	}
	out = path.Clean(strings.TrimPrefix(out, "./"))
	if path.IsAbs(out) || out == ".." || strings.HasPrefix(out, "../") {
		return "dist"
	}
	if application && browser != "" {
		out = path.Join(out, browser)
	}
	return out
}

type angularTarget struct {
	Builder string `json:"builder"`
	Options struct {
		OutputPath json.RawMessage `json:"outputPath"`
	} `json:"options"`
}

// detectSvelteKit: the "@sveltejs/kit" dependency. adapter-node builds a
// server started with "node build"; otherwise (adapter-static) the site is
// in "build".
func detectSvelteKit(r *repoFiles) (Detection, bool, error) {
	if !r.dep("@sveltejs/kit") {
		return Detection{}, false, nil
	}
	d := r.node("sveltekit")
	if r.dep("@sveltejs/adapter-node") {
		d.StartCommand = "node build"
		return d, true, nil
	}
	d.OutputDirectory = "build"
	d.SPA = true
	return d, true, nil
}

// generators are static-site generators and their output folders.
var generators = []struct{ dep, framework, output string }{
	{"astro", "astro", "dist"},
	{"gatsby", "gatsby", "public"},
	{"@docusaurus/core", "docusaurus", "build"},
	{"@11ty/eleventy", "eleventy", "_site"},
	{"vitepress", "vitepress", ".vitepress/dist"},
}

// detectGenerator: a static-site generator dependency (Astro, Gatsby,
// Docusaurus, Eleventy, VitePress); each page is prerendered, so no SPA
// fallback.
func detectGenerator(r *repoFiles) (Detection, bool, error) {
	for _, g := range generators {
		if r.dep(g.dep) {
			d := r.node(g.framework)
			d.OutputDirectory = g.output
			return d, true, nil
		}
	}
	return Detection{}, false, nil
}

// spaLibraries are client-side UI libraries, in the order they are tried.
var spaLibraries = []struct{ dep, framework string }{
	{"react", "react"},
	{"vue", "vue"},
	{"svelte", "svelte"},
	{"preact", "preact"},
	{"solid-js", "solid"},
}

// detectSPA: a UI library dependency (React, Vue, Svelte, Preact, Solid)
// in a repository that is not also a Node server. Create React App
// (react-scripts) builds to "build" and gets PUBLIC_URL=/ so a "homepage"
// field cannot move the site off the subdomain's root; Vite, Vue CLI and
// the other bundlers build to "dist". The app is client-routed.
func detectSPA(r *repoFiles) (Detection, bool, error) {
	if r.isServer() {
		return Detection{}, false, nil
	}
	for _, lib := range spaLibraries {
		if !r.dep(lib.dep) {
			continue
		}
		d := r.node(lib.framework)
		d.OutputDirectory = "dist"
		d.SPA = true
		if r.dep("react-scripts") {
			d.OutputDirectory = "build"
			d.Env = map[string]string{"PUBLIC_URL": "/"}
		} else if r.dep("preact-cli") {
			d.OutputDirectory = "build"
		}
		return d, true, nil
	}
	return Detection{}, false, nil
}

// detectExpress: the "express" dependency with a way to start it (start
// script, main, or server.js/app.js/index.js). A build script (TypeScript,
// a bundled frontend) runs first.
func detectExpress(r *repoFiles) (Detection, bool, error) {
	if !r.dep("express") {
		return Detection{}, false, nil
	}
	start := r.serverStart()
	if start == "" {
		return Detection{}, false, nil
	}
	d := r.node("express")
	d.StartCommand = start
	return d, true, nil
}

// detectNodeServer: a package.json with a start script that runs something
// other than a development server, or (in a repository without an
// index.html at its root) a main file that starts a server (.listen( or
// createServer().
func detectNodeServer(r *repoFiles) (Detection, bool, error) {
	if r.pkg == nil {
		return Detection{}, false, nil
	}
	start := ""
	if s := r.script("start"); s != "" && !devServer.MatchString(s) {
		start = r.run("start")
	} else if main := r.mainFile(); main != "" && !r.isFile("index.html") && listens.Match(r.readOptional(main)) {
		start = "node " + main
	}
	if start == "" {
		return Detection{}, false, nil
	}
	d := r.node("nodejs")
	d.StartCommand = start
	return d, true, nil
}

// python describes how a Python project is installed and run. With a
// requirements.txt (or else a pyproject.toml), dependencies go into a virtual environment in the
// workspace (Debian's Python refuses system-wide pip installs, PEP 668;
// --system-site-packages lets Debian's own packages satisfy requirements
// offline) and commands run from it; without either, the system python3
// runs the app.
func (r *repoFiles) python(framework string) (d Detection, bin func(string) string) {
	d = Detection{Framework: framework, PackageManager: "pip"}
	const venv = "python3 -m venv --system-site-packages .venv && .venv/bin/pip install "
	switch {
	case r.reqs != nil:
		d.InstallCommand = venv + "-r requirements.txt"
	case r.isFile("pyproject.toml"):
		d.InstallCommand = venv + "."
	default:
		return d, func(tool string) string {
			if tool == "python" {
				return "python3"
			}
			return tool
		}
	}
	return d, func(tool string) string { return ".venv/bin/" + tool }
}

// detectDjango: a manage.py. Gunicorn serves <project>.wsgi when it is in
// requirements.txt and exactly one <project>/wsgi.py exists; otherwise
// Django's own server runs on $PORT.
func detectDjango(r *repoFiles) (Detection, bool, error) {
	if !r.isFile("manage.py") {
		return Detection{}, false, nil
	}
	d, bin := r.python("django")
	d.StartCommand = bin("python") + " manage.py runserver 0.0.0.0:$PORT"
	if r.reqs["gunicorn"] {
		if mod := r.wsgiModule(); mod != "" {
			d.StartCommand = bin("gunicorn") + " --bind 0.0.0.0:$PORT " + mod + ".wsgi"
		}
	}
	return d, true, nil
}

// wsgiModule returns the one top-level folder holding a wsgi.py, or "".
func (r *repoFiles) wsgiModule() string {
	f, err := r.root.Open(".")
	if err != nil {
		return ""
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return ""
	}
	found := ""
	for _, e := range entries {
		if e.IsDir() && pyIdent.MatchString(e.Name()) && r.isFile(e.Name()+"/wsgi.py") {
			if found != "" {
				return ""
			}
			found = e.Name()
		}
	}
	return found
}

var (
	pyIdent  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	flaskVar = regexp.MustCompile(`(?m)^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*Flask\(`)
	// pyEntries are the files a Python app is conventionally started from.
	pyEntries = []string{"app.py", "main.py", "wsgi.py", "server.py", "application.py", "run.py"}
)

// detectFlask: flask in requirements.txt (or named in pyproject.toml or
// Pipfile). The app object is found in the first of app.py, main.py,
// wsgi.py, server.py, application.py, run.py (the variable assigned
// Flask(…), default "app"); Gunicorn serves it when listed, else
// "flask --app … run" on $PORT.
func detectFlask(r *repoFiles) (Detection, bool, error) {
	if !r.reqs["flask"] && !mentions(r.readOptional("pyproject.toml"), "flask") && !mentions(r.readOptional("Pipfile"), "flask") {
		return Detection{}, false, nil
	}
	d, bin := r.python("flask")
	target := ""
	if f := r.firstFile(pyEntries...); f != "" {
		v := "app"
		if m := flaskVar.FindSubmatch(r.readOptional(f)); m != nil {
			v = string(m[1])
		}
		target = strings.TrimSuffix(f, ".py") + ":" + v
	}
	switch {
	case r.reqs["gunicorn"] && target != "":
		d.StartCommand = bin("gunicorn") + " --bind 0.0.0.0:$PORT " + target
	case target != "":
		d.StartCommand = bin("flask") + " --app " + target + " run --host 0.0.0.0 --port $PORT"
	default:
		d.StartCommand = bin("flask") + " run --host 0.0.0.0 --port $PORT"
	}
	return d, true, nil
}

// detectPython: an app.py, main.py, server.py or run.py, started with
// Python.
func detectPython(r *repoFiles) (Detection, bool, error) {
	f := r.firstFile("app.py", "main.py", "server.py", "run.py")
	if f == "" {
		return Detection{}, false, nil
	}
	d, bin := r.python("python")
	d.StartCommand = bin("python") + " " + f
	return d, true, nil
}

// detectVanilla: a package.json with a build script and none of the above;
// bundlers (Vite, Parcel, webpack, Rollup, esbuild) write to "dist". Vite
// apps get the SPA fallback.
func detectVanilla(r *repoFiles) (Detection, bool, error) {
	if r.script("build") == "" {
		return Detection{}, false, nil
	}
	d := r.node("vanilla")
	d.OutputDirectory = "dist"
	d.SPA = r.dep("vite")
	return d, true, nil
}

// staticDirs are where a site without a build is looked for, in order.
var staticDirs = []string{".", "public", "docs", "site", "www", "dist", "build"}

// detectStatic: an index.html at the root or in public/, docs/, site/,
// www/, dist/ or build/, served as is; failing that, any .html file at the
// root. Nothing is installed or built.
func detectStatic(r *repoFiles) (Detection, bool, error) {
	for _, dir := range staticDirs {
		if r.isFile(path.Join(dir, "index.html")) {
			return Detection{Framework: "static", OutputDirectory: dir}, true, nil
		}
	}
	f, err := r.root.Open(".")
	if err != nil {
		return Detection{}, false, nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	for _, n := range names {
		if strings.HasSuffix(strings.ToLower(n), ".html") && r.isFile(n) {
			return Detection{Framework: "static", OutputDirectory: "."}, true, nil
		}
	}
	return Detection{}, false, nil
}

// parseRequirements returns the normalised (lowercase, "_" → "-") package
// names of a requirements.txt, ignoring comments, options and markers.
func parseRequirements(s string) map[string]bool {
	names := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "-") {
			continue
		}
		if i := strings.IndexAny(line, " =<>!~[;@"); i >= 0 {
			line = line[:i]
		}
		names[strings.ReplaceAll(strings.ToLower(line), "_", "-")] = true
	}
	return names
}

// mentions reports whether data names the package pkg as a word.
func mentions(data []byte, pkg string) bool {
	if len(data) == 0 {
		return false
	}
	return regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_-])` + regexp.QuoteMeta(pkg) + `($|[^A-Za-z0-9_-])`).Match(data)
}
