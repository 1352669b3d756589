package githost_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/githost/githubtest"
)

func TestRevokeGrant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gh := githubtest.NewServer(t)
	alice := gh.AddUser("alice")
	gh.AddRepo(t, githubtest.Repo{Owner: "alice", Name: "secret", Private: true}, nil)
	token := alice.Token
	s := newService(t, gh, nil)
	if _, err := s.GitHub.User(ctx, token); err != nil {
		t.Fatalf("before revoking: %v", err)
	}

	if err := s.RevokeGrant(ctx, token); err != nil {
		t.Fatalf("RevokeGrant: %v", err)
	}
	if got := gh.Revoked(); !slices.Equal(got, []string{token}) {
		t.Errorf("the fake revoked %q, want the token", got)
	}
	if !slices.Contains(gh.Requests(), "DELETE /api/v3/applications/test-client-id/grant") {
		t.Errorf("no DELETE of the grant in %q", gh.Requests())
	}
	// As on GitHub, the revoked token no longer works.
	if _, err := s.GitHub.User(ctx, token); !githost.TokenRejected(err) {
		t.Errorf("User with the revoked token: %v, want it rejected", err)
	}
	if _, err := s.GitHub.Repos(ctx, token); !githost.TokenRejected(err) {
		t.Errorf("Repos with the revoked token: %v, want it rejected", err)
	}
	req, _ := http.NewRequest("GET", gh.URL+"/alice/secret.git/info/refs?service=git-upload-pack", nil)
	req.SetBasicAuth("x-access-token", token)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Error(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("git with the revoked token: %s, want 401", resp.Status)
		}
	}
	// Already revoked (GitHub answers 404) counts as done.
	if err := s.RevokeGrant(ctx, token); err != nil {
		t.Errorf("revoking again: %v, want nil", err)
	}
	if got := gh.Revoked(); len(got) != 1 {
		t.Errorf("revoking again revoked %q", got)
	}
	// A new grant brings a new token, which works.
	gh.AuthorizeAs("alice") // orders the fake's new token before this read
	if fresh := alice.Token; fresh == token {
		t.Errorf("the account kept its revoked token")
	} else if u, err := s.GitHub.User(ctx, fresh); err != nil || u.Login != "alice" {
		t.Errorf("User with the new token: %v, %v", u, err)
	}
	// No token: nothing to do, and GitHub is not asked.
	n := len(gh.Requests())
	if err := s.RevokeGrant(ctx, ""); err != nil || len(gh.Requests()) != n {
		t.Errorf("RevokeGrant(\"\") = %v after %d requests", err, len(gh.Requests())-n)
	}
}

func TestRevokeGrantFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gh := githubtest.NewServer(t)
	alice := gh.AddUser("alice")
	token := alice.Token
	s := newService(t, gh, nil)
	stillValid := func(t *testing.T) {
		t.Helper()
		if _, err := s.GitHub.User(ctx, token); err != nil {
			t.Errorf("the token stopped working: %v", err)
		}
		if got := gh.Revoked(); len(got) != 0 {
			t.Errorf("the fake revoked %q", got)
		}
	}
	noSecret := func(t *testing.T, err error) {
		t.Helper()
		for _, secret := range []string{token, gh.ClientSecret, "wrong-secret"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error reveals %q: %v", secret, err)
			}
		}
	}

	t.Run("wrong client secret", func(t *testing.T) {
		wrong := newService(t, gh, func(c *githost.Config) { c.ClientSecret = "wrong-secret" })
		err := wrong.RevokeGrant(ctx, token)
		if gantry.ErrorCode(err) != gantry.EUNAVAILABLE || gantry.ErrorMessage(err) != "GitHub rejected the OAuth app's client id or secret" {
			t.Fatalf("got %v", err)
		}
		noSecret(t, err)
		stillValid(t)
	})
	t.Run("GitHub fails", func(t *testing.T) {
		gh.FailRevoke(http.StatusInternalServerError)
		defer gh.FailRevoke(0)
		err := s.RevokeGrant(ctx, token)
		if gantry.ErrorCode(err) != gantry.EUNAVAILABLE {
			t.Fatalf("got %v, want EUNAVAILABLE", err)
		}
		noSecret(t, err)
		stillValid(t)
	})
	t.Run("not configured", func(t *testing.T) {
		none := newService(t, gh, func(c *githost.Config) { c.ClientID, c.ClientSecret = "", "" })
		if err := none.RevokeGrant(ctx, token); !errors.Is(err, githost.ErrOAuthNotConfigured) {
			t.Fatalf("got %v", err)
		}
		stillValid(t)
	})
	t.Run("unreachable", func(t *testing.T) {
		down := httptest.NewServer(http.NotFoundHandler())
		down.Close()
		c, err := githost.NewGitHub(down.URL+"/api/v3/", down.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = c.RevokeGrant(ctx, "id", "secret", token)
		if gantry.ErrorCode(err) != gantry.EUNAVAILABLE {
			t.Fatalf("got %v, want EUNAVAILABLE", err)
		}
		noSecret(t, err)
	})
}

// The client secret goes to the API URL only: a redirect is not followed.
func TestRevokeGrantNoRedirect(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer api.Close()
	c, err := githost.NewGitHub(api.URL+"/api/v3/", api.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RevokeGrant(context.Background(), "id", "secret", "gho_token"); err == nil {
		t.Errorf("a redirect counted as revoked")
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}
