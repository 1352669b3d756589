package api

import (
	"net/http"

	"github.com/gantryhq/gantry"
)

func (s *Server) userRoutes() {
	h := accountAPI{s}
	s.mux.HandleFunc("PUT /api/users/profile", s.requireUser(h.handleUpdateProfile))
	s.mux.HandleFunc("GET /api/users/stats", s.requireUser(h.handleUserStats))
}

// handleUpdateProfile changes the signed-in user's full name, username,
// email or avatar (fields left out are unchanged): {user}. It serves both
// PUT /api/auth/profile and PUT /api/users/profile.
func (s accountAPI) handleUpdateProfile(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var upd gantry.UserUpdate
	if err := decode(w, r, &upd); err != nil {
		s.writeError(w, r, err)
		return
	}
	updated, err := s.Users.UpdateUser(r.Context(), u.ID, upd)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, userAnswer{User: updated})
}

// statsAnswer is the answer of GET /api/users/stats.
type statsAnswer struct {
	Stats *gantry.UserStats `json:"stats"`
}

// handleUserStats answers the signed-in user's statistics: {stats}.
func (s accountAPI) handleUserStats(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	stats, err := s.Users.UserStats(r.Context(), u.ID, s.Now())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, statsAnswer{Stats: stats})
}
