package deploy

import (
	"context"
	"time"

	"github.com/gantryhq/gantry"
)

// Build caches in the object store (GANTRY_OBJECT_STORE; internal/cachesync):
// the local folders stay the working copies and keep their bounds; the
// store carries a project's caches to whichever replica builds it next.
// A cache the store cannot give or take never fails a build.

// cacheSyncTimeout bounds one pull or push.
const cacheSyncTimeout = 5 * time.Minute

// pullCaches brings d's cache targets (dir, and the fallback it reads)
// up to date from the store, under the project's caches' lock, before
// the build restores them. A failure is a warning in d's log.
func pullCaches(ctx context.Context, k *cacheKeeper, d *gantry.Deployment, dirs ...string) {
	if k.s.Caches == nil {
		return
	}
	release := k.use(ctx, d.ProjectID)
	defer release()
	ctx, cancel := context.WithTimeout(ctx, cacheSyncTimeout)
	defer cancel()
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		got, err := k.s.Caches.Pull(ctx, d.ProjectID, dir)
		switch {
		case err != nil:
			k.s.logger().Warn("pull build cache", "project", d.ProjectID, "dir", dir, "err", err)
			k.s.log(ctx, d.ID, gantry.LevelWarning, gantry.LogDeployment,
				"Build cache unavailable: it could not be fetched from the object store; building with what this server has")
			return
		case got:
			k.s.logger().Info("build cache pulled from the object store", "project", d.ProjectID, "dir", dir)
		}
	}
}

// pushCaches uploads the cache target dir that deployment id's build just
// saved (the caches' lock is held). A failure is a warning in its log.
func pushCaches(ctx context.Context, k *cacheKeeper, id, projectID, dir string) {
	if k.s.Caches == nil || dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cacheSyncTimeout)
	defer cancel()
	if err := k.s.Caches.Push(ctx, projectID, dir); err != nil {
		k.s.logger().Warn("push build cache", "project", projectID, "err", err)
		k.s.log(ctx, id, gantry.LevelWarning, gantry.LogDeployment,
			"Build cache not shared: it could not be stored in the object store; the next build on another server starts without it")
	}
}

// dropCaches deletes the project's caches from the store.
func dropCaches(ctx context.Context, k *cacheKeeper, projectID string) {
	if k.s.Caches == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cacheSyncTimeout)
	defer cancel()
	if err := k.s.Caches.Drop(ctx, projectID); err != nil {
		k.s.logger().Warn("drop build cache from the object store", "project", projectID, "err", err)
	}
}
