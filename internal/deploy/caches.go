package deploy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/runtime"
)

// Build caches: each project's are in caches/<project id>/ under the data
// folder, the platform's own, one folder per target (CacheDirs):
// production/ for production builds and branch-<hash>/ for each preview
// branch. They are restored into a build's volume as the account's
// sandbox user and saved after a successful build (internal/build). A
// preview reads production's caches when its branch has none yet, but
// writes only its branch's: nothing a preview build leaves (a branch
// anyone with push access made, a pull request's) is ever restored into a
// production build, which runs with production's secrets. A fork's pull
// request gets no cache at all: it could read what production's caches
// hold. The store records their size per project (all targets), counted
// in the owner's storage (StorageUsage.Caches), and when a build last
// used them: over the owner's share (gantry.CacheShare), the least
// recently used project's caches go first; a project keeps the caches of
// its maxBranchCaches most recently built preview branches.

// CacheDir is where the project's build caches are kept, every target's.
func (s *Service) CacheDir(projectID string) string {
	return filepath.Join(s.DataDir, "caches", projectID)
}

// Cache targets: production's folder, and the prefix of a preview
// branch's.
const (
	productionCache   = "production"
	branchCachePrefix = "branch-"
	// maxBranchCaches is how many preview branches' caches a project
	// keeps (as many as the previews it keeps live).
	maxBranchCaches = 5
)

// CacheDirs returns where d's build keeps its caches (dir, "" for none)
// and where it may read them from when dir has none yet (fallback, never
// written): production's for production; the branch's own, falling back
// to production's, for a preview; none for a fork's pull request.
func (s *Service) CacheDirs(d *gantry.Deployment) (dir, fallback string) {
	base := s.CacheDir(d.ProjectID)
	switch {
	case !d.IsPreview():
		return filepath.Join(base, productionCache), ""
	case d.Metadata.Fork:
		return "", ""
	}
	sum := sha256.Sum256([]byte(d.Metadata.Branch))
	return filepath.Join(base, branchCachePrefix+hex.EncodeToString(sum[:12])), filepath.Join(base, productionCache)
}

// tidyCaches removes what the project's caches folder holds besides its
// targets' folders (the caches of an older layout, shared by every
// target, which a preview may have written) and the caches of all but
// the maxBranchCaches preview branches built most recently.
func (s *Service) tidyCaches(projectID string) {
	base := s.CacheDir(projectID)
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
				s.logger().Error("remove build cache", "path", p, "err", err)
			}
		}
	}
	slices.SortFunc(branches, func(a, b branch) int { return b.used.Compare(a.used) })
	for _, b := range branches[min(len(branches), maxBranchCaches):] {
		if err := os.RemoveAll(b.path); err != nil {
			s.logger().Error("remove build cache", "path", b.path, "err", err)
		}
	}
}

// touchCache records that a build of the project uses its caches now.
func (s *Service) touchCache(ctx context.Context, projectID string) {
	if err := s.Store.TouchBuildCache(context.WithoutCancel(ctx), projectID, s.now()); err != nil {
		s.logger().Error("touch build cache", "project", projectID, "err", err)
	}
}

// recordCache records the size of the caches a successful build left and
// evicts the owner's least recently used ones over the share.
func (s *Service) recordCache(ctx context.Context, p *gantry.Project, size int64) {
	ctx = context.WithoutCancel(ctx)
	if err := s.Store.SetBuildCache(ctx, p.ID, size, s.now()); err != nil {
		if gantry.ErrorCode(err) == gantry.ENOTFOUND {
			s.dropCache(ctx, p.ID) // deleted meanwhile
			return
		}
		s.logger().Error("record build cache", "project", p.ID, "err", err)
		return
	}
	s.evictCaches(ctx, p.UserID)
}

// evictCaches removes the owner's least recently used build caches while
// they take more than the owner's share of the storage budget.
func (s *Service) evictCaches(ctx context.Context, userID string) {
	u, err := s.Store.StorageUsage(ctx, userID)
	if err != nil {
		s.logger().Error("evict build caches", "user", userID, "err", err)
		return
	}
	share := gantry.CacheShare(u.Budget)
	caches, err := s.Store.BuildCaches(ctx, userID)
	if err != nil {
		s.logger().Error("evict build caches", "user", userID, "err", err)
		return
	}
	var total int64
	for _, c := range caches {
		total += c.Bytes
	}
	for _, c := range caches {
		if total <= share {
			break
		}
		s.dropCache(ctx, c.ProjectID)
		total -= c.Bytes
		s.logger().Info("build cache evicted", "project", c.ProjectID, "bytes", c.Bytes, "share", share)
	}
}

// dropCache removes the project's caches and their record.
func (s *Service) dropCache(ctx context.Context, projectID string) {
	if err := os.RemoveAll(s.CacheDir(projectID)); err != nil {
		s.logger().Error("remove build cache", "project", projectID, "err", err)
	}
	if err := s.Store.DeleteBuildCache(context.WithoutCancel(ctx), projectID); err != nil {
		s.logger().Error("forget build cache", "project", projectID, "err", err)
	}
}

// diagnosis turns the pipeline's diagnosis, whose lines are indexes into
// the lines it logged, into the deployment's, with their seqs.
func diagnosis(d *build.Diagnosis, seqs []int64) *gantry.Diagnosis {
	if d == nil {
		return nil
	}
	out := &gantry.Diagnosis{Title: d.Title, Detail: d.Detail, Lines: []int64{}}
	for _, i := range d.Lines {
		if i >= 0 && i < len(seqs) && seqs[i] > 0 {
			out.Lines = append(out.Lines, seqs[i])
		}
	}
	return out
}

// saveDiagnosis records why d failed.
func (s *Service) saveDiagnosis(ctx context.Context, d *gantry.Deployment, diag *gantry.Diagnosis) {
	if diag == nil {
		return
	}
	d.Diagnosis = diag
	if err := s.Store.SetDeploymentDiagnosis(context.WithoutCancel(ctx), d.ID, diag); err != nil && !lost(err) {
		s.logger().Error("save diagnosis", "deployment", d.ID, "err", err)
	}
}

// startDiagnosis diagnoses an app that did not start from its last
// output (logged with seqs) and the runtime's message.
func startDiagnosis(se *runtime.StartError, out []string, seqs []int64) *gantry.Diagnosis {
	f := &build.Failure{Step: "start", Message: se.Message}
	for _, l := range out {
		f.Lines = append(f.Lines, build.Line{Level: gantry.LevelError, Message: l})
	}
	// The port the app was given is the one the runtime's line names.
	if _, rest, ok := strings.Cut(se.Message, " on port "); ok {
		if n := strings.FieldsFunc(rest, func(r rune) bool { return r < '0' || r > '9' }); len(n) > 0 {
			f.Port, _ = strconv.Atoi(n[0])
		}
	}
	return diagnosis(build.Diagnose(f), seqs)
}
