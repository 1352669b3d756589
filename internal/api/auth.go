package api

import (
	"net/http"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/auth"
)

func (s *Server) authRoutes() {
	h := accountAPI{s}
	s.mux.HandleFunc("POST /api/auth/register", h.handleRegister)
	s.mux.HandleFunc("POST /api/auth/login", h.handleLogin)
	s.mux.HandleFunc("GET /api/auth/me", s.requireUser(h.handleMe))
	s.mux.HandleFunc("PUT /api/auth/profile", s.requireUser(h.handleUpdateProfile))
	s.mux.HandleFunc("PUT /api/auth/change-password", s.requireSession(h.handleChangePassword))
	s.mux.HandleFunc("POST /api/auth/logout", s.requireSession(h.handleLogout))
	s.mux.HandleFunc("POST /api/auth/logout-all", s.requireSession(h.handleLogoutAll))
}

// session is the answer of register and login.
type session struct {
	User  *gantry.User `json:"user"`
	Token string       `json:"token"`
}

// userAnswer is the answer of the calls that return the account.
type userAnswer struct {
	User *gantry.User `json:"user"`
}

// handleRegister creates an account: 201 {user, token}.
func (s accountAPI) handleRegister(w http.ResponseWriter, r *http.Request) {
	var req gantry.Registration
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	u, token, err := s.Accounts.Register(r.Context(), rateKey(s.clientIP(r)), req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, session{User: u, Token: token})
}

// loginRequest is the body of POST /api/auth/login.
type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// handleLogin signs a user in: {user, token}.
func (s accountAPI) handleLogin(w http.ResponseWriter, r *http.Request) {
	var req loginRequest
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := gantry.ValidateLoginEmail(req.Email); err != nil {
		s.writeError(w, r, err)
		return
	}
	u, token, err := s.Accounts.Login(r.Context(), rateKey(s.clientIP(r)), req.Email, req.Password)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, session{User: u, Token: token})
}

// handleMe answers the signed-in account: {user}.
func (s accountAPI) handleMe(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	writeJSON(w, http.StatusOK, userAnswer{User: u})
}

// changePasswordRequest is the body of PUT /api/auth/change-password.
type changePasswordRequest struct {
	CurrentPassword string `json:"currentPassword"`
	NewPassword     string `json:"newPassword"`
}

// handleChangePassword replaces the signed-in user's password and ends
// the account's other sessions: {}.
func (s accountAPI) handleChangePassword(w http.ResponseWriter, r *http.Request, sess *auth.Session) {
	var req changePasswordRequest
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.Accounts.ChangePassword(r.Context(), sess, req.CurrentPassword, req.NewPassword); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleLogout ends the session of the request's token: {}. The token
// answers 401 from then on. The body, if any, is ignored.
func (s accountAPI) handleLogout(w http.ResponseWriter, r *http.Request, sess *auth.Session) {
	if err := s.Accounts.Logout(r.Context(), sess); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// logoutAllAnswer is the answer of POST /api/auth/logout-all.
type logoutAllAnswer struct {
	Ended int `json:"ended"`
}

// handleLogoutAll ends every session of the account, the request's own
// included: {ended}.
func (s accountAPI) handleLogoutAll(w http.ResponseWriter, r *http.Request, sess *auth.Session) {
	n, err := s.Accounts.LogoutAll(r.Context(), sess)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, logoutAllAnswer{Ended: n})
}
