package ghlink

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/secret"
)

// StateTTL is how long a GitHub sign-in may take, from GET
// /api/auth/github/url to the callback.
const StateTTL = 10 * time.Minute

// RevokeTimeout bounds revoking the OAuth grant at GitHub on disconnect.
const RevokeTimeout = 10 * time.Second

// Store is what Accounts needs of the database
// (internal/store implements it).
type Store interface {
	FindUserByID(ctx context.Context, id string) (*gantry.User, error)
	// SetGitHubLink stores a connected account; link.AccessToken is sealed.
	SetGitHubLink(ctx context.Context, userID string, link gantry.GitHubLink) error
	SetGitHubRepos(ctx context.Context, userID string, repos []gantry.GitHubRepo) error
	ClearGitHubLink(ctx context.Context, userID string) error
}

// Accounts connects Gantry users to their GitHub accounts with
// GitHub's OAuth authorization-code flow (with PKCE), keeps each account's
// repository list, and forgets it on disconnect.
//
// Secrets: the GitHub access token is sealed with Tokens before it reaches
// the store and opened only to call GitHub; it is never logged, returned,
// put in a URL or in an error. The OAuth state is sealed with States (its
// own key): it carries the user id, the id of the session that started the
// sign-in, a browser nonce, the PKCE verifier and an expiry, so it cannot
// be forged, read, altered or replayed for another user, and no
// server-side storage is needed (any replica can finish a sign-in another
// one started).
//
// A sign-in is finished by the browser that started it, signed in to the
// same session: GitHub's redirect brings code and state to the web app,
// which sends them with its bearer token (Callback's UserID and SessionID)
// and the nonce cookie. So a state and nonce planted in another browser
// (cookie tossing from a sibling domain, a crafted link) cannot link the
// victim's GitHub account to the planter's Gantry account: the victim's
// session is not the one the state names.
type Accounts struct {
	Users Store
	// Host reaches GitHub: Host.OAuth (nil when no OAuth app is configured)
	// and Host.GitHub (the REST API).
	Host   *githost.Service
	Tokens *secret.Box // seals access tokens at rest
	States *secret.Box // seals OAuth states; a different purpose than Tokens
	// Notify tells users their account was connected, disconnected or
	// revoked. Nil sends nothing.
	Notify gantry.Notifier
	// Now returns the current time; tests replace it.
	Now func() time.Time
	// Logger gets warnings that do not fail a request (a grant GitHub
	// could not revoke on disconnect); nil means slog.Default().
	Logger *slog.Logger
}

func (g *Accounts) logger() *slog.Logger {
	if g.Logger != nil {
		return g.Logger
	}
	return slog.Default()
}

func (g *Accounts) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// oauthState is the sealed content of the state parameter.
type oauthState struct {
	UserID   string `json:"u"`
	Session  string `json:"s"` // the id of the session that started it
	Nonce    string `json:"n"` // also in the browser's cookie
	Verifier string `json:"v"` // PKCE code verifier
	Expires  int64  `json:"e"` // Unix seconds
}

// Start is the beginning of a sign-in: the GitHub page to send the
// browser to, and the nonce the browser must present at the callback
// (the API keeps it in an HttpOnly cookie) until Expires.
type Start struct {
	AuthURL string
	Nonce   string
	Expires time.Time
}

// Start begins connecting u's GitHub account from u's session sessionID:
// it returns the authorize URL on the configured GitHub web URL, with a
// sealed state bound to u, to the session and to a fresh nonce, and the
// S256 challenge of a fresh PKCE verifier. Without an OAuth app it is
// githost.ErrOAuthNotConfigured (EUNAVAILABLE).
func (g *Accounts) Start(ctx context.Context, u *gantry.User, sessionID string) (*Start, error) {
	if g == nil || g.Host == nil || g.Host.OAuth == nil {
		return nil, githost.ErrOAuthNotConfigured
	}
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	exp := g.now().Add(StateTTL)
	st := oauthState{UserID: u.ID, Session: sessionID, Nonce: base64.RawURLEncoding.EncodeToString(b[:]),
		Verifier: githost.GenerateVerifier(), Expires: exp.Unix()}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	state, err := g.States.Seal(string(raw))
	if err != nil {
		return nil, err
	}
	return &Start{AuthURL: g.Host.OAuth.AuthURL(state, st.Verifier), Nonce: st.Nonce, Expires: exp}, nil
}

// Callback is what GitHub's redirect brought back to the web app: code and
// state, or error (e.g. access_denied); Nonce is the browser's cookie, and
// UserID and SessionID the signed-in session that sends them.
type Callback struct {
	Code, State, Error, Nonce string
	UserID, SessionID         string
}

// CallbackError is a failed callback. Code is a short, safe reason for
// the /github-callback?error= parameter: one of the Callback* constants,
// or GitHub's own error code (letters and underscores only). Err is the
// cause, for the server log; it never holds a token.
type CallbackError struct {
	Code string
	Err  error
}

func (e *CallbackError) Error() string {
	if e.Err != nil {
		return "github callback: " + e.Code + ": " + e.Err.Error()
	}
	return "github callback: " + e.Code
}

func (e *CallbackError) Unwrap() error { return e.Err }

// Short codes of failed callbacks.
const (
	CallbackNotConfigured  = "not_configured"
	CallbackInvalidRequest = "invalid_request"     // no code or no state
	CallbackInvalidState   = "invalid_state"       // forged, altered or unreadable state
	CallbackExpiredState   = "expired_state"       // older than StateTTL
	CallbackStateMismatch  = "state_mismatch"      // started in another browser, session or account, or the cookie is gone
	CallbackBadCode        = "bad_code"            // GitHub refused the code
	CallbackUnavailable    = "github_unavailable"  // GitHub could not be reached
	CallbackAccount        = "account_unavailable" // the Gantry account is gone or deactivated
	CallbackAlreadyLinked  = "already_linked"      // the GitHub account belongs to another Gantry account
	CallbackServerError    = "server_error"
	CallbackGitHubError    = "github_error" // GitHub sent an error code that is not a plain word
)

var githubErrorCode = regexp.MustCompile(`^[a-z_]{1,40}$`)

// GitHubErrorCode is the code the web app is sent for GitHub's error
// parameter: itself when it is a plain word, else CallbackGitHubError.
func GitHubErrorCode(e string) string {
	if githubErrorCode.MatchString(e) {
		return e
	}
	return CallbackGitHubError
}

// Problem is what the API answers for a failed callback: a domain error
// code (its status) and a message for the user.
func (e *CallbackError) Problem() (code, message string) {
	switch e.Code {
	case CallbackNotConfigured:
		return gantry.EUNAVAILABLE, gantry.ErrorMessage(githost.ErrOAuthNotConfigured)
	case CallbackInvalidRequest:
		return gantry.EINVALID, "GitHub sent no code or state back: start connecting GitHub again."
	case CallbackInvalidState:
		return gantry.EINVALID, "This GitHub sign-in is not valid: start connecting GitHub again."
	case CallbackExpiredState:
		return gantry.EINVALID, "The GitHub sign-in took longer than 10 minutes: start connecting GitHub again."
	case CallbackStateMismatch:
		return gantry.EINVALID, "This GitHub sign-in was started in another browser, tab or account: start connecting GitHub again from here."
	case CallbackBadCode:
		return gantry.EINVALID, "GitHub refused the sign-in code (it may have been used already): start connecting GitHub again."
	case CallbackUnavailable:
		return gantry.EUNAVAILABLE, "GitHub could not be reached: try again in a moment."
	case CallbackAccount:
		return gantry.EFORBIDDEN, "This Gantry account is deactivated."
	case CallbackAlreadyLinked:
		return gantry.ECONFLICT, "This GitHub account is already connected to another Gantry account."
	case CallbackServerError:
		return gantry.EINTERNAL, "Internal error."
	}
	return gantry.EINVALID, "GitHub did not authorize Gantry (" + e.Code + "): start connecting GitHub again."
}

// Connected is a finished sign-in: the user as now stored.
type Connected struct {
	User *gantry.User
}

// Callback finishes a sign-in: it refuses GitHub's error, a missing code or
// state, a state that does not open, has expired, does not match the
// browser's nonce or was started by another user or session than the one
// finishing it; exchanges the code with the state's PKCE verifier; reads
// the GitHub account and its repositories; stores the link with the token
// sealed; and tells the user. Every failure is a *CallbackError.
func (g *Accounts) Callback(ctx context.Context, cb Callback) (*Connected, error) {
	fail := func(code string, err error) (*Connected, error) {
		return nil, &CallbackError{Code: code, Err: err}
	}
	if cb.Error != "" {
		return fail(GitHubErrorCode(cb.Error), errors.New("GitHub answered an error"))
	}
	if g == nil || g.Host == nil || g.Host.OAuth == nil {
		return fail(CallbackNotConfigured, githost.ErrOAuthNotConfigured)
	}
	if cb.Code == "" || cb.State == "" {
		return fail(CallbackInvalidRequest, errors.New("no code or state"))
	}
	raw, err := g.States.Open(cb.State)
	if err != nil {
		return fail(CallbackInvalidState, err)
	}
	var st oauthState
	if err := json.Unmarshal([]byte(raw), &st); err != nil || st.UserID == "" || st.Session == "" || st.Nonce == "" || st.Verifier == "" {
		return fail(CallbackInvalidState, errors.New("state without user, session, nonce or verifier"))
	}
	if g.now().Unix() > st.Expires {
		return fail(CallbackExpiredState, errors.New("state expired"))
	}
	if subtle.ConstantTimeCompare([]byte(cb.Nonce), []byte(st.Nonce)) != 1 {
		return fail(CallbackStateMismatch, errors.New("the browser's nonce does not match the state"))
	}
	if cb.UserID != st.UserID || subtle.ConstantTimeCompare([]byte(cb.SessionID), []byte(st.Session)) != 1 {
		return fail(CallbackStateMismatch, errors.New("the state was started by another user or session"))
	}
	u, err := g.Users.FindUserByID(ctx, st.UserID)
	if gantry.ErrorCode(err) == gantry.ENOTFOUND {
		return fail(CallbackAccount, err)
	} else if err != nil {
		return fail(CallbackServerError, err)
	}
	if !u.IsActive {
		return fail(CallbackAccount, errors.New("account deactivated"))
	}
	token, err := g.Host.OAuth.Exchange(ctx, cb.Code, st.Verifier)
	switch gantry.ErrorCode(err) {
	case "":
	case gantry.EINVALID:
		return fail(CallbackBadCode, err)
	case gantry.EUNAVAILABLE:
		return fail(CallbackUnavailable, err)
	default:
		return fail(CallbackServerError, err)
	}
	if err := g.link(ctx, u.ID, token); err != nil {
		switch gantry.ErrorCode(err) {
		case gantry.ECONFLICT:
			return fail(CallbackAlreadyLinked, err)
		case gantry.EINVALID, gantry.ENOTFOUND, gantry.EUNAVAILABLE:
			return fail(CallbackUnavailable, err)
		}
		return fail(CallbackServerError, err)
	}
	if u, err = g.Users.FindUserByID(ctx, u.ID); err != nil {
		return fail(CallbackServerError, err)
	}
	g.notify(ctx, gantry.GitHubConnectedNotification(u.ID, u.GitHub.Username, len(u.GitHub.Repos)))
	return &Connected{User: u}, nil
}

// link reads the account and repositories token gives access to and stores
// them for userID with the token sealed.
func (g *Accounts) link(ctx context.Context, userID, token string) error {
	gh, err := g.Host.GitHub.User(ctx, token)
	if err != nil {
		return err
	}
	repos, err := g.Host.GitHub.Repos(ctx, token)
	if err != nil {
		return err
	}
	sealed, err := g.Tokens.Seal(token)
	if err != nil {
		return err
	}
	return g.Users.SetGitHubLink(ctx, userID, gantry.GitHubLink{
		ID: gh.ID, Username: gh.Login, Avatar: gh.AvatarURL, AccessToken: sealed, Repos: repos,
	})
}

// Refresh fetches the repository list of u's connected account again and
// stores it; it returns the list and the updated user. Not connected is
// EINVALID gantry.MsgConnectGitHub. A token GitHub refuses (revoked, or the OAuth
// app was removed) or that no longer opens (the secret key changed)
// disconnects the account and is EINVALID gantry.MsgGitHubRevoked.
func (g *Accounts) Refresh(ctx context.Context, u *gantry.User) ([]gantry.GitHubRepo, *gantry.User, error) {
	if !u.GitHub.Connected || u.GitHub.AccessToken == "" {
		return nil, nil, gantry.Errorf(gantry.EINVALID, gantry.MsgConnectGitHub)
	}
	token, err := g.Tokens.Open(u.GitHub.AccessToken)
	if err != nil {
		return nil, nil, g.revoked(ctx, u)
	}
	repos, err := g.Host.GitHub.Repos(ctx, token)
	if githost.TokenRejected(err) {
		return nil, nil, g.revoked(ctx, u)
	} else if err != nil {
		return nil, nil, err
	}
	if err := g.Users.SetGitHubRepos(ctx, u.ID, repos); err != nil {
		return nil, nil, err
	}
	fresh, err := g.Users.FindUserByID(ctx, u.ID)
	if err != nil {
		return nil, nil, err
	}
	return fresh.GitHub.Repos, fresh, nil
}

// revoked disconnects u, tells u why, and returns EINVALID gantry.MsgGitHubRevoked.
func (g *Accounts) revoked(ctx context.Context, u *gantry.User) error {
	if err := g.Users.ClearGitHubLink(ctx, u.ID); err != nil {
		return err
	}
	g.notify(ctx, gantry.GitHubRevokedNotification(u.ID, u.GitHub.Username))
	return gantry.Errorf(gantry.EINVALID, gantry.MsgGitHubRevoked)
}

// Disconnect forgets u's GitHub account: the sealed token, the GitHub id,
// username, avatar and repositories, and revokes the OAuth app's grant at
// GitHub (githost.Service.RevokeGrant), so the token stops working there
// too and Gantry leaves the account's authorized applications. Projects
// made from its repositories stay; private ones can no longer be built
// until an account with access is connected again. It tells u (when
// something was connected), returns the updated user and is not an error
// when nothing was connected.
//
// A user must always be able to disconnect, so revoking is best effort:
// the token is forgotten locally first, then revoked within RevokeTimeout
// (also when the caller's request is cancelled meanwhile); when GitHub
// cannot be reached, times out or refuses (e.g. a wrong client secret),
// the failure is logged as a warning, without the token, and Disconnect
// goes on and succeeds as before. The grant then stays at GitHub until
// the user revokes it there (Settings → Applications). A token that no
// longer decrypts (the secret key changed) cannot be revoked and is just
// forgotten.
func (g *Accounts) Disconnect(ctx context.Context, u *gantry.User) (*gantry.User, error) {
	if err := g.Users.ClearGitHubLink(ctx, u.ID); err != nil {
		return nil, err
	}
	if u.GitHub.Connected {
		g.revokeGrant(ctx, u)
		g.notify(ctx, gantry.GitHubDisconnectedNotification(u.ID, u.GitHub.Username))
	}
	return g.Users.FindUserByID(ctx, u.ID)
}

// revokeGrant revokes at GitHub the grant of u's stored token, logging
// instead of returning failures (see Disconnect).
func (g *Accounts) revokeGrant(ctx context.Context, u *gantry.User) {
	if u.GitHub.AccessToken == "" || g.Host == nil || g.Host.OAuth == nil {
		return
	}
	log := g.logger().With("user", u.ID, "github", u.GitHub.Username)
	token, err := g.Tokens.Open(u.GitHub.AccessToken)
	if err != nil {
		log.Warn("github disconnect: the stored token does not decrypt, so it was not revoked at GitHub", "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RevokeTimeout)
	defer cancel()
	if err := g.Host.RevokeGrant(ctx, token); err != nil {
		log.Warn("github disconnect: could not revoke the grant at GitHub; the account was disconnected in Gantry anyway", "err", err)
	}
}

// notify hands n to Notify, when one is set.
func (g *Accounts) notify(ctx context.Context, n *gantry.Notification) {
	if g.Notify != nil {
		g.Notify.Notify(ctx, n)
	}
}

// OpenToken opens u's sealed GitHub access token with open: "" when u has
// no connected account; EINVALID gantry.MsgGitHubRevoked when it does not
// open (the secret key changed) or open is nil. The token is for githost
// only: never log it, store it or put it in an error.
func OpenToken(u *gantry.User, open func(sealed string) (string, error)) (string, error) {
	if u == nil || !u.GitHub.Connected || u.GitHub.AccessToken == "" {
		return "", nil
	}
	if open == nil {
		return "", gantry.Errorf(gantry.EINVALID, gantry.MsgGitHubRevoked)
	}
	token, err := open(u.GitHub.AccessToken)
	if err != nil || token == "" {
		return "", gantry.Errorf(gantry.EINVALID, gantry.MsgGitHubRevoked)
	}
	return token, nil
}
