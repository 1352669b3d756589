package deploy

import (
	"context"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/ghlink"
)

// cloneToken returns the GitHub token a build of p clones with: its owner's,
// when connected. githost sends it to the GitHub host only. When the
// owner's token no longer opens, the deployment log says so (without the
// token) and the clone goes on without one.
func (s *core) cloneToken(ctx context.Context, deploymentID string, p *gantry.Project) string {
	u, err := s.Store.FindUserByID(ctx, p.UserID)
	if err != nil {
		return ""
	}
	token, err := ghlink.OpenToken(u, s.Decrypt)
	if err != nil {
		s.log(ctx, deploymentID, gantry.LevelWarning, gantry.LogDeployment,
			"Your GitHub connection could not be used: connect your GitHub account again to build private repositories")
		return ""
	}
	return token
}

// ownerToken is the project owner's GitHub token, or "" when the owner has
// none that opens (a branch lookup then goes without one).
func (s *core) ownerToken(ctx context.Context, p *gantry.Project) string {
	u, err := s.Store.FindUserByID(ctx, p.UserID)
	if err != nil {
		return ""
	}
	token, err := ghlink.OpenToken(u, s.Decrypt)
	if err != nil {
		return ""
	}
	return token
}
