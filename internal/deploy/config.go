package deploy

import (
	"context"
	"log/slog"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/cachesync"
	"github.com/gantryhq/gantry/internal/events"
	"github.com/gantryhq/gantry/internal/runtime"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/secret"
	"github.com/gantryhq/gantry/internal/sitecache"
)

// Config configures the deploy service (New): what its capabilities share
// and each capability's own settings. cmd/gantry and the tests
// (deploytest) build the service from one.
type Config struct {
	SharedConfig
	BuildsConfig
	ReleaseConfig
	AppsConfig
	TriggersConfig
	StorageConfig
}

// SharedConfig is what every capability of the service uses: the store,
// the log streams, the edge's routes, notifications, secrets, the sandbox
// users, the data folder, the clock and the logger.
type SharedConfig struct {
	Store Store
	Hub   *events.Hub
	Sites Sites
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
	// SandboxUIDs is the range of uids accounts' builds and apps run
	// under, one uid per account (store.SandboxSlot). A zero range runs
	// every account as the sandbox's default uid (tests).
	SandboxUIDs sandbox.UIDRange
	// DataDir holds sites/<deployment id>/, builds/<deployment id>/,
	// caches/<project id>/ and blobs/<user id>/ (internal/blobs).
	DataDir string
	// LiveURL writes the public URL of a subdomain.
	LiveURL func(sub string) string
	// NodeID names this replica on the builds it claims (GANTRY_NODE_ID).
	NodeID string
	Logger *slog.Logger
	Now    func() time.Time
	// Logged, when set, hears of every log entry stored and published
	// here (deployment, seq): cmd/gantry nudges other replicas' followers
	// with it (feed.Coalescer).
	Logged func(deploymentID string, seq int64)
}

// BuildsConfig configures the builds capability: the queue's workers and
// what one build may use.
type BuildsConfig struct {
	Builder Builder
	// Concurrency is how many builds run at once (default 1).
	Concurrency int
	// NoBuilds starts no build workers: this replica builds nothing
	// (GANTRY_ROLES without builder) and other replicas claim its queue.
	NoBuilds bool
	// Lease is how long this replica holds a build it claimed without
	// renewing it (GANTRY_LEASE): a build whose replica stopped renewing
	// is requeued by any replica, once (BuildRetries, default 1), then
	// failed; a builder that cannot renew stops its build. Zero: builds
	// are held until they end, and never taken over (tests).
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
	// NpmRegistry and PipIndexURL are the package registries builds use
	// (GANTRY_NPM_REGISTRY, GANTRY_PIP_INDEX_URL); empty: the tools' own.
	NpmRegistry string
	PipIndexURL string
	// Poll is how often idle workers look at the queue even when nobody
	// woke them (default 2 s): other replicas may have queued work.
	Poll time.Duration
}

// ReleaseConfig configures the release capability: the transitions that
// end builds and point the edge at deployments.
type ReleaseConfig struct {
	// Finished, when set, is called after a build ended live, failed or
	// stopped (cancelled, superseded), with the deployment as it ended: the
	// GitHub side sets commit statuses from it. It runs on the goroutine
	// that ended the build, so it should return quickly.
	Finished func(ctx context.Context, d *gantry.Deployment)
}

// AppsConfig configures the apps capability: running server apps, their
// sleep and wake.
type AppsConfig struct {
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
	// Placements, when set (a replica: GANTRY_PEER_ADDR), gives each
	// server app one home node among the replicas sharing the database
	// (placement.go): this node heartbeats every third of PlacementLease
	// (GANTRY_LEASE) with its peer address PeerAddr, starts only the apps
	// it is the home of, routes the others to their home (Sites must be a
	// Forwarder) and takes over the apps of a node silent for 3 leases
	// when it has their workspace. Nil: every app runs here (one process).
	Placements     gantry.PlacementStore
	PeerAddr       string
	PlacementLease time.Duration
}

// TriggersConfig configures the triggers capability: deploys that pushes,
// hooks and the commit watcher ask for.
type TriggersConfig struct {
	// Heads looks a branch's head commit up (Trigger without a commit);
	// *githost.Service is the real one. Nil: Trigger needs a commit.
	Heads Heads
	// WatchInterval, with Branches, runs the commit watcher (watch): how
	// often a watched branch is polled at first. Zero: no watcher.
	WatchInterval time.Duration
	// WatchTimeout bounds one watcher check's ls-remote; zero means
	// DefaultWatchTimeout.
	WatchTimeout time.Duration
	Branches     Branches
}

// StorageConfig configures the storage capability: deployments' files
// and the build caches' bounds.
type StorageConfig struct {
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
	// Caches, when set (GANTRY_OBJECT_STORE), keeps projects' build caches
	// in the object store too: pulled before a build when another replica
	// saved newer ones, pushed after each save, dropped with the project's
	// (cacheobjects.go).
	Caches *cachesync.Sync
	// BuildCacheAccount bounds one account's build caches (default
	// DefaultCacheAccount) and BuildCacheTotal every account's together
	// (default a tenth of DataDir's disk); see cachekeeper.go.
	BuildCacheAccount int64
	BuildCacheTotal   int64
	// SnapshotEvery is how often each app data folder is snapshotted
	// (default DefaultSnapshotEvery, a day) and SnapshotKeep how long a
	// snapshot is kept (default DefaultSnapshotKeep, 7 days); see
	// snapshots.go.
	SnapshotEvery time.Duration
	SnapshotKeep  time.Duration
}
