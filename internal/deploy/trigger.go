package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gantryhq/gantry"
)

// triggers is the deploy service's triggers capability: the deploys that
// pushes, hooks and pull requests ask for (Trigger), superseding older
// builds, and the commit watcher (watch.go).
type triggers struct {
	*core
	*TriggersConfig
	builds  *builds
	release *release
	apps    *apps
	storage *storage
}

// errSuperseded is the cause of a build cancelled by a newer commit of
// the same branch (supersede).
var errSuperseded = errors.New("superseded by a newer commit")

// MsgAutoDeployOff is Trigger's EFORBIDDEN answer for a project whose
// auto-deploy switch is off.
const MsgAutoDeployOff = "Auto-deploy is off for this project: turn it on to deploy on pushes and deploy hooks"

// Trigger queues a deployment nobody clicked for — a push, a pull request,
// a deploy hook, a new commit the watcher saw — and returns it pending.
// It refuses (EFORBIDDEN, MsgAutoDeployOff) when the project's AutoDeploy
// is off. The target is production for the project's production branch
// without a pull request, a preview otherwise (served on
// gantry.PreviewLabel). Without a commit the branch's head is looked up
// (Heads; a branch that does not exist is ENOTFOUND "Branch not found").
// The deployment is queued as Create queues one (live-deployment limit,
// storage budget, pending cap), and the queued or running build of the
// same project, target and branch (or pull request) that it supersedes
// ends stopped with a log line naming the newer commit.
func (s *triggers) Trigger(ctx context.Context, t gantry.DeployTrigger) (*gantry.Deployment, error) {
	if !gantry.ValidID(t.ProjectID) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	}
	p, err := s.Store.FindProject(ctx, "", t.ProjectID)
	if err != nil {
		return nil, err
	}
	if !p.AutoDeploy {
		return nil, gantry.Errorf(gantry.EFORBIDDEN, MsgAutoDeployOff)
	}
	switch t.Trigger {
	case gantry.TriggerPush, gantry.TriggerHook, gantry.TriggerPullRequest:
	default:
		return nil, fmt.Errorf("trigger: unknown trigger %q", t.Trigger)
	}
	if t.PullRequest < 0 {
		return nil, gantry.Errorf(gantry.EINVALID, "Invalid pull request number")
	}
	branch := gantry.FirstNonBlank(t.Branch, p.Branch)
	if err := gantry.ValidateBranch(branch); err != nil {
		return nil, err
	}
	c := t.Commit
	if c == nil {
		if c, err = s.branchHead(ctx, p, branch); err != nil {
			return nil, err
		}
	}
	c = c.Cleaned()
	if c == nil || !gantry.ValidCommitSHA(c.SHA) {
		return nil, gantry.Errorf(gantry.EINVALID, "Invalid commit hash")
	}
	target := gantry.TargetPreview
	if branch == p.Branch && t.PullRequest == 0 {
		target = gantry.TargetProduction
	}
	d := s.newDeployment(p, target, gantry.DeploymentMetadata{
		CommitHash: c.SHA, CommitMessage: c.Message, Author: c.Author,
		Branch: branch, Trigger: t.Trigger, PullRequest: t.PullRequest, Fork: t.Fork && t.PullRequest > 0,
	})
	if err := s.queue(ctx, p, d); err != nil {
		return nil, err
	}
	s.supersede(ctx, d)
	return d, nil
}

// branchHead looks branch's head commit of p's repository up.
//
// Outside GitHub one `git ls-remote` (Branches) answers: the build then
// records the commit's message and author. GitHub's API (Heads) gives
// them at once, with the owner's token for a private repository.
func (s *triggers) branchHead(ctx context.Context, p *gantry.Project, branch string) (*gantry.Commit, error) {
	if s.Branches != nil && !p.Repository.OnGitHub() {
		sha, err := s.Branches.LsRemoteBranch(ctx, gantry.FirstNonBlank(p.Repository.CloneURL, p.Repository.URL), branch)
		if gantry.ErrorCode(err) == gantry.ENOTFOUND {
			return nil, gantry.Errorf(gantry.ENOTFOUND, "Branch not found")
		} else if err != nil {
			return nil, err
		}
		return &gantry.Commit{SHA: sha}, nil
	}
	if s.Heads == nil {
		return nil, gantry.Errorf(gantry.EUNAVAILABLE, "This server cannot look branches up")
	}
	token := ""
	if p.Repository.Private {
		token = s.ownerToken(ctx, p)
	}
	c, err := s.Heads.LatestCommit(ctx, p.Repository, branch, token)
	if gantry.ErrorCode(err) == gantry.ENOTFOUND {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Branch not found")
	} else if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Branch not found")
	}
	return c, nil
}

// newDeployment is a pending deployment of p for target with meta: a
// preview on its own label, production on the project's subdomain.
func (s *triggers) newDeployment(p *gantry.Project, target string, meta gantry.DeploymentMetadata) *gantry.Deployment {
	sub := p.Subdomain
	if target == gantry.TargetPreview {
		sub = gantry.PreviewLabel(p.ID, p.Subdomain, meta.Branch, meta.PullRequest)
	}
	meta.Repository = gantry.MetadataRepository{FullName: p.Repository.FullName}
	return &gantry.Deployment{
		ProjectID: p.ID, UserID: p.UserID, Version: gantry.DefaultVersion,
		Subdomain: sub, URL: s.LiveURL(sub), Target: target,
		Status: gantry.DeploymentPending,
		BuildInfo: gantry.BuildInfo{
			BuildCommand:    p.BuildConfig.BuildCommand,
			OutputDirectory: p.BuildConfig.OutputDirectory,
			InstallCommand:  p.BuildConfig.InstallCommand,
			StartCommand:    p.BuildConfig.StartCommand,
		},
		Metadata:    meta,
		Environment: gantry.DeploymentEnv{Variables: []gantry.EnvVar{}},
	}
}

// queue checks the owner's limits (live deployments, storage), queues d
// (the store's pending cap), logs its place in the queue and wakes a
// worker; d gets its project and user embedded for the answer.
func (s *triggers) queue(ctx context.Context, p *gantry.Project, d *gantry.Deployment) error {
	if err := s.builds.checkLiveLimit(ctx, p.UserID, p, d); err != nil {
		return err
	}
	made, err := s.storage.checkStorage(ctx, p.UserID)
	if err != nil {
		return err
	}
	if err := s.Store.QueueDeployment(ctx, d, s.builds.maxPending()); err != nil {
		return err
	}
	pos, _ := s.Store.QueuePosition(ctx, d.ID)
	msg := "Deployment queued"
	if pos > 1 {
		msg = fmt.Sprintf("Deployment queued: position %d, waiting for %d build%s ahead", pos, pos-1, plural(pos-1))
	}
	if d.Metadata.CommitHash != "" {
		msg += " (" + strings.TrimSpace(gantry.ShortSHA(d.Metadata.CommitHash)+" "+firstLine(d.Metadata.CommitMessage)) + ")"
	}
	s.log(ctx, d.ID, gantry.LevelInfo, gantry.LogDeployment, msg)
	s.storage.logRoom(ctx, d.ID, made)
	s.builds.kick()
	d.Project = &gantry.DeploymentProject{ID: p.ID, Name: p.Name, Description: p.Description, Type: p.Type,
		BuildConfig: p.BuildConfig, Repository: p.Repository}
	if u, err := s.Store.FindUserByID(ctx, p.UserID); err == nil {
		d.User = &gantry.DeploymentUser{ID: u.ID, FullName: u.FullName, Username: u.Username}
	}
	return nil
}

// firstLine is the first line of a commit message.
func firstLine(msg string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	return line
}

// supersede stops the queued or running builds of newer's project, target
// and label (branch or pull request) that were queued before it: each ends
// stopped with "Cancelled: superseded by <sha> (<message>)" as its last
// line, and its running build is cancelled after the stop committed.
func (s *triggers) supersede(ctx context.Context, newer *gantry.Deployment) {
	ctx = context.WithoutCancel(ctx)
	ds, err := s.Store.ListDeployments(ctx, newer.UserID, gantry.DeploymentFilter{ProjectID: newer.ProjectID, Target: newer.Target})
	if err != nil {
		s.logger().Error("supersede", "deployment", newer.ID, "err", err)
		return
	}
	reason := fmt.Sprintf("Cancelled: superseded by %s", gantry.ShortSHA(newer.Metadata.CommitHash))
	if m := firstLine(newer.Metadata.CommitMessage); m != "" {
		reason += " (" + m + ")"
	}
	for _, d := range ds {
		if d.ID == newer.ID || !d.InProgress() || d.Subdomain != newer.Subdomain ||
			d.Metadata.Branch != newer.Metadata.Branch || d.Metadata.PullRequest != newer.Metadata.PullRequest ||
			d.CreatedAt.After(newer.CreatedAt) {
			continue
		}
		t, err := s.Store.StopDeployment(ctx, d.ID, gantry.Change{At: s.now(), Line: s.line(gantry.LevelWarning, reason)})
		if err != nil {
			if !lost(err) {
				s.logger().Error("supersede", "deployment", d.ID, "err", err)
			}
			continue
		}
		if t.Deployment != nil {
			// The line was stored in the transition: stream it too.
			logs, _ := s.Store.Logs(ctx, d.ID, 0, 1)
			for _, e := range logs {
				s.publish(d.ID, e)
			}
		}
		s.release.routeAll(t)
		s.builds.cancelBuildCause(d.ID, errSuperseded)
		s.apps.stopApp(d.ID, false)
		s.release.finished(ctx, t.Deployment)
	}
}

// Redeploy queues a new deployment of the owner's deployment id's commit,
// branch, target and pull request (trigger "redeploy"); noCache asks the
// build not to reuse cached dependencies. A deployment that never
// recorded its commit (it failed before cloning) builds its branch's
// head.
func (s *Service) Redeploy(ctx context.Context, userID, id string, noCache bool) (*gantry.Deployment, error) {
	if !gantry.ValidID(id) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Deployment not found")
	}
	old, err := s.Store.FindDeployment(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	p, err := s.Store.FindProject(ctx, userID, old.ProjectID)
	if err != nil {
		return nil, err
	}
	meta := old.Metadata
	meta.Trigger = gantry.TriggerRedeploy
	meta.Branch = gantry.FirstNonBlank(meta.Branch, p.Branch)
	if !gantry.ValidCommitSHA(meta.CommitHash) {
		meta.CommitHash, meta.CommitMessage, meta.Author = "", "", ""
	}
	d := s.triggers.newDeployment(p, targetOf(old), meta)
	d.Version = old.Version
	d.BuildInfo.BuildCommand = gantry.FirstNonBlank(old.BuildInfo.BuildCommand, p.BuildConfig.BuildCommand)
	d.BuildInfo.OutputDirectory = gantry.FirstNonBlank(old.BuildInfo.OutputDirectory, p.BuildConfig.OutputDirectory)
	d.NoCache = noCache
	if err := s.triggers.queue(ctx, p, d); err != nil {
		return nil, err
	}
	if d.Metadata.CommitHash != "" {
		s.triggers.supersede(ctx, d)
	}
	return d, nil
}

// MsgPromotePreview is Promote's ECONFLICT answer for a preview.
const MsgPromotePreview = "A preview cannot be promoted to production: it was built with the preview's environment variables. Redeploy its commit to production instead."

// MsgPromoteLive is Promote's ECONFLICT answer for a deployment that is
// live already (promoted by another request a moment before, perhaps).
const MsgPromoteLive = "This deployment is live in production already: nothing was changed. Reload to see its current state."

// Promote makes the owner's earlier production deployment id live again
// as production (a rollback, or forward again): it must have built
// successfully and still have its files (stopped, not pruned). No build
// runs: one GoLive transition from stopped, as a restart, that records
// PromotedAt; the one it replaces is stopped. A preview is ECONFLICT
// (MsgPromotePreview); a deployment that is live already is ECONFLICT
// (MsgPromoteLive), also when another promote of it won the race: two
// promotes at once change it once.
func (s *Service) Promote(ctx context.Context, userID, id string) (*gantry.Deployment, error) {
	if !gantry.ValidID(id) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Deployment not found")
	}
	d, err := s.Store.FindDeployment(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	switch {
	case d.IsPreview():
		return nil, gantry.Errorf(gantry.ECONFLICT, MsgPromotePreview)
	case d.Status == gantry.DeploymentLive:
		return nil, gantry.Errorf(gantry.ECONFLICT, MsgPromoteLive)
	case d.Status != gantry.DeploymentStopped || d.BuildInfo.EndTime == nil || d.FilesSize <= 0 && d.PrunedAt == nil:
		// Stopped while building: it has no files to serve.
		return nil, gantry.Errorf(gantry.ECONFLICT, "Only a deployment that built successfully can be promoted (this one is %s)", d.Status)
	case d.PrunedAt != nil:
		return nil, gantry.Errorf(gantry.ECONFLICT, gantry.MsgPruned)
	}
	if missing, err := siteMissing(ctx, s, d); err != nil {
		return nil, err
	} else if missing {
		return nil, gantry.Errorf(gantry.ECONFLICT, "This deployment never finished building, so it cannot be promoted: redeploy it instead")
	}
	conflict := func(status string) error {
		if status == gantry.DeploymentLive {
			return gantry.Errorf(gantry.ECONFLICT, MsgPromoteLive)
		}
		return gantry.Errorf(gantry.ECONFLICT, "This deployment is %s now: reload to see its current state", status)
	}
	if err := s.bringBack(ctx, userID, d, true, "Promoted to production: live at "+d.URL, conflict); err != nil {
		return nil, err
	}
	d.Environment = d.Environment.Masked()
	return d, nil
}

// RemovePreviews stops and removes the preview deployments of project
// projectID built for pull request pullRequest (> 0), or else for branch
// outside any pull request, and so their label (a pull request closed, a branch deleted): builds are
// cancelled, apps ended, records and files removed, and the label answers
// "no app here".
func (s *Service) RemovePreviews(ctx context.Context, projectID string, pullRequest int, branch string) error {
	p, err := s.Store.FindProject(ctx, "", projectID)
	if err != nil {
		return err
	}
	ds, err := s.Store.ListDeployments(ctx, p.UserID, gantry.DeploymentFilter{ProjectID: p.ID, Target: gantry.TargetPreview})
	if err != nil {
		return err
	}
	removed := map[string]bool{}
	for _, d := range ds {
		// By what the preview was built from, not by label: branch "pr-1"
		// is not pull request #1, and a label made by an older scheme
		// still goes with its pull request or branch.
		if d.Metadata.PullRequest != pullRequest || (pullRequest == 0 && d.Metadata.Branch != branch) {
			continue
		}
		if err := s.Delete(ctx, p.UserID, d.ID); err != nil && gantry.ErrorCode(err) != gantry.ENOTFOUND {
			return err
		}
		removed[gantry.DataFolderName(d)] = true
	}
	for name := range removed { // its apps stopped with their deployments
		s.storage.removeData(ctx, p.ID, name)
	}
	return nil
}

// Previews returns the owner's project's previews: the newest deployment
// of each preview label, newest first, secret values masked.
func (s *Service) Previews(ctx context.Context, userID, projectID string) ([]*gantry.Deployment, error) {
	if !gantry.ValidID(projectID) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	}
	if _, err := s.Store.FindProject(ctx, userID, projectID); err != nil {
		return nil, err
	}
	ds, err := s.Store.ListDeployments(ctx, userID, gantry.DeploymentFilter{ProjectID: projectID, Target: gantry.TargetPreview})
	if err != nil {
		return nil, err
	}
	out := []*gantry.Deployment{}
	seen := map[string]bool{}
	for _, d := range ds {
		if seen[d.Subdomain] {
			continue
		}
		seen[d.Subdomain] = true
		d.Environment = d.Environment.Masked()
		out = append(out, d)
	}
	return out, nil
}
