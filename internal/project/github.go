package project

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/ghlink"
	"github.com/gantryhq/gantry/internal/githost"
)

// Messages of the GitHub paths.
const (
	MsgGitHubRepoUnseen = "Repository not found among your GitHub repositories: refresh them on the GitHub Integration page"
)

// GitHubRepoID is a GitHub repository id as clients send it: a JSON number
// (the id of user.github.repos) or a string of digits (the ?repo= of
// /projects/new).
type GitHubRepoID int64

// UnmarshalJSON accepts 123, "123" and null (0). Anything else is a
// *json.UnmarshalTypeError, which the API reports as "Invalid value for
// field "repositoryId": expected number".
func (id *GitHubRepoID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*id = 0
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			s = ""
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return &json.UnmarshalTypeError{Value: "string " + strconv.Quote(s), Type: reflect.TypeFor[int64]()}
	}
	*id = GitHubRepoID(n)
	return nil
}

// GitHubInput is the body of POST /api/projects: one of the
// connected account's repositories by id, and the fields a user may set.
// Name and description default to the repository's, branch ("" too) to its
// default branch, build settings to what detection suggests, the Discover
// listing to gantry.DefaultShowInDiscover. Everything about the repository
// comes from GitHub's API.
type GitHubInput struct {
	RepositoryID   GitHubRepoID        `json:"repositoryId"`
	Name           *string             `json:"name"`
	Description    *string             `json:"description"`
	Branch         *string             `json:"branch"`
	BuildConfig    *gantry.BuildConfig `json:"buildConfig"`
	ShowInDiscover *bool               `json:"showInDiscover"`
	AlwaysOn       *bool               `json:"alwaysOn"`
}

// Settings returns the fields of in a user may set, as the Input
// that carries them.
func (in GitHubInput) Settings() Input {
	return Input{Name: in.Name, Description: in.Description, Branch: in.Branch,
		BuildConfig: in.BuildConfig, ShowInDiscover: in.ShowInDiscover, AlwaysOn: in.AlwaysOn}
}

// CreateFromGitHub creates a project of u from one of the repositories of
// u's connected GitHub account. The repository must be in the account's
// stored list (user.github.repos; ENOTFOUND MsgGitHubRepoUnseen otherwise,
// so another account's repository can never be taken by id). It is then
// looked up with u's token (private repositories included): metadata, the
// branch's last commit and, when a detector is configured, the framework
// and build settings of a shallow clone. Once created, the project's
// repository webhook is registered (Hooks; a failure there is recorded,
// never the creation's). Not connected is EINVALID
// gantry.MsgConnectGitHub; a token GitHub refuses (or that no longer decrypts) is
// EINVALID gantry.MsgGitHubRevoked. The token is used for GitHub only and is never
// part of the project, an error or a log line.
func (s *Service) CreateFromGitHub(ctx context.Context, u *gantry.User, in GitHubInput) (*gantry.Project, error) {
	if !u.GitHub.Connected || u.GitHub.AccessToken == "" {
		return nil, gantry.Errorf(gantry.EINVALID, gantry.MsgConnectGitHub)
	}
	if in.RepositoryID == 0 {
		return nil, gantry.Errorf(gantry.EINVALID, "Please select a repository")
	}
	listed := false
	for _, r := range u.GitHub.Repos {
		if r.ID == int64(in.RepositoryID) {
			listed = true
			break
		}
	}
	if !listed {
		return nil, gantry.Errorf(gantry.ENOTFOUND, MsgGitHubRepoUnseen)
	}
	settings := in.Settings()
	if err := settings.Check(); err != nil {
		return nil, err
	}
	token, err := s.githubToken(u)
	if err != nil {
		return nil, err
	}
	if err := s.checkProjectLimit(ctx, u.ID); err != nil {
		return nil, err
	}
	branch := ""
	if in.Branch != nil {
		branch = *in.Branch
	}
	res, err := s.Repos.LookupGitHubID(ctx, token, int64(in.RepositoryID), branch)
	if githost.TokenRejected(err) {
		return nil, gantry.Errorf(gantry.EINVALID, gantry.MsgGitHubRevoked)
	} else if err != nil {
		return nil, err
	}
	cleanLookup(res)
	p := &gantry.Project{
		UserID:         u.ID,
		Type:           gantry.FirstNonBlank(res.Framework, "github"),
		Repository:     res.Repository,
		Branch:         gantry.FirstNonBlank(res.Branch, res.Repository.DefaultBranch, "main"),
		Name:           gantry.FirstNonBlank(res.SuggestedName, res.Repository.Name, "app"),
		Description:    res.SuggestedDescription,
		BuildConfig:    res.BuildConfig,
		ShowInDiscover: gantry.DefaultShowInDiscover(res.Repository),
	}
	settings.Branch = nil // the lookup used it
	if err := applyProjectInput(p, settings, u.Subscription.Plan); err != nil {
		return nil, err
	}
	if err := s.Store.CreateProject(ctx, p); err != nil {
		return nil, err
	}
	if s.Webhooks != nil {
		s.Webhooks.Register(ctx, u, p)
	}
	s.notify(ctx, gantry.ProjectCreatedNotification(p))
	return s.owned(ctx)(s.Store.FindProject(ctx, u.ID, p.ID))
}

// githubToken opens u's sealed GitHub access token (ghlink.OpenToken).
func (s *Service) githubToken(u *gantry.User) (string, error) {
	return ghlink.OpenToken(u, s.Decrypt)
}

// optionalGitHubToken is githubToken for calls that also work without a
// token (public lookups, sync of public repositories): "" when it is
// unusable.
func (s *Service) optionalGitHubToken(u *gantry.User) string {
	token, err := s.githubToken(u)
	if err != nil {
		return ""
	}
	return token
}
