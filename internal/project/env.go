package project

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gantryhq/gantry"
)

// reservedEnv are set by the platform and cannot be overridden.
var reservedEnv = map[string]bool{"PORT": true, "HOST": true, "PATH": true, "HOME": true, "DATA_DIR": true}

// Env returns the owner's project's environment variables with secret
// values masked.
func (s *Service) Env(ctx context.Context, userID, projectID string) ([]gantry.EnvVar, error) {
	if _, err := s.Store.FindProject(ctx, userID, projectID); err != nil {
		return nil, err
	}
	vars, err := s.Store.ProjectEnv(ctx, projectID)
	if err != nil {
		return nil, err
	}
	return gantry.MaskedEnv(vars), nil
}

// SetEnv replaces the owner's project's environment variables. A secret
// sent back with the mask (or empty) as its value keeps its stored value
// (keptSecret), so a client can save the list it was shown, with scopes
// changed; the mask is never stored as a value. Secret values are sealed
// with the platform key before they are stored. New values take effect
// with the next deployment.
func (s *Service) SetEnv(ctx context.Context, userID, projectID string, vars []gantry.EnvVar) ([]gantry.EnvVar, error) {
	if len(vars) > gantry.MaxEnvVars {
		return nil, gantry.Errorf(gantry.EINVALID, "A project can have at most %d environment variables", gantry.MaxEnvVars)
	}
	if _, err := s.Store.FindProject(ctx, userID, projectID); err != nil {
		return nil, err
	}
	old, err := s.Store.ProjectEnv(ctx, projectID)
	if err != nil {
		return nil, err
	}
	// A variable is one name in one scope: a secret sent back masked keeps
	// the value stored for that name and scope.
	prev := map[string]gantry.EnvVar{}
	secrets := map[string][]gantry.EnvVar{} // stored secrets by name
	for _, v := range old {
		prev[v.Key+"\x00"+cmp.Or(v.Scope, gantry.EnvScopeAll)] = v
		if v.IsSecret {
			secrets[v.Key] = append(secrets[v.Key], v)
		}
	}
	seen := map[string]bool{}
	scopes := map[string][]string{}
	out := make([]gantry.EnvVar, 0, len(vars))
	for _, v := range vars {
		v.Key = strings.TrimSpace(v.Key)
		if err := gantry.ValidateEnvKey(v.Key); err != nil {
			return nil, err
		}
		// The key is valid from here: short and plain, safe to repeat.
		v.Scope = cmp.Or(strings.TrimSpace(v.Scope), gantry.EnvScopeAll)
		if err := gantry.ValidateEnvScope(v.Key, v.Scope); err != nil {
			return nil, err
		}
		id := v.Key + "\x00" + v.Scope
		switch {
		case reservedEnv[strings.ToUpper(v.Key)]:
			return nil, gantry.Errorf(gantry.EINVALID, "%s is set by Gantry and cannot be changed", v.Key)
		case seen[id]:
			return nil, gantry.Errorf(gantry.EINVALID, "Variable %s is listed twice", v.Key)
		case len(scopes[v.Key]) > 0 && (v.Scope == gantry.EnvScopeAll || slices.Contains(scopes[v.Key], gantry.EnvScopeAll)):
			return nil, gantry.Errorf(gantry.EINVALID, "Variable %s is set for all deployments and for one target: keep one, or give each its own scope (production, preview)", v.Key)
		}
		if err := gantry.ValidateEnvValue(v.Key, v.Value); err != nil {
			return nil, err
		}
		seen[id] = true
		scopes[v.Key] = append(scopes[v.Key], v.Scope)
		if v.IsSecret {
			if v.Value == gantry.SecretMask || v.Value == "" {
				kept, err := keptSecret(v, prev[id], secrets[v.Key])
				if err != nil {
					return nil, err
				}
				v.Value = kept // still sealed
			} else {
				if s.Secrets == nil {
					return nil, gantry.Errorf(gantry.EUNAVAILABLE, "Secrets cannot be stored: the platform has no secret key")
				}
				sealed, err := s.Secrets.Seal(v.Value)
				if err != nil {
					return nil, fmt.Errorf("seal %s: %w", v.Key, err)
				}
				v.Value = sealed
			}
		} else if v.Value == gantry.SecretMask {
			return nil, gantry.Errorf(gantry.EINVALID, "Enter the value of %s again to make it a plain variable", v.Key)
		}
		out = append(out, v)
	}
	if err := s.Store.SetProjectEnv(ctx, userID, projectID, out); err != nil {
		return nil, err
	}
	return gantry.MaskedEnv(out), nil
}

// keptSecret returns the sealed value a secret sent back masked (or empty)
// keeps: the one stored for its name and scope, else the one value stored
// for its name in another scope (the scope was changed). A name with no
// stored secret (a new or renamed variable) has nothing to keep, and a
// name stored with several values cannot say which one it means: both
// are refused, asking for the value.
func keptSecret(v, same gantry.EnvVar, stored []gantry.EnvVar) (string, error) {
	switch {
	case same.IsSecret:
		return same.Value, nil
	case len(stored) == 1:
		return stored[0].Value, nil
	case len(stored) == 0:
		return "", gantry.Errorf(gantry.EINVALID, "Enter the value of %s: no secret of that name is saved, and a secret's value is never shown, so a new or renamed secret needs its value typed again", v.Key)
	}
	return "", gantry.Errorf(gantry.EINVALID, "Enter the value of %s again: it has a different saved value in each scope, so the saved value to keep for scope %s is unclear", v.Key, v.Scope)
}
