package gantry

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Storage budgets per plan: what an account's deployments may keep on the
// data disk — published sites, the workspaces server apps run from and
// the text of their log entries (build caches are the platform's, with
// bounds of their own: not counted). A deploy that finds the account's
// budget used up first removes what was only kept for rollback
// (RoomOrder); it is refused only when
// live deployments and logs fill the budget on their own (StorageFullError).
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
	Used   int64 `json:"used"`   // Files + Logs + Data (build caches are the platform's: not counted)
	Budget int64 `json:"budget"` // subscription.maxStorage
	Files  int64 `json:"files"`  // published sites and kept app workspaces, as allocated on disk, each stored file (blob) once
	Logs   int64 `json:"logs"`   // bytes of log message text
	Data   int64 `json:"data"`   // the server apps' data folders (/data), as last measured
	// Files split (filled by the profile's statistics, Files = their
	// sum): live and in-progress static sites, live and in-progress
	// server apps, and the stopped and failed deployments kept for
	// rollback, which a deploy into a full budget removes first.
	Sites     int64 `json:"sites"`
	Apps      int64 `json:"apps"`
	Rollbacks int64 `json:"rollbacks"`
}

// Full reports whether the account uses its whole budget or more: a new
// deployment has room made for it then (see RoomOrder), and is refused
// only when what cannot be freed for it fills the budget on its own. The
// check is made before the build, when its size is not known yet, so the
// deployment that crosses the budget is the last one allowed.
func (u StorageUsage) Full() bool { return u.Used >= u.Budget }

// ProjectUsage is what one project keeps that making room cannot free:
// the files of its live (and in-progress) deployments and its logs.
type ProjectUsage struct {
	Name  string
	Bytes int64
}

// StorageFullError is the EFORBIDDEN a deploy gets when, with every
// deployment kept for rollback and every build cache counted as freed, u
// is still Full: it names the biggest projects (top, biggest first, at
// most three shown) and what each uses.
func StorageFullError(u StorageUsage, top []ProjectUsage) error {
	var names []string
	for _, p := range top[:min(len(top), 3)] {
		names = append(names, p.Name+" "+FormatSize(p.Bytes))
	}
	biggest := ""
	if len(names) > 0 {
		biggest = " (" + strings.Join(names, ", ") + ")"
	}
	return Errorf(EFORBIDDEN,
		"Your projects use %s of your %s storage, all of it in live deployments and logs%s. Stop or delete a project, or clear its logs, then deploy again.",
		FormatSize(u.Used), FormatSize(u.Budget), biggest)
}

// RoomOrder lists, from an account's deployments newest first, the ones
// whose files can be removed to make room for a new deployment, each list
// oldest first: rollbacks are the stopped and failed deployments beyond
// their project's newest stopped one; last are the rest — each project's
// newest stopped deployment and the stopped one its subdomain last served
// (active) — taken only when the rollbacks and the build caches were not
// enough. Live and in-progress deployments, and those without files, are
// never in either.
func RoomOrder(ds []*Deployment, active map[string]bool) (rollbacks, last []*Deployment) {
	sawStopped := map[string]bool{}
	for _, d := range ds {
		if d.PrunedAt != nil || d.FilesSize <= 0 ||
			(d.Status != DeploymentStopped && d.Status != DeploymentFailed) {
			continue
		}
		newest := d.Status == DeploymentStopped && !sawStopped[d.ProjectID]
		if d.Status == DeploymentStopped {
			sawStopped[d.ProjectID] = true
		}
		if newest || active[d.ID] {
			last = append(last, d)
		} else {
			rollbacks = append(rollbacks, d)
		}
	}
	slices.Reverse(rollbacks)
	slices.Reverse(last)
	return rollbacks, last
}

// BuildCache is what a project's build caches take on the data disk, and
// when a build last used them.
type BuildCache struct {
	ProjectID string
	UserID    string
	Bytes     int64
	UsedAt    time.Time
}

// BuildCacheRecords is the store's side of the build caches' own bounds
// (the account's list is DeploymentStore's BuildCaches): every account's
// caches platform-wide, and the evictions that freed room, so that a
// build whose caches were evicted says so rather than that it has none
// yet.
type BuildCacheRecords interface {
	// All lists every project's build caches, least recently used first.
	All(ctx context.Context) ([]BuildCache, error)
	// Evicted forgets the project's build caches and records that they
	// were evicted at at (the project gone: nothing to do).
	Evicted(ctx context.Context, projectID string, at time.Time) error
	// Eviction returns when the project's build caches were last evicted
	// (zero: never).
	Eviction(ctx context.Context, projectID string) (time.Time, error)
}

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

// BlobRef is one distinct blob (a file stored by content, internal/blobs)
// a deployment's files link to, and the bytes it takes on disk. An
// account's storage counts each blob once however many of its
// deployments link to it.
type BlobRef struct {
	Hash  string
	Bytes int64
}

// BlobRecords keeps which blobs each deployment links to, for the storage
// figures (store.DB.Blobs).
type BlobRecords interface {
	// Record sets deployment id's blobs and its files' size: the bytes of
	// those blobs and of what it keeps outside them. ENOTFOUND when the
	// deployment no longer exists.
	Record(ctx context.Context, id string, refs []BlobRef, filesSize int64) error
	// Forget drops deployment id's blobs (its files were removed).
	Forget(ctx context.Context, id string) error
	// FilesWithout is what userID's deployment files would take if the
	// deployments ids kept none: what removing them frees is the
	// account's Files less this.
	FilesWithout(ctx context.Context, userID string, ids []string) (int64, error)
	// Unused returns those of userID's blobs hashes no deployment links
	// to any more: what may be deleted from the object store.
	Unused(ctx context.Context, userID string, hashes []string) ([]string, error)
	// Guard takes userID's object store lock until release: shared for
	// an upload, exclusive for a deletion of blobs, so no upload relies
	// on a blob being deleted under it.
	Guard(ctx context.Context, userID string, exclusive bool) (release func(), err error)
}
