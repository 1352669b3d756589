// Package build turns a repository into a published site, with no database:
// workspace prepared for the sandbox → clone and commit metadata
// (git in the sandbox) → framework detection → install → build (both in
// the sandbox) → locate the output folder → publish it under the
// sites folder with precompressed variants. Every step and every line of
// output is reported to a Logger as it happens.
package build

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// Defaults of a Job and a Pipeline.
const (
	DefaultTimeout     = 10 * time.Minute
	DefaultMemory      = 1 << 30 // bytes
	DefaultMaxLogLines = 5000
	// DefaultAppDisk is the writable space a server app gets on top of
	// what its build left in the workspace.
	DefaultAppDisk = 1 << 30 // bytes
	// MinAppDisk is the least writable space a server app gets, however
	// little its account has left (Job.StorageLeft).
	MinAppDisk = 16 << 20 // bytes
)

// Cloner clones one branch of a repository into dir (shallow where the
// host can; which exists, is empty and belongs to the sandbox user uid:gid;
// zero means the sandbox's own ids) and returns the commit it checked out.
// It runs git in the sandbox as uid:gid (githost.Service does) and stops
// when ctx ends. Its errors carry a sentence for users (gantry.ErrorMessage),
// never git's own lines; an uncoded error is the platform's fault. The
// token, when not empty, authenticates the clone and must never appear in
// a URL, an argument list or an error.
type Cloner interface {
	Clone(ctx context.Context, url, branch, dir, token string, uid, gid uint32) (*gantry.Commit, error)
}

// CommitCloner is a Cloner that can check out a given commit of a branch
// (Job.Commit): *githost.Git is one.
type CommitCloner interface {
	CloneCommit(ctx context.Context, url, branch, commit, dir, token string, uid, gid uint32) (*gantry.Commit, error)
}

// Logger receives a build's log lines as they are produced, in order.
// Level is gantry.LevelInfo, LevelWarning, LevelError or LevelSuccess.
type Logger interface {
	Log(level, message string)
}

// LoggerFunc adapts a function to a Logger.
type LoggerFunc func(level, message string)

// Log calls f(level, message).
func (f LoggerFunc) Log(level, message string) { f(level, message) }

// Job is one deployment to build.
type Job struct {
	DeploymentID string // names the published folder: SitesDir/DeploymentID
	Repository   string // shown in the log, e.g. "alice/site"; default: taken from CloneURL
	CloneURL     string
	Branch       string
	// Commit is the commit to build (a full SHA), which must be on
	// Branch; "" builds the branch's head. The cloner must then implement
	// CommitCloner.
	Commit string
	Token  string // optional clone credential

	// Workspace is where the build happens: a sandbox.Volume is made
	// there (anything already there is removed first), a filesystem of its
	// own bounded by Disk, and the repository is cloned into its workspace
	// folder. Its parent folders must be searchable by the sandbox user.
	// Run removes it when it returns unless KeepWorkspace is set (server
	// apps run from it: see Result.Workspace).
	Workspace     string
	KeepWorkspace bool
	// UID and GID are the account's own sandbox ids (zero: the sandbox's
	// default): everything the build runs and writes is theirs.
	UID, GID uint32
	// SitesDir holds published sites; it is created if missing.
	SitesDir string
	// BlobDir is the account's blob store (internal/blobs): the published
	// files are links to their blobs there, with a manifest. "" publishes
	// plain copies (the layout before blobs, kept for comparisons).
	BlobDir string

	// Project holds the project's build settings: each non-empty field
	// replaces what detection found.
	Project gantry.BuildConfig
	// Override holds the deploy call's settings (buildCommand,
	// outputDirectory): each non-empty field replaces the project's.
	Override gantry.BuildConfig
	// Env holds the project's environment variables, given to install and
	// build (NODE_ENV is withheld from the install so devDependencies are
	// installed).
	Env []gantry.EnvVar

	// Timeout bounds clone, install and build together (default 10m).
	Timeout time.Duration
	// Memory is the memory limit of install and build in bytes (default 1 GiB).
	Memory int64
	// Disk bounds what the build may write, clone, install, build and
	// /tmp together (default sandbox.DefaultDisk: 4 GiB and 200,000
	// files). The kernel enforces it: a write past it fails with ENOSPC,
	// and the build fails saying which limit it reached.
	Disk sandbox.Disk
	// AppDisk is the writable space a server app gets on top of what the
	// build left (default 1 GiB): after a server app's build its volume is
	// resized to hold exactly that.
	AppDisk int64
	// StorageLeft, when positive, is what the account had left of its
	// storage budget when the build started: the app's writable space is
	// at most that less what the build keeps (and at least
	// MinAppDisk, so that the filesystem can be resized).
	StorageLeft int64

	// CacheDir holds the build caches of the deployment's target (see
	// CacheEntries): they are restored into the workspace before the
	// install and saved after a successful build. Empty: no caching at all
	// (a fork's pull request). It is created if missing.
	CacheDir string
	// CacheFallback, when CacheDir holds no caches yet, is where they are
	// restored from instead (a preview branch's first build starts from
	// production's): it is only ever read, never written.
	CacheFallback string
	// NoCache skips restoring the caches; a successful build still saves
	// new ones.
	NoCache bool
	// CacheEvictedAgo, when positive, is how long ago the project's caches
	// were evicted to keep the caches within their bounds: a build that
	// finds none says so rather than that there are none yet.
	CacheEvictedAgo time.Duration
	// CacheUse, when set, is called before the caches are restored and
	// what it returns once they are: the caller's lock on the project's
	// caches (a save still under way ends first; no eviction meanwhile).
	CacheUse func(ctx context.Context) (release func())
	// DeferCacheSave leaves the caches unsaved: Result.CacheSave saves
	// them, which the caller runs once the deployment is live, and only
	// then removes the workspace (so KeepWorkspace must be set).
	DeferCacheSave bool
	// NpmRegistry and PipIndexURL, when set, are the package registries
	// the install and build use (npm_config_registry, PIP_INDEX_URL).
	NpmRegistry string
	PipIndexURL string
}

// Result is what a successful build produced.
type Result struct {
	Commit    *gantry.Commit     // nil if the cloner returned none
	Detection Detection          // what detection found
	Config    gantry.BuildConfig // the settings used: detection, then project, then deploy call
	SPA       bool               // serve /index.html for unknown extension-less paths
	SiteDir   string             // the published folder; "" for a server app (Config.StartCommand set)
	Workspace string             // the folder the repository was built in (inside Job.Workspace's volume)
	Files     int                // files published, precompressed variants not counted
	Size      int64              // bytes published, precompressed variants not counted; for a server app, the workspace it runs from (without .git)
	Duration  time.Duration      // whole run
	CacheSize int64              // bytes the target's build caches take after this build (Job.CacheDir); 0 with CacheSave
	CacheSave *CacheSave         // with Job.DeferCacheSave and caches to save: the save, to run once live
	Phases    Phases             // the time each step took
}

// Error is a build failure explained to the user. Its Message is also the
// last line the build logged, at level error.
type Error struct {
	Step    string // clone, detect, install, build, output or publish
	Message string // e.g. "npm run build exited with code 1"
	Err     error  // the underlying error, for the platform's own log; may be nil
	// Platform marks a failure of the platform's own (a folder it could not
	// prepare, a sandbox that would not start), not of the user's code:
	// its Err belongs in the server log.
	Platform bool
	// Diagnosis says why it failed (Diagnose), its Lines indexes into the
	// lines this build logged, the first being 0; its Text was logged
	// last, after Message. Set by Pipeline.Run.
	Diagnosis *Diagnosis
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Pipeline runs builds. Its zero value is not usable: Sandbox and Cloner
// are required.
type Pipeline struct {
	Sandbox *sandbox.Sandbox
	Cloner  Cloner
	// Limits are the sandbox limits of install and build; Job.Timeout and
	// Job.Memory replace Timeout and Memory. Zero fields take
	// sandbox.DefaultLimits.
	Limits sandbox.Limits
	// MaxLogLines caps the command output lines logged per build (default
	// 5000); the pipeline's own lines are always logged.
	MaxLogLines int
}

// Run builds job, logging to log, and publishes the output under
// job.SitesDir/job.DeploymentID, switched into place atomically.
//
// A failed build returns an *Error whose message was logged last. When ctx
// is cancelled (the deployment was stopped, the platform is shutting down)
// Run kills the build and returns ctx's error wrapped, without logging an
// error line: the caller knows why it cancelled.
func (p *Pipeline) Run(ctx context.Context, job Job, log Logger) (*Result, error) {
	start := time.Now()
	if job.Timeout <= 0 {
		job.Timeout = DefaultTimeout
	}
	if job.Memory <= 0 {
		job.Memory = DefaultMemory
	}
	job.Disk = job.Disk.WithDefaults()
	if job.AppDisk <= 0 {
		job.AppDisk = DefaultAppDisk
	}
	if p.Sandbox == nil || p.Cloner == nil {
		return nil, errors.New("build: the pipeline needs a sandbox and a cloner")
	}
	if job.DeploymentID == "" || job.Workspace == "" || job.SitesDir == "" {
		return nil, errors.New("build: job needs a deployment id, a workspace and a sites folder")
	}
	if strings.ContainsAny(job.DeploymentID, `/\`) || job.DeploymentID == "." || job.DeploymentID == ".." {
		return nil, fmt.Errorf("build: invalid deployment id %q", job.DeploymentID)
	}
	max := p.MaxLogLines
	if max <= 0 {
		max = DefaultMaxLogLines
	}
	r := &run{p: p, job: job, ctx: ctx, log: newLogSink(log, max), restored: map[string]bool{}, keys: map[string]string{}, kept: map[string]bool{},
		phases: Phases{}}
	var cancel context.CancelFunc
	r.bctx, cancel = context.WithTimeout(ctx, job.Timeout)
	defer cancel()
	if !job.KeepWorkspace {
		defer sandbox.RemoveVolume(job.Workspace)
	}
	res, err := r.steps()
	if err != nil {
		var be *Error
		if errors.As(err, &be) {
			f := &Failure{Step: be.Step, Message: be.Message, Err: be.Err, Lines: r.log.logged(), Platform: be.Platform,
				DiskFull: r.full, Disk: job.Disk}
			if r.vol != nil && mounted(r.vol) {
				f.Workspace = r.vol.Workspace
				if f.DiskFull == "" {
					f.DiskFull = r.vol.Full()
				}
			}
			r.log.step(gantry.LevelError, be.Message)
			be.Diagnosis = Diagnose(f)
			r.log.step(gantry.LevelError, be.Diagnosis.Text())
		}
		return nil, err
	}
	res.Duration, res.Phases = time.Since(start), r.phases
	if r.job.DeferCacheSave && r.job.CacheDir != "" {
		res.CacheSave = &CacheSave{r: r}
	} else {
		res.CacheSize = r.cacheSize()
	}
	r.log.step(gantry.LevelSuccess, fmt.Sprintf("Build completed in %s", roundDuration(res.Duration)))
	return res, nil
}

// run is the state of one Pipeline.Run.
type run struct {
	p    *Pipeline
	job  Job
	ctx  context.Context // the caller's: cancelled means stopped
	bctx context.Context // ctx with the build timeout
	log  *logSink
	vol  *sandbox.Volume // where the build happens

	restored map[string]bool   // the cache entries restored
	keys     map[string]string // the keyed cache entries' keys, from the repository as cloned
	kept     map[string]bool   // the cache entries neither restored nor to be saved (stores, with node_modules)
	// skippable: the install is npm's and the project has no install
	// scripts, so a node_modules restored for its key makes it needless.
	skippable bool
	// full is the limit of the volume a command that succeeded left
	// reached ("bytes", "inodes"; see sandbox.Volume.Full), "" if none.
	full string
	// phases: the time each step of the build took (see Phases).
	phases Phases
	// held: a server app's caches are held in heldCaches for a deferred
	// save (cachesave.go).
	held bool
}

func (r *run) steps() (*Result, error) {
	job := r.job
	res := &Result{}

	// Clone, into a fresh volume that is the account's, with git running in
	// the sandbox as the account.
	if err := sandbox.RemoveVolume(job.Workspace); err != nil {
		return nil, &Error{Step: "clone", Message: "Could not prepare the build folder", Err: err, Platform: true}
	}
	if err := os.MkdirAll(filepath.Dir(job.Workspace), 0o711); err != nil {
		return nil, &Error{Step: "clone", Message: "Could not prepare the build folder", Err: err, Platform: true}
	}
	vol, err := r.p.Sandbox.OpenVolume(job.Workspace, job.Disk, job.UID, job.GID)
	if err != nil {
		return nil, &Error{Step: "clone", Message: "Could not prepare the build folder", Err: err, Platform: true}
	}
	r.vol = vol
	ws := vol.Workspace
	res.Workspace = ws
	repo := job.Repository
	if repo == "" {
		repo = repoName(job.CloneURL)
	}
	r.log.step(gantry.LevelInfo, fmt.Sprintf("Cloning %s (branch %s)…", repo, job.Branch))
	commit, err := r.clone(ws, repo)
	if err != nil {
		return nil, err
	}
	res.Commit = commit
	if commit != nil {
		r.log.step(gantry.LevelInfo, commitLine(commit))
	}

	// Detect and merge the settings.
	det, err := Detect(ws)
	cfg := mergeConfig(det, job.Project, job.Override)
	switch {
	case err == nil:
		line := "Detected framework: " + FrameworkName(det.Framework)
		if det.PackageManager != "" {
			line += " (" + det.PackageManager + ")"
		}
		r.log.step(gantry.LevelInfo, line)
	case errors.Is(err, ErrNoFramework) && (cfg.InstallCommand != "" || cfg.BuildCommand != "" || cfg.OutputDirectory != ""):
		// The project says how to build it: no need to recognise it.
		r.log.step(gantry.LevelInfo, "No framework detected: using the project's build settings")
	default:
		msg := gantry.ErrorMessage(err)
		if gantry.ErrorCode(err) == gantry.EINTERNAL {
			msg = err.Error()
		}
		return nil, &Error{Step: "detect", Message: msg, Err: err}
	}
	res.Detection = det
	res.SPA = det.SPA
	res.Config = cfg

	// Restore the caches, install and build.
	install := cfg.InstallCommand
	npm := install == "npm ci" || install == "npm install"
	r.skippable = npm && !hasInstallScripts(ws)
	if r.restoreCache() && npm {
		if r.skippable {
			// node_modules is the one an install of this very lockfile (or
			// package.json) made, with this Node: an install would change
			// nothing, and the project has no install scripts to run.
			r.log.step(gantry.LevelInfo, "Dependencies up to date: node_modules restored for the unchanged "+r.keyFile("node_modules")+", so the install is skipped")
			install = ""
		} else {
			// npm ci starts by removing node_modules: with the one the
			// cache restored, npm install has nothing to fetch, and takes
			// the registry's answers from npm's restored cache rather than
			// asking again; it runs the project's install scripts.
			install = "npm install --prefer-offline"
		}
	}
	if install != "" {
		if err := r.install(install); err != nil {
			return nil, err
		}
	}
	if cfg.BuildCommand != "" {
		r.log.step(gantry.LevelInfo, "Building: "+cfg.BuildCommand)
		env := append(append(buildEnv(det.Env), r.registryEnv()...), userEnv(job.Env, false)...)
		if _, err := r.sandboxed("build", cfg.BuildCommand, env); err != nil {
			return nil, err
		}
	}
	if cfg.StartCommand != "" {
		// A server app: the runtime starts it from the workspace, whose size
		// is the build's.
		r.holdCache(true) // saved (or held, DeferCacheSave) whole before the prune
		// Saved whole above, node_modules is then cut down to what runs.
		if err := r.prune(det, cfg); err != nil {
			return nil, err
		}
		r.dropTmpCaches()
		res.Size = workspaceSize(ws)
		r.log.step(gantry.LevelInfo, fmt.Sprintf("Server app ready to start: %s (%s)", cfg.StartCommand, formatSize(res.Size)))
		// The app's writable space: what the build left, plus its
		// allowance, within what the account has left of its budget.
		used, extra := vol.Usage().Bytes, job.AppDisk
		if job.StorageLeft > 0 {
			extra = min(extra, max(job.StorageLeft-used, MinAppDisk))
		}
		if err := vol.Resize(r.ctx, used+extra); err != nil {
			if !mounted(vol) {
				return nil, &Error{Step: "publish", Message: "Could not prepare the app's disk space", Err: err, Platform: true}
			}
			// Still usable, only larger: the app keeps the build's limit.
			r.log.step(gantry.LevelWarning, fmt.Sprintf("The app keeps the build's disk space (%s): it could not be resized", sandbox.FormatBytes(vol.Disk.Bytes)))
		}
		return res, nil
	}

	// Locate and publish the output.
	out, err := locateOutput(ws, cfg.OutputDirectory, det.Framework)
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(mustEval(ws), out)
	if rel != filepath.Clean(cfg.OutputDirectory) {
		r.log.step(gantry.LevelInfo, fmt.Sprintf("Output directory: %s (found for %s)", rel, FrameworkName(det.Framework)))
	}
	if err := r.bctx.Err(); err != nil {
		return nil, r.interrupted("publish")
	}
	if n := countSiteFiles(out, out == mustEval(ws), MaxSiteFiles); n > MaxSiteFiles {
		return nil, &Error{Step: "publish", Message: fmt.Sprintf("The output folder has more than %s files, the most a site may publish: "+
			"bundle the scripts (a bundler such as Vite makes a few files of thousands of modules) or leave generated files out of it",
			thousands(MaxSiteFiles))}
	}
	pub, err := r.publish(out, out == mustEval(ws))
	if err != nil {
		if e := r.interrupted("publish"); e != nil {
			return nil, e
		}
		return nil, &Error{Step: "publish", Message: "Could not publish the build output", Err: err, Platform: true}
	}
	res.SiteDir, res.Files, res.Size = pub.dir, pub.files, pub.size
	r.log.step(gantry.LevelInfo, fmt.Sprintf("Published %d %s (%s)", pub.files, plural(pub.files, "file", "files"), formatSize(pub.size)))
	if pub.compressed < pub.compressible {
		r.log.step(gantry.LevelInfo, fmt.Sprintf("Precompressed %s of %s text files (%s, the limit per deployment, largest first): the others are served uncompressed",
			thousands(int64(pub.compressed)), thousands(int64(pub.compressible)), sandbox.FormatBytes(compressBounds.total)))
	}
	r.holdCache(false)
	return res, nil
}

// install runs the install command, falling back from `npm ci` to
// `npm install` (with a warning) when the lockfile is out of sync.
func (r *run) install(command string) error {
	r.log.step(gantry.LevelInfo, "Installing dependencies: "+command)
	env := append(append(installEnv(), r.registryEnv()...), userEnv(r.job.Env, true)...)
	outOfSync, err := r.sandboxed("install", command, env)
	if err == nil {
		return nil
	}
	rest, isCI := strings.CutPrefix(command, "npm ci")
	if !isCI || (rest != "" && rest[0] != ' ') || !outOfSync {
		return err
	}
	fallback := "npm install" + rest
	r.log.step(gantry.LevelWarning, fmt.Sprintf("npm ci failed because package-lock.json is out of sync with package.json; falling back to %s", fallback))
	_, err = r.sandboxed("install", fallback, env)
	return err
}

// registryEnv is the cache folders' and the package registries'
// variables, given to install and build (the project's variables come
// after and may override them).
func (r *run) registryEnv() []string {
	env := r.cacheEnv()
	if r.job.NpmRegistry != "" {
		env = append(env, "npm_config_registry="+r.job.NpmRegistry)
	}
	if r.job.PipIndexURL != "" {
		env = append(env, "PIP_INDEX_URL="+r.job.PipIndexURL)
	}
	return env
}

// registryPorts returns the ports of the host's loopback on which the
// operator's package registries listen (GANTRY_NPM_REGISTRY=http://
// localhost:4873/ for verdaccio, GANTRY_PIP_INDEX_URL=http://localhost:3141/
// root/pypi/+simple/ for devpi): install and build may reach those ports,
// and nothing else of the host's loopback. None without an isolated
// network (the host's network reaches them anyway; none reaches nothing).
func (r *run) registryPorts() []int {
	if r.p.Sandbox.Network() != sandbox.NetworkIsolated {
		return nil
	}
	var ports []int
	for _, raw := range []string{r.job.NpmRegistry, r.job.PipIndexURL} {
		if p, ok := LoopbackPort(raw); ok && !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	return ports
}

// LoopbackPort returns the TCP port of rawURL when its host is the
// machine's loopback (localhost, a name under .localhost, 127.0.0.0/8 or
// ::1): the port written, else 80 for http and 443 for https.
func LoopbackPort(rawURL string) (int, bool) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return 0, false
	}
	h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		if !a.Unmap().IsLoopback() {
			return 0, false
		}
	} else if h != "localhost" && !strings.HasSuffix(h, ".localhost") {
		return 0, false
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		return n, err == nil && n > 0 && n < 65536
	}
	if u.Scheme == "https" {
		return 443, true
	}
	return 80, true
}

func (r *run) cacheSize() int64 {
	if r.job.CacheDir == "" {
		return 0
	}
	return CacheSize(r.job.CacheDir)
}

// lockfileOutOfSync reports whether a line of npm ci's output says the
// lockfile does not match package.json (or is missing).
func lockfileOutOfSync(line string) bool {
	l := strings.ToLower(line)
	return strings.Contains(l, "can only install packages when your package.json and package-lock.json") ||
		strings.Contains(l, "missing: ") && strings.Contains(l, "from lock file") ||
		strings.Contains(l, "invalid: lock file") ||
		strings.Contains(l, "can only install with an existing package-lock.json")
}

// sandboxed runs command with sh -c in the workspace and returns whether
// its output said the npm lockfile is out of sync, and an *Error that says
// why it failed.
func (r *run) sandboxed(step, command string, env []string) (outOfSync bool, err error) {
	defer r.phases.since(step, time.Now())
	l := r.p.Limits
	l.Timeout = r.job.Timeout
	l.Memory = r.job.Memory
	l.EndAtPids = true // a fork bomb ends at once, not at the timeout
	_, err = r.p.Sandbox.Run(r.bctx, sandbox.Command{
		Args:   []string{"sh", "-c", command},
		Dir:    r.vol.Workspace,
		Tmp:    r.vol.Tmp,
		UID:    r.job.UID,
		GID:    r.job.GID,
		Env:    env,
		Limits: l,
		// A registry the operator runs on the host's loopback (verdaccio,
		// devpi) is reached through its one port, as an allow-listed git
		// host is for clones.
		HostLoopbackPorts: r.registryPorts(),
		Output: func(stream sandbox.Stream, line string) {
			if step == "install" && !outOfSync && lockfileOutOfSync(line) {
				outOfSync = true
			}
			r.log.output(stream, line)
		},
	})
	if err == nil {
		// A command that ignored its failed writes (a shell loop, `|| true`)
		// ends well on a full disk: said now, and by the diagnosis of the
		// step that then fails.
		if full := r.vol.Full(); full != "" && r.full == "" {
			r.full = full
			r.log.step(gantry.LevelWarning, diskFullLine(full, r.job.Disk))
		}
		return outOfSync, nil
	}
	if e := r.interrupted(step); e != nil {
		return outOfSync, e
	}
	var (
		me *sandbox.MemoryError
		pe *sandbox.PidsError
		fe *sandbox.FileSizeError
		te *sandbox.TimeoutError
		ee *sandbox.ExitError
		se *sandbox.SetupError
	)
	name := shorten(command, 200)
	what := "Build"
	if step == "install" {
		what = "Install"
	}
	if errors.As(err, &se) {
		return outOfSync, &Error{Step: step, Platform: true, Err: err, Message: what +
			" could not start: the platform could not set up its sandbox (its network did not start); this is the platform's fault, not your project's, and deploying again is safe"}
	}
	switch r.vol.Full() {
	case "bytes":
		return outOfSync, &Error{Step: step, Message: fmt.Sprintf("The build wrote more than %s (the limit): make it write less, or leave large files out of the repository", sandbox.FormatBytes(r.job.Disk.Bytes)), Err: err}
	case "inodes":
		return outOfSync, &Error{Step: step, Message: fmt.Sprintf("The build created more than %s files (the limit): make it create fewer", thousands(r.job.Disk.Inodes)), Err: err}
	}
	switch {
	case errors.As(err, &te):
		return outOfSync, &Error{Step: step, Message: fmt.Sprintf("Build timed out after %s", r.job.Timeout), Err: err}
	case errors.As(err, &me):
		return outOfSync, &Error{Step: step, Message: "Build " + me.Error(), Err: err}
	case errors.As(err, &pe):
		return outOfSync, &Error{Step: step, Message: fmt.Sprintf("Build reached the limit of %s processes and threads, and was stopped: make it start fewer at once (for example make -j4)", thousands(pe.Limit)), Err: err}
	case errors.As(err, &fe):
		return outOfSync, &Error{Step: step, Message: "Build " + fe.Error(), Err: err}
	case errors.As(err, &ee) && ee.Code == 127:
		return outOfSync, &Error{Step: step, Message: fmt.Sprintf("%s exited with code 127 (command not found)", name), Err: err}
	case errors.As(err, &ee):
		return outOfSync, &Error{Step: step, Message: fmt.Sprintf("%s exited with code %d", name, ee.Code), Err: err}
	}
	return outOfSync, &Error{Step: step, Message: what + " failed: the build sandbox could not run the command", Err: err, Platform: true}
}

// diskFullPrefix starts the warning a full volume logs (diskFullLine).
const diskFullPrefix = "The build's disk is full: "

// diskFullLine says which limit of the build's volume was reached.
func diskFullLine(full string, d sandbox.Disk) string {
	if full == "inodes" {
		return diskFullPrefix + fmt.Sprintf("it created %s files and folders, the limit; creating more failed", thousands(d.Inodes))
	}
	return diskFullPrefix + fmt.Sprintf("it wrote %s, the limit; writing more failed", sandbox.FormatBytes(d.Bytes))
}

// interrupted returns the error for a step cut short by the caller's
// cancellation (ctx's error, wrapped) or by the build timeout (an *Error),
// or nil when neither happened.
func (r *run) interrupted(step string) error {
	if err := r.ctx.Err(); err != nil {
		return fmt.Errorf("build: %s: %w", step, err)
	}
	if errors.Is(r.bctx.Err(), context.DeadlineExceeded) {
		return &Error{Step: step, Message: fmt.Sprintf("Build timed out after %s", r.job.Timeout), Err: r.bctx.Err()}
	}
	return nil
}

// mergeConfig applies the precedence detection < project < deploy call,
// and makes the result either a server app (StartCommand set, no
// OutputDirectory) or a static site (no StartCommand): a start command set
// by the project or the call makes a server app whatever output folder is
// named; otherwise an output directory they set makes a static site even
// when detection proposed a start command.
func mergeConfig(d Detection, project, call gantry.BuildConfig) gantry.BuildConfig {
	cfg := gantry.BuildConfig{
		InstallCommand:  d.InstallCommand,
		BuildCommand:    d.BuildCommand,
		OutputDirectory: d.OutputDirectory,
		StartCommand:    d.StartCommand,
	}
	var setStart, setOutput bool
	for _, o := range []gantry.BuildConfig{project, call} {
		if s := strings.TrimSpace(o.InstallCommand); s != "" {
			cfg.InstallCommand = s
		}
		if s := strings.TrimSpace(o.BuildCommand); s != "" {
			cfg.BuildCommand = s
		}
		if s := strings.TrimSpace(o.OutputDirectory); s != "" {
			cfg.OutputDirectory, setOutput = s, true
		}
		if s := strings.TrimSpace(o.StartCommand); s != "" {
			cfg.StartCommand, setStart = s, true
		}
	}
	switch {
	case setStart, !setOutput && cfg.StartCommand != "":
		cfg.OutputDirectory = ""
	case setOutput:
		cfg.StartCommand = ""
	}
	return cfg
}

// installEnv is the base environment of the install: CI mode, quiet npm,
// and devDependencies always installed (the build needs them):
// npm_config_include=dev overrides an omit=dev from any .npmrc. (It is
// used rather than npm_config_production=false, which npm 11 answers with
// a deprecation warning in every build log.)
func installEnv() []string {
	return []string{
		"CI=true",
		"npm_config_include=dev",
		"npm_config_audit=false",
		"npm_config_fund=false",
		"npm_config_update_notifier=false",
	}
}

// buildEnv is the base environment of the build: CI mode, then the
// detector's variables (e.g. PUBLIC_URL=/), which may override it.
func buildEnv(det map[string]string) []string {
	env := []string{"CI=true", "npm_config_update_notifier=false"}
	for k, v := range det {
		env = append(env, k+"="+v)
	}
	return env
}

// userEnv turns the project's variables into KEY=VALUE entries; for the
// install NODE_ENV is left out, so that NODE_ENV=production cannot drop
// the devDependencies the build needs.
func userEnv(vars []gantry.EnvVar, install bool) []string {
	env := make([]string, 0, len(vars))
	for _, v := range vars {
		if v.Key == "" || strings.ContainsAny(v.Key, "=\x00") {
			continue
		}
		if install && v.Key == "NODE_ENV" {
			continue
		}
		env = append(env, v.Key+"="+v.Value)
	}
	return env
}

// frameworkNames are the display names of detection's framework slugs.
var frameworkNames = map[string]string{
	"react": "React", "vue": "Vue", "angular": "Angular", "nextjs": "Next.js", "nuxt": "Nuxt",
	"svelte": "Svelte", "sveltekit": "SvelteKit", "vite": "Vite", "astro": "Astro", "gatsby": "Gatsby",
	"preact": "Preact", "solid": "Solid", "static": "Static HTML", "vanilla": "Vanilla JavaScript",
	"html": "HTML", "nodejs": "Node.js", "express": "Express", "python": "Python", "flask": "Flask",
	"django": "Django", "docusaurus": "Docusaurus", "hugo": "Hugo", "jekyll": "Jekyll", "eleventy": "Eleventy",
}

// FrameworkName returns the display name of a framework slug ("react" →
// "React"), or the slug itself with a capital for unknown ones.
func FrameworkName(slug string) string {
	if n, ok := frameworkNames[slug]; ok {
		return n
	}
	if slug == "" {
		return "unknown"
	}
	return strings.ToUpper(slug[:1]) + slug[1:]
}

// repoName makes "owner/name" out of a clone URL, never keeping
// credentials.
func repoName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		return "the repository"
	}
	return strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
}

// commitLine describes the checked-out commit.
func commitLine(c *gantry.Commit) string {
	sha := c.SHA
	if len(sha) > 7 {
		sha = sha[:7]
	}
	msg, _, _ := strings.Cut(strings.TrimSpace(c.Message), "\n")
	line := "Commit " + sha
	if msg != "" {
		line += ": " + shorten(msg, 120)
	}
	if c.Author != "" {
		line += " (" + c.Author + ")"
	}
	return line
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// mounted reports whether v's workspace is there to run from.
func mounted(v *sandbox.Volume) bool {
	_, err := os.Stat(v.Workspace)
	return err == nil
}

// thousands writes n with commas between groups of three digits: 200,000.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// workspaceSize adds up the regular files under dir, without following
// symlinks and without the .git folder.
func workspaceSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable parts do not count
		}
		if d.IsDir() && d.Name() == ".git" && path != dir {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// formatSize writes bytes in the units the UI uses (KB = 1000 bytes).
func formatSize(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// mustEval resolves symlinks in path, or returns it cleaned.
func mustEval(path string) string {
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		return filepath.Clean(path)
	}
	return p
}
