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
	"os"
	"path/filepath"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
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
	// AppData records the apps' data folders and their sizes (appdata.go).
	AppData() gantry.AppDataStore
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

// Service runs Gantry's deployments. Build it with New, call Open to
// recover from a restart and start the workers, and Close to stop them.
type Service struct {
	*core
	// The capabilities' settings, which may be changed until Open.
	*BuildsConfig
	*ReleaseConfig
	*AppsConfig
	*TriggersConfig
	*StorageConfig
	cfg *Config

	builds   *builds   // the queue's workers and each build (builds.go)
	release  *release  // transitions and the edge's routes (release.go)
	apps     *apps     // server apps: start, stop, sleep, wake (app.go)
	triggers *triggers // pushes, hooks and the commit watcher (trigger.go)
	storage  *storage  // budgets, files, prune and build caches (storage.go)
	stop     context.CancelFunc
}

// New returns the deploy service c configures, not open yet: its
// capabilities, each with its own part of c and the core they share.
func New(c Config) *Service {
	cfg := &c
	core := &core{SharedConfig: &cfg.SharedConfig}
	s := &Service{core: core, cfg: cfg, BuildsConfig: &cfg.BuildsConfig, ReleaseConfig: &cfg.ReleaseConfig,
		AppsConfig: &cfg.AppsConfig, TriggersConfig: &cfg.TriggersConfig, StorageConfig: &cfg.StorageConfig}
	s.release = &release{core: core, ReleaseConfig: &cfg.ReleaseConfig}
	s.apps = &apps{core: core, AppsConfig: &cfg.AppsConfig}
	s.apps.place = &placer{a: s.apps}
	s.storage = &storage{core: core, StorageConfig: &cfg.StorageConfig, appDisk: &cfg.AppDisk}
	s.builds = &builds{core: core, BuildsConfig: &cfg.BuildsConfig}
	s.triggers = &triggers{core: core, TriggersConfig: &cfg.TriggersConfig}
	// Who calls whom: a build ends through release and keeps its files
	// through storage; release points the edge at apps; apps end and
	// measure through release and storage; triggers queue builds.
	s.release.apps = s.apps
	s.apps.release, s.apps.storage = s.release, s.storage
	s.storage.apps = s.apps
	s.builds.release, s.builds.apps, s.builds.storage = s.release, s.apps, s.storage
	s.triggers.builds, s.triggers.release, s.triggers.apps, s.triggers.storage = s.builds, s.release, s.apps, s.storage
	return s
}

// Config returns a copy of the configuration s was made with.
func (s *Service) Config() Config { return *s.cfg }

// Trigger queues the deployment a push, hook or pull request asks for
// (triggers.Trigger).
func (s *Service) Trigger(ctx context.Context, t gantry.DeployTrigger) (*gantry.Deployment, error) {
	return s.triggers.Trigger(ctx, t)
}

// Wake starts the sleeping app of deployment id (apps.Wake).
func (s *Service) Wake(ctx context.Context, id string) error { return s.apps.Wake(ctx, id) }

// WakeHint starts waking deployment id's app ahead of its request
// (apps.WakeHint).
func (s *Service) WakeHint(ctx context.Context, id string) (bool, error) {
	return s.apps.WakeHint(ctx, id)
}

// CacheDir is the folder of projectID's build caches (storage.CacheDir).
func (s *Service) CacheDir(projectID string) string { return s.storage.CacheDir(projectID) }

// DefaultMaxPending is MaxPending's default.
const DefaultMaxPending = 3

// Topic is the events topic of a deployment's log entries and of its
// Deleted event.
func Topic(deploymentID string) string { return "logs:" + deploymentID }

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
	s.builds.wake = make(chan struct{}, 1)
	s.builds.running = make(map[string]*runningBuild)
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
		if s.release.fail(ctx, d, failure{from: inProgress,
			reason: "Build interrupted: the platform restarted while this deployment was in progress. Deploy again to retry."}) {
			s.storage.dropFiles(ctx, d)
		}
	}
	routes, err := s.Store.ListRoutes(ctx)
	if err != nil {
		return fmt.Errorf("deploy: restore: %w", err)
	}
	if s.apps.place.on() {
		s.apps.place.beat(ctx) // this node's heartbeat row, before others forward here
	}
	live := 0
	for _, r := range routes {
		d := r.Active
		if d == nil {
			continue
		}
		sl, sleeps := s.apps.sleeper()
		switch {
		case d.Status == gantry.DeploymentLive && IsApp(d) && s.apps.place.elsewhere(ctx, d.ID):
			live++
			s.release.route(r) // forwarded to its home node
		case d.Status == gantry.DeploymentLive && IsApp(d) && d.Sleeping && sleeps:
			live++
			s.release.restoreAsleep(sl, r) // asleep until its next request
		case d.Status == gantry.DeploymentLive && IsApp(d):
			live++
			s.apps.appWG.Add(1)
			go s.apps.restoreApp(d, r)
		case d.Status == gantry.DeploymentLive:
			live++
			s.release.route(r)
		case d.Status == gantry.DeploymentStopped:
			s.release.route(r) // the "stopped" page
		}
	}
	if err := s.storage.recoverStorage(ctx); err != nil {
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
		go s.builds.worker(wctx)
	}
	if ws, ok := s.Store.(WatchStore); ok && s.WatchInterval > 0 && s.Branches != nil {
		s.wg.Add(1)
		go s.triggers.watch(wctx, ws)
	}
	if s.Apps != nil {
		s.wg.Add(2)
		go s.storage.measureLoop(wctx)
		go snapshots{s.storage}.loop(wctx)
	}
	if _, ok := s.apps.sleeper(); ok {
		s.wg.Add(1)
		go s.apps.sleepLoop(wctx)
	}
	if s.Lease > 0 {
		s.wg.Add(1)
		go s.builds.leases().reapLoop(wctx)
	}
	if s.apps.place.on() {
		s.wg.Add(1)
		go s.apps.place.loop(wctx)
	}
	if st, ok := s.Store.(SlotStore); ok && s.SandboxUIDs.Count > 0 {
		s.wg.Add(1)
		go s.builds.slotLoop(wctx, st)
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
	s.storage.caches().wait()
	s.apps.closeApps()
	return nil
}

// lost reports whether err is a transition that lost its race: the
// deployment is in another status now (*gantry.TransitionError) or gone.
func lost(err error) bool {
	var te *gantry.TransitionError
	return errors.As(err, &te) || gantry.ErrorCode(err) == gantry.ENOTFOUND
}

// routeKey names the route r is a version of: its project's subdomain, or
// one preview label of the project (versioned on its own).
func routeKey(r *gantry.Route) string {
	if r.Preview {
		return r.ProjectID + " " + r.Subdomain
	}
	return r.ProjectID
}

// dataDirModes are the modes of the data folder's sub-folders: sites/ is
// the platform's alone (the edge serves it from this process), builds/
// lets other users through to the workspace they own (the sandbox user
// opens its own builds/<id>) but not list it.
var dataDirModes = map[string]os.FileMode{
	"sites":   0o700,
	"builds":  0o711,
	"caches":  0o700, // the platform's only: restores copy into the volumes
	"blobs":   0o700, // the platform's only: deployments' folders link to them
	"appdata": 0o711, // the apps' data folders: each volume is the sandbox user's own
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
