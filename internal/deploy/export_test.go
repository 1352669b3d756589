package deploy

import (
	"context"
	"sort"

	"github.com/gantryhq/gantry"
)

// RunningApps returns the ids of the deployments whose server apps the
// service runs, sorted.
func (s *Service) RunningApps() []string {
	ids := s.apps.running("", "")
	sort.Strings(ids)
	return ids
}

// EvictCaches evicts the least recently used build caches over the
// owner's bound and the platform's.
func EvictCaches(s *Service, ctx context.Context, userID string) {
	s.storage.caches().evict(ctx, userID)
}

// WaitCacheSaves waits for the build caches' saves under way.
func WaitCacheSaves(s *Service) { s.storage.caches().wait() }

// BeforeCacheSave has f called as each cache save starts (set before any
// build).
func BeforeCacheSave(s *Service, f func(deploymentID string)) { s.storage.caches().beforeSave = f }

// Log stores one info entry of deployment id through s, as a build's line
// is: published to s's hub and marked for other replicas (Logged).
func Log(s *Service, ctx context.Context, id, msg string) {
	s.log(ctx, id, gantry.LevelInfo, gantry.LogDeployment, msg)
}

// TakeSnapshots takes the data folders' snapshots that are due and
// prunes the old ones now, as the hourly loop does.
func TakeSnapshots(s *Service, ctx context.Context) { snapshots{s.storage}.run(ctx) }
