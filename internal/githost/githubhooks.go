package githost

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gantryhq/gantry"
	"github.com/google/go-github/v92/github"
)

// HookEvents are the events of the repository webhooks Gantry registers.
var HookEvents = []string{"push", "pull_request"}

// CreateHook registers a repository webhook on fullName ("owner/name")
// that sends HookEvents as JSON to url, signed with secret, and returns
// GitHub's id of it. GitHub answers 404 when the token's account may not
// administer the repository; that is EINVALID with a message saying so.
func (g *GitHub) CreateHook(ctx context.Context, token, fullName, url, secret string) (int64, error) {
	owner, name, c, err := g.repoClient(token, fullName)
	if err != nil {
		return 0, err
	}
	h, _, err := c.Repositories.CreateHook(ctx, owner, name, &github.Hook{
		Config: &github.HookConfig{URL: &url, ContentType: github.Ptr("json"), Secret: &secret,
			InsecureSSL: github.Ptr("0")},
		Events: HookEvents,
		Active: github.Ptr(true),
	})
	if err != nil {
		return 0, g.writeError(ctx, err, fullName, "add a webhook to")
	}
	return h.GetID(), nil
}

// DeleteHook removes webhook id of fullName; a hook that is already gone
// is not an error.
func (g *GitHub) DeleteHook(ctx context.Context, token, fullName string, id int64) error {
	owner, name, c, err := g.repoClient(token, fullName)
	if err != nil {
		return err
	}
	resp, err := c.Repositories.DeleteHook(ctx, owner, name, id)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return g.writeError(ctx, err, fullName, "remove the webhook of")
	}
	return nil
}

// Status is a commit status (GitHub's "statuses" API).
type Status struct {
	State       string // pending, success, failure or error
	TargetURL   string
	Description string // at most 140 characters (GitHub's limit); longer is cut
	Context     string
}

// SetStatus sets a commit status on sha of fullName.
func (g *GitHub) SetStatus(ctx context.Context, token, fullName, sha string, st Status) error {
	owner, name, c, err := g.repoClient(token, fullName)
	if err != nil {
		return err
	}
	desc := st.Description
	if r := []rune(desc); len(r) > 140 {
		desc = string(r[:139]) + "…"
	}
	rs := github.RepoStatus{State: &st.State, Description: &desc, Context: &st.Context}
	if st.TargetURL != "" {
		rs.TargetURL = &st.TargetURL
	}
	if _, _, err := c.Repositories.CreateStatus(ctx, owner, name, sha, rs); err != nil {
		return g.writeError(ctx, err, fullName, "set a commit status on")
	}
	return nil
}

// CreateComment comments body on issue or pull request number of fullName
// and returns the comment's id.
func (g *GitHub) CreateComment(ctx context.Context, token, fullName string, number int, body string) (int64, error) {
	owner, name, c, err := g.repoClient(token, fullName)
	if err != nil {
		return 0, err
	}
	cm, _, err := c.Issues.CreateComment(ctx, owner, name, number, github.IssueCommentRequest{Body: body})
	if err != nil {
		return 0, g.writeError(ctx, err, fullName, "comment on")
	}
	return cm.GetID(), nil
}

// EditComment replaces the body of comment id of fullName. A comment that
// is gone (deleted by someone) is ENOTFOUND.
func (g *GitHub) EditComment(ctx context.Context, token, fullName string, id int64, body string) error {
	owner, name, c, err := g.repoClient(token, fullName)
	if err != nil {
		return err
	}
	_, resp, err := c.Issues.UpdateComment(ctx, owner, name, id, github.IssueCommentRequest{Body: body})
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return gantry.Errorf(gantry.ENOTFOUND, "Comment not found on GitHub")
	}
	if err != nil {
		return g.writeError(ctx, err, fullName, "edit a comment on")
	}
	return nil
}

// repoClient splits fullName and returns a client of token.
func (g *GitHub) repoClient(token, fullName string) (owner, name string, c *github.Client, err error) {
	owner, name, ok := strings.Cut(fullName, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", nil, gantry.Errorf(gantry.EINVALID, "Invalid GitHub repository name %q", fullName)
	}
	if token == "" {
		return "", "", nil, errBadToken()
	}
	c, err = g.client(token)
	return owner, name, c, err
}

// writeError translates the failure of a write to fullName: 404 and 403
// mean the token's account may not do it (writes need admin or push
// rights), the rest is apiError's.
func (g *GitHub) writeError(ctx context.Context, err error, fullName, doing string) error {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		switch er.Response.StatusCode {
		case http.StatusNotFound, http.StatusForbidden:
			if er.Response.Header.Get("X-RateLimit-Remaining") == "0" {
				return errRateLimited
			}
			return gantry.Errorf(gantry.EINVALID, "GitHub refused to let Gantry %s %s: the connected account needs admin access to it", doing, fullName)
		case http.StatusUnprocessableEntity:
			msg := er.Message
			for _, e := range er.Errors {
				if e.Message != "" {
					msg = e.Message
					break
				}
			}
			return gantry.Errorf(gantry.EINVALID, "GitHub refused to let Gantry %s %s: %s", doing, fullName, msg)
		}
	}
	return g.apiError(ctx, err, "", "")
}
