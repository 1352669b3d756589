package api

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/auth"
	"github.com/gantryhq/gantry/internal/ghlink"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/project"
)

func (s *Server) githubRoutes() {
	h := githubAPI{s}
	s.mux.HandleFunc("GET /api/auth/github/url", s.requireSession(h.handleGitHubURL))
	s.mux.HandleFunc("GET /api/auth/github/callback", h.handleGitHubCallback)
	s.mux.HandleFunc("POST /api/auth/github/callback", s.requireSession(h.handleGitHubFinish))
	s.mux.HandleFunc("POST /api/auth/github/refresh", s.requireUser(h.handleGitHubRefresh))
	s.mux.HandleFunc("POST /api/auth/github/disconnect", s.requireUser(h.handleGitHubDisconnect))
	s.mux.HandleFunc("POST /api/projects", s.requireUser(h.handleCreateGitHubProject))
}

// githubCookie holds the browser's nonce of a GitHub sign-in between GET
// /api/auth/github/url and the web app's POST /api/auth/github/callback.
// It is a platform cookie (platformCookie: __Host-, Secure, Path=/),
// HttpOnly, SameSite=Strict (only the web app's own calls carry it), and
// lives as long as the state.
const githubCookie = "__Host-gantry_github_oauth"

// callbackPage is the web app's screen the callback redirects to.
const callbackPage = "/github-callback"

// handleGitHubURL starts connecting GitHub: {authUrl}, and the nonce
// cookie that ties the sign-in to this browser (the state ties it to this
// session). 503 when no OAuth app is configured.
func (s githubAPI) handleGitHubURL(w http.ResponseWriter, r *http.Request, sess *auth.Session) {
	if s.GitHub == nil {
		s.writeError(w, r, githost.ErrOAuthNotConfigured)
		return
	}
	start, err := s.GitHub.Start(r.Context(), sess.User, sess.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.cookies().set(w, r, &http.Cookie{
		Name: githubCookie, Value: start.Nonce,
		Expires: start.Expires, MaxAge: int(ghlink.StateTTL / time.Second),
		SameSite: http.SameSiteStrictMode,
	})
	writeJSON(w, http.StatusOK, map[string]string{"authUrl": start.AuthURL})
}

// handleGitHubCallback is where GitHub sends the browser back. It does
// nothing but hand GitHub's answer to the web app, which finishes the
// sign-in with its bearer token (handleGitHubFinish): 302 to
// /github-callback?code=…&state=…, or ?error=<short code> for GitHub's
// error. Neither the code nor the state is logged.
func (s githubAPI) handleGitHubCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := url.Values{}
	switch {
	case q.Get("error") != "":
		v.Set("error", ghlink.GitHubErrorCode(q.Get("error")))
	case s.GitHub == nil:
		v.Set("error", ghlink.CallbackNotConfigured)
	case q.Get("code") == "" || q.Get("state") == "":
		v.Set("error", ghlink.CallbackInvalidRequest)
	default:
		v.Set("code", q.Get("code"))
		v.Set("state", q.Get("state"))
	}
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, callbackPage+"?"+v.Encode(), http.StatusFound)
}

// githubFinish is the body of POST /api/auth/github/callback.
type githubFinish struct {
	Code  string `json:"code"`
	State string `json:"state"`
}

// handleGitHubFinish finishes a GitHub sign-in from the web app: {code,
// state} as GitHub brought them, sent with the bearer token of the session
// that started it and the nonce cookie → {user}. A state started by
// another session or browser is refused (400), as is an expired or
// altered one; the nonce cookie is forgotten whatever happens.
func (s githubAPI) handleGitHubFinish(w http.ResponseWriter, r *http.Request, sess *auth.Session) {
	var in githubFinish
	if err := decode(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	cb := ghlink.Callback{Code: in.Code, State: in.State, UserID: sess.User.ID, SessionID: sess.ID}
	if c, err := r.Cookie(s.cookies().name(r, githubCookie)); err == nil {
		cb.Nonce = c.Value
	}
	// The nonce is single-use: the browser forgets it whatever happens.
	s.cookies().set(w, r, &http.Cookie{Name: githubCookie, Value: "", MaxAge: -1, SameSite: http.SameSiteStrictMode})
	if s.GitHub == nil {
		s.writeError(w, r, githost.ErrOAuthNotConfigured)
		return
	}
	done, err := s.GitHub.Callback(r.Context(), cb)
	if err != nil {
		var ce *ghlink.CallbackError
		if !errors.As(err, &ce) {
			s.writeError(w, r, err)
			return
		}
		code, msg := ce.Problem()
		if code == gantry.EINTERNAL {
			// Logged as it is; answered 500 whatever codes it wraps.
			s.writeError(w, r, errors.New(err.Error()))
			return
		}
		s.Logger.WarnContext(r.Context(), "github callback refused", "reason", ce.Code, "err", err)
		s.writeError(w, r, gantry.Errorf(code, "%s", msg))
		return
	}
	writeJSON(w, http.StatusOK, userAnswer{User: done.User})
}

// handleGitHubRefresh fetches the connected account's repositories again:
// {repos, user}.
func (s githubAPI) handleGitHubRefresh(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if s.GitHub == nil {
		s.writeError(w, r, githost.ErrOAuthNotConfigured)
		return
	}
	repos, fresh, err := s.GitHub.Refresh(r.Context(), u)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"repos": repos, "user": fresh})
}

// handleGitHubDisconnect forgets the connected account: {user}.
func (s githubAPI) handleGitHubDisconnect(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if s.GitHub == nil {
		s.writeError(w, r, githost.ErrOAuthNotConfigured)
		return
	}
	fresh, err := s.GitHub.Disconnect(r.Context(), u)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, userAnswer{User: fresh})
}

// handleCreateGitHubProject creates a project from one of the connected
// account's repositories: {repositoryId, name, description, branch} (and
// optionally buildConfig, showInDiscover) → 201 {project}. It looks the
// repository up (a clone), so once the body is valid it counts as a lookup
// (startLookup).
func (s githubAPI) handleCreateGitHubProject(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var in project.GitHubInput
	if err := decode(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	settings := in.Settings()
	if err := settings.Check(); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.runLookup(w, r, u, http.StatusCreated, func() (any, error) {
		p, err := s.Projects.CreateFromGitHub(r.Context(), u, in)
		return projectAnswer{Project: p}, err
	})
}
