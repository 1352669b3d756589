package api

import (
	"net/http"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
)

func (s *Server) projectRoutes() {
	s.mux.HandleFunc("GET /api/projects", s.requireUser(s.handleListProjects))
	s.mux.HandleFunc("GET /api/projects/{id}", s.requireUser(s.handleGetProject))
	s.mux.HandleFunc("POST /api/projects/public-repo", s.requireUser(s.handleLookupPublicRepo))
	s.mux.HandleFunc("POST /api/projects/public", s.requireUser(s.handleCreatePublicProject))
	s.mux.HandleFunc("PUT /api/projects/{id}", s.requireUser(s.handleUpdateProject))
	s.mux.HandleFunc("POST /api/projects/{id}/sync", s.requireUser(s.handleSyncProject))
	s.mux.HandleFunc("DELETE /api/projects/{id}", s.requireUser(s.handleDeleteProject))
}

type projectAnswer struct {
	Project *gantry.Project `json:"project"`
}

// handleListProjects answers the user's projects, newest first: {projects}.
func (s *Server) handleListProjects(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	ps, err := s.Deploys.Store.ListProjects(r.Context(), u.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"projects": ps})
}

// handleGetProject answers one project with its newest deployments: {project}.
func (s *Server) handleGetProject(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	p, err := s.Deploys.Store.FindProject(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, projectAnswer{Project: p})
}

// handleLookupPublicRepo describes a public repository: {repoUrl} →
// {repository, suggestedName, suggestedDescription, buildConfig, framework}.
func (s *Server) handleLookupPublicRepo(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var req struct {
		RepoURL string `json:"repoUrl"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.Deploys.LookupPublic(r.Context(), u, req.RepoURL)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// handleCreatePublicProject creates a project from any public repository:
// {repository, name, description, branch, buildConfig} → 201 {project}.
func (s *Server) handleCreatePublicProject(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var in deploy.ProjectInput
	if err := decode(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.Deploys.CreatePublic(r.Context(), u.ID, in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, projectAnswer{Project: p})
}

// handleUpdateProject changes {name, description, branch, buildConfig}:
// {project}.
func (s *Server) handleUpdateProject(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var in deploy.ProjectInput
	if err := decode(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if in.Repository != nil {
		s.writeError(w, r, gantry.Errorf(gantry.EINVALID, "The repository of a project cannot be changed: create a new project"))
		return
	}
	p, err := s.Deploys.UpdateProject(r.Context(), u.ID, r.PathValue("id"), in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, projectAnswer{Project: p})
}

// handleSyncProject fetches the branch's latest commit: {project}.
func (s *Server) handleSyncProject(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	p, err := s.Deploys.SyncProject(r.Context(), u, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, projectAnswer{Project: p})
}

// handleDeleteProject stops and removes the project's deployments, then the
// project: {deleted: true}.
func (s *Server) handleDeleteProject(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if err := s.Deploys.DeleteProject(r.Context(), u.ID, r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true})
}
