package deploy

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/secret"
)

// buildEnv returns a project's variables with secrets opened, for a build
// or an app, and the strings to redact from log lines (longest first, so
// a secret that contains another is hidden whole): each secret value,
// each line of a multi-line one and their common encodings (secret.Forms).
//
// Only the variables whose scope matches target (production or preview)
// are given: a preview never sees production-only secrets. A fork's pull
// request (fork) gets only the variables scoped to preview
// (EnvVar.InForkScope), not those of scope all.
func (s *core) buildEnv(ctx context.Context, projectID, target string, fork bool) ([]gantry.EnvVar, []string, error) {
	all, err := s.Store.ProjectEnv(ctx, projectID)
	if err != nil {
		return nil, nil, err
	}
	vars := make([]gantry.EnvVar, 0, len(all))
	for _, v := range all {
		if (fork && v.InForkScope()) || (!fork && v.InScope(target)) {
			vars = append(vars, v)
		}
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
		// The value, each of its lines and its common encodings
		// (base64, URL escaping, …): what a build may print it as.
		secrets = append(secrets, secret.Forms(plain)...)
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	return vars, secrets, nil
}

// targetOf is d's target, production for rows older than targets.
func targetOf(d *gantry.Deployment) string {
	if d.IsPreview() {
		return gantry.TargetPreview
	}
	return gantry.TargetProduction
}

// redact replaces every secret value in line with the mask.
func redact(line string, secrets []string) string {
	for _, s := range secrets {
		if strings.Contains(line, s) {
			line = strings.ReplaceAll(line, s, gantry.SecretMask)
		}
	}
	return line
}
