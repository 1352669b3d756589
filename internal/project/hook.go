package project

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/gantryhq/gantry"
)

// Deploy hooks: every project has a random token (32 bytes, base64url);
// POST <PublicURL>/api/hooks/deploy/<token> with no other credentials
// starts a deployment. The store keeps the token's SHA-256 to find the
// project by and the token sealed (secret.DeployHooks) so that the owner
// can see the URL again; the token itself is never stored in the clear.

// DeployHookPath is the path of the deploy hook endpoint, before the token.
const DeployHookPath = "/api/hooks/deploy/"

// HookStore is what deploy hooks need of the database (internal/store).
type HookStore interface {
	SetDeployHook(ctx context.Context, projectID, hash, sealed string, onlyIfNone bool) (bool, error)
	FindProjectByDeployHook(ctx context.Context, hash string) (*gantry.Project, error)
}

// HashDeployHook is the hex SHA-256 of a deploy hook token: what the store
// finds the project by.
func HashDeployHook(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// newHookToken is 32 random bytes, base64url without padding (43
// characters).
func newHookToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("deploy hook token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// validHookToken reports whether s has a token's shape: 43 base64url
// characters. Anything else is not looked up.
func validHookToken(s string) bool {
	if len(s) != 43 {
		return false
	}
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// hookStore is s.Store as a HookStore, or nil when it is not one.
func (s *Service) hookStore() HookStore {
	hs, _ := s.Store.(HookStore)
	return hs
}

// setHook makes and stores a new token for p (onlyIfNone: only when p has
// none yet) and returns it sealed, or "" when onlyIfNone found one.
func (s *Service) setHook(ctx context.Context, p *gantry.Project, onlyIfNone bool) (string, error) {
	hs := s.hookStore()
	if hs == nil || s.Hooks == nil {
		return "", gantry.Errorf(gantry.EUNAVAILABLE, "Deploy hooks are not available: the platform has no secret key")
	}
	token, err := newHookToken()
	if err != nil {
		return "", err
	}
	sealed, err := s.Hooks.Seal(token)
	if err != nil {
		return "", fmt.Errorf("seal deploy hook: %w", err)
	}
	ok, err := hs.SetDeployHook(ctx, p.ID, HashDeployHook(token), sealed, onlyIfNone)
	if err != nil || !ok {
		return "", err
	}
	return sealed, nil
}

// withHook fills p's DeployHookURL for its owner, making the project's
// first token when it has none (projects made before deploy hooks). A
// project whose token cannot be opened (the platform's key changed) shows
// none: rotating makes a new one.
func (s *Service) withHook(ctx context.Context, p *gantry.Project) *gantry.Project {
	if p == nil || s.Hooks == nil || s.hookStore() == nil {
		return p
	}
	sealed := p.DeployHookSealed
	if sealed == "" {
		made, err := s.setHook(ctx, p, true)
		if err != nil {
			return p
		}
		if made == "" { // another request made it first
			q, err := s.Store.FindProject(ctx, "", p.ID)
			if err != nil {
				return p
			}
			made = q.DeployHookSealed
		}
		sealed = made
	}
	token, err := s.Hooks.Open(sealed)
	if err != nil {
		return p
	}
	p.DeployHookSealed = sealed
	p.DeployHookURL = strings.TrimRight(s.PublicURL, "/") + DeployHookPath + token
	return p
}

// owned passes on a project read for its owner with its deploy hook URL.
func (s *Service) owned(ctx context.Context) func(*gantry.Project, error) (*gantry.Project, error) {
	return func(p *gantry.Project, err error) (*gantry.Project, error) {
		if err != nil {
			return nil, err
		}
		return s.withHook(ctx, p), nil
	}
}

// RotateDeployHook gives the owner's project a new deploy hook token (the
// old URL stops working at once) and returns the project.
func (s *Service) RotateDeployHook(ctx context.Context, userID, id string) (*gantry.Project, error) {
	if !gantry.ValidID(id) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	}
	p, err := s.Store.FindProject(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.setHook(ctx, p, false); err != nil {
		return nil, err
	}
	return s.owned(ctx)(s.Store.FindProject(ctx, userID, id))
}

// ProjectByDeployHook returns the project whose deploy hook token is
// token; ENOTFOUND ("Deploy hook not found") for any other string.
func (s *Service) ProjectByDeployHook(ctx context.Context, token string) (*gantry.Project, error) {
	hs := s.hookStore()
	if hs == nil || !validHookToken(token) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Deploy hook not found")
	}
	return hs.FindProjectByDeployHook(ctx, HashDeployHook(token))
}
