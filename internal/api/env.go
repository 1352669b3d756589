package api

import (
	"net/http"

	"github.com/gantryhq/gantry"
)

func (s *Server) envRoutes() {
	h := projectAPI{s}
	s.mux.HandleFunc("GET /api/projects/{id}/env", s.requireUser(h.handleGetEnv))
	s.mux.HandleFunc("PUT /api/projects/{id}/env", s.requireUser(h.handlePutEnv))
}

// envBody is the body and answer of the environment calls.
type envBody struct {
	Variables []gantry.EnvVar `json:"variables"`
}

// envRequest is the body of PUT …/env: variables is required (nil when
// the body leaves it out or sends null), so that a body without it cannot
// delete every variable; [] deletes them.
type envRequest struct {
	Variables *[]gantry.EnvVar `json:"variables"`
}

// handleGetEnv answers the project's variables, secret values masked:
// {variables: [{key, value, isSecret}]}.
func (s projectAPI) handleGetEnv(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	vars, err := s.Projects.Env(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, envBody{Variables: vars})
}

// handlePutEnv replaces the project's variables: {variables} → {variables}.
// A secret sent back masked keeps its value; a body without variables (or
// with null) is 400, and {"variables":[]} deletes them all.
func (s projectAPI) handlePutEnv(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var body envRequest
	if err := decode(w, r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.Variables == nil {
		s.writeError(w, r, gantry.Errorf(gantry.EINVALID, `Variables are required: send {"variables":[…]} with every variable to keep ([] removes them all)`))
		return
	}
	vars, err := s.Projects.SetEnv(r.Context(), u.ID, r.PathValue("id"), *body.Variables)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, envBody{Variables: vars})
}
