package api

import (
	"context"
	"io"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/domains"
	"github.com/gantryhq/gantry/internal/ghhook"
	"github.com/gantryhq/gantry/internal/ghlink"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/project"
)

// The API depends on these small interfaces, declared here by their
// consumer; cmd/gantry sets Server's fields to the services that satisfy
// them.
var (
	_ DeploymentService = (*deploy.Service)(nil)
	_ ProjectService    = (*project.Service)(nil)
	_ GitHubService     = (*ghlink.Accounts)(nil)
	_ WebhookService    = (*ghhook.Service)(nil)
	_ DomainService     = (*domains.Service)(nil)
)

// DeploymentService runs deployments: the build queue, stop and restart,
// deletion and logs (deploy.Service). Every deployment it answers has its
// secret values masked.
type DeploymentService interface {
	Create(ctx context.Context, userID string, req deploy.CreateRequest) (*gantry.Deployment, error)
	Deployments(ctx context.Context, userID string, f gantry.DeploymentFilter) ([]*gantry.Deployment, error)
	Deployment(ctx context.Context, userID, id string) (*gantry.Deployment, error)
	Stop(ctx context.Context, userID, sub, deploymentID string) (*gantry.Deployment, error)
	Restart(ctx context.Context, userID, sub, deploymentID string) (*gantry.Deployment, error)
	Delete(ctx context.Context, userID, id string) error
	Logs(ctx context.Context, userID, id string, limit int) ([]gantry.LogEntry, int, error)
	ClearLogs(ctx context.Context, userID, id string) error
	FollowLogs(ctx context.Context, userID, id string, after int64, resume bool, heartbeat time.Duration) (<-chan deploy.LogEvent, error)
	// Push to deploy, previews and rollback.
	Trigger(ctx context.Context, t gantry.DeployTrigger) (*gantry.Deployment, error)
	Redeploy(ctx context.Context, userID, id string, noCache bool) (*gantry.Deployment, error)
	Promote(ctx context.Context, userID, id string) (*gantry.Deployment, error)
	Previews(ctx context.Context, userID, projectID string) ([]*gantry.Deployment, error)
	// WakeHint starts waking a listed app of the gallery that sleeps.
	WakeHint(ctx context.Context, id string) (bool, error)
	// The project's production data folder, downloaded and restored.
	DataArchive(ctx context.Context, userID, projectID string) (string, func(io.Writer) error, error)
	RestoreData(ctx context.Context, userID, projectID, snapshot string, r io.Reader) error
	DataSnapshots(ctx context.Context, userID, projectID string) ([]gantry.DataSnapshot, error)
}

// ProjectService keeps users' projects and their environment variables
// (project.Service).
type ProjectService interface {
	Projects(ctx context.Context, userID string) ([]*gantry.Project, error)
	Project(ctx context.Context, userID, id string) (*gantry.Project, error)
	LookupPublic(ctx context.Context, u *gantry.User, repoURL string) (*githost.LookupResult, error)
	CreatePublic(ctx context.Context, u *gantry.User, in project.Input) (*gantry.Project, error)
	CreateFromGitHub(ctx context.Context, u *gantry.User, in project.GitHubInput) (*gantry.Project, error)
	UpdateProject(ctx context.Context, userID, id string, in project.Input) (*gantry.Project, error)
	SyncProject(ctx context.Context, u *gantry.User, id string) (*gantry.Project, error)
	DeleteProject(ctx context.Context, userID, id string) error
	Env(ctx context.Context, userID, projectID string) ([]gantry.EnvVar, error)
	SetEnv(ctx context.Context, userID, projectID string, vars []gantry.EnvVar) ([]gantry.EnvVar, error)
	// DataFolders describes the project's apps' data folders (/data).
	DataFolders(ctx context.Context, userID, projectID string) (*gantry.ProjectData, error)
	// Deploy hooks.
	RotateDeployHook(ctx context.Context, userID, id string) (*gantry.Project, error)
	ProjectByDeployHook(ctx context.Context, token string) (*gantry.Project, error)
}

// GitHubService connects accounts to GitHub: the OAuth sign-in, the
// repository list, disconnecting (ghlink.Accounts).
type GitHubService interface {
	Start(ctx context.Context, u *gantry.User, sessionID string) (*ghlink.Start, error)
	Callback(ctx context.Context, cb ghlink.Callback) (*ghlink.Connected, error)
	Refresh(ctx context.Context, u *gantry.User) ([]gantry.GitHubRepo, *gantry.User, error)
	Disconnect(ctx context.Context, u *gantry.User) (*gantry.User, error)
}

// WebhookService is push to deploy from GitHub: deliveries, the project's
// webhook and pull requests, fork approvals (ghhook.Service).
type WebhookService interface {
	Receive(ctx context.Context, d ghhook.Delivery) (string, error)
	Status(ctx context.Context, userID, projectID string) (*ghhook.View, error)
	Reregister(ctx context.Context, userID, projectID string) (*ghhook.View, error)
	Approve(ctx context.Context, userID, projectID string, number int, sha string) (*ghhook.PullRequestView, error)
}

// DomainService keeps projects' custom domains (domains.Service). Every
// call is scoped to the owner: another user's project or domain is
// ENOTFOUND.
type DomainService interface {
	Domains(ctx context.Context, userID, projectID string) ([]*gantry.Domain, error)
	Add(ctx context.Context, u *gantry.User, projectID, name string) (*gantry.Domain, error)
	Remove(ctx context.Context, userID, projectID, id string) error
	SetPrimary(ctx context.Context, userID, projectID, id string) (*gantry.Domain, error)
	SetRedirect(ctx context.Context, userID, projectID, id, redirect string) (*gantry.Domain, error)
	Verify(ctx context.Context, userID, projectID, id string) (*gantry.Domain, error)
}
