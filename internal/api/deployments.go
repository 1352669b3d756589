package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
)

// DefaultHeartbeat is Server.Heartbeat's default: how often an idle log
// stream sends an SSE comment so that proxies and browsers keep it open.
const DefaultHeartbeat = 15 * time.Second

func (s *Server) deploymentRoutes() {
	h := deploymentAPI{s}
	s.mux.HandleFunc("POST /api/deployments", s.requireUser(h.handleCreateDeployment))
	s.mux.HandleFunc("GET /api/deployments", s.requireUser(h.handleListDeployments))
	s.mux.HandleFunc("GET /api/deployments/{id}", s.requireUser(h.handleGetDeployment))
	s.mux.HandleFunc("DELETE /api/deployments/{id}", s.requireUser(h.handleDeleteDeployment))
	s.mux.HandleFunc("POST /api/deployments/hosting/stop/{subdomain}", s.requireUser(h.handleStopDeployment))
	s.mux.HandleFunc("POST /api/deployments/hosting/restart/{subdomain}", s.requireUser(h.handleRestartDeployment))
	s.mux.HandleFunc("GET /api/deployments/{id}/logs", s.requireUser(h.handleDeploymentLogs))
	s.mux.HandleFunc("DELETE /api/deployments/{id}/logs", s.requireUser(h.handleClearDeploymentLogs))
	s.mux.HandleFunc("GET /api/deployments/{id}/logs/stream", s.requireUser(h.handleDeploymentLogStream))
}

type deploymentAnswer struct {
	Deployment *gantry.Deployment `json:"deployment"`
}

// handleCreateDeployment queues a build: {projectId, version,
// buildCommand?, outputDirectory?} → 201 {deployment} (status pending);
// 429 when the user already has deploy.Service.MaxPending builds waiting.
func (s deploymentAPI) handleCreateDeployment(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var req deploy.CreateRequest
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := s.Deploys.Create(r.Context(), u.ID, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, deploymentAnswer{Deployment: d})
}

// handleListDeployments answers the user's deployments, newest first:
// {deployments}. Optional query: status, projectId, target (production or
// preview), limit.
func (s deploymentAPI) handleListDeployments(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	q := r.URL.Query()
	f := gantry.DeploymentFilter{ProjectID: q.Get("projectId"), Status: q.Get("status"), Target: q.Get("target")}
	if err := f.Validate(); err != nil {
		s.writeError(w, r, err)
		return
	}
	if n, set, err := queryNumber(q, "limit", 1, 1000); err != nil {
		s.writeError(w, r, err)
		return
	} else if set {
		f.Limit = n
	}
	ds, err := s.Deploys.Deployments(r.Context(), u.ID, f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deployments": ds})
}

// handleGetDeployment answers one deployment with its project, user, build
// info, metadata, newest 200 build log entries and environment (secrets
// masked): {deployment}.
func (s deploymentAPI) handleGetDeployment(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	d, err := s.Deploys.Deployment(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, deploymentAnswer{Deployment: d})
}

// handleDeleteDeployment stops the deployment if it runs, then removes its
// record, files and logs: {}.
func (s deploymentAPI) handleDeleteDeployment(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if err := s.Deploys.Delete(r.Context(), u.ID, r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true})
}

// hostingRequest is the optional body of stop and restart: several
// deployments of a project share its subdomain, and deploymentId says which
// one is meant. Without it, stop takes the live (or newest running) one and
// restart the newest stopped one.
type hostingRequest struct {
	DeploymentID string `json:"deploymentId"`
}

// decodeHosting reads the optional body of stop and restart. A subdomain
// or deploymentId that could never exist (gantry.ValidID) is "Deployment
// not found", without asking the database.
func (s deploymentAPI) decodeHosting(w http.ResponseWriter, r *http.Request) (hostingRequest, error) {
	var req hostingRequest
	notFound := gantry.Errorf(gantry.ENOTFOUND, "Deployment not found")
	if !gantry.ValidID(r.PathValue("subdomain")) {
		return req, notFound
	}
	if r.ContentLength == 0 && r.Header.Get("Transfer-Encoding") == "" {
		return req, nil
	}
	if err := decode(w, r, &req); err != nil {
		return req, err
	}
	if req.DeploymentID != "" && !gantry.ValidID(req.DeploymentID) {
		return req, notFound
	}
	return req, nil
}

func (s deploymentAPI) handleStopDeployment(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	req, err := s.decodeHosting(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := s.Deploys.Stop(r.Context(), u.ID, strings.ToLower(r.PathValue("subdomain")), req.DeploymentID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, deploymentAnswer{Deployment: d})
}

func (s deploymentAPI) handleRestartDeployment(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	req, err := s.decodeHosting(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := s.Deploys.Restart(r.Context(), u.ID, strings.ToLower(r.PathValue("subdomain")), req.DeploymentID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, deploymentAnswer{Deployment: d})
}

// handleDeploymentLogs answers the newest ?limit= entries (default 200, at
// most 5000) in order, and how many there are: {logs, total}.
func (s deploymentAPI) handleDeploymentLogs(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	limit := 200
	if n, set, err := queryNumber(r.URL.Query(), "limit", 1, 5000); err != nil {
		s.writeError(w, r, err)
		return
	} else if set {
		limit = n
	}
	logs, total, err := s.Deploys.Logs(r.Context(), u.ID, r.PathValue("id"), limit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"logs": logs, "total": total})
}

func (s deploymentAPI) handleClearDeploymentLogs(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if err := s.Deploys.ClearLogs(r.Context(), u.ID, r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"cleared": true})
}

// streamMessage is one SSE message of a log stream.
type streamMessage struct {
	Type string           `json:"type"` // "connected" or "log"
	Data *gantry.LogEntry `json:"data,omitempty"`
}

// handleDeploymentLogStream streams the deployment's log entries as
// Server-Sent Events: first {"type":"connected"}, then one
// {"type":"log","data":entry} per entry with the entry's number as the
// event id, and a comment line every Heartbeat. A client that sends
// Last-Event-ID receives every stored entry after it first; without it the
// stream starts with the next new entry. It ends when the client leaves,
// the server shuts down, the deployment is deleted (at once, by the
// deploy.Deleted event; a deletion this replica did not see, at the next
// heartbeat) or the session no longer signs in (checked every heartbeat
// with currentUser: expired, signed out, deactivated, deleted). The entries
// and heartbeats come from deploy.Service.FollowLogs, which holds the
// protocol (subscribe before the backlog, gap fill, resubscribe); this
// handler only writes them out and re-checks the session.
func (s deploymentAPI) handleDeploymentLogStream(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var last int64
	resume := false
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || !allDigits(v) { // ParseInt takes "+5"
			s.writeError(w, r, gantry.Errorf(gantry.EINVALID, "Last-Event-ID must be a log entry number"))
			return
		}
		last, resume = n, true
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel() // ends the stream's goroutine
	stream, err := s.Deploys.FollowLogs(ctx, u.ID, r.PathValue("id"), last, resume, s.Heartbeat)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(m streamMessage, eventID int64) bool {
		b, _ := json.Marshal(m)
		if eventID > 0 {
			fmt.Fprintf(w, "id: %d\n", eventID)
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send(streamMessage{Type: "connected"}, 0) {
		return
	}
	for {
		select {
		case <-s.Closing():
			return
		case ev, ok := <-stream:
			switch {
			case !ok:
				return // the client left, the deployment is gone, or the store failed
			case ev.Heartbeat:
				if cu, err := s.currentUser(r); err != nil || cu == nil || cu.ID != u.ID {
					return // signed out, expired, deactivated or deleted
				}
				if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil || rc.Flush() != nil {
					return
				}
			default:
				if !send(streamMessage{Type: "log", Data: &ev.Entry}, ev.Entry.Seq) {
					return
				}
			}
		}
	}
}

// allDigits reports whether v is one or more ASCII digits and nothing else.
func allDigits(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}
