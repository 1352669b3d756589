package api

import (
	"bytes"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/project"
)

// Deploy hooks are rate-limited per token: DeployHookLimit deployments per
// DeployHookWindow (a CI pipeline that calls its hook on every commit
// stays well under it).
const (
	DeployHookLimit  = 10
	DeployHookWindow = time.Minute
)

// triggerRoutes are push to deploy, previews and rollback (issue 14).
func (s *Server) triggerRoutes() {
	h := deploymentAPI{s}
	s.mux.HandleFunc("POST /api/deployments/{id}/promote", s.requireUser(h.handlePromoteDeployment))
	s.mux.HandleFunc("POST /api/deployments/{id}/redeploy", s.requireUser(h.handleRedeployDeployment))
	s.mux.HandleFunc("GET /api/projects/{id}/previews", s.requireUser(h.handleListPreviews))
	s.mux.HandleFunc("POST /api/projects/{id}/deploy-hook", s.requireUser(h.handleRotateDeployHook))
	s.mux.HandleFunc("POST /api/hooks/deploy/{token}", h.handleDeployHook)
}

// handlePromoteDeployment makes an earlier production deployment live
// again with no build: {deployment}. A preview is 409.
func (s deploymentAPI) handlePromoteDeployment(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	d, err := s.Deploys.Promote(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, deploymentAnswer{Deployment: d})
}

// handleRedeployDeployment queues a new build of a deployment's commit,
// branch, target and pull request; optional body {noCache}: 201
// {deployment}.
func (s deploymentAPI) handleRedeployDeployment(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var body struct {
		NoCache bool `json:"noCache"`
	}
	if hasBody(r) {
		if err := decode(w, r, &body); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	d, err := s.Deploys.Redeploy(r.Context(), u.ID, r.PathValue("id"), body.NoCache)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, deploymentAnswer{Deployment: d})
}

// hasBody reports whether r came with a body to read (an empty one, or
// only white space, counts as none), and leaves it readable.
func hasBody(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
	return err != nil || len(bytes.TrimSpace(b)) > 0
}

// handleListPreviews answers the project's previews, the newest deployment
// of each preview label, newest first: {previews}.
func (s deploymentAPI) handleListPreviews(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	ds, err := s.Deploys.Previews(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"previews": ds})
}

// handleRotateDeployHook gives the project a new deploy hook URL (the old
// one stops working): {project}.
func (s deploymentAPI) handleRotateDeployHook(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	p, err := s.Projects.RotateDeployHook(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, projectAnswer{Project: p})
}

// hookQuery checks a deploy hook's query: branch at most once and no other
// parameter, so that a misspelt one (?BRANCH=, ?ref=) is refused rather
// than deploying production.
func hookQuery(q url.Values) error {
	for _, name := range slices.Sorted(maps.Keys(q)) {
		switch {
		case name != "branch":
			return gantry.Errorf(gantry.EINVALID, "Unknown query parameter %s: a deploy hook takes only ?branch=", gantry.Quote(name))
		case len(q[name]) > 1:
			return gantry.Errorf(gantry.EINVALID, "Query parameter \"branch\" is given more than once")
		}
	}
	return nil
}

// hookDeployment is the part of a deployment the deploy hook answers.
type hookDeployment struct {
	ID         string `json:"_id"`
	Status     string `json:"status"`
	Target     string `json:"target"`
	Branch     string `json:"branch"`
	CommitHash string `json:"commitHash"`
}

// handleDeployHook starts a deployment of the project whose deploy hook
// token is in the path, with no other credentials: of its production
// branch, or of ?branch= (which must exist): 201 {deployment: {_id,
// status, target, branch, commitHash}}. An unknown token is 404; more
// than DeployHookLimit calls of one token per DeployHookWindow are 429.
func (s deploymentAPI) handleDeployHook(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := hookQuery(q); err != nil {
		s.writeError(w, r, err)
		return
	}
	token := r.PathValue("token")
	p, err := s.Projects.ProjectByDeployHook(r.Context(), token)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	branch := ""
	if q.Get("branch") != "" { // ?branch= (empty): the production branch
		branch = q.Get("branch")
		if err := gantry.ValidateBranch(branch); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	// Every call that reaches the repository counts, a missing branch too.
	if key := project.HashDeployHook(token); s.DeployHooks != nil && !s.DeployHooks.Take(key) {
		w.Header().Set("Retry-After", strconv.Itoa(int((s.DeployHooks.Wait(key)+time.Second-1)/time.Second)))
		s.writeError(w, r, gantry.Errorf(gantry.ETOOMANY, "Too many deployments from this deploy hook. Please wait a minute and try again."))
		return
	}
	d, err := s.Deploys.Trigger(r.Context(), gantry.DeployTrigger{ProjectID: p.ID, Trigger: gantry.TriggerHook, Branch: branch})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"deployment": hookDeployment{
		ID: d.ID, Status: d.Status, Target: d.Target, Branch: d.Metadata.Branch, CommitHash: d.Metadata.CommitHash,
	}})
}
