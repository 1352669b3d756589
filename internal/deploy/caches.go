package deploy

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/runtime"
)

// Build caches: each project's are in caches/<project id>/ under the data
// folder (build.Job.CacheDir), the platform's own, restored into a build's
// volume as the account's sandbox user and saved after a successful build
// (internal/build). The store records their size per project, counted in
// the owner's storage (StorageUsage.Caches), and when a build last used
// them: over the owner's share (gantry.CacheShare), the least recently
// used project's caches go first.

// CacheDir is where the project's build caches are kept.
func (s *Service) CacheDir(projectID string) string {
	return filepath.Join(s.DataDir, "caches", projectID)
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
