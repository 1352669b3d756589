package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// CreateRequest is the body of POST /api/deployments. BuildCommand and
// OutputDirectory override the project's for this deployment only.
type CreateRequest struct {
	ProjectID       string `json:"projectId"`
	Version         string `json:"version"`
	BuildCommand    string `json:"buildCommand"`
	OutputDirectory string `json:"outputDirectory"`
}

// Check trims r, fills the default version and validates it: projectId is
// required (and an id that could never exist is "Project not found"), the
// version follows gantry.ValidateVersion, and the overrides the rules of a
// project's build settings (gantry.BuildConfig.Validate: one line, no
// control characters, at most 1000 characters; a relative path inside
// the repository).
func (r *CreateRequest) Check() error {
	r.ProjectID = strings.TrimSpace(r.ProjectID)
	switch {
	case r.ProjectID == "":
		return gantry.Errorf(gantry.EINVALID, "projectId is required")
	case !gantry.ValidID(r.ProjectID):
		return gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	}
	r.Version = strings.TrimSpace(r.Version)
	if r.Version == "" {
		r.Version = gantry.DefaultVersion
	}
	if err := gantry.ValidateVersion(r.Version); err != nil {
		return err
	}
	o := gantry.BuildConfig{BuildCommand: r.BuildCommand, OutputDirectory: r.OutputDirectory}
	o.Normalize()
	if err := o.Validate(); err != nil {
		return err
	}
	r.BuildCommand, r.OutputDirectory = o.BuildCommand, o.OutputDirectory
	return nil
}

// Create queues a deployment of the owner's project and returns it at once
// as pending; a worker builds it. Going over the plan's number of live
// deployments is EFORBIDDEN (a project's redeploy replaces its own live
// deployment, so it never counts twice), and so is deploying while the
// account's live deployments and logs fill its storage budget (what was
// kept for rollback makes room first: see checkStorage); having
// MaxPending builds waiting already is ETOOMANY. This is the only way a
// build is queued: project creation, restart and rollback never build.
func (s *Service) Create(ctx context.Context, userID string, req CreateRequest) (*gantry.Deployment, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	p, err := s.Store.FindProject(ctx, userID, req.ProjectID)
	if err != nil {
		return nil, err
	}
	if err := s.checkLiveLimit(ctx, userID, p, &gantry.Deployment{Target: gantry.TargetProduction}); err != nil {
		return nil, err
	}
	made, err := s.storage().checkStorage(ctx, userID)
	if err != nil {
		return nil, err
	}
	d := &gantry.Deployment{
		ProjectID: p.ID, UserID: userID, Version: req.Version,
		Subdomain: p.Subdomain, URL: s.LiveURL(p.Subdomain), Target: gantry.TargetProduction,
		Status: gantry.DeploymentPending,
		BuildInfo: gantry.BuildInfo{
			BuildCommand:    gantry.FirstNonBlank(req.BuildCommand, p.BuildConfig.BuildCommand),
			OutputDirectory: gantry.FirstNonBlank(req.OutputDirectory, p.BuildConfig.OutputDirectory),
			InstallCommand:  p.BuildConfig.InstallCommand,
			StartCommand:    p.BuildConfig.StartCommand,
		},
		Metadata: gantry.DeploymentMetadata{
			Branch: p.Branch, Trigger: gantry.TriggerManual,
			Repository: gantry.MetadataRepository{FullName: p.Repository.FullName},
		},
		// Overrides of this call, kept apart from the project's settings.
		Environment: gantry.DeploymentEnv{Variables: []gantry.EnvVar{}},
	}
	if err := s.Store.QueueDeployment(ctx, d, s.maxPending()); err != nil {
		return nil, err
	}
	pos, _ := s.Store.QueuePosition(ctx, d.ID)
	msg := "Deployment queued"
	if pos > 1 {
		msg = fmt.Sprintf("Deployment queued: position %d, waiting for %d build%s ahead", pos, pos-1, plural(pos-1))
	}
	s.log(ctx, d.ID, gantry.LevelInfo, gantry.LogDeployment, msg)
	s.storage().logRoom(ctx, d.ID, made)
	s.kick()
	// Answer what was created (pending), not a re-read: a worker may have
	// claimed it already.
	d.Project = &gantry.DeploymentProject{ID: p.ID, Name: p.Name, Description: p.Description, Type: p.Type,
		BuildConfig: p.BuildConfig, Repository: p.Repository}
	if u, err := s.Store.FindUserByID(ctx, userID); err == nil {
		d.User = &gantry.DeploymentUser{ID: u.ID, FullName: u.FullName, Username: u.Username}
	}
	return d, nil
}

// checkLiveLimit refuses a deployment d of the user's project p that would
// leave more of the user's deployments live than the plan allows
// (gantry.ErrLiveLimit): a project's live production deployment and each
// live preview count one, and what d's go-live would replace does not
// count twice. The store checks it again when d goes live (GoLive), where
// parallel builds cannot race past it.
func (s *Service) checkLiveLimit(ctx context.Context, userID string, p *gantry.Project, d *gantry.Deployment) error {
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

// build runs one claimed deployment to live or failed.
func (s *Service) build(wctx context.Context, d *gantry.Deployment) {
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
		s.fail(ctx, d, failure{reason: "Project not found", from: inProgress})
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
		s.fail(ctx, d, failure{reason: gantry.ErrorMessage(err), from: inProgress})
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
		s.fail(ctx, d, failure{reason: gantry.ErrorMessage(err), from: inProgress})
		return
	}
	job := s.buildJob(ctx, d, p, env, uid, timeout)
	// Caches per target: a preview never writes what production restores;
	// a fork's pull request has none.
	s.caches().prepare(ctx, d, &job)
	keepWorkspace := false
	defer func() {
		if !keepWorkspace {
			s.caches().release(job.Workspace) // after its caches' save
			if IsApp(d) && d.FilesSize != 0 {
				s.storage().dropFiles(ctx, d) // its workspace was its files
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
	s.storage().recordFiles(ctx, d)
	// Its real size is known now: over the budget, older rollbacks make
	// room before it starts (a server app's volume is sized to what is left).
	s.storage().makeRoomFor(ctx, d)
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
		run, err = s.startBuilt(ctx, d)
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
			s.fail(ctx, d, failure{reason: appFailure(err), from: inProgress})
			return
		}
		if ctx.Err() != nil {
			s.stopOwnApp(d.ID, run)
			return
		}
	}
	if !uploadSite(ctx, s, d) {
		return // failed: nothing went live (objects.go)
	}
	now := s.now()
	info := d.BuildInfo
	info.EndTime = &now
	info.Duration = now.Sub(start).Milliseconds()
	if err := s.goLive(context.WithoutCancel(ctx), d, gantry.DeploymentDeploying, &info, "Deployment is live at "+d.URL); err != nil {
		if run != nil {
			s.stopOwnApp(d.ID, run)
		}
		if lost(err) {
			return // a stop or delete came first: the deployment keeps its files as that left it
		}
		reason := "Publishing failed: " + gantry.ErrorMessage(err)
		if gantry.ErrorCode(err) == gantry.EFORBIDDEN {
			// Other deployments went live since this one was queued.
			reason = gantry.ErrorMessage(err)
		} else {
			s.logger().Error("go live", "deployment", d.ID, "err", err)
		}
		s.fail(ctx, d, failure{reason: reason, from: inProgress})
		keepWorkspace = false
		s.storage().dropFiles(ctx, d)
		return
	}
	s.caches().save(wctx, d, p, job.Workspace, res.CacheSave) // live first, then the caches
	s.notify(ctx, gantry.DeploymentLiveNotification(d))
	s.finished(ctx, d)
	s.storage().prune(ctx, d.ProjectID)
	// The deployment it replaced is now the project's newest stopped one.
	s.storage().makeRoomFor(ctx, d)
}

// buildJob is the build pipeline's job for d of project p.
func (s *Service) buildJob(ctx context.Context, d *gantry.Deployment, p *gantry.Project, env []gantry.EnvVar, uid uint32, timeout time.Duration) build.Job {
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
		StorageLeft:   s.storage().storageLeft(ctx, d.UserID),
		NpmRegistry:   s.NpmRegistry,
		PipIndexURL:   s.PipIndexURL, BlobDir: blobDir(s, d.UserID),
	}
}

// buildFailed ends d after its build failed with err: quietly when the
// build was superseded, taken over by another server, or the platform is
// shutting down (wctx); with its line when its owner stopped it; else
// failed with the pipeline's sentence, diagnosed (seqs: the lines the
// build logged), secrets redacted.
func (s *Service) buildFailed(ctx, wctx context.Context, d *gantry.Deployment, err error, seqs []int64, secrets []string) {
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
	s.fail(ctx, d, failure{reason: msg, from: inProgress, logged: true})
}

func (s *Service) sitesDir() string { return s.SiteDir("") }

// builtInfo records in info what the build res says: its settings, size
// and phases.
func builtInfo(info *gantry.BuildInfo, res *build.Result) {
	info.BuildCommand = res.Config.BuildCommand
	info.OutputDirectory = res.Config.OutputDirectory
	info.InstallCommand = res.Config.InstallCommand
	info.StartCommand = res.Config.StartCommand
	info.Framework = res.Detection.Framework
	info.SPA = res.SPA
	info.BuildSize = res.Size
	info.Phases = res.Phases.Millis()
}

// addPhase adds the time from start to now to info's phase; deferred at
// the step's start.
func addPhase(info *gantry.BuildInfo, phase string, start time.Time) {
	if info.Phases == nil {
		info.Phases = map[string]int64{}
	}
	info.Phases[phase] += time.Since(start).Milliseconds()
}

// saveBuild records d's progress (SaveBuild) while it is still building.
// False ends the build: a stop or delete came first (it recorded the
// outcome), or the store failed, and then d fails.
func (s *Service) saveBuild(ctx context.Context, d *gantry.Deployment) bool {
	err := s.Store.SaveBuild(context.WithoutCancel(ctx), d, gantry.DeploymentBuilding)
	if err == nil {
		return true
	}
	if !lost(err) {
		s.logger().Error("save build", "deployment", d.ID, "err", err)
		s.fail(ctx, d, failure{reason: "Build failed", from: inProgress})
	}
	return false
}

// goLive makes d live in one store transition from status from (deploying
// at the end of its build, with info its build info; stopped for a
// restart): d the project's active deployment, the deployment it replaces
// stopped (its files stay, so restarting it is a rollback), liveLine (level
// success) its log line. Only once that committed does the subdomain point
// at d — at its published files, or at its registered server app — and is
// a replaced app drained and stopped in the background. A transition that
// lost its race (lost(err): d stopped, deleted or pruned meanwhile)
// changed nothing and is returned as it is.
func (s *Service) goLive(ctx context.Context, d *gantry.Deployment, from string, info *gantry.BuildInfo, liveLine string) error {
	return s.goLiveAs(ctx, d, from, info, liveLine, false)
}

// goLiveAs is goLive, recording a promotion when promote is set.
func (s *Service) goLiveAs(ctx context.Context, d *gantry.Deployment, from string, info *gantry.BuildInfo, liveLine string, promote bool) error {
	line := s.line(gantry.LevelSuccess, liveLine)
	t, err := s.Store.GoLive(ctx, d.ID, from, gantry.Change{At: s.now(), Info: info, Line: line, Promote: promote, Attempt: d.Attempt})
	if err != nil {
		return err
	}
	s.publish(d.ID, *line)
	if t.Deployment != nil {
		*d = *t.Deployment
	}
	s.routeAll(t)
	for _, id := range t.Replaced {
		s.stopAppLater(id)
		s.log(ctx, id, gantry.LevelInfo, gantry.LogDeployment, "Replaced by a newer deployment; restart this one to roll back")
	}
	return nil
}

// target finds the owner's deployment a hosting call means: deploymentID
// when given (it must carry sub), else the newest of sub's deployments
// whose status is one of statuses.
func (s *Service) target(ctx context.Context, userID, sub, deploymentID string, statuses ...string) (*gantry.Deployment, error) {
	if deploymentID != "" {
		d, err := s.Store.FindDeployment(ctx, userID, deploymentID)
		if err != nil {
			return nil, err
		}
		if d.Subdomain != sub {
			return nil, gantry.Errorf(gantry.ENOTFOUND, "Deployment not found")
		}
		return d, nil
	}
	ds, err := s.Store.ListDeployments(ctx, userID, gantry.DeploymentFilter{})
	if err != nil {
		return nil, err
	}
	var any bool
	for _, d := range ds {
		if d.Subdomain != sub {
			continue
		}
		any = true
		for _, st := range statuses {
			if d.Status == st {
				return d, nil
			}
		}
	}
	if !any {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "No deployment found for %s", sub)
	}
	return nil, gantry.Errorf(gantry.EINVALID, "No deployment of %s is in a state that allows this", sub)
}

// Stop stops the owner's deployment on sub: a queued or running build is
// cancelled (its whole process tree killed), a live site answers the
// "stopped" page and a server app's processes are ended (SIGTERM, then
// SIGKILL after the runtime's grace period). deploymentID picks one
// deployment when several share sub. The stop is one store transition;
// the build, the app and the subdomain follow once it committed. One that
// finds the deployment no longer stoppable (a failure came first) is
// EINVALID, as a stop of a stopped deployment is. It returns the
// deployment as it is then, secret values masked.
func (s *Service) Stop(ctx context.Context, userID, sub, deploymentID string) (*gantry.Deployment, error) {
	d, err := s.target(ctx, userID, sub, deploymentID, gantry.DeploymentLive, gantry.DeploymentDeploying,
		gantry.DeploymentBuilding, gantry.DeploymentPending)
	if err != nil {
		return nil, err
	}
	if !d.CanStop() {
		return nil, errCannotStop(d.Status)
	}
	// The stop commits first; the subdomain, the build and the app follow
	// it. A build that goes live meanwhile is stopped live.
	t, err := s.Store.StopDeployment(ctx, d.ID, gantry.Change{At: s.now()})
	var te *gantry.TransitionError
	if errors.As(err, &te) {
		return nil, errCannotStop(te.Status)
	} else if err != nil {
		return nil, err
	}
	s.routeAll(t)
	s.cancelBuild(d.ID)
	s.stopApp(d.ID, false)
	if t.From != gantry.DeploymentLive && t.Deployment != nil {
		s.finished(ctx, t.Deployment)
	}
	if t.From == gantry.DeploymentLive {
		s.log(ctx, d.ID, gantry.LevelWarning, gantry.LogDeployment, "Deployment stopped: "+d.URL+" now answers 503")
	}
	return masked(s.Store.FindDeployment(ctx, userID, d.ID))
}

func errCannotStop(status string) error {
	return gantry.Errorf(gantry.EINVALID, "Only live, building or deploying deployments can be stopped (this one is %s)", status)
}

// cancelBuild kills d's running build and waits for it to end.
func (s *Service) cancelBuild(id string) { s.cancelBuildCause(id, errStopped) }

// cancelBuildCause is cancelBuild with the cause the build sees.
func (s *Service) cancelBuildCause(id string, cause error) {
	s.mu.Lock()
	rb := s.running[id]
	s.mu.Unlock()
	if rb != nil {
		rb.cancel(cause)
		<-rb.done
	}
}

// Restart brings a stopped deployment back live on its subdomain from its
// published files, or for a server app by starting it again from its
// workspace (it must answer HTTP before it takes the subdomain), without
// rebuilding: for an older deployment this is a rollback, and the one it
// replaces is stopped. Without deploymentID it is the deployment the
// subdomain last served. A deployment whose files were pruned is ECONFLICT;
// one that is no longer stopped when its go-live runs (another restart, a
// delete) is EINVALID, and the app this call started is ended. It returns
// the deployment as it is then, secret values masked.
func (s *Service) Restart(ctx context.Context, userID, sub, deploymentID string) (*gantry.Deployment, error) {
	if deploymentID == "" {
		// The deployment the subdomain points at (the one that was stopped)
		// comes back, rather than the newest stopped one.
		ps, err := s.Store.ListProjects(ctx, userID)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if p.Subdomain == sub && p.ActiveDeployment != nil {
				deploymentID = p.ActiveDeployment.ID
			}
		}
	}
	d, err := s.target(ctx, userID, sub, deploymentID, gantry.DeploymentStopped)
	if err != nil {
		return nil, err
	}
	if !d.CanRestart() {
		return nil, errCannotRestart(d.Status)
	}
	if d.PrunedAt != nil {
		return nil, gantry.Errorf(gantry.ECONFLICT, gantry.MsgPruned)
	}
	if _, err := os.Stat(s.SiteDir(d.ID)); err != nil && !IsApp(d) {
		return nil, gantry.Errorf(gantry.EINVALID, "This deployment never finished building, so there is nothing to restart: deploy the project again")
	}
	if err := s.bringBack(ctx, userID, d, false, "Deployment restarted: live at "+d.URL, errCannotRestart); err != nil {
		return nil, err
	}
	return masked(s.Store.FindDeployment(ctx, userID, d.ID))
}

// bringBack makes the stopped deployment d live again from the files it
// kept, without rebuilding (Restart, and Promote with promoted set): within
// the plan's live limit, a server app started again from its workspace
// first (it answers before it takes the subdomain; a client that leaves
// does not stop it starting). A go-live that lost to another change (a
// restart, a delete) ends the app this call started and is worded by
// conflict.
//
// The bring-backs of one deployment are serialised (its app lock): a
// second one that waited finds it live and is worded by conflict, so two
// promotes at once change it once.
func (s *Service) bringBack(ctx context.Context, userID string, d *gantry.Deployment, promoted bool, liveLine string, conflict func(status string) error) error {
	l := s.appLock(d.ID)
	l.Lock()
	defer l.Unlock()
	cur, err := s.Store.FindDeployment(ctx, userID, d.ID)
	if err != nil {
		return err
	}
	if cur.Status != gantry.DeploymentStopped {
		return conflict(cur.Status)
	}
	p, err := s.Store.FindProject(ctx, userID, d.ProjectID)
	if err != nil {
		return err
	}
	if err := s.checkLiveLimit(ctx, userID, p, d); err != nil {
		return err
	}
	var run *appRun
	if IsApp(d) {
		run, err = s.startBuilt(context.WithoutCancel(ctx), d)
		if err != nil {
			if gantry.ErrorCode(err) == gantry.EINTERNAL {
				s.logger().Error("start app again", "deployment", d.ID, "err", err)
			}
			return gantry.Errorf(gantry.EINVALID, "The app did not start: %s", appFailure(err))
		}
	}
	if err := s.goLiveAs(context.WithoutCancel(ctx), d, gantry.DeploymentStopped, nil, liveLine, promoted); err != nil {
		var te *gantry.TransitionError
		isTE := errors.As(err, &te)
		if run != nil && !(isTE && te.Status == gantry.DeploymentLive) {
			// Another restart that won keeps the app it registered.
			s.stopOwnApp(d.ID, run)
		}
		if isTE && !te.Pruned {
			return conflict(te.Status)
		}
		return err
	}
	return nil
}

func errCannotRestart(status string) error {
	return gantry.Errorf(gantry.EINVALID, "Only stopped deployments can be restarted (this one is %s)", status)
}

// Delete stops the owner's deployment if it runs (a build or a server
// app), then removes its record and log entries in one store transition,
// and its published files and workspace. If its project's subdomain
// served it, the subdomain answers "no app here" afterwards.
func (s *Service) Delete(ctx context.Context, userID, id string) error {
	d, err := s.Store.FindDeployment(ctx, userID, id)
	if err != nil {
		return err
	}
	s.cancelBuild(d.ID)
	s.stopApp(d.ID, false)
	t, err := s.Store.DeleteDeployment(ctx, d.ID)
	if err != nil {
		return err
	}
	s.routeAll(t)
	// A restart that went live before the delete committed started the
	// app again: the store's outcome (gone) wins.
	s.stopApp(d.ID, false)
	s.removeFiles(d)
	s.publishDeleted(d.ID)
	return nil
}

// Deleted is published on a deployment's Topic once the deployment is
// deleted: its log streams end.
type Deleted struct{}

func (s *Service) publishDeleted(id string) {
	if s.Hub != nil {
		s.Hub.Publish(Topic(id), Deleted{})
	}
}

// removeFiles removes d's published folder and workspace volume, and its
// manifest: its blobs no other deployment links to go with it.
func (s *Service) removeFiles(d *gantry.Deployment) {
	for _, dir := range []string{s.SiteDir(d.ID), s.WorkDir(d.ID)} {
		if err := sandbox.RemoveVolume(dir); err != nil {
			s.logger().Error("remove deployment files", "dir", dir, "err", err)
		}
	}
	forgetBlobs(s, d)
}

// RemoveProject stops and removes every deployment of p, then p itself
// (the project service's DeleteProject), and returns how many deployments
// it had.
func (s *Service) RemoveProject(ctx context.Context, p *gantry.Project) (int, error) {
	ds, err := s.Store.ListDeployments(ctx, p.UserID, gantry.DeploymentFilter{ProjectID: p.ID})
	if err != nil {
		return 0, err
	}
	for _, d := range ds {
		s.cancelBuild(d.ID)
		s.stopApp(d.ID, false)
	}
	if err := s.Store.DeleteProject(ctx, p.UserID, p.ID); err != nil {
		return 0, err
	}
	s.unroute(p)
	for _, d := range ds {
		if d.IsPreview() {
			s.unrouteLabel(p.ID, d.Subdomain)
		}
	}
	for _, d := range ds {
		s.stopApp(d.ID, false) // started again by a restart that committed first
		s.removeFiles(d)
		s.publishDeleted(d.ID)
	}
	s.caches().drop(ctx, p.ID) // its record went with the project
	return len(ds), nil
}

// masked passes on what a store read returned, the deployment's secret
// values masked for an answer.
func masked(d *gantry.Deployment, err error) (*gantry.Deployment, error) {
	if err != nil {
		return nil, err
	}
	d.Environment = d.Environment.Masked()
	return d, nil
}

// Deployments returns the owner's deployments that match f, newest first,
// secret values masked.
func (s *Service) Deployments(ctx context.Context, userID string, f gantry.DeploymentFilter) ([]*gantry.Deployment, error) {
	ds, err := s.Store.ListDeployments(ctx, userID, f)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		d.Environment = d.Environment.Masked()
	}
	return ds, nil
}

// Deployment returns the owner's deployment with its project, user, build
// info, metadata, newest 200 log entries (BuildLogs) and environment,
// secret values masked.
func (s *Service) Deployment(ctx context.Context, userID, id string) (*gantry.Deployment, error) {
	d, err := s.Store.FindDeployment(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	if d.BuildLogs, err = s.Store.Logs(ctx, d.ID, 0, 200); err != nil {
		return nil, err
	}
	return masked(d, nil)
}

// Logs returns the owner's deployment's newest limit entries (200 when
// limit ≤ 0) and the total count.
func (s *Service) Logs(ctx context.Context, userID, id string, limit int) ([]gantry.LogEntry, int, error) {
	if _, err := s.Store.FindDeployment(ctx, userID, id); err != nil {
		return nil, 0, err
	}
	if limit <= 0 {
		limit = 200
	}
	logs, err := s.Store.Logs(ctx, id, 0, limit)
	if err != nil {
		return nil, 0, err
	}
	n, err := s.Store.CountLogs(ctx, id)
	return logs, n, err
}

// ClearLogs deletes the owner's deployment's log entries.
func (s *Service) ClearLogs(ctx context.Context, userID, id string) error {
	if _, err := s.Store.FindDeployment(ctx, userID, id); err != nil {
		return err
	}
	return s.Store.ClearLogs(ctx, id)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
