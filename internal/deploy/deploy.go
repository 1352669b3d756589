// Package deploy orchestrates deployments: the durable build queue and its
// workers, the status machine of ARCHITECTURE.md ("Deployment lifecycle"),
// the switch of a project's subdomain to its newest live deployment, stop,
// restart (an instant rollback) and delete, and the log entries every step
// writes and streams. It owns no SQL: state lives behind gantry's store
// interfaces, builds run in internal/build, server apps under
// internal/runtime (app.go), and sites and apps are served by the edge.
package deploy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/events"
	"github.com/gantryhq/gantry/internal/runtime"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/secret"
	"github.com/gantryhq/gantry/internal/sitecache"
)

// Store is what the service needs of the database.
type Store interface {
	gantry.ProjectStore
	gantry.DeploymentStore
	FindUserByID(ctx context.Context, id string) (*gantry.User, error)
	ProjectEnv(ctx context.Context, projectID string) ([]gantry.EnvVar, error)
	TrimRuntimeLogs(ctx context.Context, deploymentID string, keep int) (int, error)
	SandboxSlot(ctx context.Context, userID string) (int64, error)
	// SetSleeping records whether a live server app sleeps.
	SetSleeping(ctx context.Context, deploymentID string, sleeping bool) error
	// Build caches (caches.go) and diagnoses.
	SetBuildCache(ctx context.Context, projectID string, bytes int64, usedAt time.Time) error
	TouchBuildCache(ctx context.Context, projectID string, usedAt time.Time) error
	DeleteBuildCache(ctx context.Context, projectID string) error
	BuildCaches(ctx context.Context, userID string) ([]gantry.BuildCache, error)
	BuildCacheRecords() gantry.BuildCacheRecords
	SetDeploymentDiagnosis(ctx context.Context, id string, d *gantry.Diagnosis) error
	// Blobs keeps which blobs each deployment's files link to (blobs.go).
	Blobs() gantry.BlobRecords
	// BuildLeases renews and takes over the builds replicas hold
	// (leases.go).
	BuildLeases() gantry.BuildLeaseStore
}

// Heads looks branch heads up; *githost.Service is the real one.
type Heads interface {
	// LatestCommit returns the head commit of branch of repo (token: the
	// owner's GitHub token, or "").
	LatestCommit(ctx context.Context, repo gantry.Repository, branch, token string) (*gantry.Commit, error)
}

// Builder builds one deployment; *build.Pipeline is the real one.
type Builder interface {
	Run(ctx context.Context, job build.Job, log build.Logger) (*build.Result, error)
}

// Sites is the edge's routing table, keyed by subdomain.
type Sites interface {
	// Serve routes sub to the published folder dir of deploymentID.
	Serve(sub, deploymentID, dir string, spa bool)
	// Proxy routes sub to the server app of deploymentID answering on addr.
	Proxy(sub, deploymentID, addr string)
	// Stopped makes sub answer the "app is stopped" page.
	Stopped(sub, deploymentID string)
	// Remove forgets sub: it answers the "no app here" page.
	Remove(sub string)
}

// Service runs Gantry's deployments. Set the fields, call Open to recover
// from a restart and start the workers, and Close to stop them.
type Service struct {
	Store   Store
	Builder Builder
	Hub     *events.Hub
	Sites   Sites
	// Notify tells owners about their deployments: live, failed, an app
	// stopped after crashing. Nil sends nothing.
	Notify gantry.Notifier
	// Decrypt opens a user's sealed GitHub access token (secret.Box.Open
	// in cmd/gantry). Nil means stored tokens are never used: private
	// repositories then cannot be built.
	Decrypt func(sealed string) (string, error)
	// Secrets opens the values of secret environment variables for builds
	// and apps (the project service seals them); nil fails a build of a
	// project that has secrets.
	Secrets *secret.Box
	// Apps runs server apps (deployments with a start command) from their
	// build workspaces. Nil fails their deployments with a message saying
	// this Gantry serves static sites only.
	Apps *runtime.Supervisor
	// DrainTimeout bounds how long an app replaced by a newer deployment
	// keeps serving the requests it already has (default 10 s).
	DrainTimeout time.Duration
	// RuntimeLogLimit is how many runtime log entries (app output) a
	// deployment keeps, the oldest dropped first (default 2000).
	RuntimeLogLimit int
	// AppIdle puts a server app to sleep once it has served no request for
	// this long (GANTRY_APP_IDLE): stopped, its deployment still live and
	// marked sleeping, woken by its next request (Wake). Zero: apps never
	// sleep. Needs Sites to be a Sleeper.
	AppIdle time.Duration
	// PreviewIdle is AppIdle for the server apps of previews
	// (GANTRY_PREVIEW_IDLE), whether their project is always on or not.
	// Zero: previews never sleep.
	PreviewIdle time.Duration
	// WakeConcurrency bounds how many sleeping apps start at once on the
	// platform, and AccountWakes how many of one account's (defaults
	// DefaultWakeConcurrency, DefaultAccountWakes): a wake waits for a
	// slot, so waking every sleeping app at once does not make their
	// starts time out.
	WakeConcurrency int
	AccountWakes    int
	// MeasureEvery is how often the volumes of running server apps are
	// measured (statfs) and their size recorded against their owner's
	// storage (default DefaultMeasureEvery); each is measured as it stops
	// too.
	MeasureEvery time.Duration
	// SandboxUIDs is the range of uids accounts' builds and apps run
	// under, one uid per account (store.SandboxSlot). A zero range runs
	// every account as the sandbox's default uid (tests).
	SandboxUIDs sandbox.UIDRange
	// DataDir holds sites/<deployment id>/, builds/<deployment id>/,
	// caches/<project id>/ and blobs/<user id>/ (internal/blobs).
	DataDir string
	// FlatFiles publishes plain copies of each deployment's files, the
	// layout before blobs, instead of links to the account's blobs (for
	// comparisons: bench/storagebench).
	FlatFiles bool
	// Remote, when set (GANTRY_OBJECT_STORE), keeps published sites in the
	// object store: uploaded before their go-live, deleted with their
	// deployment (objects.go). SiteCache is this replica's copy of the
	// sites it serves but did not build. Nil: local folders only.
	Remote    *sitecache.Remote
	SiteCache *sitecache.Cache
	// NpmRegistry and PipIndexURL are the package registries builds use
	// (GANTRY_NPM_REGISTRY, GANTRY_PIP_INDEX_URL); empty: the tools' own.
	NpmRegistry string
	PipIndexURL string
	// LiveURL writes the public URL of a subdomain.
	LiveURL func(sub string) string
	// Concurrency is how many builds run at once (default 1).
	Concurrency int
	// NoBuilds starts no build workers: this replica builds nothing
	// (GANTRY_ROLES without builder) and other replicas claim its queue.
	NoBuilds bool
	// NodeID names this replica on the builds it claims (GANTRY_NODE_ID).
	// Lease is how long it holds one without renewing it (GANTRY_LEASE):
	// a build whose replica stopped renewing is requeued by any replica,
	// once (BuildRetries, default 1), then failed; a builder that cannot
	// renew stops its build. Zero: builds are held until they end, and
	// never taken over (tests).
	NodeID       string
	Lease        time.Duration
	BuildRetries int
	// MaxPending is how many builds one user may have waiting (pending) at
	// once (default DefaultMaxPending); one more deploy is ETOOMANY.
	// Workers serve users in turns (store.ClaimDeployment).
	MaxPending int
	// BuildTimeout bounds one build (default build.DefaultTimeout).
	BuildTimeout time.Duration
	// BuildDisk bounds what one build may write (zero fields:
	// sandbox.DefaultDisk), and AppDisk is a server app's writable space
	// beyond its build (default build.DefaultAppDisk). The kernel enforces
	// both: each deployment's workspace is a sandbox.Volume.
	BuildDisk sandbox.Disk
	AppDisk   int64
	// BuildCacheAccount bounds one account's build caches (default
	// DefaultCacheAccount) and BuildCacheTotal every account's together
	// (default a tenth of DataDir's disk); see cachekeeper.go.
	BuildCacheAccount int64
	BuildCacheTotal   int64
	// Poll is how often idle workers look at the queue even when nobody
	// woke them (default 2 s): other replicas may have queued work.
	Poll time.Duration
	// Heads looks a branch's head commit up (Trigger without a commit);
	// *githost.Service is the real one. Nil: Trigger needs a commit.
	Heads Heads
	// Finished, when set, is called after a build ended live, failed or
	// stopped (cancelled, superseded), with the deployment as it ended: the
	// GitHub side sets commit statuses from it. It runs on the goroutine
	// that ended the build, so it should return quickly.
	Finished func(ctx context.Context, d *gantry.Deployment)
	// WatchInterval, with Branches, runs the commit watcher (watch): how
	// often a watched branch is polled at first. Zero: no watcher.
	WatchInterval time.Duration
	// WatchTimeout bounds one watcher check's ls-remote; zero means
	// DefaultWatchTimeout.
	WatchTimeout time.Duration
	Branches     Branches
	Logger       *slog.Logger
	Now          func() time.Time
	// Logged, when set, hears of every log entry stored and published
	// here (deployment, seq): cmd/gantry nudges other replicas' followers
	// with it (feed.Coalescer).
	Logged func(deploymentID string, seq int64)

	wake    chan struct{}
	stop    context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	running map[string]*runningBuild
	apps    map[string]*appRun // server apps running, by deployment id
	appWG   sync.WaitGroup     // apps being restored or drained in the background
	// appLocks serialise each app's sleep and wake (sleep.go).
	appLocks map[string]*sync.Mutex
	hinted   map[string]bool // deployments a wake hint is waking
	// wakeGate holds the failed wakes in a row and the slots of wakes
	// under way (wake.go), made once (wakeOnce).
	wakeGate *wakeGate
	wakeOnce sync.Once
	// routeMu guards routed, the newest route version applied to Sites per
	// project (route): the store orders a project's transitions, and this
	// keeps their effects on the edge in that order.
	routeMu sync.Mutex
	routed  map[string]int64
	// cacheKeep keeps the build caches (caches()).
	cacheOnce sync.Once
	cacheKeep *cacheKeeper
}

type runningBuild struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// errStopped is the cause of a build cancelled by Stop or Delete.
var errStopped = errors.New("stopped by user")

// DefaultMaxPending is MaxPending's default.
const DefaultMaxPending = 3

func (s *Service) maxPending() int {
	if s.MaxPending > 0 {
		return s.MaxPending
	}
	return DefaultMaxPending
}

// Topic is the events topic of a deployment's log entries and of its
// Deleted event.
func Topic(deploymentID string) string { return "logs:" + deploymentID }

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// sandboxUID returns the uid (and gid: the same number) that the
// account's builds and apps run under; 0, the sandbox's default, without a
// configured range.
func (s *Service) sandboxUID(ctx context.Context, userID string) (uint32, error) {
	if s.SandboxUIDs.Count == 0 {
		return 0, nil
	}
	slot, err := s.Store.SandboxSlot(ctx, userID)
	if err != nil {
		return 0, err
	}
	return s.SandboxUIDs.UID(slot)
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// SiteDir and WorkDir are where a deployment's published files and build
// workspace live.
func (s *Service) SiteDir(id string) string { return filepath.Join(s.DataDir, "sites", id) }
func (s *Service) WorkDir(id string) string { return filepath.Join(s.DataDir, "builds", id) }

// Open recovers from a crash or restart — builds that were cut off end
// failed with a log line saying so (and lose their files), every project's
// active deployment is routed again (a live site served, a live server app
// started again without rebuilding, in the background — unless it was
// asleep, when it stays asleep until its next request; a stopped one
// answers its 503 page), deployments built before sizes were recorded are
// measured, and old stopped deployments are pruned (see prune) — and
// starts the build workers and, with AppIdle, the sleeper that puts idle
// apps to sleep (sleep.go). Queued deployments then run in order. It first makes the data
// folder's sites and builds folders (dataDirModes).
func (s *Service) Open(ctx context.Context) error {
	s.wake = make(chan struct{}, 1)
	s.running = make(map[string]*runningBuild)
	for name, mode := range dataDirModes {
		if err := privateDir(filepath.Join(s.DataDir, name), mode); err != nil {
			return fmt.Errorf("deploy: %w", err)
		}
	}
	// This replica's own builds were cut off when it stopped; other
	// replicas' builds are theirs while they renew them (the reaper takes
	// over those that lapse).
	cut, err := s.Store.BuildLeases().Held(ctx, s.NodeID)
	if err != nil {
		return fmt.Errorf("deploy: recover: %w", err)
	}
	for _, d := range cut {
		if s.fail(ctx, d, failure{from: inProgress,
			reason: "Build interrupted: the platform restarted while this deployment was in progress. Deploy again to retry."}) {
			s.storage().dropFiles(ctx, d)
		}
	}
	routes, err := s.Store.ListRoutes(ctx)
	if err != nil {
		return fmt.Errorf("deploy: restore: %w", err)
	}
	live := 0
	for _, r := range routes {
		d := r.Active
		if d == nil {
			continue
		}
		sl, sleeps := s.sleeper()
		switch {
		case d.Status == gantry.DeploymentLive && IsApp(d) && d.Sleeping && sleeps:
			live++
			s.restoreAsleep(sl, r) // asleep until its next request
		case d.Status == gantry.DeploymentLive && IsApp(d):
			live++
			s.appWG.Add(1)
			go s.restoreApp(d, r)
		case d.Status == gantry.DeploymentLive:
			live++
			s.route(r)
		case d.Status == gantry.DeploymentStopped:
			s.route(r) // the "stopped" page
		}
	}
	if err := s.storage().recoverStorage(ctx); err != nil {
		return fmt.Errorf("deploy: storage: %w", err)
	}
	n := s.Concurrency
	if n < 1 {
		n = 1
	}
	if s.NoBuilds {
		n = 0
	}
	wctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	for i := 0; i < n; i++ {
		s.wg.Add(1)
		go s.worker(wctx)
	}
	if ws, ok := s.Store.(WatchStore); ok && s.WatchInterval > 0 && s.Branches != nil {
		s.wg.Add(1)
		go s.watch(wctx, ws)
	}
	if s.Apps != nil {
		s.wg.Add(1)
		go s.storage().measureLoop(wctx)
	}
	if _, ok := s.sleeper(); ok {
		s.wg.Add(1)
		go s.sleepLoop(wctx)
	}
	if s.Lease > 0 {
		s.wg.Add(1)
		go s.leases().reapLoop(wctx)
	}
	if st, ok := s.Store.(SlotStore); ok && s.SandboxUIDs.Count > 0 {
		s.wg.Add(1)
		go s.slotLoop(wctx, st)
	}
	s.logger().Info("deployments restored", "live", live, "interrupted", len(cut), "workers", n)
	return nil
}

// Close stops the workers, cancelling running builds (they are failed as
// interrupted at the next Open), then stops the server apps, which stay
// live: the next Open starts them again.
func (s *Service) Close() error {
	if s.stop != nil {
		s.stop()
	}
	s.wg.Wait()
	s.caches().wait()
	s.closeApps()
	return nil
}

func (s *Service) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Service) worker(ctx context.Context) {
	defer s.wg.Done()
	poll := s.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		for ctx.Err() == nil {
			d, err := s.Store.ClaimDeployment(ctx, gantry.BuildClaim{Owner: s.NodeID, Lease: s.Lease})
			if gantry.ErrorCode(err) == gantry.ENOTFOUND {
				break
			} else if err != nil {
				if ctx.Err() == nil {
					s.logger().Error("claim deployment", "err", err)
				}
				break
			}
			release := s.leases().hold(ctx, d)
			s.build(ctx, d)
			release()
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-t.C:
		}
	}
}

// log stores one entry of a deployment and publishes it to its stream.
func (s *Service) log(ctx context.Context, id, level, typ, msg string) {
	s.logSeq(ctx, id, level, typ, msg)
}

// logSeq is log, returning the entry's seq (0 when it was not stored).
func (s *Service) logSeq(ctx context.Context, id, level, typ, msg string) int64 {
	e := gantry.LogEntry{Timestamp: s.now(), Level: level, Type: typ, Message: msg}
	if err := s.Store.AppendLog(context.WithoutCancel(ctx), id, &e); err != nil {
		if gantry.ErrorCode(err) != gantry.ENOTFOUND {
			s.logger().Error("append log", "deployment", id, "err", err)
		}
		return 0
	}
	s.publish(id, e)
	return e.Seq
}

// publish sends a stored entry to the deployment's log stream, and marks
// it for other replicas (Logged).
func (s *Service) publish(id string, e gantry.LogEntry) {
	if s.Hub != nil {
		s.Hub.Publish(Topic(id), e)
	}
	if s.Logged != nil {
		s.Logged(id, e.Seq)
	}
}

// line is a deployment log entry written now, for a transition to store
// in its own transaction (gantry.Change.Line).
func (s *Service) line(level, msg string) *gantry.LogEntry {
	return &gantry.LogEntry{Timestamp: s.now(), Level: level, Type: gantry.LogDeployment, Message: msg}
}

// notify hands n to Notify, when one is set.
func (s *Service) notify(ctx context.Context, n *gantry.Notification) {
	if s.Notify != nil {
		s.Notify.Notify(ctx, n)
	}
}

// inProgress are the statuses of a deployment whose build runs.
var inProgress = []string{gantry.DeploymentBuilding, gantry.DeploymentDeploying}

// failure is how a deployment ends failed.
type failure struct {
	// reason is its error, and its last log line unless logged.
	reason string
	// from are the statuses it may fail from: a build fails from building
	// or deploying, a running app from live.
	from []string
	// logged says the line is written elsewhere: the pipeline logged it
	// already, or a crashed app's log queue writes it after its output.
	logged bool
	// notice is what the owner is told (default: DeploymentFailedNotification).
	notice *gantry.Notification
}

// fail ends d failed — the one way a deployment fails: one store
// transition from f.from (the reason as its last log line in the same
// transaction, unless logged; the project's status derived), then the
// subdomain follows (a failed active deployment answers the "stopped"
// page) and the owner is told. d becomes what was committed. It reports
// whether d failed: not when d was no longer in f.from or is gone (a stop,
// a delete or a go-live came first and recorded the outcome).
func (s *Service) fail(ctx context.Context, d *gantry.Deployment, f failure) bool {
	ctx = context.WithoutCancel(ctx)
	c := gantry.Change{At: s.now(), Attempt: d.Attempt}
	if !f.logged {
		c.Line = s.line(gantry.LevelError, f.reason)
	}
	t, err := s.Store.FailDeployment(ctx, d.ID, f.from, f.reason, c)
	if err != nil {
		if !lost(err) {
			s.logger().Error("fail deployment", "deployment", d.ID, "err", err)
		}
		return false
	}
	if c.Line != nil {
		s.publish(d.ID, *c.Line)
	}
	if t.Deployment != nil {
		*d = *t.Deployment
	}
	s.routeAll(t)
	if slices.Contains(f.from, gantry.DeploymentBuilding) {
		s.finished(ctx, d)
	}
	n := f.notice
	if n == nil {
		n = gantry.DeploymentFailedNotification(d, f.reason)
	}
	s.notify(ctx, n)
	return true
}

// finished hands a build's end to Finished, when one is set.
func (s *Service) finished(ctx context.Context, d *gantry.Deployment) {
	if s.Finished != nil && d != nil {
		s.Finished(context.WithoutCancel(ctx), d)
	}
}

// lost reports whether err is a transition that lost its race: the
// deployment is in another status now (*gantry.TransitionError) or gone.
func lost(err error) bool {
	var te *gantry.TransitionError
	return errors.As(err, &te) || gantry.ErrorCode(err) == gantry.ENOTFOUND
}

// route points r's subdomain at what the store committed, unless a newer
// route of the project was applied already: two transitions of a project
// are ordered by the store, and their effects here may run in the other
// order. No active deployment: the "no app here" page; a live one: its
// published files, or its server app registered in this process; a
// stopped or failed one: the "stopped" page. A nil r changes nothing.
func (s *Service) route(r *gantry.Route) {
	if r == nil {
		return
	}
	s.routeMu.Lock()
	defer s.routeMu.Unlock()
	key := routeKey(r)
	if v, ok := s.routed[key]; ok && r.Version <= v {
		return
	}
	d := r.Active
	switch {
	case d == nil:
		s.Sites.Remove(r.Subdomain)
	case d.Status == gantry.DeploymentLive && IsApp(d):
		run := s.appRun(d.ID)
		if run == nil {
			// Its app was ended since (a newer route follows) or runs on
			// another replica: nothing to point at here.
			return
		}
		s.Sites.Proxy(r.Subdomain, d.ID, run.app.Addr())
	case d.Status == gantry.DeploymentLive:
		s.Sites.Serve(r.Subdomain, d.ID, s.SiteDir(d.ID), d.BuildInfo.SPA)
	default:
		s.Sites.Stopped(r.Subdomain, d.ID)
	}
	if s.routed == nil {
		s.routed = make(map[string]int64)
	}
	s.routed[key] = r.Version
}

// routeKey names the route r is a version of: its project's subdomain, or
// one preview label of the project (versioned on its own).
func routeKey(r *gantry.Route) string {
	if r.Preview {
		return r.ProjectID + " " + r.Subdomain
	}
	return r.ProjectID
}

// routeAll applies t's routes: the project's, then its preview labels'.
func (s *Service) routeAll(t *gantry.Transition) {
	s.route(t.Route)
	for _, r := range t.Previews {
		s.route(r)
	}
}

// unroute removes a deleted project's subdomain from Sites for good: no
// route of the project applied later (its transitions' effects running
// late) brings it back.
func (s *Service) unroute(p *gantry.Project) {
	s.routeMu.Lock()
	defer s.routeMu.Unlock()
	s.Sites.Remove(p.Subdomain)
	if s.routed == nil {
		s.routed = make(map[string]int64)
	}
	s.routed[p.ID] = math.MaxInt64
}

// unrouteLabel removes a deleted project's preview label from Sites for
// good, as unroute does its subdomain.
func (s *Service) unrouteLabel(projectID, label string) {
	s.routeMu.Lock()
	defer s.routeMu.Unlock()
	s.Sites.Remove(label)
	if s.routed == nil {
		s.routed = make(map[string]int64)
	}
	s.routed[routeKey(&gantry.Route{ProjectID: projectID, Subdomain: label, Preview: true})] = math.MaxInt64
}

// dataDirModes are the modes of the data folder's sub-folders: sites/ is
// the platform's alone (the edge serves it from this process), builds/
// lets other users through to the workspace they own (the sandbox user
// opens its own builds/<id>) but not list it.
var dataDirModes = map[string]os.FileMode{
	"sites":  0o700,
	"builds": 0o711,
	"caches": 0o700, // the platform's only: restores copy into the volumes
	"blobs":  0o700, // the platform's only: deployments' folders link to them
}

// privateDir creates dir with mode, or gives an existing one exactly that
// mode (older versions made both 0755).
func privateDir(dir string, mode os.FileMode) error {
	if err := os.MkdirAll(dir, mode); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm() != mode {
		return os.Chmod(dir, mode)
	}
	return nil
}

// PrepareDataDir creates dir when missing and makes it searchable (not
// listable) by other users, then checks that every folder above it is
// searchable too: the sandbox user must reach the build workspaces under
// it. The database and secret key inside stay private (mode 0600). The
// error says what to change.
func PrepareDataDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o711); err != nil {
		return err
	}
	if fi, err := os.Stat(abs); err != nil {
		return err
	} else if fi.Mode().Perm()&0o001 == 0 {
		if err := os.Chmod(abs, fi.Mode().Perm()|0o011); err != nil {
			return err
		}
	}
	for p := abs; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("the sandbox user cannot reach %s because %s is not searchable by other users: "+
				"run `chmod o+x %s` or choose a GANTRY_DATA_DIR outside it", abs, p, p)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}
