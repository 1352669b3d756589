package ghhook

import (
	"context"
	"fmt"

	"github.com/gantryhq/gantry"
)

// View is GET /api/projects/{id}/github: the project's webhook (nil when it
// has none) and the pull requests Gantry has seen.
type View struct {
	Webhook      *WebhookView      `json:"webhook"`
	PullRequests []PullRequestView `json:"pullRequests"`
	// ForkVariables are the names of the variables a fork's pull request
	// is built with: those scoped to preview (gantry.EnvVar.InForkScope),
	// in the project's order.
	ForkVariables []string `json:"forkVariables"`
}

// WebhookView is a webhook as the Git card shows it. Active is true once
// GitHub accepted it; Error says why it is missing.
type WebhookView struct {
	Active       bool                   `json:"active"`
	Error        *string                `json:"error"`
	LastDelivery *gantry.GitHubDelivery `json:"lastDelivery"`
}

// PullRequestView is a pull request as the project page shows it.
type PullRequestView struct {
	Number     int    `json:"number"`
	Title      string `json:"title"`
	Author     string `json:"author"`
	HeadBranch string `json:"headBranch"`
	Fork       bool   `json:"fork"`
	State      string `json:"state"`
	URL        string `json:"url"`
	// HeadSHA is the pull request's head commit as Gantry last saw it:
	// what approving builds (Approve takes it back); DiffURL is the pull
	// request's changes on GitHub.
	HeadSHA      string  `json:"headSha"`
	DiffURL      string  `json:"diffUrl"`
	DeploymentID *string `json:"deploymentId"`
}

func pullRequestView(pr *gantry.GitHubPullRequest) PullRequestView {
	v := PullRequestView{Number: pr.Number, Title: pr.Title, Author: pr.Author, HeadBranch: pr.HeadBranch,
		Fork: pr.Fork, State: pr.State, URL: pr.URL, HeadSHA: pr.HeadSHA}
	if pr.URL != "" {
		v.DiffURL = pr.URL + "/files"
	}
	if pr.DeploymentID != "" {
		id := pr.DeploymentID
		v.DeploymentID = &id
	}
	return v
}

// Status returns the GitHub side of the owner's project; another user's
// project is ENOTFOUND.
func (s *Service) Status(ctx context.Context, userID, projectID string) (*View, error) {
	p, err := s.Store.FindProject(ctx, userID, projectID)
	if err != nil {
		return nil, err
	}
	return s.view(ctx, p)
}

func (s *Service) view(ctx context.Context, p *gantry.Project) (*View, error) {
	v := &View{PullRequests: []PullRequestView{}, ForkVariables: []string{}}
	vars, err := s.Store.ProjectEnv(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	for _, ev := range vars {
		if ev.InForkScope() {
			v.ForkVariables = append(v.ForkVariables, ev.Key)
		}
	}
	h, err := s.Store.FindGitHubHook(ctx, p.ID)
	switch gantry.ErrorCode(err) {
	case "":
		w := &WebhookView{Active: h.HookID != 0, LastDelivery: h.Last}
		if h.Error != "" {
			msg := h.Error
			w.Error = &msg
		}
		v.Webhook = w
	case gantry.ENOTFOUND:
	default:
		return nil, err
	}
	prs, err := s.Store.ListGitHubPullRequests(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	for _, pr := range prs {
		v.PullRequests = append(v.PullRequests, pullRequestView(pr))
	}
	return v, nil
}

// MsgPullRequestChanged is Approve's ECONFLICT answer when the pull
// request's head is not the commit the owner approved.
const MsgPullRequestChanged = "The pull request changed since you looked: its head is now commit %s. Review the new changes and approve again"

// MsgApproveSHA is Approve's EINVALID answer for a missing or malformed
// sha.
const MsgApproveSHA = "Send sha, the full hash of the head commit you reviewed (40 or 64 lower-case hex digits): approving builds that commit only"

// Approve lets the owner build commit sha, the head commit of a fork's pull
// request that waits for approval, as the owner saw it
// (POST /api/projects/{id}/pull-requests/{n}/approve {sha}). The approval
// covers that commit only: when the head moved since (a push to the pull
// request) it is ECONFLICT MsgPullRequestChanged and nothing is built, and
// a later push waits for a new approval, since its code would run with the
// preview's variables. Another user's project, or a pull request Gantry has
// not seen, is ENOTFOUND; one that is not waiting is ECONFLICT; then sha
// not a full commit hash is EINVALID MsgApproveSHA.
func (s *Service) Approve(ctx context.Context, userID, projectID string, number int, sha string) (*PullRequestView, error) {
	p, err := s.Store.FindProject(ctx, userID, projectID)
	if err != nil {
		return nil, err
	}
	unlock := s.lock(p.ID)
	defer unlock()
	pr, err := s.Store.FindGitHubPullRequest(ctx, p.ID, number)
	if err != nil {
		return nil, err
	}
	if pr.State != gantry.PullRequestAwaitingApproval {
		return nil, gantry.Errorf(gantry.ECONFLICT, "Pull request #%d has no commit waiting for approval", number)
	}
	if !gantry.ValidCommitSHA(sha) {
		return nil, gantry.Errorf(gantry.EINVALID, MsgApproveSHA)
	}
	if pr.HeadSHA != sha {
		return nil, gantry.Errorf(gantry.ECONFLICT, MsgPullRequestChanged, gantry.ShortSHA(pr.HeadSHA))
	}
	h, err := s.Store.FindGitHubHook(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	pr.ApprovedSHA = pr.HeadSHA
	r := s.buildPullRequest(ctx, p, h, pr, result{event: "pull_request", action: "approved"})
	if r.status != gantry.DeliveryOK {
		if r.status == gantry.DeliveryFailed {
			return nil, fmt.Errorf("approve pull request #%d: %s", number, r.message)
		}
		return nil, gantry.Errorf(gantry.EINVALID, "%s", r.message)
	}
	v := pullRequestView(pr)
	return &v, nil
}
