package build

import (
	"errors"
	"fmt"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// Phases is the time each step of a build took, by name: "clone",
// "restore" (the build caches), "install", "build", "prune" (a server
// app's dev dependencies), "publish" (a site's files put in place), "save"
// (the build caches; absent with Job.DeferCacheSave, when they are saved
// after Run). A step that did not run is absent; one that ran
// twice (an install that fell back from npm ci) counts both runs.
type Phases map[string]time.Duration

// since adds the time from start to now to phase; deferred at a step's
// start.
func (p Phases) since(phase string, start time.Time) {
	if p != nil {
		p[phase] += time.Since(start)
	}
}

// Millis is p in whole milliseconds, as gantry.BuildInfo.Phases records
// them; nil when p is empty.
func (p Phases) Millis() map[string]int64 {
	if len(p) == 0 {
		return nil
	}
	ms := make(map[string]int64, len(p))
	for k, d := range p {
		ms[k] = d.Milliseconds()
	}
	return ms
}

// clone clones the job's repository (its commit, when the job names one)
// into ws; a failure is an *Error that says what to do.
func (r *run) clone(ws, repo string) (*gantry.Commit, error) {
	defer r.phases.since("clone", time.Now())
	job := r.job
	var commit *gantry.Commit
	var err error
	if job.Commit != "" {
		cc, ok := r.p.Cloner.(CommitCloner)
		if !ok {
			return nil, &Error{Step: "clone", Message: "This platform cannot build a given commit", Platform: true,
				Err: fmt.Errorf("cloner %T cannot check out commits", r.p.Cloner)}
		}
		commit, err = cc.CloneCommit(r.bctx, job.CloneURL, job.Branch, job.Commit, ws, job.Token, job.UID, job.GID)
	} else {
		commit, err = r.p.Cloner.Clone(r.bctx, job.CloneURL, job.Branch, ws, job.Token, job.UID, job.GID)
	}
	if err == nil {
		return commit, nil
	}
	if e := r.interrupted("clone"); e != nil {
		return nil, e
	}
	// The cloner's sentence; a fault of the platform's own is not
	// described to the user (Err keeps it for the server log).
	msg := gantry.ErrorMessage(err)
	if gantry.ErrorCode(err) == gantry.EINTERNAL {
		msg = "the platform could not run git; try again, and tell its operator if this persists"
	}
	var se *sandbox.SetupError
	return nil, &Error{Step: "clone", Message: fmt.Sprintf("Could not clone %s (branch %s): %s", repo, job.Branch, msg), Err: err,
		Platform: errors.As(err, &se)}
}

// publish puts the site's output folder out in place (publish); root: out
// is the workspace itself.
func (r *run) publish(out string, root bool) (*published, error) {
	defer r.phases.since("publish", time.Now())
	return publish(r.bctx, out, r.job.SitesDir, r.job.BlobDir, r.job.DeploymentID, root, func(msg string) {
		r.log.step(gantry.LevelWarning, msg)
	})
}
