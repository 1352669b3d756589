// Package project keeps users' projects and their environment variables:
// creating them from a repository (any public git host, or the user's
// connected GitHub account), changing, syncing and deleting them. The
// deployments of a project are internal/deploy's; this package asks it to
// remove them (Deployments) when a project is deleted.
package project

import (
	"context"
	"regexp"
	"strings"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/secret"
)

// Store is what Service needs of the database (internal/store implements
// it).
type Store interface {
	FindUserByID(ctx context.Context, id string) (*gantry.User, error)
	CreateProject(ctx context.Context, p *gantry.Project) error
	FindProject(ctx context.Context, userID, id string) (*gantry.Project, error)
	ListProjects(ctx context.Context, userID string) ([]*gantry.Project, error)
	UpdateProject(ctx context.Context, p *gantry.Project) error
	SetRepository(ctx context.Context, userID, id string, r gantry.Repository) error
	CountProjects(ctx context.Context, userID string) (int, error)
	ProjectEnv(ctx context.Context, projectID string) ([]gantry.EnvVar, error)
	SetProjectEnv(ctx context.Context, userID, projectID string, vars []gantry.EnvVar) error
	// AppData records the apps' data folders (store.AppData).
	AppData() gantry.AppDataStore
}

// Deployments ends a project's deployments; *deploy.Service is the real
// one.
type Deployments interface {
	// RemoveProject stops and removes every deployment of p, then p
	// itself, and returns how many deployments it had.
	RemoveProject(ctx context.Context, p *gantry.Project) (int, error)
}

// Service keeps projects and their environment variables.
type Service struct {
	Store       Store
	Repos       Repos
	Deployments Deployments
	// Notify tells owners about their projects: created, deleted. Nil
	// sends nothing.
	Notify gantry.Notifier
	// Decrypt opens a user's sealed GitHub access token (secret.Box.Open
	// in cmd/gantry). Nil means stored tokens are never used: private
	// repositories then cannot be looked up or synced.
	Decrypt func(sealed string) (string, error)
	// Secrets seals the values of secret environment variables; nil
	// refuses to store secrets.
	Secrets *secret.Box
	// Webhooks keeps the GitHub webhooks of projects made from a connected
	// repository (*ghhook.Service); nil registers none.
	Webhooks Webhooks
	// Hooks seals deploy hook tokens (secret.DeployHooks); nil: projects
	// have no deploy hook URL.
	Hooks *secret.Box
	// PublicURL is where the API is reached: deploy hook URLs start with it.
	PublicURL string
	// Deleted, when set, is called after a project is deleted (cmd/gantry:
	// reload the custom domain routes, which went with the project).
	Deleted func(ctx context.Context)
}

// Webhooks registers a project's repository webhook at GitHub when it is
// created and removes it before the project is deleted. Both are best
// effort: failures are the implementation's to log and record, never the
// project's.
type Webhooks interface {
	Register(ctx context.Context, u *gantry.User, p *gantry.Project)
	Unregister(ctx context.Context, p *gantry.Project)
}

func (s *Service) notify(ctx context.Context, n *gantry.Notification) {
	if s.Notify != nil {
		s.Notify.Notify(ctx, n)
	}
}

// DeleteProject removes the project's GitHub webhook (best effort), stops
// and removes every deployment of the owner's project, then the project,
// and tells the owner.
func (s *Service) DeleteProject(ctx context.Context, userID, projectID string) error {
	p, err := s.Store.FindProject(ctx, userID, projectID)
	if err != nil {
		return err
	}
	if s.Webhooks != nil {
		s.Webhooks.Unregister(ctx, p)
	}
	n, err := s.Deployments.RemoveProject(ctx, p)
	if err != nil {
		return err
	}
	s.notify(ctx, gantry.ProjectDeletedNotification(p, n))
	if s.Deleted != nil {
		s.Deleted(ctx)
	}
	return nil
}

// Repos looks repositories up; *githost.Service is the real one.
type Repos interface {
	LookupAs(ctx context.Context, rawURL, token string) (*githost.LookupResult, error)
	LatestCommit(ctx context.Context, repo gantry.Repository, branch, token string) (*gantry.Commit, error)
	LookupGitHubID(ctx context.Context, token string, id int64, branch string) (*githost.LookupResult, error)
}

// Input is the body of POST /api/projects/public and PUT
// /api/projects/{id}: the fields a user may set. Fields left nil keep
// their value on update (and take their default on create).
type Input struct {
	// Repository names the repository to create the project from (create
	// only): see RepositoryInput.
	Repository  *RepositoryInput    `json:"repository"`
	Name        *string             `json:"name"`
	Description *string             `json:"description"`
	Branch      *string             `json:"branch"`
	BuildConfig *gantry.BuildConfig `json:"buildConfig"`
	// ShowInDiscover lists the project's live app in Discover; by default
	// on for a public repository, off for a private one.
	ShowInDiscover *bool `json:"showInDiscover"`
	// AutoDeploy lets pushes, pull requests, the deploy hook and the
	// commit watcher deploy (update only; a new project starts on).
	AutoDeploy *bool `json:"autoDeploy"`
	// WatchCommits polls the production branch for new commits (update
	// only; a new project starts off).
	WatchCommits *bool `json:"watchCommits"`
	// AlwaysOn keeps the project's server app running however long it
	// goes without a request; paid plans only (gantry.PlanAllowsAlwaysOn).
	AlwaysOn *bool `json:"alwaysOn"`
}

// RepositoryInput is the repository a client names when it creates a
// project. Clients may send back the lookup's repository object as it was
// answered, but only its URL is read (cloneUrl when url is empty): every
// fact about the repository — id, names, description, default branch,
// privacy, latest commit — comes from the server's own lookup of that URL,
// and the other fields are ignored.
type RepositoryInput struct {
	URL      string `json:"url"`
	CloneURL string `json:"cloneUrl"`
	// Accepted so that the lookup's answer can be sent back; never read.
	Description   string         `json:"description"`
	LastCommit    *gantry.Commit `json:"lastCommit"`
	ID            string         `json:"id"`
	Name          string         `json:"name"`
	FullName      string         `json:"fullName"`
	DefaultBranch string         `json:"defaultBranch"`
	Private       bool           `json:"private"`
}

// Normalize trims the fields that are set; a description's CR LF line
// ends become LF.
func (in *Input) Normalize() {
	for _, p := range []*string{in.Name, in.Description, in.Branch} {
		if p != nil {
			*p = strings.TrimSpace(*p)
		}
	}
	if in.Description != nil {
		*in.Description = strings.ReplaceAll(*in.Description, "\r\n", "\n")
	}
	if in.BuildConfig != nil {
		in.BuildConfig.Normalize()
	}
}

// Validate checks the fields that are set, in the order name, description,
// branch, build settings, and returns the first failure as EINVALID (see
// gantry.ValidateProjectName and the others). An empty branch is valid: it
// means the repository's default branch. Call Normalize first. It needs
// no network: the API runs it before it starts a repository lookup.
func (in *Input) Validate() error {
	if in.Name != nil {
		if err := gantry.ValidateProjectName(*in.Name); err != nil {
			return err
		}
	}
	if in.Description != nil {
		if err := gantry.ValidateDescription(*in.Description); err != nil {
			return err
		}
	}
	if in.Branch != nil && *in.Branch != "" {
		if err := gantry.ValidateBranch(*in.Branch); err != nil {
			return err
		}
	}
	if in.BuildConfig != nil {
		return in.BuildConfig.Validate()
	}
	return nil
}

// Check is Normalize then Validate.
func (in *Input) Check() error {
	in.Normalize()
	return in.Validate()
}

// typeSlug is what a project type looks like (SPEC §3: react, nextjs, …).
var typeSlug = regexp.MustCompile(`^[a-z][a-z0-9-]{0,19}$`)

// Projects returns the owner's projects, newest first.
func (s *Service) Projects(ctx context.Context, userID string) ([]*gantry.Project, error) {
	ps, err := s.Store.ListProjects(ctx, userID)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		s.withHook(ctx, p)
	}
	return ps, nil
}

// Project returns the owner's project with its newest deployments.
func (s *Service) Project(ctx context.Context, userID, id string) (*gantry.Project, error) {
	return s.owned(ctx)(s.Store.FindProject(ctx, userID, id))
}

// LookupPublic describes the repository at repoURL for the New Project
// screen: repository, suggested name and description, detected framework
// and build settings. The host's answer is cleaned (cleanLookup).
func (s *Service) LookupPublic(ctx context.Context, u *gantry.User, repoURL string) (*githost.LookupResult, error) {
	repoURL = strings.TrimSpace(repoURL)
	if repoURL == "" {
		return nil, gantry.Errorf(gantry.EINVALID, "Please enter a repository URL")
	}
	if len(repoURL) > 2048 {
		return nil, gantry.Errorf(gantry.EINVALID, "Repository URL is too long")
	}
	res, err := s.Repos.LookupAs(ctx, repoURL, s.optionalGitHubToken(u))
	if err != nil {
		return nil, err
	}
	cleanLookup(res)
	return res, nil
}

// cleanLookup makes what a code host said about a repository safe to
// answer and store (gantry.Repository.Clean, gantry.CleanText), and drops a
// framework that is not a project type's shape.
func cleanLookup(res *githost.LookupResult) {
	res.Repository.Clean()
	res.SuggestedName = gantry.CleanText(res.SuggestedName, gantry.ProjectNameMaxLen, false)
	res.SuggestedDescription = gantry.CleanText(res.SuggestedDescription, gantry.DescriptionMaxLen, false)
	if !typeSlug.MatchString(res.Framework) {
		res.Framework = ""
	}
	if !gantry.ValidBranch(res.Branch) {
		res.Branch = ""
	}
	res.BuildConfig.Normalize()
	if res.BuildConfig.Validate() != nil {
		res.BuildConfig = gantry.BuildConfig{}
	}
}

// CreatePublic creates a project of u from any public repository (or one
// of u's private GitHub repositories). The server looks the repository's
// URL up itself (LookupAs with u's GitHub token, the same host checks as
// the lookup and the build's clone) and takes every fact about the
// repository from that lookup; of the body it takes only the URL and the
// fields a user may set. The branch is the body's, else the URL's
// /tree/<branch>, else the default branch; its latest commit is read from
// the host (a branch the host does not have is refused). The type is the
// detected framework ("github" when detection was skipped or failed). The
// plan's project limit is checked before the lookup, and again when the
// project is stored.
func (s *Service) CreatePublic(ctx context.Context, u *gantry.User, in Input) (*gantry.Project, error) {
	if in.Repository == nil || gantry.FirstNonBlank(in.Repository.URL, in.Repository.CloneURL) == "" {
		return nil, gantry.Errorf(gantry.EINVALID, "Please select a repository")
	}
	if err := in.Check(); err != nil {
		return nil, err
	}
	if err := s.checkProjectLimit(ctx, u.ID); err != nil {
		return nil, err
	}
	token := s.optionalGitHubToken(u)
	res, err := s.Repos.LookupAs(ctx, gantry.FirstNonBlank(in.Repository.URL, in.Repository.CloneURL), token)
	if err != nil {
		return nil, err
	}
	cleanLookup(res)
	repo := res.Repository
	branch := gantry.FirstNonBlank(res.Branch, repo.DefaultBranch, "main")
	if in.Branch != nil && *in.Branch != "" && *in.Branch != branch {
		branch = *in.Branch
		c, err := s.Repos.LatestCommit(ctx, repo, branch, token)
		if err != nil {
			return nil, err
		}
		repo.LastCommit = c.Cleaned()
	}
	p := &gantry.Project{
		UserID:         u.ID,
		Type:           gantry.FirstNonBlank(res.Framework, "github"),
		Repository:     repo,
		Branch:         branch,
		Name:           gantry.FirstNonBlank(res.SuggestedName, repo.Name, "app"),
		ShowInDiscover: gantry.DefaultShowInDiscover(repo),
	}
	in.Branch = nil // applied above
	if err := applyProjectInput(p, in, u.Subscription.Plan); err != nil {
		return nil, err
	}
	if err := s.Store.CreateProject(ctx, p); err != nil {
		return nil, err
	}
	s.notify(ctx, gantry.ProjectCreatedNotification(p))
	return s.owned(ctx)(s.Store.FindProject(ctx, u.ID, p.ID))
}

// checkProjectLimit refuses a project more than the owner's plan allows
// before any work is done for it (gantry.ErrProjectLimit); the store
// checks again, atomically, when it inserts the project.
func (s *Service) checkProjectLimit(ctx context.Context, userID string) error {
	u, err := s.Store.FindUserByID(ctx, userID)
	if err != nil {
		return err
	}
	n, err := s.Store.CountProjects(ctx, userID)
	if err != nil {
		return err
	}
	if n >= u.Subscription.MaxProjects {
		return gantry.ErrProjectLimit(u.Subscription)
	}
	return nil
}

// UpdateProject changes the owner's project's name, description, branch,
// build settings and Discover listing. Its repository cannot change.
func (s *Service) UpdateProject(ctx context.Context, userID, id string, in Input) (*gantry.Project, error) {
	if in.Repository != nil {
		return nil, gantry.Errorf(gantry.EINVALID, "The repository of a project cannot be changed: create a new project")
	}
	p, err := s.Store.FindProject(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	plan := ""
	if in.AlwaysOn != nil && *in.AlwaysOn {
		u, err := s.Store.FindUserByID(ctx, userID)
		if err != nil {
			return nil, err
		}
		plan = u.Subscription.Plan
	}
	if err := applyProjectInput(p, in, plan); err != nil {
		return nil, err
	}
	if err := s.Store.UpdateProject(ctx, p); err != nil {
		return nil, err
	}
	return s.owned(ctx)(s.Store.FindProject(ctx, userID, id))
}

// SyncProject fetches the latest commit of the project's branch.
func (s *Service) SyncProject(ctx context.Context, u *gantry.User, id string) (*gantry.Project, error) {
	p, err := s.Store.FindProject(ctx, u.ID, id)
	if err != nil {
		return nil, err
	}
	c, err := s.Repos.LatestCommit(ctx, p.Repository, p.Branch, s.optionalGitHubToken(u))
	if err != nil {
		return nil, err
	}
	p.Repository.LastCommit = c.Cleaned()
	if err := s.Store.SetRepository(ctx, u.ID, id, p.Repository); err != nil {
		return nil, err
	}
	return s.owned(ctx)(s.Store.FindProject(ctx, u.ID, id))
}

// applyProjectInput normalizes and validates in and copies its set fields
// onto p. An empty branch means the repository's default branch. plan is
// the owner's: always on needs a paid one.
func applyProjectInput(p *gantry.Project, in Input, plan string) error {
	if err := in.Check(); err != nil {
		return err
	}
	if in.Name != nil {
		p.Name = *in.Name
	}
	if in.Description != nil {
		p.Description = *in.Description
	}
	if in.Branch != nil {
		b := gantry.FirstNonBlank(*in.Branch, p.Repository.DefaultBranch, "main")
		if err := gantry.ValidateBranch(b); err != nil {
			return err
		}
		p.Branch = b
	}
	if in.BuildConfig != nil {
		p.BuildConfig = *in.BuildConfig
	}
	if in.ShowInDiscover != nil {
		p.ShowInDiscover = *in.ShowInDiscover
	}
	if in.AutoDeploy != nil {
		p.AutoDeploy = *in.AutoDeploy
	}
	if in.WatchCommits != nil {
		p.WatchCommits = *in.WatchCommits
	}
	if in.AlwaysOn != nil {
		if *in.AlwaysOn && !gantry.PlanAllowsAlwaysOn(plan) {
			return gantry.Errorf(gantry.EFORBIDDEN, "Always on is part of the paid plans (Basic, Pro, Enterprise): on your %s plan an app that goes unused for a while sleeps, and wakes at its next visit", gantry.PlanName(plan))
		}
		p.AlwaysOn = *in.AlwaysOn
	}
	return nil
}
