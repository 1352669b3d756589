package deploy

import (
	"context"
	"errors"
	"fmt"
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
	if err := s.builds.checkLiveLimit(ctx, userID, p, &gantry.Deployment{Target: gantry.TargetProduction}); err != nil {
		return nil, err
	}
	made, err := s.storage.checkStorage(ctx, userID)
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
	if err := s.Store.QueueDeployment(ctx, d, s.builds.maxPending()); err != nil {
		return nil, err
	}
	pos, _ := s.Store.QueuePosition(ctx, d.ID)
	msg := "Deployment queued"
	if pos > 1 {
		msg = fmt.Sprintf("Deployment queued: position %d, waiting for %d build%s ahead", pos, pos-1, plural(pos-1))
	}
	s.log(ctx, d.ID, gantry.LevelInfo, gantry.LogDeployment, msg)
	s.storage.logRoom(ctx, d.ID, made)
	s.builds.kick()
	// Answer what was created (pending), not a re-read: a worker may have
	// claimed it already.
	d.Project = &gantry.DeploymentProject{ID: p.ID, Name: p.Name, Description: p.Description, Type: p.Type,
		BuildConfig: p.BuildConfig, Repository: p.Repository}
	if u, err := s.Store.FindUserByID(ctx, userID); err == nil {
		d.User = &gantry.DeploymentUser{ID: u.ID, FullName: u.FullName, Username: u.Username}
	}
	return d, nil
}

func (s *core) sitesDir() string { return s.SiteDir("") }

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
	s.release.routeAll(t)
	s.builds.cancelBuild(d.ID)
	s.apps.stopApp(d.ID, false)
	if t.From != gantry.DeploymentLive && t.Deployment != nil {
		s.release.finished(ctx, t.Deployment)
	}
	if t.From == gantry.DeploymentLive {
		s.log(ctx, d.ID, gantry.LevelWarning, gantry.LogDeployment, "Deployment stopped: "+d.URL+" now answers 503")
	}
	return masked(s.Store.FindDeployment(ctx, userID, d.ID))
}

func errCannotStop(status string) error {
	return gantry.Errorf(gantry.EINVALID, "Only live, building or deploying deployments can be stopped (this one is %s)", status)
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
	if missing, err := siteMissing(ctx, s, d); err != nil {
		return nil, err
	} else if missing {
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
	l := s.apps.appLock(d.ID)
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
	if err := s.builds.checkLiveLimit(ctx, userID, p, d); err != nil {
		return err
	}
	var run *appRun
	if IsApp(d) {
		run, err = s.apps.startBuilt(context.WithoutCancel(ctx), d)
		if err != nil {
			if gantry.ErrorCode(err) == gantry.EINTERNAL {
				s.logger().Error("start app again", "deployment", d.ID, "err", err)
			}
			return gantry.Errorf(gantry.EINVALID, "The app did not start: %s", appFailure(err))
		}
	}
	if err := s.release.goLiveAs(context.WithoutCancel(ctx), d, gantry.DeploymentStopped, nil, liveLine, promoted); err != nil {
		var te *gantry.TransitionError
		isTE := errors.As(err, &te)
		if run != nil && !(isTE && te.Status == gantry.DeploymentLive) {
			// Another restart that won keeps the app it registered.
			s.apps.stopOwnApp(d.ID, run)
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
	s.builds.cancelBuild(d.ID)
	s.apps.stopApp(d.ID, false)
	t, err := s.Store.DeleteDeployment(ctx, d.ID)
	if err != nil {
		return err
	}
	s.release.routeAll(t)
	// A restart that went live before the delete committed started the
	// app again: the store's outcome (gone) wins.
	s.apps.stopApp(d.ID, false)
	s.storage.removeFiles(d)
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
func (s *storage) removeFiles(d *gantry.Deployment) {
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
		s.builds.cancelBuild(d.ID)
		s.apps.stopApp(d.ID, false)
	}
	if err := s.Store.DeleteProject(ctx, p.UserID, p.ID); err != nil {
		return 0, err
	}
	s.release.unroute(p)
	for _, d := range ds {
		if d.IsPreview() {
			s.release.unrouteLabel(p.ID, d.Subdomain)
		}
	}
	for _, d := range ds {
		s.apps.stopApp(d.ID, false) // started again by a restart that committed first
		s.storage.removeFiles(d)
		s.publishDeleted(d.ID)
	}
	s.storage.caches().drop(ctx, p.ID)  // its record went with the project
	s.storage.removeData(ctx, p.ID, "") // every app of it has stopped
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
