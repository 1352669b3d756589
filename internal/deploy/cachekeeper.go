package deploy

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// The build caches' own bounds. Caches are the platform's, not the
// student's: they are not counted in the account's storage budget (a Free
// plan's 1 GiB filled by its app still gets its caches back). They are
// bounded instead per account (Service.BuildCacheAccount, default
// DefaultCacheAccount) and platform-wide (Service.BuildCacheTotal,
// default a tenth of the data folder's disk), each by evicting the least
// recently used project's caches (all its targets) first. An eviction is
// recorded (gantry.BuildCacheRecords), so the project's next build says
// when its caches were removed rather than that it has none yet. Caches
// a build is restoring or saving are never evicted under it: each
// project's caches have a lock (use), held by a restore, a save and an
// eviction, which skips a project whose lock is taken.

// DefaultCacheAccount is Service.BuildCacheAccount's default.
const DefaultCacheAccount = 2 * gantry.GiB

// cacheKeeper keeps the build caches: it points a build at them, records
// what a save left, evicts over the bounds and removes a project's.
type cacheKeeper struct {
	s     *storage
	mu    sync.Mutex
	locks map[string]*sync.Mutex // per project
	total func() int64           // the platform-wide bound, measured once
	// saving holds the workspaces whose caches are being saved: true when
	// the build is done with it, to be removed after the save.
	saving map[string]bool
	saves  sync.WaitGroup
	// beforeSave, when set (tests), is called as a save starts.
	beforeSave func(deploymentID string)
}

// caches returns the service's cache keeper.
func (s *storage) caches() *cacheKeeper {
	s.cacheOnce.Do(func() {
		k := &cacheKeeper{s: s, locks: map[string]*sync.Mutex{}, saving: map[string]bool{}}
		k.total = sync.OnceValue(k.totalBound)
		s.cacheKeep = k
	})
	return s.cacheKeep
}

func (k *cacheKeeper) records() gantry.BuildCacheRecords { return k.s.Store.BuildCacheRecords() }

// lock returns the lock of the project's caches.
func (k *cacheKeeper) lock(projectID string) *sync.Mutex {
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.locks[projectID]
	if l == nil {
		l = new(sync.Mutex)
		k.locks[projectID] = l
	}
	return l
}

// use takes the lock of the project's caches, waiting for a save still
// under way, until ctx ends; release gives it back.
func (k *cacheKeeper) use(ctx context.Context, projectID string) (release func()) {
	l := k.lock(projectID)
	for !l.TryLock() {
		select {
		case <-ctx.Done():
			return func() {}
		case <-time.After(50 * time.Millisecond):
		}
	}
	return l.Unlock
}

// prepare points job at d's caches (CacheDirs), tidies the project's
// caches folder, records that they are used now, and tells the build
// when they were last evicted.
func (k *cacheKeeper) prepare(ctx context.Context, d *gantry.Deployment, job *build.Job) {
	job.CacheDir, job.CacheFallback = k.s.CacheDirs(d)
	if job.CacheDir == "" {
		return
	}
	k.tidy(d.ProjectID)
	pullCaches(ctx, k, d, job.CacheDir, job.CacheFallback)
	if err := k.s.Store.TouchBuildCache(context.WithoutCancel(ctx), d.ProjectID, k.s.now()); err != nil {
		k.s.logger().Error("touch build cache", "project", d.ProjectID, "err", err)
	}
	if at, err := k.records().Eviction(ctx, d.ProjectID); err != nil {
		k.s.logger().Error("build cache eviction", "project", d.ProjectID, "err", err)
	} else if !at.IsZero() {
		job.CacheEvictedAgo = max(k.s.now().Sub(at), time.Nanosecond)
	}
	job.CacheUse = func(ctx context.Context) func() { return k.use(ctx, d.ProjectID) }
	job.DeferCacheSave = true // saved once live (save), the workspace kept until then (release)
}

// save saves the caches of d's build once d is live, in the background:
// the build's worker is free for the next build at once (the packing
// runs in the helper, in the idle classes, bounded per entry), and the
// save holds the project's caches' lock, so the project's next build
// restores them only once they are whole. Its failure is a line in d's
// log, never d's. ctx is the workers': closing the service cancels it.
func (k *cacheKeeper) save(ctx context.Context, d *gantry.Deployment, p *gantry.Project, ws string, cs *build.CacheSave) {
	if cs == nil {
		return
	}
	unlock := k.use(ctx, p.ID)
	id, held := d.ID, cs.Held() // d is the build's: not read after this
	dir, _ := k.s.CacheDirs(d)
	k.mu.Lock()
	k.saving[ws] = false
	k.mu.Unlock()
	k.saves.Add(1)
	go func() {
		defer k.saves.Done()
		defer k.saveEnded(ws)
		defer unlock()
		if k.beforeSave != nil {
			k.beforeSave(id)
		}
		cs.Save(ctx, build.LoggerFunc(func(level, msg string) {
			k.s.log(ctx, id, level, gantry.LogDeployment, msg)
		}))
		pushCaches(ctx, k, id, p.ID, dir)
		if held {
			// The app's volume gives the held caches' blocks (the pruned
			// packages' among them) back, and is measured again.
			if err := sandbox.Trim(ws); err != nil {
				k.s.logger().Warn("trim app volume", "deployment", id, "err", err)
			}
			k.s.measureApp(ctx, id)
		}
		k.saved(ctx, p)
	}()
}

// release removes a build's workspace the build is done with, at once or,
// while its caches are being saved, when the save ends.
func (k *cacheKeeper) release(ws string) {
	k.mu.Lock()
	_, saving := k.saving[ws]
	if saving {
		k.saving[ws] = true
	}
	k.mu.Unlock()
	if !saving {
		sandbox.RemoveVolume(ws)
	}
}

// saveEnded removes the workspace after its save when the build released
// it meanwhile.
func (k *cacheKeeper) saveEnded(ws string) {
	k.mu.Lock()
	remove := k.saving[ws]
	delete(k.saving, ws)
	k.mu.Unlock()
	if remove {
		sandbox.RemoveVolume(ws)
	}
}

// wait waits for the saves under way.
func (k *cacheKeeper) wait() { k.saves.Wait() }

// saved records the size of the project's caches after a build saved
// them and evicts over the bounds.
func (k *cacheKeeper) saved(ctx context.Context, p *gantry.Project) {
	ctx = context.WithoutCancel(ctx)
	k.tidy(p.ID)
	size := build.CacheSize(k.s.CacheDir(p.ID)) // every target's; 0: it has none (forgotten)
	if err := k.s.Store.SetBuildCache(ctx, p.ID, size, k.s.now()); err != nil {
		if gantry.ErrorCode(err) == gantry.ENOTFOUND {
			k.drop(ctx, p.ID) // deleted meanwhile
			return
		}
		k.s.logger().Error("record build cache", "project", p.ID, "err", err)
		return
	}
	k.evict(ctx, p.UserID)
}

// accountBound and totalBound are the bounds in force.
func (k *cacheKeeper) accountBound() int64 {
	if k.s.BuildCacheAccount > 0 {
		return k.s.BuildCacheAccount
	}
	return DefaultCacheAccount
}

// totalBound is Service.BuildCacheTotal, or a tenth of the data folder's
// disk.
func (k *cacheKeeper) totalBound() int64 {
	if k.s.BuildCacheTotal > 0 {
		return k.s.BuildCacheTotal
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(k.s.DataDir, &st); err != nil || st.Blocks == 0 {
		return 10 * DefaultCacheAccount
	}
	return int64(st.Blocks) * int64(st.Bsize) / 10
}

// evict removes the least recently used caches while the account's take
// more than its bound, then while everyone's take more than the
// platform's.
func (k *cacheKeeper) evict(ctx context.Context, userID string) {
	mine, err := k.s.Store.BuildCaches(ctx, userID)
	if err != nil {
		k.s.logger().Error("evict build caches", "user", userID, "err", err)
		return
	}
	k.evictOver(ctx, mine, k.accountBound(), "account")
	all, err := k.records().All(ctx)
	if err != nil {
		k.s.logger().Error("evict build caches", "err", err)
		return
	}
	k.evictOver(ctx, all, k.total(), "platform")
}

// evictOver evicts from caches (least recently used first) until they
// take at most bound; caches in use are skipped.
func (k *cacheKeeper) evictOver(ctx context.Context, caches []gantry.BuildCache, bound int64, which string) {
	var total int64
	for _, c := range caches {
		total += c.Bytes
	}
	for _, c := range caches {
		if total <= bound {
			return
		}
		l := k.lock(c.ProjectID)
		if !l.TryLock() {
			continue // a build restores or saves them now
		}
		err := os.RemoveAll(k.s.CacheDir(c.ProjectID))
		if err == nil {
			err = k.records().Evicted(ctx, c.ProjectID, k.s.now())
		}
		l.Unlock()
		if err != nil {
			k.s.logger().Error("evict build cache", "project", c.ProjectID, "err", err)
			continue
		}
		total -= c.Bytes
		k.s.logger().Info("build cache evicted", "project", c.ProjectID, "bytes", c.Bytes, "bound", which, "limit", bound)
	}
}

// drop removes the project's caches and their record (the project is
// gone, or its caches were forgotten).
func (k *cacheKeeper) drop(ctx context.Context, projectID string) {
	if err := os.RemoveAll(k.s.CacheDir(projectID)); err != nil {
		k.s.logger().Error("remove build cache", "project", projectID, "err", err)
	}
	dropCaches(ctx, k, projectID)
	if err := k.s.Store.DeleteBuildCache(context.WithoutCancel(ctx), projectID); err != nil {
		k.s.logger().Error("forget build cache", "project", projectID, "err", err)
	}
}

// tidy removes what the project's caches folder holds besides its
// targets' folders (the caches of an older layout, shared by every
// target, which a preview may have written) and the caches of all but
// the maxBranchCaches preview branches built most recently.
func (k *cacheKeeper) tidy(projectID string) {
	base := k.s.CacheDir(projectID)
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	type branch struct {
		path string
		used time.Time
	}
	var branches []branch
	for _, e := range entries {
		p := filepath.Join(base, e.Name())
		switch {
		case e.IsDir() && e.Name() == productionCache:
		case e.IsDir() && strings.HasPrefix(e.Name(), branchCachePrefix):
			b := branch{path: p}
			if fi, err := os.Stat(filepath.Join(p, "manifest.json")); err == nil {
				b.used = fi.ModTime()
			} else if fi, err := e.Info(); err == nil {
				b.used = fi.ModTime()
			}
			branches = append(branches, b)
		default:
			if err := os.RemoveAll(p); err != nil {
				k.s.logger().Error("remove build cache", "path", p, "err", err)
			}
		}
	}
	slices.SortFunc(branches, func(a, b branch) int { return b.used.Compare(a.used) })
	for _, b := range branches[min(len(branches), maxBranchCaches):] {
		if err := os.RemoveAll(b.path); err != nil {
			k.s.logger().Error("remove build cache", "path", b.path, "err", err)
		}
	}
}
