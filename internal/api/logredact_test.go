package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/api"
)

// failingHooks is a project service whose deploy hook lookup fails with an
// error that names the token, as a driver's error might.
type failingHooks struct{ api.ProjectService }

func (failingHooks) ProjectByDeployHook(_ context.Context, token string) (*gantry.Project, error) {
	return nil, errors.New("lookup of deploy hook " + token + ": database is locked")
}

// panickingHooks is a project service whose deploy hook lookup panics
// with a value that names the token.
type panickingHooks struct{ api.ProjectService }

func (panickingHooks) ProjectByDeployHook(_ context.Context, token string) (*gantry.Project, error) {
	panic("no project for deploy hook " + token)
}

// TestDeployHookTokenNotLogged mounts requests to a deploy hook whose
// answer is a 500 (an internal error, a panic) or comes from another
// path than the hook's (an unclean or misspelt path): the token, a
// credential anyone with it can deploy with, is in no log line.
func TestDeployHookTokenNotLogged(t *testing.T) {
	t.Parallel()
	const token = "Zq3xX8vT0bN5mK2pL9wR4yC7eA1sD6fG0hJ3kU8iO5E"
	for _, tc := range []struct {
		name     string
		projects api.ProjectService
		url      string
		status   int
		wantLog  string
	}{
		{"internal error", failingHooks{}, "/api/hooks/deploy/" + token, 500, `"err":"lookup of deploy hook [token]: database is locked"`},
		{"panic", panickingHooks{}, "/api/hooks/deploy/" + token + "?branch=main", 500, `"panic":"no project for deploy hook [token]"`},
		{"unclean path", failingHooks{}, "/api/hooks//deploy/" + token, 0, `"path":"/api/hooks/deploy/[token]"`},
		{"misspelt path", failingHooks{}, "/api/Hooks/Deploy/" + token + "/x/", 0, `"path":"/api/Hooks/Deploy/[token]/x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.srv.Projects = tc.projects
			rec := e.do(request{method: "POST", url: tc.url})
			if tc.status != 0 && rec.Code != tc.status {
				t.Fatalf("got %d, want %d: %s", rec.Code, tc.status, rec.Body.String())
			}
			logs := e.logs.String()
			if strings.Contains(logs, token) {
				t.Fatalf("the deploy hook's token is in the log:\n%s", logs)
			}
			if !strings.Contains(logs, tc.wantLog) {
				t.Fatalf("the log lacks %s:\n%s", tc.wantLog, logs)
			}
		})
	}
}
