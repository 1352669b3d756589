package gantry

import (
	"context"
	"time"
)

// GitHubHook is the repository webhook Gantry keeps at GitHub for a project
// made from a connected GitHub repository (issue 14): GitHub sends push and
// pull_request events of RepoID to <public URL>/api/webhooks/github, signed
// with Secret.
type GitHubHook struct {
	ProjectID string
	UserID    string // the project's owner (read only)
	RepoID    int64  // GitHub's repository id, as in the events' repository.id
	RepoName  string // owner/name when the hook was registered
	// HookID is GitHub's id of the hook; 0 while it is missing (registering
	// failed: Error says why).
	HookID int64
	// Secret is the hook's secret, sealed (secret.GitHubHooks); it signs
	// every delivery.
	Secret string
	// Error is why registering the hook failed, "" once it is registered.
	Error string
	// Last is the last delivery handled for the project; nil before one.
	Last      *GitHubDelivery
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Results of a GitHub delivery.
const (
	DeliveryOK      = "ok"      // a deployment was queued or previews removed
	DeliveryIgnored = "ignored" // nothing to do (another event, a fork awaiting approval, auto-deploy off…)
	DeliveryFailed  = "failed"  // Gantry could not do what the event asked
)

// GitHubDelivery is what one delivery of a project's webhook did.
type GitHubDelivery struct {
	At      time.Time `json:"at"`
	Event   string    `json:"event"`  // X-GitHub-Event: push, pull_request, ping
	Action  string    `json:"action"` // pull_request's action; "" for others
	Result  string    `json:"result"` // DeliveryOK, DeliveryIgnored, DeliveryFailed
	Message string    `json:"message"`
}

// States of a pull request as Gantry tracks it.
const (
	PullRequestOpen             = "open"              // built on every push
	PullRequestAwaitingApproval = "awaiting_approval" // from a fork; its head commit waits for the owner's approval
	PullRequestApproved         = "approved"          // from a fork; its head commit was approved and built
	PullRequestClosed           = "closed"            // closed or merged; its preview was removed
)

// GitHubPullRequest is a pull request of a project's repository that
// Gantry has seen, with what it did about it.
type GitHubPullRequest struct {
	ProjectID  string
	Number     int
	Title      string
	Author     string // the GitHub login that opened it
	HeadBranch string
	HeadSHA    string // the head commit Gantry last saw
	Fork       bool   // the head is in another repository
	State      string // PullRequest*
	URL        string // its page on GitHub
	// ApprovedSHA is the head commit the owner approved (fork pull
	// requests only); a later push waits for a new approval.
	ApprovedSHA string
	// DeploymentID is the last preview deployment queued for it, "" before
	// one.
	DeploymentID string
	// CommentID is Gantry's comment on it (0 before the first build): one
	// comment, edited in place after every build.
	CommentID int64
	UpdatedAt time.Time
}

// Limits of the webhook's headers.
const (
	GitHubDeliveryIDMaxLen = 100 // GitHub's are UUIDs (36)
	GitHubEventMaxLen      = 64
)

// ValidateDeliveryID checks an X-GitHub-Delivery header: 1 to
// GitHubDeliveryIDMaxLen letters, digits and dashes.
func ValidateDeliveryID(s string) error {
	if err := (TextRule{Field: "X-GitHub-Delivery", Max: GitHubDeliveryIDMaxLen, Required: true}).Check(s); err != nil {
		return err
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return Errorf(EINVALID, "X-GitHub-Delivery must hold letters, digits and dashes only")
		}
	}
	return nil
}

// ValidateGitHubEvent checks an X-GitHub-Event header: 1 to
// GitHubEventMaxLen lowercase letters and underscores (push,
// pull_request, ping…).
func ValidateGitHubEvent(s string) error {
	if err := (TextRule{Field: "X-GitHub-Event", Max: GitHubEventMaxLen, Required: true}).Check(s); err != nil {
		return err
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_') {
			return Errorf(EINVALID, "X-GitHub-Event must hold lowercase letters and underscores only")
		}
	}
	return nil
}

// WebhookJob is a verified GitHub delivery waiting to be handled. It is
// kept in the database until a worker (on any replica) has handled it, so
// a delivery answered 202 survives a crash or restart of the process that
// took it.
type WebhookJob struct {
	ID        string // the delivery's key: its webhook, event and body's SHA-256
	ProjectID string
	Event     string
	Payload   []byte
	// Attempts counts the claims of the job, this one included: more than
	// one means a worker took it before and stopped before finishing.
	Attempts int
}

// Outcomes of WebhookJobStore.Enqueue.
const (
	JobQueued    = "queued"    // stored, a worker will take it
	JobDuplicate = "duplicate" // the same delivery was taken before
	JobBusy      = "busy"      // the project's share or the whole queue is full
)

// WebhookJobStore keeps GitHub deliveries as leased jobs (store.DB's
// WebhookJobs).
type WebhookJobStore interface {
	// Enqueue stores j when the delivery is new (JobDuplicate when its id
	// was taken before: a replay) and there is room: fewer than perProject
	// jobs of its project and max in all (JobBusy, and the delivery is not
	// used up, so that GitHub may deliver it again).
	Enqueue(ctx context.Context, j *WebhookJob, perProject, max int) (string, error)
	// Claim takes the next job for owner until lease has passed: of the
	// projects with a job waiting and none being handled, the one whose
	// turn is oldest, its oldest job. A job whose lease lapsed (its worker
	// died) is waiting again. ENOTFOUND when none is.
	Claim(ctx context.Context, owner string, lease time.Duration) (*WebhookJob, error)
	// Finish deletes job id, handled by owner.
	Finish(ctx context.Context, id, owner string) error
	// Count returns how many jobs are stored, waiting or being handled.
	Count(ctx context.Context) (int, error)
}
