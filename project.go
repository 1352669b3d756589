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
	ID             string      `json:"_id"`
	UserID         string      `json:"user"`
	Name           string      `json:"name"`
	Description    string      `json:"description"`
	Status         string      `json:"status"`
	Type           string      `json:"type"`
	Repository     Repository  `json:"repository"`
	Branch         string      `json:"branch"`
	Subdomain      string      `json:"subdomain"` // unique across the platform, from SubdomainBase(Name)
	BuildConfig    BuildConfig `json:"buildConfig"`
	ShowInDiscover bool        `json:"showInDiscover"` // the owner's choice; starts as DefaultShowInDiscover
	// AlwaysOn keeps the project's server app running however long it
	// goes without a request (paid plans: PlanAllowsAlwaysOn).
	AlwaysOn bool `json:"alwaysOn"`
	// Sleeping: the project's live server app sleeps (Deployment.Sleeping).
	Sleeping         bool              `json:"sleeping"`
	ActiveDeployment *ActiveDeployment `json:"activeDeployment"`
	Deployments      []DeploymentRef   `json:"deployments"` // newest first, at most 20
	// AutoDeploy lets pushes, pull requests, the deploy hook and the
	// commit watcher start deployments (default on).
	AutoDeploy bool `json:"autoDeploy"`
	// WatchCommits polls the production branch of a repository outside
	// GitHub for new commits (default off).
	WatchCommits bool `json:"watchCommits"`
	// DeployHookURL starts a deployment when POSTed to; only ever in
	// answers to the owner.
	DeployHookURL string `json:"deployHookUrl"`
	// DeployHookSealed is the deploy hook's token sealed with the
	// platform key (secret.DeployHooks); never answered.
	DeployHookSealed string    `json:"-"`
	CreatedAt        time.Time `json:"createdAt"`
	UpdatedAt        time.Time `json:"updatedAt"`
}

// DefaultShowInDiscover is a new project's ShowInDiscover: on for a public
// repository, off for a private one, whose app its owner may not want
// strangers to find.
func DefaultShowInDiscover(r Repository) bool { return !r.Private }

// Repository describes where a project's code lives. Every field is a fact
// the server learns from the code host (the repository lookup), never from
// a client.
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
// KeepDevDependencies keeps a Node server app's devDependencies in the
// workspace it runs from (they are pruned after the build otherwise).
type BuildConfig struct {
	InstallCommand      string `json:"installCommand"`
	BuildCommand        string `json:"buildCommand"`
	OutputDirectory     string `json:"outputDirectory"`
	StartCommand        string `json:"startCommand,omitempty"`
	KeepDevDependencies bool   `json:"keepDevDependencies,omitempty"`
}

// Limits of a project's fields, in characters. The name's is SPEC §9's
// full-name limit applied to projects; the others are the server's own.
const (
	ProjectNameMaxLen     = 100
	DescriptionMaxLen     = 500
	BranchMaxLen          = 255
	CommandMaxLen         = 1000
	OutputDirectoryMaxLen = 255
	// Facts from a code host are cut to these (CleanText).
	CommitMessageMaxLen = 1000
	CommitAuthorMaxLen  = 200
	RepoNameMaxLen      = 200
)

// ErrProjectLimit is the EFORBIDDEN answer to a project more than sub's
// plan allows.
func ErrProjectLimit(sub Subscription) error {
	return Errorf(EFORBIDDEN, "Your %s plan allows %d projects. Delete a project or upgrade your plan to create another.",
		PlanName(sub.Plan), sub.MaxProjects)
}

// ErrLiveLimit is the EFORBIDDEN answer to a deployment that would leave
// more of an account's deployments live than sub's plan allows (a
// project's live production deployment and each live preview count one).
func ErrLiveLimit(sub Subscription) error {
	return Errorf(EFORBIDDEN, "Your %s plan allows %d live deployments (previews count too). Stop or delete one to deploy another.",
		PlanName(sub.Plan), sub.MaxDeployments)
}

// ValidateProjectName checks a (trimmed) project name: a visible
// character ("Project name is required"), at most 100 characters, one line
// without control or invisible characters.
func ValidateProjectName(s string) error {
	return TextRule{Field: "Project name", Max: ProjectNameMaxLen, Required: true}.Check(s)
}

// ValidateDescription checks a (trimmed) project description: optional, at
// most 500 characters; it may hold line breaks and tabs (the edit screen's
// text area), but no other control or invisible characters.
func ValidateDescription(s string) error {
	return TextRule{Field: "Description", Max: DescriptionMaxLen, Multiline: true}.Check(s)
}

// ValidateBranch checks a branch name for git: the text rules ("Branch
// cannot exceed 255 characters", no control or invisible characters), then
// a conservative subset of git-check-ref-format: no spaces, "..", "@{",
// "//", leading "-" or "/", trailing "/", "." or ".lock", none of
// ~^:?*[\, and not "@". Failing those: `Invalid branch name: "<name>"`.
// A leading "-" matters most: git would read the name as an option.
func ValidateBranch(b string) error {
	if err := (TextRule{Field: "Branch", Max: BranchMaxLen, Required: true}).Check(b); err != nil {
		return err
	}
	if !gitRefShape(b) {
		return Errorf(EINVALID, "Invalid branch name: %s", Quote(b))
	}
	return nil
}

// ValidBranch reports whether ValidateBranch accepts b.
func ValidBranch(b string) bool { return ValidateBranch(b) == nil }

func gitRefShape(b string) bool {
	if strings.HasPrefix(b, "-") || strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") ||
		strings.HasSuffix(b, ".") || strings.HasSuffix(b, ".lock") || strings.Contains(b, "..") ||
		strings.Contains(b, "@{") || strings.Contains(b, "//") || b == "@" {
		return false
	}
	return !strings.ContainsAny(b, " ~^:?*[\\")
}

// ValidateCommand checks an install, build or start command (field names
// it: "Build command"), the project's or a deployment's override: at most
// 1000 characters on a single line, without control or invisible
// characters. The command runs in a shell, so a line break would run a
// second command the form never showed.
func ValidateCommand(field, s string) error {
	return TextRule{Field: field, Max: CommandMaxLen}.Check(s)
}

// ValidateOutputDirectory checks an output directory: the text rules (at
// most 255 characters, one line, no control or invisible characters), then
// a relative path that stays inside the repository (no leading / or \, no
// ".." segment). The build checks the resolved folder again.
func ValidateOutputDirectory(dir string) error {
	if err := (TextRule{Field: "Output directory", Max: OutputDirectoryMaxLen}).Check(dir); err != nil {
		return err
	}
	if strings.HasPrefix(dir, "/") || strings.HasPrefix(dir, "\\") {
		return Errorf(EINVALID, "Output directory must be a relative path inside the repository")
	}
	for _, part := range strings.FieldsFunc(dir, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return Errorf(EINVALID, "Output directory must be a relative path inside the repository")
		}
	}
	return nil
}

// Normalize trims every field; the output directory also loses its
// trailing slashes ("dist/" is dist). A leading one stays, for Validate
// to refuse: "/dist" and "/" name folders outside the repository.
func (c *BuildConfig) Normalize() {
	c.InstallCommand = strings.TrimSpace(c.InstallCommand)
	c.BuildCommand = strings.TrimSpace(c.BuildCommand)
	c.OutputDirectory = strings.TrimSpace(c.OutputDirectory)
	for len(c.OutputDirectory) > 1 && strings.HasSuffix(c.OutputDirectory, "/") {
		c.OutputDirectory = strings.TrimSuffix(c.OutputDirectory, "/")
	}
	c.StartCommand = strings.TrimSpace(c.StartCommand)
}

// Validate checks the commands with ValidateCommand and the output
// directory with ValidateOutputDirectory, in the order install, build,
// start, output. Call Normalize first.
func (c *BuildConfig) Validate() error {
	for _, f := range []struct{ name, v string }{
		{"Install command", c.InstallCommand}, {"Build command", c.BuildCommand}, {"Start command", c.StartCommand},
	} {
		if err := ValidateCommand(f.name, f.v); err != nil {
			return err
		}
	}
	return ValidateOutputDirectory(c.OutputDirectory)
}

// Clean makes the facts a code host gave about a repository safe to store
// and show (CleanText): names and description on one line and cut to
// their limits, a default branch git would refuse dropped, the last
// commit cleaned too. Applied to every lookup result before it is answered
// or stored.
func (r *Repository) Clean() {
	r.ID = CleanText(r.ID, RepoNameMaxLen, false)
	r.Name = CleanText(r.Name, RepoNameMaxLen, false)
	r.FullName = CleanText(r.FullName, RepoNameMaxLen, false)
	r.Description = CleanText(r.Description, DescriptionMaxLen, false)
	if !ValidBranch(r.DefaultBranch) {
		r.DefaultBranch = ""
	}
	r.LastCommit = r.LastCommit.Cleaned()
}

// Cleaned returns a copy of c made safe to store and show: the message
// (several lines) and author cut to their limits without control or
// invisible characters, a SHA that is not 4 to 64 hex digits dropped. Nil
// stays nil.
func (c *Commit) Cleaned() *Commit {
	if c == nil {
		return nil
	}
	out := &Commit{
		Message: CleanText(c.Message, CommitMessageMaxLen, true),
		Author:  CleanText(c.Author, CommitAuthorMaxLen, false),
		Date:    c.Date,
		SHA:     strings.ToLower(c.SHA),
	}
	if !shaShape.MatchString(out.SHA) {
		out.SHA = ""
	}
	return out
}

var shaShape = regexp.MustCompile(`^[0-9a-f]{4,64}$`)

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
	// SetRepository replaces only the facts about the owner's project's
	// repository (what a sync read from its host), so a sync never undoes
	// an edit of the project's own fields made meanwhile.
	SetRepository(ctx context.Context, userID, id string, r Repository) error
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
