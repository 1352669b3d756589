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
	"slices"
	"strconv"
	"strings"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// "Why it failed": a failed build or start is matched against an ordered
// table of known causes (causes below), each looking at the log lines and
// the state the failure left (the step, the sandbox's error, the
// workspace). The first that matches says, in a short sentence, what went
// wrong and what to do, and names the log lines that gave it away. When
// none does, the fallback points at the last error lines.

// Line is one logged line a diagnosis looks at.
type Line struct {
	Level   string
	Message string
}

// Failure is what a diagnosis looks at.
type Failure struct {
	// Step is the build step that failed (clone, detect, install, build,
	// output, publish) or "start" for a server app that did not start.
	Step string
	// Message is the failure's own line, e.g. "npm run build exited with
	// code 1" or the runtime's "App did not answer on port 8123 within 60s…".
	Message string
	// Err is the underlying error (a sandbox.TimeoutError, MemoryError…).
	Err error
	// Lines are the lines logged before the failure, in order: Diagnosis
	// lines are indexes into it.
	Lines []Line
	// Workspace is the repository's folder as the failure left it, "" when
	// it is gone.
	Workspace string
	// Port is the PORT a server app was given (step start).
	Port int
	// Platform marks a failure of the platform's own.
	Platform bool
	// DiskFull says which limit of its volume the build reached, by
	// statfs when a command ended or the build failed: "bytes", "inodes"
	// or "" (see sandbox.Volume.Full); Disk holds the limits.
	DiskFull string
	Disk     sandbox.Disk
}

// Diagnosis is a cause found: Lines are indexes into Failure.Lines.
type Diagnosis struct {
	Cause  string // the table entry's name, for tests and the server log
	Title  string
	Detail string
	Lines  []int
}

// Text is the diagnosis as the log's last error line.
func (d *Diagnosis) Text() string {
	return "Why it failed: " + d.Title + ". " + d.Detail
}

// cause is one entry of the table: match returns nil when f is not its.
type cause struct {
	name  string
	match func(f *Failure) *Diagnosis
}

// causes is the table, most specific first.
var causes = []cause{
	{"timeout", matchTimeout},
	{"memory", matchMemory},
	{"disk", matchDisk},
	{"start-disk", matchStartDisk},
	{"google-fonts", matchGoogleFonts},
	{"pip-unreachable", matchPipUnreachable},
	{"npm-unreachable", matchNpmUnreachable},
	{"pip-missing", matchPipMissing},
	{"npm-missing", matchNpmMissing},
	{"lockfile", matchLockfile},
	{"no-build-script", matchNoBuildScript},
	{"module-case", matchModuleCase},
	{"engines", matchEngines},
	{"download", matchDownload},
	{"missing-dependency", matchMissingDependency},
	{"output", matchOutput},
	{"start-port", matchStartPort},
	{"start-exit", matchStartExit},
	{"start-silent", matchStartSilent},
}

// Diagnose returns the first cause of the table that f matches, or the
// fallback: never nil.
func Diagnose(f *Failure) *Diagnosis {
	for _, c := range causes {
		if d := c.match(f); d != nil {
			d.Cause = c.name
			return d
		}
	}
	return fallback(f)
}

// find returns the indexes of the lines matching re.
func (f *Failure) find(re *regexp.Regexp) []int {
	var out []int
	for i, l := range f.Lines {
		if re.MatchString(l.Message) {
			out = append(out, i)
		}
	}
	return out
}

// first returns the submatches of the first line matching re and its index.
func (f *Failure) first(re *regexp.Regexp) ([]string, int) {
	for i, l := range f.Lines {
		if m := re.FindStringSubmatch(l.Message); m != nil {
			return m, i
		}
	}
	return nil, -1
}

// lastOutput returns the index of the last line before the failure that
// is not one of the pipeline's own, or -1.
func (f *Failure) lastOutput() int {
	for i := len(f.Lines) - 1; i >= 0; i-- {
		if !pipelineLine(f.Lines[i].Message) {
			return i
		}
	}
	return -1
}

func pipelineLine(s string) bool {
	for _, p := range []string{"Installing dependencies:", "Building:", "Cloning ", "Detected framework:", "Commit ", "Restored build cache", "Saved build cache", "No build cache", "npm ci failed because"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// cap keeps the last n indexes.
func lastN(idx []int, n int) []int {
	if len(idx) > n {
		return idx[len(idx)-n:]
	}
	return idx
}

func merge(a ...[]int) []int {
	var out []int
	for _, x := range a {
		out = append(out, x...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

var (
	reHeap     = regexp.MustCompile(`(?i)JavaScript heap out of memory|Reached heap limit|Allocation failed|ENOMEM|MemoryError|Killed$`)
	reFont     = regexp.MustCompile("Failed to fetch (?:font )?[`'\"]([^`'\"]+)[`'\"](?: from Google Fonts)?|Failed to fetch font")
	reFontCtx  = regexp.MustCompile(`(?i)fonts\.googleapis\.com|fonts\.gstatic\.com|next/font`)
	rePipNet   = regexp.MustCompile(`Retrying \(Retry\(|Failed to establish a new connection|Temporary failure in name resolution|NewConnectionError|ConnectTimeoutError|Could not fetch URL|ProxyError|Network is unreachable|ReadTimeoutError`)
	rePipNone  = regexp.MustCompile(`No matching distribution found for ([^\s]+)`)
	rePipVers  = regexp.MustCompile(`Could not find a version that satisfies the requirement ([^\s]+) \(from versions: ([^)]*)\)`)
	reNpmNet   = regexp.MustCompile(`(?i)\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|ENETUNREACH|EHOSTUNREACH)\b|connect EACCES|network request to \S+ failed|npm (?:ERR!|error) network`)
	reNpm404   = regexp.MustCompile(`(?i)404 Not Found - GET \S+/(@?[^/\s]+(?:%2f[^/\s]+)?)|No matching version found for (\S+)|'(\S+)' is not in (?:the npm|this) registry`)
	reLockfile = regexp.MustCompile(`(?i)can only install packages when your package\.json and package-lock\.json|missing: .* from lock file|invalid: lock file|can only install with an existing package-lock\.json|Your lockfile needs to be updated|ERR_PNPM_OUTDATED_LOCKFILE|ERR_PNPM_FROZEN_LOCKFILE|lockfile would have been modified`)
	reNoScript = regexp.MustCompile(`Missing script: "?build"?|Command "build" not found|ERR_PNPM_NO_SCRIPT|has no "build" script|None of the selected packages has a "build" script`)
	reModule   = []*regexp.Regexp{
		regexp.MustCompile(`Module not found: (?:Error: )?Can't resolve '([^']+)'(?: in '([^']+)')?`),
		regexp.MustCompile(`Could not resolve "([^"]+)" from "([^"]+)"`),
		regexp.MustCompile(`Failed to resolve import "([^"]+)" from "([^"]+)"`),
		regexp.MustCompile(`Cannot find module '([^']+)'`),
		regexp.MustCompile(`Could not resolve '([^']+)'`),
	}
	reEngine   = regexp.MustCompile(`(?i)EBADENGINE|Unsupported engine|The engine "node" is incompatible|Node\.js version .* is required|You are using Node\.js|requires Node\.js|notsup`)
	reNodeCur  = regexp.MustCompile(`(?:current|Actual):? \{?\s*"?node"?:\s*["']?v?([0-9.]+)|Got "([0-9.]+)"|You are using Node\.js ([0-9.]+)`)
	reDownload = regexp.MustCompile(`(?i)getaddrinfo (?:ENOTFOUND|EAI_AGAIN) (\S+)|request to (https?://\S+) failed|fetch failed|FetchError|connect (?:ECONNREFUSED|ETIMEDOUT) (\S+)|Failed to fetch (https?://\S+)|ERR_SOCKET|UND_ERR_CONNECT_TIMEOUT`)
	reURL      = regexp.MustCompile(`https?://[^\s'"<>),]+`)
	rePortLine = regexp.MustCompile(`(?i)(?:listen|running|started|serving|server|ready|local).*?(?:port\s*:?\s*|https?://[\w.\[\]:-]*?:)(\d{2,5})\b`)
)

func matchTimeout(f *Failure) *Diagnosis {
	var te *sandbox.TimeoutError
	if !errors.As(f.Err, &te) && !strings.HasPrefix(f.Message, "Build timed out") {
		return nil
	}
	var lines []int
	if i := f.lastOutput(); i >= 0 {
		lines = []int{i}
	}
	return &Diagnosis{
		Title:  "The build ran out of time",
		Detail: "It was still running when the time limit ended it. A build that never finishes is usually a command that waits: a dev server, a watch mode or a test runner used as the build command. Make the build command one that ends, such as `npm run build`; the highlighted line is the last thing it printed.",
		Lines:  lines,
	}
}

// reNoSpace matches the lines a write to a full disk prints.
var reNoSpace = regexp.MustCompile(`(?i)No space left on device|\bENOSPC\b|Disk quota exceeded|\bEDQUOT\b`)

// matchDisk: the build's volume was full when a command ended or the build
// failed. Commands that ignore failed writes go on (a shell loop, `cmd ||
// true`), so the step that fails may be a later one that finds nothing
// written (no output folder): the limit reached is the cause.
func matchDisk(f *Failure) *Diagnosis {
	if f.DiskFull == "" {
		return nil
	}
	lines := f.find(reNoSpace)
	if len(lines) > 3 {
		lines = lines[:3] // the first ones: where it began
	}
	for i, l := range f.Lines {
		if strings.HasPrefix(l.Message, diskFullPrefix) {
			lines = merge(lines, []int{i})
			break
		}
	}
	if f.DiskFull == "inodes" {
		return &Diagnosis{
			Title: fmt.Sprintf("The build created more files than its limit of %s", thousands(f.Disk.Inodes)),
			Detail: "Every file and folder counts, node_modules and /tmp included. Once the limit is reached creating a file fails (“No space left on device”), " +
				"so what the build did next was incomplete. Make it create fewer files: delete temporary files as it goes, install dependencies once, and leave generated files out of the repository.",
			Lines: lines,
		}
	}
	return &Diagnosis{
		Title: fmt.Sprintf("The build filled its %s of disk space", sandbox.FormatBytes(f.Disk.Bytes)),
		Detail: "Everything the build writes counts: the repository with its .git folder, node_modules, the output and /tmp. Once it is full every write fails (“No space left on device”), " +
			"so what the build did next was incomplete. Make it write less: leave large files (videos, data sets, archives) out of the repository, and delete temporary files as it goes.",
		Lines: lines,
	}
}

// matchStartDisk: a server app stopped after its writes failed for want
// of space (its volume full: the build's files and what it wrote since).
func matchStartDisk(f *Failure) *Diagnosis {
	if f.Step != "start" {
		return nil
	}
	lines := f.find(reNoSpace)
	if len(lines) == 0 {
		return nil
	}
	return &Diagnosis{
		Title: "The app ran out of disk space",
		Detail: "Its folder holds its build and everything it writes, up to a limit; once that is full every write fails (“No space left on device”) and the app stopped. " +
			"Make it write less: log to the console rather than to files, bound uploads and caches, delete what it no longer needs; then restart it.",
		Lines: lastN(lines, 3),
	}
}

func matchMemory(f *Failure) *Diagnosis {
	var me *sandbox.MemoryError
	lines := f.find(reHeap)
	if !errors.As(f.Err, &me) && len(lines) == 0 {
		return nil
	}
	if f.Step == "start" {
		return nil // the start causes say it with the app's last lines
	}
	limit := ""
	if me != nil && me.Limit > 0 {
		limit = " (" + sandbox.FormatBytes(me.Limit) + ")"
	}
	return &Diagnosis{
		Title:  "The build ran out of memory" + limit,
		Detail: "Your code may be fine: the build needed more memory than a build gets. Turn off source maps (set GENERATE_SOURCEMAP=false in the project's variables for Create React App, build.sourcemap: false for Vite), remove large dependencies you do not use, or split a huge page into smaller ones.",
		Lines:  lastN(lines, 3),
	}
}

func matchGoogleFonts(f *Failure) *Diagnosis {
	m, i := f.first(reFont)
	if m == nil {
		return nil
	}
	font := m[1]
	title := "The build could not download a font from Google Fonts"
	if font != "" {
		title = fmt.Sprintf("The build could not download the font “%s” from Google Fonts", font)
	}
	return &Diagnosis{
		Title:  title,
		Detail: "Your code is fine: next/font/google downloads the fonts while the site builds, and this build could not reach Google Fonts. Deploy again later; to make the build independent of the network, put the font files in your repository and load them with next/font/local instead.",
		Lines:  merge([]int{i}, lastN(f.find(reFontCtx), 3)),
	}
}

func matchPipUnreachable(f *Failure) *Diagnosis {
	net := f.find(rePipNet)
	m, i := f.first(rePipNone)
	if len(net) == 0 || m == nil {
		return nil
	}
	return &Diagnosis{
		Title:  "The build could not reach the Python package index",
		Detail: fmt.Sprintf("pip tried to download %s and every attempt failed (the highlighted retries): this is the network, not your code, and your requirements.txt is probably fine. Deploy again later; if it keeps failing, tell the platform's operator (a campus package mirror can be set for builds).", m[1]),
		Lines:  merge(lastN(net, 5), []int{i}),
	}
}

func matchNpmUnreachable(f *Failure) *Diagnosis {
	if f.Step != "install" {
		return nil
	}
	net := f.find(reNpmNet)
	if len(net) == 0 {
		return nil
	}
	return &Diagnosis{
		Title:  "The build could not reach the npm registry",
		Detail: "Installing your dependencies needs the package registry, and every attempt to reach it failed: this is the network, not your code. Deploy again later; if it keeps failing, tell the platform's operator (a campus package mirror can be set for builds).",
		Lines:  lastN(net, 4),
	}
}

func matchPipMissing(f *Failure) *Diagnosis {
	m, i := f.first(rePipNone)
	if m == nil {
		return nil
	}
	req := m[1]
	lines := []int{i}
	detail := fmt.Sprintf("The package index has no package or version that matches %s. Check its spelling and version in requirements.txt (search it on the Python package index), or remove it if the app does not use it.", req)
	if v, j := f.first(rePipVers); v != nil {
		lines = merge(lines, []int{j})
		if vs := strings.TrimSpace(v[2]); vs != "" && vs != "none" {
			all := strings.Split(vs, ", ")
			detail = fmt.Sprintf("That version does not exist: the versions there are %s. Pick one of them in requirements.txt (for example %s).", shortList(all, 6), strings.TrimSpace(all[len(all)-1]))
		} else {
			detail = fmt.Sprintf("No package of that name exists: check the spelling of %s in requirements.txt (the name pip installs can differ from the name you import).", req)
		}
	}
	return &Diagnosis{
		Title:  fmt.Sprintf("requirements.txt asks for %s, which pip could not find", req),
		Detail: detail,
		Lines:  lines,
	}
}

func shortList(all []string, n int) string {
	if len(all) <= n {
		return strings.Join(all, ", ")
	}
	return "…, " + strings.Join(all[len(all)-n:], ", ")
}

func matchNpmMissing(f *Failure) *Diagnosis {
	if f.Step != "install" {
		return nil
	}
	m, i := f.first(reNpm404)
	if m == nil {
		return nil
	}
	name := strings.ReplaceAll(cmpOr(m[1], m[2], m[3]), "%2f", "/")
	return &Diagnosis{
		Title:  fmt.Sprintf("package.json asks for %s, which the npm registry does not have", name),
		Detail: "Check the package's name and version in package.json (a typo, a private package or a version that was never published), then commit the fix.",
		Lines:  []int{i},
	}
}

func cmpOr(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func matchLockfile(f *Failure) *Diagnosis {
	if f.Step != "install" {
		return nil
	}
	lines := f.find(reLockfile)
	if len(lines) == 0 {
		return nil
	}
	return &Diagnosis{
		Title:  "package.json and the lockfile disagree",
		Detail: "The lockfile lists other packages than package.json asks for (it was not updated after a change). Run the install on your computer (npm install, yarn install or pnpm install), commit the updated lockfile with package.json, and deploy again.",
		Lines:  lastN(lines, 3),
	}
}

func matchNoBuildScript(f *Failure) *Diagnosis {
	if f.Step != "build" {
		return nil
	}
	lines := f.find(reNoScript)
	if len(lines) == 0 {
		return nil
	}
	detail := "The build command runs the \"build\" script of package.json, and it has none. Add one (for example \"build\": \"vite build\"), or set the project's build command to what builds your site; a site with nothing to build needs no build command."
	if scripts := packageScripts(f.Workspace); len(scripts) > 0 {
		detail += " Its scripts are: " + strings.Join(scripts, ", ") + "."
	}
	return &Diagnosis{
		Title:  "package.json has no \"build\" script",
		Detail: detail,
		Lines:  lastN(lines, 2),
	}
}

// packageScripts lists the script names of the workspace's package.json.
func packageScripts(ws string) []string {
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if readPackage(ws, &pkg) != nil {
		return nil
	}
	var out []string
	for k := range pkg.Scripts {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func readPackage(ws string, v any) error {
	if ws == "" {
		return fs.ErrNotExist
	}
	// Through an os.Root: a symlinked package.json cannot lead outside
	// the workspace.
	root, err := openWorkspace(ws)
	if err != nil {
		return err
	}
	defer root.Close()
	f, err := root.Open("package.json")
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20+1))
	if err != nil {
		return err
	}
	if len(b) > 1<<20 {
		return errors.New("package.json too large")
	}
	return json.Unmarshal(b, v)
}

func matchModuleCase(f *Failure) *Diagnosis {
	if f.Workspace == "" || (f.Step != "build" && f.Step != "start") {
		return nil
	}
	for _, re := range reModule {
		for i, l := range f.Lines {
			m := re.FindStringSubmatch(l.Message)
			if m == nil || !strings.HasPrefix(m[1], ".") && !strings.HasPrefix(m[1], "/") && !strings.HasPrefix(m[1], "@/") {
				continue
			}
			if real := caseMatch(f.Workspace, m[1]); real != "" {
				return &Diagnosis{
					Title:  fmt.Sprintf("“%s” differs only in letter case from the file “%s”", m[1], real),
					Detail: "Windows and macOS ignore letter case in file names, so it worked on your computer; builds run on Linux, which does not. Change the import (or rename the file) so that the letters match exactly, and deploy again.",
					Lines:  []int{i},
				}
			}
		}
	}
	return nil
}

// caseMatch looks in ws (outside node_modules and .git) for the file an
// import specifier names that exists only with other letter case, and
// returns its path relative to ws, or "".
func caseMatch(ws, spec string) string {
	spec = strings.TrimPrefix(spec, "@/")
	parts := strings.Split(path.Clean(spec), "/")
	for len(parts) > 0 && (parts[0] == "." || parts[0] == ".." || parts[0] == "") {
		parts = parts[1:]
	}
	if len(parts) == 0 {
		return ""
	}
	want := strings.Join(parts, "/")
	wantLow := strings.ToLower(want)
	found := ""
	n := 0
	root, err := openWorkspace(ws)
	if err != nil {
		return ""
	}
	defer root.Close()
	fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return nil
		}
		n++
		if n > 20000 {
			return fs.SkipAll
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return fs.SkipDir
		}
		for _, c := range []string{rel, strings.TrimSuffix(rel, path.Ext(rel)), path.Dir(rel) + "/index"} {
			if c == "." || c == "" {
				continue
			}
			if cs := strings.TrimSuffix(c, "/index"); c != rel && strings.HasSuffix(c, "/index") {
				c = cs
			}
			if (c == want || strings.HasSuffix(c, "/"+want)) && !d.IsDir() {
				found = "-" // the exact name exists: not a case problem
				return fs.SkipAll
			}
			low := strings.ToLower(c)
			if low == wantLow || strings.HasSuffix(low, "/"+wantLow) {
				tail := c[len(c)-len(want):]
				if tail != want {
					found = rel
				}
			}
		}
		return nil
	})
	if found == "-" {
		return ""
	}
	return found
}

func matchEngines(f *Failure) *Diagnosis {
	if f.Step != "install" && f.Step != "build" && f.Step != "start" {
		return nil
	}
	lines := f.find(reEngine)
	if len(lines) == 0 {
		return nil
	}
	var pkg struct {
		Engines struct {
			Node string `json:"node"`
		} `json:"engines"`
	}
	_ = readPackage(f.Workspace, &pkg)
	cur := ""
	if m, _ := f.first(reNodeCur); m != nil {
		cur = cmpOr(m[1], m[2], m[3])
	}
	title := "Your project asks for a Node.js version the build does not have"
	if pkg.Engines.Node != "" {
		title = fmt.Sprintf("package.json asks for Node.js %s, which the build does not have", pkg.Engines.Node)
	}
	detail := "Builds here run one Node.js version"
	if cur != "" {
		detail += " (" + strings.TrimPrefix(cur, "v") + ")"
	}
	detail += ". Widen \"engines\".\"node\" in package.json (for example \">=18\") or remove it, or update the dependency that asks for another version, and deploy again."
	return &Diagnosis{Title: title, Detail: detail, Lines: lastN(lines, 3)}
}

func matchDownload(f *Failure) *Diagnosis {
	if f.Step != "build" {
		return nil
	}
	lines := f.find(reDownload)
	if len(lines) == 0 {
		return nil
	}
	what := "something"
	for _, i := range lines {
		m := reDownload.FindStringSubmatch(f.Lines[i].Message)
		if h := cmpOr(m[1], m[2], m[3], m[4]); h != "" {
			what = h
			break
		}
		if u := reURL.FindString(f.Lines[i].Message); u != "" {
			what = u
			break
		}
	}
	return &Diagnosis{
		Title:  fmt.Sprintf("The build could not download %s", what),
		Detail: "Something in the build (a font, an API call, a file from a CDN) downloads from the internet while the site builds, and that download failed: the network or that server, not your code. Deploy again later, or make the build not need it: keep the file in your repository, or fetch the data in the browser when the page loads.",
		Lines:  lastN(lines, 3),
	}
}

func matchMissingDependency(f *Failure) *Diagnosis {
	if f.Step != "build" && f.Step != "start" {
		return nil
	}
	for _, re := range reModule {
		for i, l := range f.Lines {
			m := re.FindStringSubmatch(l.Message)
			if m == nil || strings.HasPrefix(m[1], ".") || strings.HasPrefix(m[1], "/") || strings.HasPrefix(m[1], "@/") {
				continue
			}
			name := m[1]
			if parts := strings.Split(name, "/"); strings.HasPrefix(name, "@") && len(parts) > 2 {
				name = parts[0] + "/" + parts[1]
			} else if !strings.HasPrefix(name, "@") {
				name = parts[0]
			}
			return &Diagnosis{
				Title:  fmt.Sprintf("The package %s is not installed", name),
				Detail: fmt.Sprintf("Your code imports %s, but package.json does not list it, so the build did not install it (it may be installed on your computer only). Run `npm install %s` and commit package.json and the lockfile.", name, name),
				Lines:  []int{i},
			}
		}
	}
	return nil
}

func matchOutput(f *Failure) *Diagnosis {
	if f.Step != "output" || !strings.Contains(f.Message, "was not found after the build") {
		return nil
	}
	want := "the output folder"
	if i, j := strings.Index(f.Message, "'"), strings.LastIndex(f.Message, "'"); i >= 0 && j > i {
		want = "“" + f.Message[i+1:j] + "”"
	}
	found := siteFolders(f.Workspace)
	var detail string
	switch len(found) {
	case 0:
		detail = "The build wrote no folder with an index.html. Check that the build command builds your site, then set the output directory to the folder it writes."
	case 1:
		detail = fmt.Sprintf("Found `%s/`: set the output directory to `%s` in the project's settings.", found[0], found[0])
	default:
		names := make([]string, len(found))
		for i, n := range found {
			names[i] = "`" + n + "/`"
		}
		detail = fmt.Sprintf("Found %s: set the output directory to the one your build writes, e.g. `%s`.", strings.Join(names, ", "), found[0])
	}
	var lines []int
	if i := f.lastOutput(); i >= 0 {
		lines = []int{i}
	}
	return &Diagnosis{Title: fmt.Sprintf("The build did not write %s", want), Detail: detail, Lines: lines}
}

// siteFolders lists the folders of ws (two levels deep, outside
// node_modules and dot-folders) that hold an index.html, shallowest first.
// It reads through an os.Root at ws: a symlink the build left (an
// index.html pointing at a host file) is never followed out of it.
func siteFolders(ws string) []string {
	if ws == "" {
		return nil
	}
	root, err := openWorkspace(ws)
	if err != nil {
		return nil
	}
	defer root.Close()
	fsys := root.FS()
	isFile := func(name string) bool {
		fi, err := root.Stat(name) // follows links inside ws only
		return err == nil && fi.Mode().IsRegular()
	}
	var out, second []string
	entries, _ := fs.ReadDir(fsys, ".")
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "node_modules" || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if isFile(e.Name() + "/index.html") {
			out = append(out, e.Name())
		}
		subs, _ := fs.ReadDir(fsys, e.Name())
		for _, s := range subs {
			if s.IsDir() && isFile(e.Name()+"/"+s.Name()+"/index.html") {
				second = append(second, e.Name()+"/"+s.Name())
			}
		}
	}
	return append(out, second...)
}

// openWorkspace opens ws as an os.Root for the diagnosis to read in:
// ws itself must be a folder, not a link to one.
func openWorkspace(ws string) (*os.Root, error) {
	if fi, err := os.Lstat(ws); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", ws)
	}
	return os.OpenRoot(ws)
}

func matchStartPort(f *Failure) *Diagnosis {
	if f.Step != "start" || !strings.Contains(f.Message, "did not answer") || f.Port == 0 {
		return nil
	}
	for i := len(f.Lines) - 1; i >= 0; i-- {
		m := rePortLine.FindStringSubmatch(f.Lines[i].Message)
		if m == nil {
			continue
		}
		port, err := strconv.Atoi(m[1])
		if err != nil || port == f.Port {
			continue
		}
		return &Diagnosis{
			Title:  fmt.Sprintf("The app listens on port %d, not on the PORT it was given (%d)", port, f.Port),
			Detail: "Gantry tells your app which port to listen on in the PORT environment variable. Listen on it: app.listen(process.env.PORT || 3000) in Node, app.run(host=\"0.0.0.0\", port=int(os.environ.get(\"PORT\", 5000))) in Flask.",
			Lines:  []int{i},
		}
	}
	return nil
}

func matchStartExit(f *Failure) *Diagnosis {
	if f.Step != "start" || !strings.HasPrefix(f.Message, "App exited") && !strings.HasPrefix(f.Message, "App ran out of memory") && !strings.HasPrefix(f.Message, "App reached") {
		return nil
	}
	lines := lastN(outputIndexes(f), 5)
	detail := "The highlighted lines are the last it printed: the error there is what to fix (run the start command on your computer to see it too)."
	if len(lines) == 0 {
		detail = "It printed nothing. Check that the start command starts your server and keeps it running (for example `node server.js`, not a build or a script that ends)."
	}
	if strings.Contains(f.Message, "code 0") {
		detail = "Its start command ended instead of keeping a server running: make it start the server (for example `node server.js` or `gunicorn app:app`), not a script that ends."
	}
	return &Diagnosis{Title: "The app stopped right after it started", Detail: detail, Lines: lines}
}

func matchStartSilent(f *Failure) *Diagnosis {
	if f.Step != "start" || !strings.Contains(f.Message, "did not answer") {
		return nil
	}
	return &Diagnosis{
		Title:  "The app never answered on its port",
		Detail: "It kept running but answered no request on the PORT environment variable. Listen on process.env.PORT (Node) or os.environ[\"PORT\"] (Python), on all interfaces (0.0.0.0), and start the server before slow work such as connecting to a database.",
		Lines:  lastN(outputIndexes(f), 3),
	}
}

// outputIndexes returns the indexes of the lines that are not the
// pipeline's own.
func outputIndexes(f *Failure) []int {
	var out []int
	for i, l := range f.Lines {
		if !pipelineLine(l.Message) && l.Message != "Last output of the app:" {
			out = append(out, i)
		}
	}
	return out
}

func fallback(f *Failure) *Diagnosis {
	d := &Diagnosis{Cause: "unknown", Title: strings.TrimSuffix(f.Message, ".")}
	switch {
	case f.Platform:
		d.Detail = "This is a fault of the platform, not of your code. Deploy again; if it keeps happening, tell the platform's operator."
	case f.Step == "clone", f.Step == "detect":
		d.Detail = "Check the project's repository and branch, and its build settings, then deploy again."
	default:
		var errs []int
		for i, l := range f.Lines {
			if l.Level == gantry.LevelError && !pipelineLine(l.Message) {
				errs = append(errs, i)
			}
		}
		d.Lines = lastN(errs, 5)
		if len(d.Lines) == 0 {
			if i := f.lastOutput(); i >= 0 {
				d.Lines = []int{i}
			}
		}
		d.Detail = "No known cause matched: the error is in the highlighted lines, usually the first error printed. Run the same command on your computer to see it there too."
	}
	return d
}

// CauseNames lists the table's causes in order.
func CauseNames() []string {
	out := make([]string, len(causes))
	for i, c := range causes {
		out[i] = c.name
	}
	return out
}
