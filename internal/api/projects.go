package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/project"
)

// Repository lookups clone a repository to detect its framework (POST
// /api/projects/public-repo, and creating a project: POST
// /api/projects/public and, from GitHub, POST /api/projects). Each user may run LookupConcurrency at once and start
// LookupLimit per LookupWindow (sliding); failed lookups count too.
const (
	LookupConcurrency = 2
	LookupLimit       = 20
	LookupWindow      = time.Minute
	// LookupBusyRetry is the Retry-After of a lookup refused because the
	// user's others are still running.
	LookupBusyRetry = 5 * time.Second
)

// startLookup takes one of u's lookup slots and one of u's lookups of the
// window, or answers 429 with a Retry-After header and reports false. The
// caller runs the lookup and then calls release.
func (s *Server) startLookup(w http.ResponseWriter, r *http.Request, u *gantry.User) (release func(), ok bool) {
	key := "user:" + u.ID
	if !s.Lookups.Take(key) {
		retry := max(s.Lookups.Wait(key), time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(int((retry+time.Second-1)/time.Second)))
		s.writeError(w, r, gantry.Errorf(gantry.ETOOMANY,
			"Too many repository lookups: at most %d a minute. Please wait a minute and try again.", LookupLimit))
		return nil, false
	}
	if !s.LookupsRunning.Acquire(key) {
		s.Lookups.Return(key) // refused: it does not count
		w.Header().Set("Retry-After", strconv.Itoa(int(LookupBusyRetry/time.Second)))
		s.writeError(w, r, gantry.Errorf(gantry.ETOOMANY,
			"You already have %d repository lookups running. Wait for them to finish, then try again.", LookupConcurrency))
		return nil, false
	}
	return func() { s.LookupsRunning.Release(key) }, true
}

// runLookup runs work as one of u's repository lookups (startLookup's
// limits) and answers what it returns with status, or its error.
func (s *Server) runLookup(w http.ResponseWriter, r *http.Request, u *gantry.User, status int, work func() (any, error)) {
	release, ok := s.startLookup(w, r, u)
	if !ok {
		return
	}
	defer release()
	answer, err := work()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, status, answer)
}

func (s *Server) projectRoutes() {
	h := projectAPI{s}
	s.mux.HandleFunc("GET /api/projects", s.requireUser(h.handleListProjects))
	s.mux.HandleFunc("GET /api/projects/{id}", s.requireUser(h.handleGetProject))
	s.mux.HandleFunc("POST /api/projects/public-repo", s.requireUser(h.handleLookupPublicRepo))
	s.mux.HandleFunc("POST /api/projects/public", s.requireUser(h.handleCreatePublicProject))
	s.mux.HandleFunc("PUT /api/projects/{id}", s.requireUser(h.handleUpdateProject))
	s.mux.HandleFunc("POST /api/projects/{id}/sync", s.requireUser(h.handleSyncProject))
	s.mux.HandleFunc("DELETE /api/projects/{id}", s.requireUser(h.handleDeleteProject))
	s.mux.HandleFunc("GET /api/projects/{id}/data", s.requireUser(h.handleProjectData))
	s.mux.HandleFunc("GET /api/projects/{id}/data/download", s.requireUser(h.handleDownloadData))
	s.mux.HandleFunc("POST /api/projects/{id}/data/restore", s.requireUser(h.handleRestoreData))
}

// handleProjectData answers the project's data folders: {data: {mount,
// size, folders: [{name, bytes, measuredAt}]}}.
func (s projectAPI) handleProjectData(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	d, err := s.projectData(r, u)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": d})
}

type projectAnswer struct {
	Project *gantry.Project `json:"project"`
}

// handleListProjects answers the user's projects, newest first: {projects}.
func (s projectAPI) handleListProjects(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	ps, err := s.Projects.Projects(r.Context(), u.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"projects": ps})
}

// handleGetProject answers one project with its newest deployments: {project}.
func (s projectAPI) handleGetProject(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	p, err := s.Projects.Project(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, projectAnswer{Project: p})
}

// handleLookupPublicRepo describes a public repository: {repoUrl} →
// {repository, suggestedName, suggestedDescription, buildConfig, framework}.
// It is a repository lookup (startLookup's limits).
func (s projectAPI) handleLookupPublicRepo(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var req struct {
		RepoURL string `json:"repoUrl"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.runLookup(w, r, u, http.StatusOK, func() (any, error) {
		return s.Projects.LookupPublic(r.Context(), u, req.RepoURL)
	})
}

// handleCreatePublicProject creates a project from any public repository:
// {repository: {url}, name, description, branch, buildConfig,
// showInDiscover} → 201 {project}. The server looks the URL up itself, so
// it is a repository lookup (startLookup's limits) once the body is valid.
func (s projectAPI) handleCreatePublicProject(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var in project.Input
	if err := decode(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := in.Check(); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.runLookup(w, r, u, http.StatusCreated, func() (any, error) {
		p, err := s.Projects.CreatePublic(r.Context(), u, in)
		return projectAnswer{Project: p}, err
	})
}

// handleUpdateProject changes any of {name, description, branch,
// buildConfig, showInDiscover}: {project}.
func (s projectAPI) handleUpdateProject(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var in project.Input
	if err := decode(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.Projects.UpdateProject(r.Context(), u.ID, r.PathValue("id"), in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, projectAnswer{Project: p})
}

// handleSyncProject fetches the branch's latest commit: {project}.
func (s projectAPI) handleSyncProject(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	p, err := s.Projects.SyncProject(r.Context(), u, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, projectAnswer{Project: p})
}

// handleDeleteProject stops and removes the project's deployments, then the
// project: {deleted: true}.
func (s projectAPI) handleDeleteProject(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if err := s.Projects.DeleteProject(r.Context(), u.ID, r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true})
}
