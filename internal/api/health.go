package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gantryhq/gantry"
)

func (s *Server) healthRoutes() {
	s.mux.HandleFunc("GET /api/health", s.handleHealth)
}

// health is the answer of GET /api/health.
type health struct {
	Status   string `json:"status"`
	Version  string `json:"version"`
	Database string `json:"database"`
}

// handleHealth answers {status:"ok", version, database} when the database
// answers a ping within 2 s, else 503.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.Database.Ping(ctx); err != nil {
		s.Logger.ErrorContext(r.Context(), "health check: database ping failed", "err", err)
		s.writeError(w, r, gantry.Errorf(gantry.EUNAVAILABLE, "Database unavailable"))
		return
	}
	writeJSON(w, http.StatusOK, health{Status: "ok", Version: s.Version, Database: s.Database.Dialect()})
}
