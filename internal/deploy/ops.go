package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/events"
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
// account's storage is full (usage ≥ budget: see checkStorage); having
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
	if err := s.checkLiveLimit(ctx, userID, p); err != nil {
		return nil, err
	}
	if err := s.checkStorage(ctx, userID); err != nil {
		return nil, err
	}
	d := &gantry.Deployment{
		ProjectID: p.ID, UserID: userID, Version: req.Version,
		Subdomain: p.Subdomain, URL: s.LiveURL(p.Subdomain),
		Status: gantry.DeploymentPending,
		BuildInfo: gantry.BuildInfo{
			BuildCommand:    firstNonEmpty(req.BuildCommand, p.BuildConfig.BuildCommand),
			OutputDirectory: firstNonEmpty(req.OutputDirectory, p.BuildConfig.OutputDirectory),
			InstallCommand:  p.BuildConfig.InstallCommand,
			StartCommand:    p.BuildConfig.StartCommand,
		},
		Metadata: gantry.DeploymentMetadata{
			Branch: p.Branch, Trigger: "manual",
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
	s.followProject(ctx, p.ID)
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

// checkLiveLimit refuses a deployment that would make more of the user's
// projects live than the plan allows.
func (s *Service) checkLiveLimit(ctx context.Context, userID string, p *gantry.Project) error {
	u, err := s.Store.FindUserByID(ctx, userID)
	if err != nil {
		return err
	}
	n, err := s.Store.CountLiveProjects(ctx, userID)
	if err != nil {
		return err
	}
	if p.ActiveDeployment == nil || p.Status != gantry.ProjectDeployed {
		n++ // this project would become live
	}
	if max := u.Subscription.MaxDeployments; n > max {
		return gantry.Errorf(gantry.EFORBIDDEN,
			"Your %s plan allows %d live deployments. Stop or delete one to deploy another.",
			gantry.PlanName(u.Subscription.Plan), max)
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
		s.fail(ctx, d, "Project not found")
		return
	}
	start := s.now()
	d.BuildInfo.StartTime = &start
	if err := s.Store.UpdateDeployment(ctx, d); err != nil {
		s.logger().Error("start build", "deployment", d.ID, "err", err)
	}
	s.followProject(ctx, p.ID)
	s.log(ctx, d.ID, gantry.LevelInfo, gantry.LogDeployment, "Build started")

	timeout := s.BuildTimeout
	if timeout <= 0 {
		timeout = build.DefaultTimeout
	}
	env, secrets, err := s.buildEnv(ctx, p.ID)
	if err != nil {
		s.fail(ctx, d, gantry.ErrorMessage(err))
		return
	}
	// The deployment records the environment it was built with, secrets
	// masked: their values are never stored outside the project's sealed
	// variables.
	d.Environment.Variables = masked(env)
	if err := s.Store.UpdateDeployment(ctx, d); err != nil {
		s.logger().Error("record environment", "deployment", d.ID, "err", err)
	}
	uid, err := s.sandboxUID(ctx, d.UserID)
	if err != nil {
		s.fail(ctx, d, gantry.ErrorMessage(err))
		return
	}
	job := build.Job{
		UID:          uid,
		GID:          uid,
		Disk:         s.BuildDisk,
		AppDisk:      s.AppDisk,
		DeploymentID: d.ID,
		Repository:   p.Repository.FullName,
		CloneURL:     p.Repository.CloneURL,
		Branch:       p.Branch,
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
	}
	keepWorkspace := false
	defer func() {
		if !keepWorkspace {
			sandbox.RemoveVolume(job.Workspace)
			if IsApp(d) && d.FilesSize != 0 {
				s.dropFiles(ctx, d) // its workspace was its files
			}
		}
	}()
	logger := build.LoggerFunc(func(level, msg string) {
		s.log(ctx, d.ID, level, gantry.LogDeployment, redact(msg, secrets))
	})
	res, err := s.Builder.Run(ctx, job, logger)
	if err != nil {
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
		} else {
			s.logger().Error("build", "deployment", d.ID, "err", err)
			s.log(ctx, d.ID, gantry.LevelError, gantry.LogDeployment, msg)
		}
		// The pipeline logged msg as its last line already.
		now := s.now()
		d.Status, d.Error = gantry.DeploymentFailed, msg
		d.BuildInfo.EndTime = &now
		d.BuildInfo.Duration = now.Sub(start).Milliseconds()
		if err := s.Store.UpdateDeployment(context.WithoutCancel(ctx), d); err != nil {
			s.logger().Error("fail deployment", "deployment", d.ID, "err", err)
		}
		s.followProject(ctx, p.ID)
		s.notify(ctx, gantry.DeploymentFailedNotification(d, msg))
		return
	}
	if c := res.Commit.Cleaned(); c != nil {
		d.Metadata.CommitHash = c.SHA
		d.Metadata.CommitMessage = c.Message
		d.Metadata.Author = c.Author
	}
	d.BuildInfo.BuildCommand = res.Config.BuildCommand
	d.BuildInfo.OutputDirectory = res.Config.OutputDirectory
	d.BuildInfo.InstallCommand = res.Config.InstallCommand
	d.BuildInfo.StartCommand = res.Config.StartCommand
	d.BuildInfo.Framework = res.Detection.Framework
	d.BuildInfo.SPA = res.SPA
	d.BuildInfo.BuildSize = res.Size
	d.Status = gantry.DeploymentDeploying
	if err := s.Store.UpdateDeployment(ctx, d); err != nil {
		s.logger().Error("deploying", "deployment", d.ID, "err", err)
	}
	// From here the deployment keeps files (until it fails, is pruned or
	// deleted): they count against the owner's storage.
	s.recordFiles(ctx, d)
	if p.Type == "" || p.Type == "github" {
		p.Type = res.Detection.Framework
		_ = s.Store.UpdateProject(context.WithoutCancel(ctx), p)
	}
	if ctx.Err() != nil {
		return
	}
	target := "" // a server app's address
	if IsApp(d) {
		keepWorkspace = true // kept for restarts, also when stopped while starting
		app, err := s.startApp(ctx, d, nil)
		switch {
		case err == nil:
			target = app.Addr()
		case errors.Is(context.Cause(ctx), errStopped):
			s.log(ctx, d.ID, gantry.LevelWarning, gantry.LogDeployment, "Deployment stopped by user")
			return
		case wctx.Err() != nil:
			return // shutting down: the next Open marks it interrupted
		default:
			keepWorkspace = false
			s.fail(ctx, d, appFailure(err))
			return
		}
		if ctx.Err() != nil {
			s.stopApp(d.ID, false)
			return
		}
	}
	now := s.now()
	d.BuildInfo.EndTime = &now
	d.BuildInfo.Duration = now.Sub(start).Milliseconds()
	if err := s.goLive(context.WithoutCancel(ctx), d, target, "Deployment is live at "+d.URL); err != nil {
		s.stopApp(d.ID, false)
		d.BuildInfo.EndTime = nil
		s.fail(ctx, d, "Publishing failed: "+gantry.ErrorMessage(err))
		keepWorkspace = false
		s.dropFiles(ctx, d)
		return
	}
	s.notify(ctx, gantry.DeploymentLiveNotification(d))
	s.prune(ctx, d.ProjectID)
}

func (s *Service) sitesDir() string { return s.SiteDir("") }

// goLive points d's subdomain at d atomically — at its published files, or
// at its running server app when target (the app's address) is set — and
// stops the deployment it replaces (its files stay, so restarting it is a
// rollback); a replaced app is drained and stopped in the background.
// liveLine is logged (level success) as the switch happens.
func (s *Service) goLive(ctx context.Context, d *gantry.Deployment, target, liveLine string) error {
	s.switchMu.Lock()
	defer s.switchMu.Unlock()
	p, err := s.Store.FindProject(ctx, "", d.ProjectID)
	if err != nil {
		return err
	}
	// Pruning marks deployments under switchMu: one marked already has
	// lost (or is losing) its files.
	if cur, err := s.Store.FindDeployment(ctx, "", d.ID); err != nil {
		return err
	} else if cur.PrunedAt != nil {
		return gantry.Errorf(gantry.ECONFLICT, gantry.MsgPruned)
	}
	if target != "" {
		s.Sites.Proxy(d.Subdomain, d.ID, target)
	} else {
		s.Sites.Serve(d.Subdomain, d.ID, s.SiteDir(d.ID), d.BuildInfo.SPA)
	}
	// The line comes before the status, so whoever sees "live" finds it.
	s.log(ctx, d.ID, gantry.LevelSuccess, gantry.LogDeployment, liveLine)
	d.Status = gantry.DeploymentLive
	if err := s.Store.UpdateDeployment(ctx, d); err != nil {
		return err
	}
	if err := s.Store.SetActiveDeployment(ctx, p.ID, d.ID); err != nil {
		return err
	}
	if prev := p.ActiveDeployment; prev != nil && prev.ID != d.ID {
		s.stopAppLater(prev.ID)
		if old, err := s.Store.FindDeployment(ctx, "", prev.ID); err == nil && old.Status == gantry.DeploymentLive {
			old.Status = gantry.DeploymentStopped
			if err := s.Store.UpdateDeployment(ctx, old); err == nil {
				s.log(ctx, old.ID, gantry.LevelInfo, gantry.LogDeployment,
					"Replaced by a newer deployment; restart this one to roll back")
			}
		}
	}
	s.followProject(ctx, p.ID)
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
// deployment when several share sub.
func (s *Service) Stop(ctx context.Context, userID, sub, deploymentID string) (*gantry.Deployment, error) {
	d, err := s.target(ctx, userID, sub, deploymentID, gantry.DeploymentLive, gantry.DeploymentDeploying,
		gantry.DeploymentBuilding, gantry.DeploymentPending)
	if err != nil {
		return nil, err
	}
	if !d.CanStop() {
		return nil, gantry.Errorf(gantry.EINVALID, "Only live, building or deploying deployments can be stopped (this one is %s)", d.Status)
	}
	s.switchMu.Lock()
	wasLive := d.Status == gantry.DeploymentLive
	d.Status = gantry.DeploymentStopped
	if d.BuildInfo.StartTime != nil && d.BuildInfo.EndTime == nil {
		now := s.now()
		d.BuildInfo.EndTime = &now
		d.BuildInfo.Duration = now.Sub(*d.BuildInfo.StartTime).Milliseconds()
	}
	err = s.Store.UpdateDeployment(ctx, d)
	if err == nil && wasLive {
		s.Sites.Stopped(d.Subdomain, d.ID)
	}
	s.switchMu.Unlock()
	if err != nil {
		return nil, err
	}
	s.cancelBuild(d.ID)
	s.stopApp(d.ID, false)
	if wasLive {
		s.log(ctx, d.ID, gantry.LevelWarning, gantry.LogDeployment, "Deployment stopped: "+d.URL+" now answers 503")
	}
	s.followProject(ctx, d.ProjectID)
	return s.Store.FindDeployment(ctx, userID, d.ID)
}

// cancelBuild kills d's running build and waits for it to end.
func (s *Service) cancelBuild(id string) {
	s.mu.Lock()
	rb := s.running[id]
	s.mu.Unlock()
	if rb != nil {
		rb.cancel(errStopped)
		<-rb.done
	}
}

// Restart brings a stopped deployment back live on its subdomain from its
// published files, or for a server app by starting it again from its
// workspace (it must answer HTTP before it takes the subdomain), without
// rebuilding: for an older deployment this is a rollback, and the one it
// replaces is stopped. Without deploymentID it is the deployment the
// subdomain last served. A deployment whose files were pruned is ECONFLICT.
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
		return nil, gantry.Errorf(gantry.EINVALID, "Only stopped deployments can be restarted (this one is %s)", d.Status)
	}
	if d.PrunedAt != nil {
		return nil, gantry.Errorf(gantry.ECONFLICT, gantry.MsgPruned)
	}
	if _, err := os.Stat(s.SiteDir(d.ID)); err != nil && !IsApp(d) {
		return nil, gantry.Errorf(gantry.EINVALID, "This deployment never finished building, so there is nothing to restart: deploy the project again")
	}
	p, err := s.Store.FindProject(ctx, userID, d.ProjectID)
	if err != nil {
		return nil, err
	}
	if err := s.checkLiveLimit(ctx, userID, p); err != nil {
		return nil, err
	}
	target := ""
	if IsApp(d) {
		// The app answers before it takes the subdomain; a client that
		// leaves does not stop it starting.
		app, err := s.startApp(context.WithoutCancel(ctx), d, nil)
		if err != nil {
			if gantry.ErrorCode(err) == gantry.EINTERNAL {
				s.logger().Error("restart app", "deployment", d.ID, "err", err)
			}
			return nil, gantry.Errorf(gantry.EINVALID, "The app did not start: %s", appFailure(err))
		}
		target = app.Addr()
	}
	if err := s.goLive(ctx, d, target, "Deployment restarted: live at "+d.URL); err != nil {
		s.stopApp(d.ID, false)
		return nil, err
	}
	return s.Store.FindDeployment(ctx, userID, d.ID)
}

// Delete stops the owner's deployment if it runs (a build or a server
// app), then removes its record, log entries, published files and
// workspace. If its project's subdomain
// served it, the subdomain answers "no app here" afterwards.
func (s *Service) Delete(ctx context.Context, userID, id string) error {
	d, err := s.Store.FindDeployment(ctx, userID, id)
	if err != nil {
		return err
	}
	s.cancelBuild(d.ID)
	s.stopApp(d.ID, false)
	s.switchMu.Lock()
	p, perr := s.Store.FindProject(ctx, "", d.ProjectID)
	if perr == nil && p.ActiveDeployment != nil && p.ActiveDeployment.ID == d.ID {
		s.Sites.Remove(d.Subdomain)
	}
	err = s.Store.DeleteDeployment(ctx, d.ID)
	s.switchMu.Unlock()
	if err != nil {
		return err
	}
	s.removeFiles(d.ID)
	s.followProject(ctx, d.ProjectID)
	return nil
}

func (s *Service) removeFiles(id string) {
	for _, dir := range []string{s.SiteDir(id), s.WorkDir(id)} {
		if err := sandbox.RemoveVolume(dir); err != nil {
			s.logger().Error("remove deployment files", "dir", dir, "err", err)
		}
	}
}

// DeleteProject stops and removes every deployment of the owner's project,
// then the project, and tells the owner.
func (s *Service) DeleteProject(ctx context.Context, userID, projectID string) error {
	p, err := s.Store.FindProject(ctx, userID, projectID)
	if err != nil {
		return err
	}
	ds, err := s.Store.ListDeployments(ctx, userID, gantry.DeploymentFilter{ProjectID: p.ID})
	if err != nil {
		return err
	}
	for _, d := range ds {
		s.cancelBuild(d.ID)
		s.stopApp(d.ID, false)
	}
	s.switchMu.Lock()
	s.Sites.Remove(p.Subdomain)
	err = s.Store.DeleteProject(ctx, userID, p.ID)
	s.switchMu.Unlock()
	if err != nil {
		return err
	}
	for _, d := range ds {
		s.removeFiles(d.ID)
	}
	s.notify(ctx, gantry.ProjectDeletedNotification(p, len(ds)))
	return nil
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

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Follow checks that the deployment is the owner's and subscribes to its
// new log entries. Subscribe before reading the backlog (LogsAfter) and
// skip live entries already read, and nothing is lost or doubled.
func (s *Service) Follow(ctx context.Context, userID, id string) (*events.Subscription, error) {
	if _, err := s.Store.FindDeployment(ctx, userID, id); err != nil {
		return nil, err
	}
	return s.Hub.Subscribe(Topic(id)), nil
}

// LogsAfter returns the deployment's stored entries numbered above after.
func (s *Service) LogsAfter(ctx context.Context, id string, after int64) ([]gantry.LogEntry, error) {
	return s.Store.Logs(ctx, id, after, 0)
}

// LastSeq returns the number of the deployment's newest stored entry (0
// when none).
func (s *Service) LastSeq(ctx context.Context, id string) (int64, error) {
	logs, err := s.Store.Logs(ctx, id, 0, 1)
	if err != nil || len(logs) == 0 {
		return 0, err
	}
	return logs[0].Seq, nil
}
