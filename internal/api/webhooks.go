package api

import (
	"errors"
	"io"
	"net/http"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deadline"
	"github.com/gantryhq/gantry/internal/ghhook"
)

func (s *Server) webhookRoutes() {
	h := githubAPI{s}
	s.mux.HandleFunc("POST /api/webhooks/github", h.handleGitHubWebhook)
	s.mux.HandleFunc("GET /api/projects/{id}/github", s.requireUser(h.handleProjectGitHub))
	s.mux.HandleFunc("POST /api/projects/{id}/webhook", s.requireUser(h.handleReregisterWebhook))
	s.mux.HandleFunc("POST /api/projects/{id}/pull-requests/{number}/approve", s.requireUser(h.handleApprovePullRequest))
}

// errWebhooksOff answers the GitHub webhook endpoints when push to deploy
// from GitHub is not set up.
var errWebhooksOff = gantry.Errorf(gantry.EUNAVAILABLE, "Push to deploy from GitHub is not set up on this server")

// handleGitHubWebhook receives GitHub's deliveries. It is public: the
// X-Hub-Signature-256 HMAC of the body under the webhook's secret is the
// credential (401 and nothing done without a matching one). The body is
// capped at ghhook.MaxBody and X-GitHub-Hook-ID names the webhook whose
// secret checks it before anything reads the body; the work is queued and
// the answer is 202 {message: "Queued"}, or 200 {message: "Already
// handled"} for a signed body the webhook delivered before, or 200
// {message: "Pong"} for a ping; 429 past the webhook's rate, 503 when the
// project's share of the queue is full (ghhook.Service.Receive).
func (s githubAPI) handleGitHubWebhook(w http.ResponseWriter, r *http.Request) {
	if s.Webhooks == nil {
		s.writeError(w, r, errWebhooksOff)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, ghhook.MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		s.writeError(w, r, gantry.Errorf(gantry.EINVALID, "Payload too large (limit 5 MiB)"))
		return
	} else if errors.Is(err, deadline.ErrSlowBody) {
		s.writeError(w, r, gantry.Errorf(gantry.ETIMEOUT, "Request body did not arrive in time"))
		return
	} else if err != nil {
		s.writeError(w, r, gantry.Errorf(gantry.EINVALID, "Could not read the request body"))
		return
	}
	msg, err := s.Webhooks.Receive(r.Context(), ghhook.Delivery{
		Event:     r.Header.Get("X-GitHub-Event"),
		ID:        r.Header.Get("X-GitHub-Delivery"),
		HookID:    r.Header.Get("X-GitHub-Hook-ID"),
		RepoID:    r.Header.Get("X-GitHub-Hook-Installation-Target-ID"),
		Signature: r.Header.Get("X-Hub-Signature-256"),
		Body:      body,
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if msg == ghhook.MsgQueued {
		status = http.StatusAccepted
	}
	writeJSON(w, status, map[string]string{"message": msg})
}

// handleProjectGitHub answers the GitHub side of the owner's project:
// {webhook, pullRequests}.
func (s githubAPI) handleProjectGitHub(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if s.Webhooks == nil {
		writeJSON(w, http.StatusOK, ghhook.View{PullRequests: []ghhook.PullRequestView{}})
		return
	}
	v, err := s.Webhooks.Status(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// handleReregisterWebhook replaces the project's webhook at GitHub with a
// fresh one: {webhook, pullRequests}.
func (s githubAPI) handleReregisterWebhook(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if s.Webhooks == nil {
		s.writeError(w, r, errWebhooksOff)
		return
	}
	v, err := s.Webhooks.Reregister(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// maxPullRequestNumber bounds the {number} of pull request paths.
const maxPullRequestNumber = 1 << 30

// handleApprovePullRequest builds the head commit of a fork's pull request
// that waits for the owner's approval, {sha} (the commit the owner
// reviewed; 409 when the head moved since): {pullRequest}.
func (s githubAPI) handleApprovePullRequest(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if s.Webhooks == nil {
		s.writeError(w, r, errWebhooksOff)
		return
	}
	n, ok := wholeNumber(r.PathValue("number"), 1, maxPullRequestNumber)
	if !ok {
		s.writeError(w, r, gantry.Errorf(gantry.ENOTFOUND, "Pull request not found"))
		return
	}
	var in struct {
		SHA string `json:"sha"`
	}
	// No body: sha is missing, which Approve refuses once it has found
	// the pull request (an unknown one is still 404).
	if r.ContentLength != 0 {
		if err := decode(w, r, &in); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	pr, err := s.Webhooks.Approve(r.Context(), u.ID, r.PathValue("id"), n, in.SHA)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"pullRequest": pr})
}
