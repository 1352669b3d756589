package api

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/ghlink"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/project"
)

func (s *Server) githubRoutes() {
	s.mux.HandleFunc("GET /api/auth/github/url", s.requireUser(s.handleGitHubURL))
	s.mux.HandleFunc("GET /api/auth/github/callback", s.handleGitHubCallback)
	s.mux.HandleFunc("POST /api/auth/github/refresh", s.requireUser(s.handleGitHubRefresh))
	s.mux.HandleFunc("POST /api/auth/github/disconnect", s.requireUser(s.handleGitHubDisconnect))
	s.mux.HandleFunc("POST /api/projects", s.requireUser(s.handleCreateGitHubProject))
}

// githubCookie holds the browser's nonce of a GitHub sign-in between GET
// /api/auth/github/url and the callback. It is HttpOnly, SameSite=Lax (so
// GitHub's top-level redirect back carries it), scoped to the callback's
// path, Secure over https, and lives as long as the state.
const githubCookie = "gantry_github_oauth"

const githubCallbackPath = "/api/auth/github/callback"

// callbackPage is the web app's screen the callback redirects to.
const callbackPage = "/github-callback"

// handleGitHubURL starts connecting GitHub: {authUrl}, and the nonce
// cookie that ties the sign-in to this browser. 503 when no OAuth app is
// configured.
func (s *Server) handleGitHubURL(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if s.GitHub == nil {
		s.writeError(w, r, githost.ErrOAuthNotConfigured)
		return
	}
	start, err := s.GitHub.Start(r.Context(), u)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: githubCookie, Value: start.Nonce, Path: githubCallbackPath,
		Expires: start.Expires, MaxAge: int(ghlink.StateTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.isHTTPS(r),
	})
	writeJSON(w, http.StatusOK, map[string]string{"authUrl": start.AuthURL})
}

// handleGitHubCallback is where GitHub sends the browser back. It is public
// (the browser carries no bearer header here): the sealed state says whose
// account this is and the cookie that it is the same browser. It always
// answers 302 to the web app: /github-callback?token=<fresh bearer
// token>&linked=true on success, /github-callback?error=<short code>
// otherwise. Neither the code, the state nor any token is logged.
func (s *Server) handleGitHubCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cb := ghlink.Callback{Code: q.Get("code"), State: q.Get("state"), Error: q.Get("error")}
	if c, err := r.Cookie(githubCookie); err == nil {
		cb.Nonce = c.Value
	}
	// The nonce is single-use: the browser forgets it whatever happens.
	http.SetCookie(w, &http.Cookie{Name: githubCookie, Value: "", Path: githubCallbackPath, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.isHTTPS(r)})
	var (
		done *ghlink.Connected
		err  error = &ghlink.CallbackError{Code: ghlink.CallbackNotConfigured, Err: githost.ErrOAuthNotConfigured}
	)
	if s.GitHub != nil {
		done, err = s.GitHub.Callback(r.Context(), cb)
	}
	v := url.Values{}
	if err != nil {
		code := ghlink.CallbackServerError
		var ce *ghlink.CallbackError
		if errors.As(err, &ce) {
			code = ce.Code
		}
		if code == ghlink.CallbackServerError {
			s.Logger.ErrorContext(r.Context(), "github callback failed", "reason", code, "err", err)
		} else {
			s.Logger.WarnContext(r.Context(), "github callback refused", "reason", code, "err", err)
		}
		v.Set("error", code)
	} else {
		v.Set("token", done.Token)
		v.Set("linked", "true") // the state is always bound to a signed-in account
	}
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, callbackPage+"?"+v.Encode(), http.StatusFound)
}

// handleGitHubRefresh fetches the connected account's repositories again:
// {repos, user}.
func (s *Server) handleGitHubRefresh(w http.ResponseWriter, r *http.Request, u *gantry.User) {
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
func (s *Server) handleGitHubDisconnect(w http.ResponseWriter, r *http.Request, u *gantry.User) {
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
func (s *Server) handleCreateGitHubProject(w http.ResponseWriter, r *http.Request, u *gantry.User) {
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

// isHTTPS reports whether the browser reached us over https: directly, or
// through a trusted proxy that says so.
func (s *Server) isHTTPS(r *http.Request) bool {
	return r.TLS != nil || (s.TrustProxy && r.Header.Get("X-Forwarded-Proto") == "https")
}
