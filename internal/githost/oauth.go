package githost

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gantryhq/gantry"
	"golang.org/x/oauth2"
)

// DefaultScopes are the OAuth scopes Gantry asks for: "repo" to list and
// clone the user's private repositories (GitHub has no read-only scope for
// them) and "read:user" for the profile.
var DefaultScopes = []string{"repo", "read:user"}

// OAuth is GitHub's OAuth authorization-code flow with PKCE (S256), built on
// golang.org/x/oauth2. The endpoints are <web>/login/oauth/authorize and
// <web>/login/oauth/access_token, so a fake server or GitHub Enterprise can
// stand in for github.com.
type OAuth struct {
	cfg  oauth2.Config
	http *http.Client
}

// NewOAuth returns the OAuth flow of the app clientID/clientSecret. webURL
// "" means DefaultGitHubWebURL; redirectURL is Gantry's callback (e.g.
// <public URL>/api/auth/github/callback); scopes nil means DefaultScopes;
// client nil means a client with a 60 s timeout. It returns an
// EUNAVAILABLE error when clientID or clientSecret is empty, so callers
// can say "GitHub is not configured".
func NewOAuth(clientID, clientSecret, webURL, redirectURL string, scopes []string, client *http.Client) (*OAuth, error) {
	if clientID == "" || clientSecret == "" {
		return nil, ErrOAuthNotConfigured
	}
	if webURL == "" {
		webURL = DefaultGitHubWebURL
	}
	webURL = strings.TrimSuffix(webURL, "/")
	if scopes == nil {
		scopes = DefaultScopes
	}
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	return &OAuth{
		cfg: oauth2.Config{
			ClientID:     clientID,
			ClientSecret: clientSecret,
			RedirectURL:  redirectURL,
			Scopes:       scopes,
			Endpoint: oauth2.Endpoint{
				AuthURL:   webURL + "/login/oauth/authorize",
				TokenURL:  webURL + "/login/oauth/access_token",
				AuthStyle: oauth2.AuthStyleInParams,
			},
		},
		http: client,
	}, nil
}

// ErrOAuthNotConfigured is returned by NewOAuth without a client id or
// secret; its message is what the GitHub integration page shows.
var ErrOAuthNotConfigured = gantry.Errorf(gantry.EUNAVAILABLE,
	"GitHub is not configured on this server: set GANTRY_GITHUB_CLIENT_ID and GANTRY_GITHUB_CLIENT_SECRET")

// GenerateVerifier returns a new random PKCE code verifier (oauth2's), to
// keep server-side with the state until the callback.
func GenerateVerifier() string { return oauth2.GenerateVerifier() }

// AuthURL returns the GitHub page the user is sent to: it carries state
// (which the caller signs and checks in the callback) and the S256
// challenge of verifier.
func (o *OAuth) AuthURL(state, verifier string) string {
	return o.cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))
}

// Exchange trades the callback's code (with the verifier AuthURL used) for
// an access token. A wrong, expired or reused code is EINVALID "GitHub
// sign-in failed: the authorization code is invalid or has expired".
func (o *OAuth) Exchange(ctx context.Context, code, verifier string) (string, error) {
	if code == "" {
		return "", errBadCode
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, o.http)
	tok, err := o.cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return "", errBadCode
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", gantry.Errorf(gantry.EUNAVAILABLE, "Could not reach GitHub to finish signing in; try again")
	}
	if tok.AccessToken == "" {
		return "", errBadCode
	}
	return tok.AccessToken, nil
}

var errBadCode = gantry.Errorf(gantry.EINVALID, "GitHub sign-in failed: the authorization code is invalid or has expired")

// RevokeGrant deletes the OAuth app's grant of the account token belongs to
// on GitHub (GitHub.RevokeGrant with the app's client id and secret), so
// neither token nor any other token of the app for that account works
// there any more. Without an OAuth app it is ErrOAuthNotConfigured. The
// caller bounds it with ctx.
func (s *Service) RevokeGrant(ctx context.Context, token string) error {
	if s.OAuth == nil {
		return ErrOAuthNotConfigured
	}
	return s.GitHub.RevokeGrant(ctx, s.OAuth.cfg.ClientID, s.OAuth.cfg.ClientSecret, token)
}
