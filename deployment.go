package gantry

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Deployment statuses (SPEC §3, ARCHITECTURE "Deployment lifecycle").
const (
	DeploymentPending   = "pending"
	DeploymentBuilding  = "building"
	DeploymentDeploying = "deploying"
	DeploymentLive      = "live"
	DeploymentFailed    = "failed"
	DeploymentStopped   = "stopped"
)

// DeploymentStatuses lists every deployment status in lifecycle order.
var DeploymentStatuses = []string{DeploymentPending, DeploymentBuilding, DeploymentDeploying, DeploymentLive, DeploymentFailed, DeploymentStopped}

// DefaultVersion is the version sent by the Deploy button.
const DefaultVersion = "1.0.0"

// VersionMaxLen is the most characters a deployment's version may have.
const VersionMaxLen = 50

var versionChars = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// ValidateVersion checks a (trimmed, non-empty) deployment version: at most
// 50 characters, one line without control or invisible characters, then
// only ASCII letters, digits, dots, hyphens, underscores and plus signs,
// starting with a letter or digit ("1.0.0", "v2.1.0-beta+3", "2025-06-01").
// An empty version means DefaultVersion; the caller fills it in.
func ValidateVersion(s string) error {
	if err := (TextRule{Field: "Version", Max: VersionMaxLen, Required: true}).Check(s); err != nil {
		return err
	}
	if !versionChars.MatchString(s) {
		return Errorf(EINVALID, "Version can only contain letters, numbers, dots, hyphens, underscores and plus signs, starting with a letter or number")
	}
	return nil
}

// Deployment is one build of a project and, once live, what its subdomain
// serves (SPEC §3 Deployment).
type Deployment struct {
	ID          string             `json:"_id"`
	ProjectID   string             `json:"-"`
	UserID      string             `json:"-"`
	Version     string             `json:"version"`
	Subdomain   string             `json:"subdomain"`
	URL         string             `json:"url"`
	Status      string             `json:"status"`
	Error       string             `json:"error,omitempty"`
	BuildInfo   BuildInfo          `json:"buildInfo"`
	Metadata    DeploymentMetadata `json:"metadata"`
	Environment DeploymentEnv      `json:"environment"`
	Views       int                `json:"views"`
	LikeCount   int                `json:"likeCount"`
	IsPublic    bool               `json:"isPublic"`
	// Sleeping is a live server app stopped after GANTRY_APP_IDLE without
	// a request: the deployment stays live and its next request wakes it.
	// Always false for other statuses.
	Sleeping  bool               `json:"sleeping"`
	CreatedAt time.Time          `json:"createdAt"`
	UpdatedAt time.Time          `json:"updatedAt"`
	Project   *DeploymentProject `json:"project,omitempty"`
	User      *DeploymentUser    `json:"user,omitempty"`
	BuildLogs []LogEntry         `json:"buildLogs,omitempty"`

	// FilesSize is what the deployment's kept files (its published site, or
	// a server app's workspace) take on disk, in allocated bytes, recorded
	// when it is built; 0 once they are removed. LogSize is the bytes of
	// its log messages. Both count against the owner's storage budget.
	FilesSize int64 `json:"filesSize"`
	LogSize   int64 `json:"logSize"`
	// PrunedAt is when the deployment's files were removed to save space
	// (see Prunable); it can no longer be restarted. Nil while it has them.
	PrunedAt *time.Time `json:"prunedAt"`

	// Target is TargetProduction (what the project's subdomain serves) or
	// TargetPreview (served on a label of its own, Subdomain, at URL).
	Target string `json:"target"`
	// PromotedAt is when the deployment was last promoted back to
	// production (a rollback, POST /api/deployments/{id}/promote).
	PromotedAt *time.Time `json:"promotedAt"`
	// NoCache asks the build not to reuse cached dependencies (a redeploy
	// with {"noCache":true}).
	NoCache bool `json:"noCache,omitempty"`
	// Diagnosis says why a failed deployment failed, in words a student
	// can act on, with the log lines that gave it away; nil when it did
	// not fail or nothing was diagnosed.
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"`

	// ClaimedBy is the node id of the replica building the deployment, and
	// Attempt the how-manieth time it is built (store's ClaimDeployment;
	// a build taken over after its replica stopped is attempt 2). Every
	// write of the build's outcome names its attempt (Change.Attempt).
	ClaimedBy string `json:"-"`
	Attempt   int    `json:"-"`
}

// Diagnosis is "why it failed": the known cause a failed build or start
// matched (internal/build's table of causes), what to do about it, and the
// seqs of the log entries that gave it away (highlighted in the log).
type Diagnosis struct {
	Title  string  `json:"title"`  // one short sentence: what went wrong
	Detail string  `json:"detail"` // what to do about it
	Lines  []int64 `json:"lines"`  // seqs of the log entries that show it
}

// IsPreview reports whether d is a preview deployment.
func (d *Deployment) IsPreview() bool { return d.Target == TargetPreview }

// BuildInfo records a build's timing and result.
type BuildInfo struct {
	StartTime       *time.Time `json:"startTime"`
	EndTime         *time.Time `json:"endTime"`
	Duration        int64      `json:"duration"`  // milliseconds
	BuildSize       int64      `json:"buildSize"` // bytes
	BuildCommand    string     `json:"buildCommand"`
	OutputDirectory string     `json:"outputDirectory"`
	InstallCommand  string     `json:"installCommand,omitempty"`
	StartCommand    string     `json:"startCommand,omitempty"`
	Framework       string     `json:"framework,omitempty"`
	SPA             bool       `json:"spa,omitempty"` // the edge falls back to /index.html
	// Phases is how long each step took, in milliseconds: the build's
	// "clone", "restore", "install", "build", "prune", "publish" (build.Phases;
	// the build caches are saved after the deployment went live, so no
	// "save"), and a server app's "start" (from its start to its first
	// answer); a server app's "publish" is its workspace stored by content
	// (after the build). A step that did not run is absent.
	Phases map[string]int64 `json:"phases,omitempty"`
}

// DeploymentMetadata records what was built and why.
type DeploymentMetadata struct {
	CommitHash    string             `json:"commitHash"`
	CommitMessage string             `json:"commitMessage"`
	Branch        string             `json:"branch"`
	Author        string             `json:"author"`
	Trigger       string             `json:"trigger"`
	Repository    MetadataRepository `json:"repository"`
	// PullRequest is the pull request a preview was built for (0: none).
	PullRequest int `json:"pullRequest,omitempty"`
	// Fork: the pull request's head is in another repository (a fork), so
	// the build neither reads nor writes the project's build caches.
	Fork bool `json:"fork,omitempty"`
}

// MetadataRepository names the built repository.
type MetadataRepository struct {
	FullName string `json:"fullName"`
}

// DeploymentEnv is the environment a deployment was built with; secret
// values are masked in every answer.
type DeploymentEnv struct {
	Variables []EnvVar `json:"variables"`
}

// Masked returns the environment with every secret value replaced by
// SecretMask, as every answer shows it; e is left as it is, and no
// variables stay none (nil).
func (e DeploymentEnv) Masked() DeploymentEnv {
	if e.Variables == nil {
		return e
	}
	return DeploymentEnv{Variables: MaskedEnv(e.Variables)}
}

// EnvVar is one environment variable of a project.
type EnvVar struct {
	Key      string `json:"key"`
	Value    string `json:"value"`
	IsSecret bool   `json:"isSecret"`
	// Scope is which builds get the variable: EnvScopeAll (the default),
	// EnvScopeProduction or EnvScopePreview.
	Scope string `json:"scope"`
}

// Scopes of an environment variable (EnvVar.Scope).
const (
	EnvScopeAll        = "all"
	EnvScopeProduction = TargetProduction
	EnvScopePreview    = TargetPreview
)

// ValidateEnvScope checks a variable's scope ("" means EnvScopeAll; the
// caller fills it in): one of all, production and preview.
func ValidateEnvScope(key, scope string) error {
	switch scope {
	case EnvScopeAll, EnvScopeProduction, EnvScopePreview:
		return nil
	}
	return Errorf(EINVALID, "The scope of %s must be all, production or preview", key)
}

// InScope reports whether a build for target gets v.
func (v EnvVar) InScope(target string) bool {
	return v.Scope == "" || v.Scope == EnvScopeAll || v.Scope == target
}

// InForkScope reports whether the build of a pull request from a fork
// (code nobody on the project wrote, approved commit by commit) gets v:
// only variables scoped to preview, never those of scope all, which
// production has too.
func (v EnvVar) InForkScope() bool { return v.Scope == EnvScopePreview }

// SecretMask stands for a secret value in every answer and log line.
const SecretMask = "••••••••"

// Masked returns v with its value replaced by SecretMask when it is a
// secret, and v unchanged otherwise.
func (v EnvVar) Masked() EnvVar {
	if v.IsSecret {
		v.Value = SecretMask
	}
	return v
}

// MaskedEnv returns a copy of vars with every secret value masked
// (EnvVar.Masked); vars is left as it is. The copy is never nil, so an
// empty list reads [] in JSON.
func MaskedEnv(vars []EnvVar) []EnvVar {
	out := make([]EnvVar, len(vars))
	for i, v := range vars {
		out[i] = v.Masked()
	}
	return out
}

// Limits of a project's environment: variables, and characters of a name
// and of a value.
const (
	MaxEnvVars     = 100
	EnvKeyMaxLen   = 128
	EnvValueMaxLen = 32 << 10
)

var envKeyShape = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidateEnvKey checks a (trimmed) variable name: required ("Every
// environment variable needs a name"), then ASCII letters, digits and
// underscores, not starting with a digit, at most 128 characters; the
// message quotes the name with Quote.
func ValidateEnvKey(k string) error {
	switch {
	case k == "":
		return Errorf(EINVALID, "Every environment variable needs a name")
	case len(k) > EnvKeyMaxLen || !envKeyShape.MatchString(k):
		return Errorf(EINVALID, "Invalid variable name %s: use letters, digits and underscores, not starting with a digit, at most %d characters", Quote(k), EnvKeyMaxLen)
	}
	return nil
}

// ValidateEnvValue checks the value of variable key (a valid name): at most
// 32768 characters; tabs and line breaks are allowed (certificates, keys
// and JSON are pasted as several lines), other control and invisible
// characters are not ("The value of KEY cannot contain control or
// invisible characters (found U+0000)").
func ValidateEnvValue(key, v string) error {
	return TextRule{Field: "The value of " + key, Max: EnvValueMaxLen, Multiline: true}.Check(v)
}

// DeploymentProject is the part of a project a deployment answer embeds.
type DeploymentProject struct {
	ID          string      `json:"_id"`
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Type        string      `json:"type"`
	BuildConfig BuildConfig `json:"buildConfig"`
	Repository  Repository  `json:"repository"`
}

// DeploymentUser is the part of a user a deployment answer embeds.
type DeploymentUser struct {
	ID       string `json:"_id"`
	FullName string `json:"fullName"`
	Username string `json:"username"`
}

// CanStop reports whether the UI and API allow stopping d (SPEC §4).
func (d *Deployment) CanStop() bool {
	switch d.Status {
	case DeploymentLive, DeploymentBuilding, DeploymentDeploying, DeploymentPending:
		return true
	}
	return false
}

// CanRestart reports whether d may be restarted (SPEC §4: when stopped).
// A pruned one (PrunedAt set) is refused later, with MsgPruned.
func (d *Deployment) CanRestart() bool { return d.Status == DeploymentStopped }

// IsApp reports whether d is a server app: it has a start command, and the
// runtime runs it from its workspace rather than the edge serving files.
func (d *Deployment) IsApp() bool { return d.BuildInfo.StartCommand != "" }

// InProgress reports whether d is still being built or published.
func (d *Deployment) InProgress() bool {
	switch d.Status {
	case DeploymentPending, DeploymentBuilding, DeploymentDeploying:
		return true
	}
	return false
}

// ProjectStatusFor maps a project's latest deployment status to the
// project's own status.
func ProjectStatusFor(deploymentStatus string) string {
	switch deploymentStatus {
	case "":
		return ProjectDraft
	case DeploymentPending, DeploymentBuilding, DeploymentDeploying:
		return ProjectBuilding
	case DeploymentLive:
		return ProjectDeployed
	case DeploymentFailed:
		return ProjectFailed
	case DeploymentStopped:
		return ProjectDraft
	}
	return ProjectDraft
}

// DeploymentFilter narrows ListDeployments. Zero values match everything.
type DeploymentFilter struct {
	ProjectID string
	Status    string
	Target    string // TargetProduction or TargetPreview
	Limit     int
}

// Validate checks a filter a client sent: its status, when set, is one of
// DeploymentStatuses and its target TargetProduction or TargetPreview, so
// that a misspelt filter is refused rather than matching nothing.
func (f DeploymentFilter) Validate() error {
	if f.Status != "" && !slices.Contains(DeploymentStatuses, f.Status) {
		return Errorf(EINVALID, "status must be one of %s", strings.Join(DeploymentStatuses, ", "))
	}
	if f.Target != "" && f.Target != TargetProduction && f.Target != TargetPreview {
		return Errorf(EINVALID, "target must be production or preview")
	}
	return nil
}

// DeploymentStore persists deployments, their log entries and the build
// queue. Methods taking a userID scope to that owner (another user's
// deployment is ENOTFOUND); an empty userID means "any owner" and is used
// only by the platform itself (builder, edge restore).
type DeploymentStore interface {
	// QueueDeployment inserts d (status pending), filling ID and
	// timestamps, and derives the project's status, unless d's owner
	// already has maxPending (> 0) deployments pending: then ETOOMANY and
	// nothing is inserted. Check and insert are atomic.
	QueueDeployment(ctx context.Context, d *Deployment, maxPending int) error
	// FindDeployment returns d with Project and User embedded.
	FindDeployment(ctx context.Context, userID, id string) (*Deployment, error)
	// ListDeployments returns the owner's deployments, newest first, with
	// Project embedded.
	ListDeployments(ctx context.Context, userID string, f DeploymentFilter) ([]*Deployment, error)
	// ClaimDeployment atomically moves the next pending deployment to
	// building and returns it: the oldest one of the user whose last build
	// was claimed longest ago (or never), claimed by c.Owner for c.Lease
	// (its Attempt counted). ENOTFOUND when the queue is empty.
	ClaimDeployment(ctx context.Context, c BuildClaim) (*Deployment, error)

	// The transitions (transition.go). Each is one transaction that checks
	// the status it starts from (else *TransitionError; ENOTFOUND when the
	// deployment is gone) and derives the project's status from its
	// deployments (ProjectStatusOf) before it commits.

	// SaveBuild saves d's build info, metadata and environment, and moves
	// it to d.Status, while its stored status is still from: a build's
	// progress (building, building → deploying).
	SaveBuild(ctx context.Context, d *Deployment, from string) error
	// GoLive makes the deployment live from status from (deploying: a
	// build's end; stopped: a restart, refused with Pruned when its files
	// were pruned), makes it the project's active deployment and stops the
	// project's other live deployment.
	GoLive(ctx context.Context, id, from string, c Change) (*Transition, error)
	// FailDeployment ends the deployment failed with reason (its Error)
	// from any of the statuses from. A build that had not ended ends at
	// c.At (end time, and duration from its start).
	FailDeployment(ctx context.Context, id string, from []string, reason string, c Change) (*Transition, error)
	// StopDeployment stops the deployment from any status CanStop allows;
	// a build that had started and not ended ends at c.At.
	StopDeployment(ctx context.Context, id string, c Change) (*Transition, error)
	// DeleteDeployment removes the deployment and its log entries whatever
	// its status; a project whose active deployment it was points at none.
	DeleteDeployment(ctx context.Context, id string) (*Transition, error)
	// ListRoutes returns the route of every project that has an active
	// deployment: what start-up routes again.
	ListRoutes(ctx context.Context) ([]*Route, error)
	// QueuePosition is 1 for the next pending deployment to be claimed, in
	// ClaimDeployment's order if nothing else is queued meanwhile.
	QueuePosition(ctx context.Context, id string) (int, error)
	// CountLiveAfter counts the owner's live deployments (a project's live
	// production deployment and each live preview count one) as they
	// would be once a deployment of projectID went live: of production
	// when label is "", else of that preview label. It replaces what
	// GoLive would stop, so a redeploy never counts twice.
	CountLiveAfter(ctx context.Context, userID, projectID, label string) (int, error)
	// ListDeploymentsByStatus returns every deployment in one of statuses
	// (any owner), oldest first: start-up recovery and measuring.
	ListDeploymentsByStatus(ctx context.Context, statuses ...string) ([]*Deployment, error)

	// SetDeploymentFiles records the bytes the deployment's kept files take
	// on disk (0 when they were removed).
	SetDeploymentFiles(ctx context.Context, id string, size int64) error
	// MeasuredDeploymentFiles records size, measured while a server app
	// runs or as it stops, only while the deployment still keeps files
	// (not pruned, FilesSize not 0): a measure never brings back files
	// that were removed meanwhile. A deployment gone is not an error.
	MeasuredDeploymentFiles(ctx context.Context, id string, size int64) error
	// PruneDeployments marks the project's deployments that Prunable picks
	// as pruned at now (FilesSize 0, PrunedAt set) and returns them: the
	// caller removes their files. One that went live meanwhile is skipped.
	PruneDeployments(ctx context.Context, projectID string, now time.Time) ([]*Deployment, error)
	// PruneDeployment marks one stopped or failed deployment as pruned at
	// now (its project's active one too) and reports whether it did; one
	// restarted or pruned meanwhile is left alone.
	PruneDeployment(ctx context.Context, id string, now time.Time) (bool, error)
	// StorageUsage sums the storage the owner's deployments use (recorded
	// file sizes and log bytes) and reads the owner's budget.
	StorageUsage(ctx context.Context, userID string) (*StorageUsage, error)

	// AppendLog stores e for the deployment, assigning e.Seq (1, 2, …).
	AppendLog(ctx context.Context, deploymentID string, e *LogEntry) error
	// Logs returns entries with Seq > afterSeq in order; when limit > 0 and
	// afterSeq is 0, the newest limit entries (still in order).
	Logs(ctx context.Context, deploymentID string, afterSeq int64, limit int) ([]LogEntry, error)
	// CountLogs returns how many entries the deployment has.
	CountLogs(ctx context.Context, deploymentID string) (int, error)
	// ClearLogs deletes the deployment's entries (Seq keeps counting up).
	ClearLogs(ctx context.Context, deploymentID string) error
}

// BuildClaim is who claims a build and for how long: Owner is the
// replica's node id, Lease how long it holds the build without renewing
// it (0: until it ends, as tests and tools claim).
type BuildClaim struct {
	Owner string
	Lease time.Duration
}

// BuildLeaseStore renews, finds and requeues the builds replicas hold
// (store.DB's BuildLeases).
type BuildLeaseStore interface {
	// Renew extends owner's lease of build id (attempt) by lease; false
	// when owner no longer holds that attempt.
	Renew(ctx context.Context, id, owner string, attempt int, lease time.Duration) (bool, error)
	// Lapsed returns the builds in progress whose lease has passed.
	Lapsed(ctx context.Context) ([]*Deployment, error)
	// Held returns the builds in progress owner claimed (or nobody did).
	Held(ctx context.Context, owner string) ([]*Deployment, error)
	// Requeue puts a lapsed build (c.Attempt) back in the queue, c.Line
	// appended to its log.
	Requeue(ctx context.Context, id string, c Change) (*Transition, error)
}
