package api

import (
	"net/http"

	"github.com/gantryhq/gantry"
)

func (s *Server) dashboardRoutes() {
	h := accountAPI{s}
	s.mux.HandleFunc("GET /api/dashboard", s.requireUser(h.handleDashboard))
}

// handleDashboard answers the signed-in user's dashboard: {stats,
// recentProjects, recentDeployments} (gantry.Dashboard).
func (s accountAPI) handleDashboard(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	d, err := s.Dashboards.Dashboard(r.Context(), u.ID, s.Now())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}
