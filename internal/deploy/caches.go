package deploy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strconv"
	"strings"

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
// hold. The store records their size per project (all targets) and when a
// build last used them; they are the platform's, not counted in the
// owner's storage, and kept within bounds of their own by the
// cacheKeeper (cachekeeper.go); a project keeps the caches of its
// maxBranchCaches most recently built preview branches.

// CacheDir is where the project's build caches are kept, every target's.
func (s *storage) CacheDir(projectID string) string {
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
func (s *storage) CacheDirs(d *gantry.Deployment) (dir, fallback string) {
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
func (s *core) saveDiagnosis(ctx context.Context, d *gantry.Deployment, diag *gantry.Diagnosis) {
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
