package deploy

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
)

// builds is the deploy service's builds capability: the queue's workers,
// which claim deployments (held under a lease: leases.go) and run each
// build to its end.
type builds struct {
	*core
	*BuildsConfig
	release *release
	apps    *apps
	storage *storage
	wake    chan struct{} // an idle worker's nudge (kick)
	mu      sync.Mutex
	running map[string]*runningBuild
}

type runningBuild struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// errStopped is the cause of a build cancelled by Stop or Delete.
var errStopped = errors.New("stopped by user")

func (s *builds) maxPending() int {
	if s.MaxPending > 0 {
		return s.MaxPending
	}
	return DefaultMaxPending
}

func (s *builds) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *builds) worker(ctx context.Context) {
	defer s.wg.Done()
	poll := s.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		for ctx.Err() == nil {
			d, err := s.Store.ClaimDeployment(ctx, gantry.BuildClaim{Owner: s.NodeID, Lease: s.Lease})
			if gantry.ErrorCode(err) == gantry.ENOTFOUND {
				break
			} else if err != nil {
				if ctx.Err() == nil {
					s.logger().Error("claim deployment", "err", err)
				}
				break
			}
			release := s.leases().hold(ctx, d)
			s.build(ctx, d)
			release()
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-t.C:
		}
	}
}

// build runs one claimed deployment to live or failed.
func (s *builds) build(wctx context.Context, d *gantry.Deployment) {
	ctx, cancel := context.WithCancelCause(wctx)
	rb := &runningBuild{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.running[d.ID] = rb
	s.mu.Unlock()
	defer func() {
		cancel(nil)
		s.mu.Lock()
		delete(s.running, d.ID)
		s.mu.Unlock()
		close(rb.done)
	}()

	p, err := s.Store.FindProject(ctx, "", d.ProjectID)
	if err != nil {
		s.release.fail(ctx, d, failure{reason: "Project not found", from: inProgress})
		return
	}
	start := s.now()
	d.BuildInfo.StartTime = &start
	if !s.saveBuild(ctx, d) {
		return
	}
	s.log(ctx, d.ID, gantry.LevelInfo, gantry.LogDeployment, "Build started")

	timeout := s.BuildTimeout
	if timeout <= 0 {
		timeout = build.DefaultTimeout
	}
	env, secrets, err := s.buildEnv(ctx, p.ID, targetOf(d), d.Metadata.Fork)
	if err != nil {
		s.release.fail(ctx, d, failure{reason: gantry.ErrorMessage(err), from: inProgress})
		return
	}
	// The deployment records the environment it was built with, secrets
	// masked: their values are never stored outside the project's sealed
	// variables.
	d.Environment.Variables = gantry.MaskedEnv(env)
	if !s.saveBuild(ctx, d) {
		return
	}
	uid, err := s.sandboxUID(ctx, d.UserID)
	if err != nil {
		s.release.fail(ctx, d, failure{reason: gantry.ErrorMessage(err), from: inProgress})
		return
	}
	job := s.buildJob(ctx, d, p, env, uid, timeout)
	// Caches per target: a preview never writes what production restores;
	// a fork's pull request has none.
	s.storage.caches().prepare(ctx, d, &job)
	keepWorkspace := false
	defer func() {
		if !keepWorkspace {
			s.storage.caches().release(job.Workspace) // after its caches' save
			if IsApp(d) && d.FilesSize != 0 {
				s.storage.dropFiles(ctx, d) // its workspace was its files
			}
		}
	}()
	var seqs []int64 // of the lines the build logged, for its diagnosis
	logger := build.LoggerFunc(func(level, msg string) {
		seqs = append(seqs, s.logSeq(ctx, d.ID, level, gantry.LogDeployment, redact(msg, secrets)))
	})
	res, err := s.Builder.Run(ctx, job, logger)
	if err != nil {
		s.buildFailed(ctx, wctx, d, err, seqs, secrets)
		return
	}
	if c := res.Commit.Cleaned(); c != nil {
		d.Metadata.CommitHash = c.SHA
		d.Metadata.CommitMessage = c.Message
		d.Metadata.Author = c.Author
	}
	builtInfo(&d.BuildInfo, res)
	d.Status = gantry.DeploymentDeploying
	if !s.saveBuild(ctx, d) {
		return
	}
	// From here the deployment keeps files (until it fails, is pruned or
	// deleted): they count against the owner's storage (the build
	// caches do not: they have bounds of their own).
	s.storage.recordFiles(ctx, d)
	// Its real size is known now: over the budget, older rollbacks make
	// room before it starts (a server app's volume is sized to what is left).
	s.storage.makeRoomFor(ctx, d)
	if p.Type == "" || p.Type == "github" {
		if err := s.Store.SetDetectedType(context.WithoutCancel(ctx), p.ID, res.Detection.Framework); err != nil {
			s.logger().Error("project type", "project", p.ID, "err", err)
		}
	}
	if ctx.Err() != nil {
		return
	}
	var run *appRun // a server app's
	if IsApp(d) {
		keepWorkspace = true // kept for restarts, also when stopped while starting
		run, err = s.apps.startBuilt(ctx, d)
		switch {
		case err == nil:
		case errors.Is(context.Cause(ctx), errStopped):
			s.log(ctx, d.ID, gantry.LevelWarning, gantry.LogDeployment, "Deployment stopped by user")
			return
		case errors.Is(context.Cause(ctx), errLeaseLost):
			return // another server builds it now (leases.go)
		case wctx.Err() != nil:
			return // shutting down: the next Open marks it interrupted
		default:
			keepWorkspace = false
			s.release.fail(ctx, d, failure{reason: appFailure(err), from: inProgress})
			return
		}
		if ctx.Err() != nil {
			s.apps.stopOwnApp(d.ID, run)
			return
		}
	}
	if reason := uploadSite(ctx, s.storage, d); reason != "" {
		// Nothing goes live that another replica could not serve.
		if run != nil {
			s.apps.stopOwnApp(d.ID, run)
		}
		keepWorkspace = false
		s.release.fail(ctx, d, failure{reason: reason, from: inProgress})
		s.storage.dropFiles(ctx, d)
		return
	}
	now := s.now()
	info := d.BuildInfo
	info.EndTime = &now
	info.Duration = now.Sub(start).Milliseconds()
	if err := s.release.goLive(context.WithoutCancel(ctx), d, gantry.DeploymentDeploying, &info, "Deployment is live at "+d.URL); err != nil {
		if run != nil {
			s.apps.stopOwnApp(d.ID, run)
		}
		if lost(err) {
			return // a stop or delete came first: the deployment keeps its files as that left it
		}
		s.release.fail(ctx, d, failure{reason: s.goLiveFailure(d, err), from: inProgress})
		keepWorkspace = false
		s.storage.dropFiles(ctx, d)
		return
	}
	s.storage.caches().save(wctx, d, p, job.Workspace, res.CacheSave) // live first, then the caches
	s.notify(ctx, gantry.DeploymentLiveNotification(d))
	s.release.finished(ctx, d)
	s.storage.prune(ctx, d.ProjectID)
	// The deployment it replaced is now the project's newest stopped one.
	s.storage.makeRoomFor(ctx, d)
}

// goLiveFailure is why d failed when its go-live failed with err.
func (s *builds) goLiveFailure(d *gantry.Deployment, err error) string {
	if gantry.ErrorCode(err) == gantry.EFORBIDDEN {
		return gantry.ErrorMessage(err) // other deployments went live since this one was queued
	}
	s.logger().Error("go live", "deployment", d.ID, "err", err)
	return "Publishing failed: " + gantry.ErrorMessage(err)
}

// buildJob is the build pipeline's job for d of project p.
func (s *builds) buildJob(ctx context.Context, d *gantry.Deployment, p *gantry.Project, env []gantry.EnvVar, uid uint32, timeout time.Duration) build.Job {
	return build.Job{
		UID:          uid,
		GID:          uid,
		Disk:         s.BuildDisk,
		AppDisk:      s.AppDisk,
		DeploymentID: d.ID,
		Repository:   p.Repository.FullName,
		CloneURL:     p.Repository.CloneURL,
		Branch:       gantry.FirstNonBlank(d.Metadata.Branch, p.Branch),
		Commit:       d.Metadata.CommitHash, // "" (a Deploy click): the branch's head
		NoCache:      d.NoCache,
		Workspace:    s.WorkDir(d.ID),
		SitesDir:     s.sitesDir(),
		Project:      p.BuildConfig,
		Override:     gantry.BuildConfig{BuildCommand: d.BuildInfo.BuildCommand, OutputDirectory: d.BuildInfo.OutputDirectory},
		Timeout:      timeout,
		Token:        s.cloneToken(ctx, d.ID, p), // the owner's GitHub token, for the GitHub host only
		Env:          env,
		// A server app runs from its workspace: it is removed below unless
		// the build made one.
		KeepWorkspace: true,
		StorageLeft:   s.storage.storageLeft(ctx, d.UserID),
		NpmRegistry:   s.NpmRegistry,
		PipIndexURL:   s.PipIndexURL, BlobDir: blobDir(s.storage, d.UserID),
	}
}

// buildFailed ends d after its build failed with err: quietly when the
// build was superseded, taken over by another server, or the platform is
// shutting down (wctx); with its line when its owner stopped it; else
// failed with the pipeline's sentence, diagnosed (seqs: the lines the
// build logged), secrets redacted.
func (s *builds) buildFailed(ctx, wctx context.Context, d *gantry.Deployment, err error, seqs []int64, secrets []string) {
	if errors.Is(context.Cause(ctx), errSuperseded) {
		return // supersede recorded the status and its line
	}
	if errors.Is(context.Cause(ctx), errLeaseLost) {
		return // another server builds it now (leases.go)
	}
	if errors.Is(context.Cause(ctx), errStopped) {
		s.log(ctx, d.ID, gantry.LevelWarning, gantry.LogDeployment, "Build stopped by user")
		return // Stop already recorded the status
	}
	if wctx.Err() != nil {
		return // shutting down: the next Open marks it interrupted
	}
	msg := "Build failed"
	var be *build.Error
	if errors.As(err, &be) {
		msg = redact(be.Message, secrets)
		if diag := diagnosis(be.Diagnosis, seqs); diag != nil {
			diag.Title, diag.Detail = redact(diag.Title, secrets), redact(diag.Detail, secrets)
			s.saveDiagnosis(ctx, d, diag)
		}
		if be.Err != nil && (be.Platform || be.Step == "clone" && gantry.ErrorCode(be.Err) == gantry.EINTERNAL) {
			// The user was told a sentence; the cause is the platform's
			// (git's own failures are logged by githost).
			s.logger().Error("build", "deployment", d.ID, "step", be.Step, "err", be.Err)
		}
	} else {
		s.logger().Error("build", "deployment", d.ID, "err", err)
		s.log(ctx, d.ID, gantry.LevelError, gantry.LogDeployment, msg)
	}
	// The pipeline logged msg as its last line already.
	s.release.fail(ctx, d, failure{reason: msg, from: inProgress, logged: true})
}

// saveBuild records d's progress (SaveBuild) while it is still building.
// False ends the build: a stop or delete came first (it recorded the
// outcome), or the store failed, and then d fails.
func (s *builds) saveBuild(ctx context.Context, d *gantry.Deployment) bool {
	err := s.Store.SaveBuild(context.WithoutCancel(ctx), d, gantry.DeploymentBuilding)
	if err == nil {
		return true
	}
	if !lost(err) {
		s.logger().Error("save build", "deployment", d.ID, "err", err)
		s.release.fail(ctx, d, failure{reason: "Build failed", from: inProgress})
	}
	return false
}

// cancelBuild kills d's running build and waits for it to end.
func (s *builds) cancelBuild(id string) { s.cancelBuildCause(id, errStopped) }

// cancelBuildCause is cancelBuild with the cause the build sees.
func (s *builds) cancelBuildCause(id string, cause error) {
	s.mu.Lock()
	rb := s.running[id]
	s.mu.Unlock()
	if rb != nil {
		rb.cancel(cause)
		<-rb.done
	}
}

// checkLiveLimit refuses a deployment d of the user's project p that would
// leave more of the user's deployments live than the plan allows
// (gantry.ErrLiveLimit): a project's live production deployment and each
// live preview count one, and what d's go-live would replace does not
// count twice. The store checks it again when d goes live (GoLive), where
// parallel builds cannot race past it.
func (s *builds) checkLiveLimit(ctx context.Context, userID string, p *gantry.Project, d *gantry.Deployment) error {
	u, err := s.Store.FindUserByID(ctx, userID)
	if err != nil {
		return err
	}
	label := ""
	if d.IsPreview() {
		label = d.Subdomain
	}
	n, err := s.Store.CountLiveAfter(ctx, userID, p.ID, label)
	if err != nil {
		return err
	}
	if n > u.Subscription.MaxDeployments {
		return gantry.ErrLiveLimit(u.Subscription)
	}
	return nil
}
