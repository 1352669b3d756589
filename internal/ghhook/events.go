package ghhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/githost"
)

// Lengths kept of what GitHub sends.
const (
	titleMaxLen   = 256
	messageMaxLen = 2000
	nameMaxLen    = 100
	urlMaxLen     = 500
)

type pushEvent struct {
	Ref        string `json:"ref"`
	After      string `json:"after"`
	Deleted    bool   `json:"deleted"`
	HeadCommit *struct {
		ID      string `json:"id"`
		Message string `json:"message"`
		Author  struct {
			Name string `json:"name"`
		} `json:"author"`
	} `json:"head_commit"`
	Pusher struct {
		Name string `json:"name"`
	} `json:"pusher"`
}

// push handles a push: a branch deleted removes its previews; a commit
// pushed to a branch is deployed (production for the project's branch, a
// preview for the others, except a branch an open pull request builds).
func (s *Service) push(ctx context.Context, p *gantry.Project, h *gantry.GitHubHook, body []byte) result {
	r := result{event: "push"}
	var ev pushEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		r.status, r.message = gantry.DeliveryFailed, "The push payload could not be read"
		return r
	}
	branch, ok := strings.CutPrefix(ev.Ref, "refs/heads/")
	if !ok {
		r.status, r.message = gantry.DeliveryIgnored, "Only pushes to branches are deployed (not tags)"
		return r
	}
	if !gantry.ValidBranch(branch) {
		r.status, r.message = gantry.DeliveryIgnored, "The branch name is not one Gantry builds: "+gantry.Quote(branch)
		return r
	}
	if ev.Deleted {
		if branch == p.Branch {
			r.status, r.message = gantry.DeliveryIgnored, "The production branch was deleted; production stays as it is"
			return r
		}
		if err := s.Deployer.RemovePreviews(ctx, p.ID, 0, branch); err != nil {
			s.triggerResult(ctx, &r, p.ID, err, "")
			return r
		}
		r.status, r.message = gantry.DeliveryOK, "Branch "+branch+" deleted: its preview was removed"
		return r
	}
	if ev.HeadCommit == nil || !gantry.ValidCommitSHA(ev.HeadCommit.ID) {
		r.status, r.message = gantry.DeliveryIgnored, "The push carries no commit"
		return r
	}
	if branch != p.Branch {
		if prs, err := s.Store.ListGitHubPullRequests(ctx, p.ID); err == nil {
			for _, pr := range prs {
				if pr.HeadBranch == branch && !pr.Fork && pr.State == gantry.PullRequestOpen {
					r.status, r.message = gantry.DeliveryIgnored, fmt.Sprintf("Branch %s is built by pull request #%d", branch, pr.Number)
					return r
				}
			}
		}
	}
	commit := &gantry.Commit{
		SHA:     ev.HeadCommit.ID,
		Message: gantry.CleanText(ev.HeadCommit.Message, messageMaxLen, true),
		Author:  gantry.CleanText(gantry.FirstNonBlank(ev.HeadCommit.Author.Name, ev.Pusher.Name), nameMaxLen, false),
		Date:    s.now(),
	}
	d, err := s.Deployer.Trigger(ctx, gantry.DeployTrigger{ProjectID: p.ID, Trigger: gantry.TriggerPush, Branch: branch, Commit: commit})
	what := "Production"
	if branch != p.Branch {
		what = "Preview of " + branch
	}
	ok2 := what + " deployment queued for " + short(commit.SHA)
	if d != nil {
		ok2 += " (" + d.ID + ")"
	}
	s.triggerResult(ctx, &r, p.ID, err, ok2)
	return r
}

type pullRequestEvent struct {
	Action      string `json:"action"`
	Number      int    `json:"number"`
	PullRequest *struct {
		Number  int    `json:"number"`
		Title   string `json:"title"`
		HTMLURL string `json:"html_url"`
		User    struct {
			Login string `json:"login"`
		} `json:"user"`
		Head struct {
			Ref  string `json:"ref"`
			SHA  string `json:"sha"`
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"head"`
		Base struct {
			Ref string `json:"ref"`
		} `json:"base"`
	} `json:"pull_request"`
	Repository struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
}

// pullRequest handles a pull request opened, updated (synchronize) or
// reopened (build its preview, unless it comes from a fork and its head
// commit was not approved) or closed (remove its preview).
func (s *Service) pullRequest(ctx context.Context, p *gantry.Project, h *gantry.GitHubHook, body []byte) result {
	r := result{event: "pull_request"}
	var ev pullRequestEvent
	if err := json.Unmarshal(body, &ev); err != nil || ev.PullRequest == nil || ev.Number <= 0 {
		r.status, r.message = gantry.DeliveryFailed, "The pull request payload could not be read"
		return r
	}
	r.action = gantry.CleanText(ev.Action, 40, false)
	gp := ev.PullRequest
	pr, err := s.Store.FindGitHubPullRequest(ctx, p.ID, ev.Number)
	if gantry.ErrorCode(err) == gantry.ENOTFOUND {
		pr = &gantry.GitHubPullRequest{ProjectID: p.ID, Number: ev.Number, State: gantry.PullRequestOpen}
	} else if err != nil {
		s.logger().ErrorContext(ctx, "github webhook: pull request not read", "project", p.ID, "err", err)
		r.status, r.message = gantry.DeliveryFailed, "Internal error"
		return r
	}
	pr.Title = gantry.CleanText(gp.Title, titleMaxLen, false)
	pr.Author = gantry.CleanText(gp.User.Login, nameMaxLen, false)
	if strings.HasPrefix(gp.HTMLURL, "https://") || strings.HasPrefix(gp.HTMLURL, "http://") {
		pr.URL = gantry.CleanText(gp.HTMLURL, urlMaxLen, false)
	}
	if gantry.ValidBranch(gp.Head.Ref) {
		pr.HeadBranch = gp.Head.Ref
	}
	if gantry.ValidCommitSHA(gp.Head.SHA) {
		pr.HeadSHA = gp.Head.SHA
	}
	base := gantry.FirstNonBlank(ev.Repository.FullName, p.Repository.FullName)
	pr.Fork = gp.Head.Repo == nil || !strings.EqualFold(gp.Head.Repo.FullName, base)

	switch ev.Action {
	case "opened", "synchronize", "reopened":
	case "closed":
		pr.State = gantry.PullRequestClosed
		if err := s.Store.SaveGitHubPullRequest(ctx, pr); err != nil {
			s.logger().ErrorContext(ctx, "github webhook: pull request not saved", "project", p.ID, "err", err)
		}
		if err := s.Deployer.RemovePreviews(ctx, p.ID, pr.Number, ""); err != nil {
			s.triggerResult(ctx, &r, p.ID, err, "")
			return r
		}
		s.report(ctx, p, h, pr, "🗑️ Removed (the pull request was closed)", "", "")
		r.status, r.message = gantry.DeliveryOK, fmt.Sprintf("Pull request #%d closed: its preview was removed", pr.Number)
		return r
	default:
		if err := s.Store.SaveGitHubPullRequest(ctx, pr); err != nil {
			s.logger().ErrorContext(ctx, "github webhook: pull request not saved", "project", p.ID, "err", err)
		}
		r.status, r.message = gantry.DeliveryIgnored, "Gantry does not act on pull requests being "+r.action
		return r
	}
	if pr.HeadBranch == "" || pr.HeadSHA == "" {
		r.status, r.message = gantry.DeliveryIgnored, "The pull request's head is not a branch and commit Gantry builds"
		return r
	}
	if pr.Fork && pr.ApprovedSHA != pr.HeadSHA {
		pr.State = gantry.PullRequestAwaitingApproval
		if err := s.Store.SaveGitHubPullRequest(ctx, pr); err != nil {
			s.logger().ErrorContext(ctx, "github webhook: pull request not saved", "project", p.ID, "err", err)
		}
		s.status(ctx, p, h, pr.HeadSHA, "pending", "Waiting for the project owner's approval (pull request from a fork)",
			s.PublicURL+"/projects/"+p.ID)
		r.status, r.message = gantry.DeliveryIgnored,
			fmt.Sprintf("Pull request #%d comes from a fork: its preview waits for your approval", pr.Number)
		return r
	}
	return s.buildPullRequest(ctx, p, h, pr, r)
}

// buildPullRequest queues pr's preview and reports it as building.
func (s *Service) buildPullRequest(ctx context.Context, p *gantry.Project, h *gantry.GitHubHook, pr *gantry.GitHubPullRequest, r result) result {
	d, err := s.Deployer.Trigger(ctx, gantry.DeployTrigger{
		ProjectID: p.ID, Trigger: gantry.TriggerPullRequest, Branch: pr.HeadBranch, PullRequest: pr.Number, Fork: pr.Fork,
		Commit: &gantry.Commit{SHA: pr.HeadSHA, Message: pr.Title, Author: pr.Author, Date: s.now()},
	})
	switch {
	case pr.Fork && err != nil: // not built: it still waits
		pr.State, pr.ApprovedSHA = gantry.PullRequestAwaitingApproval, ""
	case pr.Fork:
		pr.State = gantry.PullRequestApproved
	default:
		pr.State = gantry.PullRequestOpen
	}
	if d != nil {
		pr.DeploymentID = d.ID
	}
	if err := s.Store.SaveGitHubPullRequest(ctx, pr); err != nil {
		s.logger().ErrorContext(ctx, "github webhook: pull request not saved", "project", p.ID, "err", err)
	}
	ok := fmt.Sprintf("Preview of pull request #%d queued for %s", pr.Number, short(pr.HeadSHA))
	s.triggerResult(ctx, &r, p.ID, err, ok)
	if err != nil {
		return r
	}
	s.status(ctx, p, h, pr.HeadSHA, "pending", "Building preview…", s.deploymentPage(d))
	s.report(ctx, p, h, pr, "⏳ Building", "", s.deploymentPage(d))
	return r
}

// DeploymentFinished reports a finished build (live, failed or stopped) to
// GitHub when it is the current preview of a pull request: the commit
// status (success linking to the preview, failure linking to the
// deployment's page) and the pull request's comment. The integrator sets
// it as the deploy service's Finished hook; it never fails the deployment.
//
// The report runs in a goroutine of its own (Wait and Close wait for it;
// after Close it runs in the caller's): the deploy service calls Finished
// synchronously, also from Trigger when a new commit supersedes a build,
// and Trigger is called by this service while it holds the project's lock
// (a delivery, an approval), so taking that lock here, in the caller's
// goroutine, would deadlock the project's deliveries for good. It also
// keeps GitHub's latency off build workers.
func (s *Service) DeploymentFinished(ctx context.Context, d *gantry.Deployment) {
	if d == nil || d.ProjectID == "" {
		return
	}
	dc := *d // the caller keeps its deployment
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.reports.Add(1)
	}
	s.mu.Unlock()
	if closed {
		// Shutting down (builds ending as the deploy service closes, after
		// this service): no delivery holds a lock any more; report before
		// the caller goes on to close the store.
		s.deploymentFinished(context.WithoutCancel(ctx), &dc)
		return
	}
	go func() {
		defer s.reports.Done()
		s.deploymentFinished(context.WithoutCancel(ctx), &dc)
	}()
}

// deploymentFinished is DeploymentFinished's report.
func (s *Service) deploymentFinished(ctx context.Context, d *gantry.Deployment) {
	ctx, cancel := context.WithTimeout(ctx, 2*CallTimeout)
	defer cancel()
	unlock := s.lock(d.ProjectID)
	defer unlock()
	pr, err := s.Store.FindGitHubPullRequestByDeployment(ctx, d.ProjectID, d.ID)
	if err != nil || pr.State == gantry.PullRequestClosed {
		return // not a pull request's current preview (superseded, a push, a manual deployment…), or removed
	}
	h, err := s.Store.FindGitHubHook(ctx, d.ProjectID)
	if err != nil {
		return
	}
	p, err := s.Store.FindProject(ctx, h.UserID, d.ProjectID)
	if err != nil {
		return
	}
	switch d.Status {
	case gantry.DeploymentLive:
		s.status(ctx, p, h, pr.HeadSHA, "success", "Preview is live", d.URL)
		s.report(ctx, p, h, pr, "✅ Live", d.URL, s.deploymentPage(d))
	case gantry.DeploymentFailed:
		s.status(ctx, p, h, pr.HeadSHA, "failure", "The preview's build failed", s.deploymentPage(d))
		s.report(ctx, p, h, pr, "❌ Failed", "", s.deploymentPage(d))
	case gantry.DeploymentStopped:
		s.status(ctx, p, h, pr.HeadSHA, "error", "The preview's build was stopped", s.deploymentPage(d))
		s.report(ctx, p, h, pr, "⏹️ Stopped", "", s.deploymentPage(d))
	}
}

// deploymentPage is d's page on Gantry, "" without d.
func (s *Service) deploymentPage(d *gantry.Deployment) string {
	if d == nil || d.ID == "" {
		return ""
	}
	return s.PublicURL + "/deployments/" + d.ID
}

// status sets Gantry's commit status on sha, logging failures.
func (s *Service) status(ctx context.Context, p *gantry.Project, h *gantry.GitHubHook, sha, state, desc, target string) {
	token, err := s.userToken(ctx, p.UserID)
	if err == nil {
		err = s.GitHub.SetStatus(ctx, token, repoName(p, h), sha,
			githost.Status{State: state, Description: desc, TargetURL: target, Context: StatusContext})
	}
	if err != nil {
		s.logger().WarnContext(ctx, "github: commit status not set", "project", p.ID, "sha", sha, "state", state, "err", err)
	}
}

// report creates pr's one comment, or edits it in place (again when it was
// deleted), with the preview's state. It saves the comment's id on pr.
func (s *Service) report(ctx context.Context, p *gantry.Project, h *gantry.GitHubHook, pr *gantry.GitHubPullRequest, state, preview, page string) {
	token, err := s.userToken(ctx, p.UserID)
	if err != nil {
		s.logger().WarnContext(ctx, "github: pull request comment not written", "project", p.ID, "pr", pr.Number, "err", err)
		return
	}
	body := commentBody(pr, state, preview, page, s.now().Format("2006-01-02 15:04 UTC"))
	repo := repoName(p, h)
	if pr.CommentID != 0 {
		err = s.GitHub.EditComment(ctx, token, repo, pr.CommentID, body)
		if gantry.ErrorCode(err) != gantry.ENOTFOUND {
			if err != nil {
				s.logger().WarnContext(ctx, "github: pull request comment not edited", "project", p.ID, "pr", pr.Number, "err", err)
			}
			return
		}
	}
	if pr.State == gantry.PullRequestClosed && pr.CommentID == 0 {
		return // nothing was ever said: no need to start now
	}
	id, err := s.GitHub.CreateComment(ctx, token, repo, pr.Number, body)
	if err != nil {
		s.logger().WarnContext(ctx, "github: pull request comment not created", "project", p.ID, "pr", pr.Number, "err", err)
		return
	}
	pr.CommentID = id
	if err := s.Store.SaveGitHubPullRequest(ctx, pr); err != nil {
		s.logger().ErrorContext(ctx, "github: comment id not saved", "project", p.ID, "pr", pr.Number, "err", err)
	}
}

// commentBody is the markdown of a pull request's comment: a small table
// of the preview's state, URL, commit and time.
func commentBody(pr *gantry.GitHubPullRequest, state, preview, page, updated string) string {
	cell := func(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s) }
	link := "—"
	if preview != "" {
		link = "[" + cell(preview) + "](" + cell(preview) + ")"
	}
	var b strings.Builder
	b.WriteString("<!-- gantry-preview -->\n**Gantry preview**\n\n")
	b.WriteString("| Status | Preview | Commit | Updated |\n| --- | --- | --- | --- |\n")
	fmt.Fprintf(&b, "| %s | %s | `%s` | %s |\n", cell(state), link, short(pr.HeadSHA), cell(updated))
	if page != "" {
		fmt.Fprintf(&b, "\n[Deployment details and logs](%s)\n", cell(page))
	}
	return b.String()
}

// short is a commit's short form.
func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
