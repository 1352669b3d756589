package deploy

import (
	"context"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/githost"
)

// Repos looks repositories up; *githost.Service is the real one.
type Repos interface {
	LookupAs(ctx context.Context, rawURL, token string) (*githost.LookupResult, error)
	LatestCommit(ctx context.Context, repo gantry.Repository, branch, token string) (*gantry.Commit, error)
	LookupGitHubID(ctx context.Context, token string, id int64, branch string) (*githost.LookupResult, error)
}

// ProjectInput is the body of POST /api/projects/public and PUT
// /api/projects/{id}: fields left nil keep their value on update.
type ProjectInput struct {
	Repository  *RepositoryInput    `json:"repository"`
	Name        *string             `json:"name"`
	Description *string             `json:"description"`
	Branch      *string             `json:"branch"`
	BuildConfig *gantry.BuildConfig `json:"buildConfig"`
	// Framework is the type the lookup detected; the build detects again.
	Framework *string `json:"framework"`
}

// RepositoryInput is the repository a client hands back from the lookup.
// Only its URL is trusted, after validation; the rest is re-derived.
type RepositoryInput struct {
	URL         string         `json:"url"`
	CloneURL    string         `json:"cloneUrl"`
	Description string         `json:"description"`
	LastCommit  *gantry.Commit `json:"lastCommit"`
	// Accepted for compatibility with the lookup answer; re-derived.
	ID            string `json:"id"`
	Name          string `json:"name"`
	FullName      string `json:"fullName"`
	DefaultBranch string `json:"defaultBranch"`
	Private       bool   `json:"private"`
}

// typeSlug is what a project type looks like (SPEC §3: react, nextjs, …).
var typeSlug = regexp.MustCompile(`^[a-z][a-z0-9-]{0,19}$`)

// LookupPublic describes the repository at repoURL for the New Project
// screen: repository, suggested name and description, detected framework
// and build settings.
func (s *Service) LookupPublic(ctx context.Context, u *gantry.User, repoURL string) (*githost.LookupResult, error) {
	repoURL = strings.TrimSpace(repoURL)
	if repoURL == "" {
		return nil, gantry.Errorf(gantry.EINVALID, "Please enter a repository URL")
	}
	if len(repoURL) > 2048 {
		return nil, gantry.Errorf(gantry.EINVALID, "Repository URL is too long")
	}
	return s.Repos.LookupAs(ctx, repoURL, s.optionalGitHubToken(u))
}

// CreatePublic creates a project from any public repository. The
// repository URL is parsed and checked again here: a client cannot smuggle
// in another clone URL than the one it names.
func (s *Service) CreatePublic(ctx context.Context, userID string, in ProjectInput) (*gantry.Project, error) {
	if in.Repository == nil || (in.Repository.URL == "" && in.Repository.CloneURL == "") {
		return nil, gantry.Errorf(gantry.EINVALID, "Please select a repository")
	}
	ref, err := githost.ParseRepoURL(firstNonEmpty(in.Repository.CloneURL, in.Repository.URL))
	if err != nil {
		return nil, err
	}
	p := &gantry.Project{
		UserID: userID,
		Type:   "github",
		Repository: gantry.Repository{
			ID: firstNonEmpty(in.Repository.ID, "git-"+ref.FullName), Name: ref.Name, FullName: ref.FullName,
			Description: in.Repository.Description, DefaultBranch: firstNonEmpty(in.Repository.DefaultBranch, "main"),
			URL: ref.WebURL, CloneURL: ref.CloneURL, LastCommit: in.Repository.LastCommit,
		},
		Branch: firstNonEmpty(ref.Branch, in.Repository.DefaultBranch, "main"),
		Name:   ref.Name,
	}
	if err := applyProjectInput(p, in); err != nil {
		return nil, err
	}
	if err := s.Store.CreateProject(ctx, p); err != nil {
		return nil, err
	}
	s.notify(ctx, gantry.ProjectCreatedNotification(p))
	return s.Store.FindProject(ctx, userID, p.ID)
}

// UpdateProject changes the owner's project's name, description, branch
// and build settings.
func (s *Service) UpdateProject(ctx context.Context, userID, id string, in ProjectInput) (*gantry.Project, error) {
	p, err := s.Store.FindProject(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	if err := applyProjectInput(p, in); err != nil {
		return nil, err
	}
	if err := s.Store.UpdateProject(ctx, p); err != nil {
		return nil, err
	}
	return s.Store.FindProject(ctx, userID, id)
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
	p.Repository.LastCommit = c
	if err := s.Store.UpdateProject(ctx, p); err != nil {
		return nil, err
	}
	return s.Store.FindProject(ctx, u.ID, id)
}

// applyProjectInput validates in and copies its set fields onto p.
func applyProjectInput(p *gantry.Project, in ProjectInput) error {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		switch {
		case name == "":
			return gantry.Errorf(gantry.EINVALID, "Project name is required")
		case utf8.RuneCountInString(name) > 100:
			return gantry.Errorf(gantry.EINVALID, "Project name cannot exceed 100 characters")
		}
		p.Name = name
	}
	if in.Description != nil {
		d := strings.TrimSpace(*in.Description)
		if utf8.RuneCountInString(d) > 500 {
			return gantry.Errorf(gantry.EINVALID, "Description cannot exceed 500 characters")
		}
		p.Description = d
	}
	if in.Branch != nil {
		b := strings.TrimSpace(*in.Branch)
		if b == "" {
			b = firstNonEmpty(p.Repository.DefaultBranch, "main")
		}
		if !githost.ValidBranch(b) {
			return gantry.Errorf(gantry.EINVALID, "Invalid branch name: %q", b)
		}
		p.Branch = b
	}
	if c := in.BuildConfig; c != nil {
		for _, f := range []struct{ name, v string }{
			{"Install command", c.InstallCommand}, {"Build command", c.BuildCommand}, {"Start command", c.StartCommand},
		} {
			if len(f.v) > 1000 || strings.ContainsAny(f.v, "\x00\n\r") {
				return gantry.Errorf(gantry.EINVALID, "%s must be one line of at most 1000 characters", f.name)
			}
		}
		if err := checkOutputDir(c.OutputDirectory); err != nil {
			return err
		}
		p.BuildConfig = gantry.BuildConfig{
			InstallCommand:  strings.TrimSpace(c.InstallCommand),
			BuildCommand:    strings.TrimSpace(c.BuildCommand),
			OutputDirectory: strings.Trim(strings.TrimSpace(c.OutputDirectory), "/"),
			StartCommand:    strings.TrimSpace(c.StartCommand),
		}
	}
	if in.Framework != nil && typeSlug.MatchString(*in.Framework) {
		p.Type = *in.Framework
	}
	return nil
}
