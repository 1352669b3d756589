package gantry

import (
	"context"
	"regexp"
	"strings"
	"time"
)

// Project statuses (SPEC §3). A project's status follows its latest
// deployment: none → draft, pending/building/deploying → building,
// live → deployed, failed → failed (ProjectStatusOf, derived by the store
// in every transition).
const (
	ProjectDraft    = "draft"
	ProjectBuilding = "building"
	ProjectDeployed = "deployed"
	ProjectFailed   = "failed"
)

// Project is a repository and its build settings (SPEC §3 Project).
type Project struct {
	ID               string            `json:"_id"`
	UserID           string            `json:"user"`
	Name             string            `json:"name"`
	Description      string            `json:"description"`
	Status           string            `json:"status"`
	Type             string            `json:"type"`
	Repository       Repository        `json:"repository"`
	Branch           string            `json:"branch"`
	Subdomain        string            `json:"subdomain"` // unique across the platform, from SubdomainBase(Name)
	BuildConfig      BuildConfig       `json:"buildConfig"`
	ActiveDeployment *ActiveDeployment `json:"activeDeployment"`
	Deployments      []DeploymentRef   `json:"deployments"` // newest first, at most 20
	CreatedAt        time.Time         `json:"createdAt"`
	UpdatedAt        time.Time         `json:"updatedAt"`
}

// Repository describes where a project's code lives.
type Repository struct {
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	FullName      string  `json:"fullName"`
	Description   string  `json:"description,omitempty"`
	DefaultBranch string  `json:"defaultBranch"`
	Private       bool    `json:"private"`
	URL           string  `json:"url"`
	CloneURL      string  `json:"cloneUrl"`
	LastCommit    *Commit `json:"lastCommit"`
}

// Commit is a branch head as shown on Project detail.
type Commit struct {
	Message string    `json:"message"`
	Author  string    `json:"author"`
	Date    time.Time `json:"date"`
	SHA     string    `json:"sha"`
}

// BuildConfig is how a project is installed, built and (for server apps)
// started. An empty StartCommand means the output is served statically.
type BuildConfig struct {
	InstallCommand  string `json:"installCommand"`
	BuildCommand    string `json:"buildCommand"`
	OutputDirectory string `json:"outputDirectory"`
	StartCommand    string `json:"startCommand,omitempty"`
}

// ActiveDeployment names the deployment a project's subdomain serves.
type ActiveDeployment struct {
	ID        string `json:"_id,omitempty"`
	Subdomain string `json:"subdomain"`
	URL       string `json:"url,omitempty"`
}

// ProjectStore persists projects. Every method is scoped to its owner:
// another user's project is ENOTFOUND.
type ProjectStore interface {
	// CreateProject inserts p, filling ID, timestamps and a Subdomain that is
	// unique across the platform: SubdomainBase(p.Name), then "-2", "-3", …
	// when taken or reserved ("app" when the name has no letters or digits).
	// More than the owner's subscription.maxProjects is EFORBIDDEN.
	CreateProject(ctx context.Context, p *Project) error
	FindProject(ctx context.Context, userID, id string) (*Project, error)
	ListProjects(ctx context.Context, userID string) ([]*Project, error)
	UpdateProject(ctx context.Context, p *Project) error
	DeleteProject(ctx context.Context, userID, id string) error
	CountProjects(ctx context.Context, userID string) (int, error)
	// SetDetectedType records the framework a build detected as the
	// project's type, unless the project has a type of its own already
	// (anything but "" and "github").
	SetDetectedType(ctx context.Context, id, typ string) error
	// A project's status and active deployment change only with its
	// deployments' transitions (DeploymentStore, transition.go).
}

// DeploymentRef is the summary of a deployment a project answer lists.
type DeploymentRef struct {
	ID        string    `json:"_id"`
	Version   string    `json:"version"`
	Subdomain string    `json:"subdomain"`
	URL       string    `json:"url"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
}

var nonAlnum = regexp.MustCompile(`[^a-z0-9]+`)

// SubdomainBase derives a subdomain from a project name by the SPEC rule:
// lowercase, every run of non-alphanumerics becomes one hyphen, trimmed of
// hyphens and to a DNS label's 63 characters. It may return "".
func SubdomainBase(name string) string {
	s := nonAlnum.ReplaceAllString(strings.ToLower(name), "-")
	s = strings.Trim(s, "-")
	if len(s) > 63 {
		s = strings.Trim(s[:63], "-")
	}
	return s
}

// ReservedSubdomains may never be given to a project.
var ReservedSubdomains = map[string]bool{
	"www": true, "api": true, "app": true, "admin": true, "dashboard": true,
	"mail": true, "static": true, "assets": true, "cdn": true, "gantry": true,
	"status": true, "docs": true, "help": true, "support": true, "login": true,
	"auth": true, "root": true, "system": true, "localhost": true,
}
