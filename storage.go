package gantry

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Storage budgets per plan: what an account's deployments may keep on the
// data disk — published sites, the workspaces server apps run from, the
// text of their log entries, and the projects' build caches. A deploy is refused while the account
// uses its whole budget (see StorageUsage.Full).
const (
	GiB = int64(1) << 30

	DefaultMaxStorage = 1 * GiB // the free plan
)

// PlanMaxStorage is the storage budget of a plan in bytes: Free 1 GB,
// Basic 5 GB, Pro 25 GB, Enterprise 100 GB (binary units, as every size
// the product shows). A missing or unknown plan gets Free's.
func PlanMaxStorage(plan string) int64 {
	switch plan {
	case PlanBasic:
		return 5 * GiB
	case PlanPro:
		return 25 * GiB
	case PlanEnterprise:
		return 100 * GiB
	}
	return DefaultMaxStorage
}

// StorageUsage is what an account's deployments take on the data disk and
// the budget they share (the answer's stats.storage).
type StorageUsage struct {
	Used   int64 `json:"used"`   // Files + Logs + Caches
	Budget int64 `json:"budget"` // subscription.maxStorage
	Files  int64 `json:"files"`  // published sites and kept app workspaces, as allocated on disk
	Logs   int64 `json:"logs"`   // bytes of log message text
	Caches int64 `json:"caches"` // the projects' build caches, as stored
}

// Full reports whether the account uses its whole budget or more: a new
// deployment is refused then. The check is made before the build, when its
// size is not known yet, so the deployment that crosses the budget is the
// last one allowed.
func (u StorageUsage) Full() bool { return u.Used >= u.Budget }

// StorageFullError is the EFORBIDDEN a deploy gets when u is Full.
func StorageFullError(u StorageUsage) error {
	return Errorf(EFORBIDDEN,
		"Your projects use %s of your %s storage. Delete old deployments or projects to free space, then deploy again.",
		FormatSize(u.Used), FormatSize(u.Budget))
}

// BuildCache is what a project's build caches take on the data disk, and
// when a build last used them.
type BuildCache struct {
	ProjectID string
	UserID    string
	Bytes     int64
	UsedAt    time.Time
}

// Build caches share the storage budget: an account's caches together may
// take at most CacheShare of it, min(1 GiB, a quarter of the budget), the
// least recently used project's evicted first when a build goes over.
func CacheShare(budget int64) int64 { return min(GiB, budget/4) }

// Files of deployments that are not live are kept for rollback, per
// project: the newest KeepDeployments stopped or failed ones, of which at
// most KeepAppDeployments server apps (their workspaces hold installed
// dependencies and are much larger). Older ones are pruned: their files
// are removed and their records stay, marked with PrunedAt.
const (
	KeepDeployments    = 10
	KeepAppDeployments = 3
)

// Prunable picks from a project's deployments, newest first, the ones
// whose files are to be removed. Only stopped and failed deployments that
// still have files are candidates; the project's active deployment
// (activeID: the live one, or the stopped one its subdomain last served)
// is never one. The newest stopped deployment always keeps its files for a
// rollback; after it, candidates keep theirs while fewer than
// KeepDeployments (KeepAppDeployments for server apps) have been kept.
func Prunable(ds []*Deployment, activeID string) []*Deployment {
	var out []*Deployment
	kept, keptApps, sawStopped := 0, 0, false
	for _, d := range ds {
		if d.ID == activeID || d.PrunedAt != nil || d.FilesSize <= 0 ||
			(d.Status != DeploymentStopped && d.Status != DeploymentFailed) {
			continue
		}
		newestStopped := d.Status == DeploymentStopped && !sawStopped
		if d.Status == DeploymentStopped {
			sawStopped = true
		}
		if newestStopped || (kept < KeepDeployments && (!d.IsApp() || keptApps < KeepAppDeployments)) {
			kept++
			if d.IsApp() {
				keptApps++
			}
			continue
		}
		out = append(out, d)
	}
	return out
}

// MsgPruned is what a restart of a pruned deployment answers (ECONFLICT).
const MsgPruned = "The files of this deployment were removed to save space, so it cannot be restarted. Deploy the project again instead."

// FormatSize writes a size in bytes the way the product shows sizes: in
// binary units labelled B, KB, MB, GB, TB (1 KB = 1024 bytes, as SPEC §9's
// build size in KB), with three significant digits and no trailing zeros:
// "512 B", "1.5 KB", "412 MB", "1.02 GB", "1 GB".
func FormatSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KB", "MB", "GB", "TB"}
	v := float64(n) / 1024
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	prec := 2
	switch {
	case v >= 100:
		prec = 0
	case v >= 10:
		prec = 1
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if s == "1024" && i < len(units)-1 { // 1023.6 rounds up to the next unit
		s, i = "1", i+1
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + " " + units[i]
}
