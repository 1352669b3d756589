package deploy

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gantryhq/gantry"
)

// Mask stands for a secret value in every answer and log line
// (gantry.SecretMask).
const Mask = gantry.SecretMask

// reservedEnv are set by the platform and cannot be overridden.
var reservedEnv = map[string]bool{"PORT": true, "HOST": true, "PATH": true, "HOME": true}

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
// sent back with the mask (or empty) as its value keeps its stored value,
// so a client can save the list it was shown. Secret values are sealed
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
	prev := map[string]gantry.EnvVar{}
	for _, v := range old {
		prev[v.Key] = v
	}
	seen := map[string]bool{}
	out := make([]gantry.EnvVar, 0, len(vars))
	for _, v := range vars {
		v.Key = strings.TrimSpace(v.Key)
		if err := gantry.ValidateEnvKey(v.Key); err != nil {
			return nil, err
		}
		// The key is valid from here: short and plain, safe to repeat.
		switch {
		case reservedEnv[strings.ToUpper(v.Key)]:
			return nil, gantry.Errorf(gantry.EINVALID, "%s is set by Gantry and cannot be changed", v.Key)
		case seen[v.Key]:
			return nil, gantry.Errorf(gantry.EINVALID, "Variable %s is listed twice", v.Key)
		}
		if err := gantry.ValidateEnvValue(v.Key, v.Value); err != nil {
			return nil, err
		}
		seen[v.Key] = true
		if v.IsSecret {
			if p, ok := prev[v.Key]; ok && p.IsSecret && (v.Value == Mask || v.Value == "") {
				v.Value = p.Value // still sealed
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
		} else if v.Value == Mask {
			return nil, gantry.Errorf(gantry.EINVALID, "Enter the value of %s again to make it a plain variable", v.Key)
		}
		out = append(out, v)
	}
	if err := s.Store.SetProjectEnv(ctx, userID, projectID, out); err != nil {
		return nil, err
	}
	return gantry.MaskedEnv(out), nil
}

// buildEnv returns a project's variables with secrets opened, for a build
// or an app, and the secret values to redact from log lines (longest
// first, so a secret that contains another is hidden whole).
func (s *Service) buildEnv(ctx context.Context, projectID string) ([]gantry.EnvVar, []string, error) {
	vars, err := s.Store.ProjectEnv(ctx, projectID)
	if err != nil {
		return nil, nil, err
	}
	var secrets []string
	for i, v := range vars {
		if !v.IsSecret {
			continue
		}
		if s.Secrets == nil {
			return nil, nil, fmt.Errorf("secret %s: no secret key", v.Key)
		}
		plain, err := s.Secrets.Open(v.Value)
		if err != nil {
			return nil, nil, gantry.Errorf(gantry.EINVALID, "The secret %s cannot be read (the platform's secret key changed): enter it again", v.Key)
		}
		vars[i].Value = plain
		if len(plain) >= 4 {
			secrets = append(secrets, plain)
		}
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	return vars, secrets, nil
}

// redact replaces every secret value in line with the mask.
func redact(line string, secrets []string) string {
	for _, s := range secrets {
		if strings.Contains(line, s) {
			line = strings.ReplaceAll(line, s, Mask)
		}
	}
	return line
}
