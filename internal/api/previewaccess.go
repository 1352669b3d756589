package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/gantryhq/gantry"
)

// PreviewAccessService keeps previews of private repositories to their
// owner (previewaccess.Service): the project setting that opens them, and
// the hand-off of the owner's sign-in to a preview's host.
type PreviewAccessService interface {
	AccessOf(ctx context.Context, userID, projectID string) (gantry.PreviewAccess, error)
	SetOpen(ctx context.Context, userID, projectID string, open bool) (gantry.PreviewAccess, error)
	// Ticket returns the address on preview label's host that lets userID
	// in and then shows path to; ENOTFOUND unless the preview is userID's.
	Ticket(ctx context.Context, userID, label, to string) (string, error)
}

func (s *Server) previewAccessRoutes() {
	h := previewAPI{s}
	s.mux.HandleFunc("GET /api/projects/{id}/preview-access", s.requireUser(h.handleGetPreviewAccess))
	s.mux.HandleFunc("PUT /api/projects/{id}/preview-access", s.requireUser(h.handleSetPreviewAccess))
	s.mux.HandleFunc("POST /api/previews/access", s.requireUser(h.handlePreviewHandOff))
}

// previewAccess answers 503 while the service is not wired.
func (s *Server) previewAccess(w http.ResponseWriter, r *http.Request) PreviewAccessService {
	if s.PreviewAccess == nil {
		s.writeError(w, r, gantry.Errorf(gantry.EUNAVAILABLE, "Preview access is not available on this server"))
	}
	return s.PreviewAccess
}

// handleGetPreviewAccess: {access: {private, open}} of the user's project.
func (s previewAPI) handleGetPreviewAccess(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	svc := s.previewAccess(w, r)
	if svc == nil {
		return
	}
	a, err := svc.AccessOf(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access": a})
}

// handleSetPreviewAccess: {open: bool} opens (or closes) the project's
// previews to anyone with their address → {access}.
func (s previewAPI) handleSetPreviewAccess(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var in struct {
		Open *bool `json:"open"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if in.Open == nil {
		s.writeError(w, r, gantry.Errorf(gantry.EINVALID, `Say whether previews are open: {"open": true} or {"open": false}`))
		return
	}
	svc := s.previewAccess(w, r)
	if svc == nil {
		return
	}
	a, err := svc.SetOpen(r.Context(), u.ID, r.PathValue("id"), *in.Open)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access": a})
}

// handlePreviewHandOff: {host, to} from the web app's /preview-access page,
// signed in → {url}: the address on the preview's host that lets this
// browser in (a one-minute ticket) and then shows to. Not a preview
// address: 400; not the user's preview: 404.
func (s previewAPI) handlePreviewHandOff(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	var in struct {
		Host string `json:"host"`
		To   string `json:"to"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	label, ok := s.previewLabel(in.Host)
	if !ok {
		s.writeError(w, r, gantry.Errorf(gantry.EINVALID, "That is not the address of a preview"))
		return
	}
	svc := s.previewAccess(w, r)
	if svc == nil {
		return
	}
	u2, err := svc.Ticket(r.Context(), u.ID, label, in.To)
	if err != nil {
		if gantry.ErrorCode(err) == gantry.ENOTFOUND {
			err = gantry.Errorf(gantry.ENOTFOUND, "This preview is not one of yours: only its project's owner can open it")
		}
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"url": u2})
}

// previewLabel returns the preview label of host (<label>.<LiveDomain>,
// a port allowed), and whether it is one.
func (rp requestPart) previewLabel(host string) (string, bool) {
	s := rp.s
	if !s.isLiveHost(host) {
		return "", false
	}
	h := hostName(host)
	label := h[:len(h)-len(s.LiveDomain)-1]
	return label, gantry.IsPreviewLabel(label) && len(label) <= gantry.DNSLabelMaxLen && !strings.Contains(label, ".")
}
