package api

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/gantryhq/gantry"
)

// The public gallery (SPEC §7 Public gallery): open to everyone, with or
// without a token. Patterns under /api/deployments/public are more specific
// than /api/deployments/{id}, so ServeMux gives them precedence.
func (s *Server) galleryRoutes() {
	h := galleryAPI{s}
	s.mux.HandleFunc("GET /api/deployments/public", h.handlePublicDeployments)
	s.mux.HandleFunc("POST /api/deployments/public/{id}/view", h.handleRecordView)
	s.mux.HandleFunc("POST /api/deployments/public/{id}/like", h.handleToggleLike)
	s.mux.HandleFunc("GET /api/deployments/public/{id}/like-status", h.handleLikeStatus)
	s.mux.HandleFunc("POST /api/deployments/public/{id}/wake", h.handleWakeHint)
}

// VisitorCookie names the cookie that identifies a visitor without an
// account to the gallery: a random id of 16 bytes (base64url, 22
// characters), a platform cookie (platformCookies.set: __Host-, Path=/,
// HttpOnly, Secure), SameSite=Lax, kept for a year. It carries no other
// information.
const VisitorCookie = "__Host-gantry_visitor"

// visitorMaxAge is how long the visitor cookie lives.
const visitorMaxAge = 365 * 24 * time.Hour

var visitorIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)

// GalleryWriteLimit and GalleryWriteWindow bound the views and likes one
// client address (an IPv6 /64) may send: anonymous ids cost nothing to
// make, so this is what keeps a script from inflating the counts.
const (
	GalleryWriteLimit  = 240
	GalleryWriteWindow = time.Minute
)

// WakeHintLimit and WakeHintWindow bound the wake hints one client address
// may send: each may start an app, so fewer than views and likes (a
// Discover page shows at most GalleryMaxLimit cards).
const (
	WakeHintLimit  = 120
	WakeHintWindow = time.Minute
)

// viewerKey returns who is asking: "user:<id>" for a valid bearer token of
// an active account, else "visitor:<id>" from the visitor cookie, which it
// sets (with a new random id) when missing or malformed. An invalid or
// expired token counts as no token here: the gallery is public.
func (s galleryAPI) viewerKey(w http.ResponseWriter, r *http.Request) (string, error) {
	if u, err := s.currentUser(r); err == nil && u != nil {
		return "user:" + u.ID, nil
	}
	if c, err := r.Cookie(s.cookies().name(r, VisitorCookie)); err == nil && visitorIDPattern.MatchString(c.Value) {
		return "visitor:" + c.Value, nil
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	id := base64.RawURLEncoding.EncodeToString(b[:])
	s.cookies().set(w, r, &http.Cookie{
		Name:     VisitorCookie,
		Value:    id,
		MaxAge:   int(visitorMaxAge / time.Second),
		SameSite: http.SameSiteLaxMode,
	})
	return "visitor:" + id, nil
}

// galleryQuery reads the list's query parameters: search, category, sort,
// limit and either page (from 1) or offset (from 0).
func galleryQuery(r *http.Request) (gantry.GalleryQuery, error) {
	v := r.URL.Query()
	q := gantry.GalleryQuery{Search: v.Get("search"), Category: v.Get("category"), Sort: v.Get("sort")}
	limit, hasLimit, err := queryNumber(v, "limit", 1, gantry.GalleryMaxLimit)
	if err != nil {
		return q, err
	}
	if hasLimit {
		q.Limit = limit
	}
	page, hasPage, err := queryNumber(v, "page", 1, 1_000_000)
	if err != nil {
		return q, err
	}
	offset, hasOffset, err := queryNumber(v, "offset", 0, 100_000_000)
	if err != nil {
		return q, err
	}
	if hasPage && hasOffset {
		return q, gantry.Errorf(gantry.EINVALID, "Use page or offset, not both")
	}
	q.Normalize()
	if hasPage {
		offset = (page - 1) * q.Limit
	}
	q.Offset = offset
	return q, q.Validate()
}

// galleryAnswer is the list's answer: the page of apps, the paging that
// produced it, and the counts of the header and chips.
type galleryAnswer struct {
	*gantry.GalleryPage
	Page    int  `json:"page"`
	Limit   int  `json:"limit"`
	Offset  int  `json:"offset"`
	HasMore bool `json:"hasMore"`
}

// handlePublicDeployments answers a page of the public gallery:
// {deployments, total, page, limit, offset, hasMore, stats {apps,
// developers}, categories {all, frontend, backend, static}}. Query: search,
// category (all, frontend, backend, static; default all), sort (recent,
// oldest, name, popular, trending; default recent), limit (1–100, default
// 24) and page (from 1) or offset (from 0). Each app says whether the
// caller likes it (liked).
func (s galleryAPI) handlePublicDeployments(w http.ResponseWriter, r *http.Request) {
	q, err := galleryQuery(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if q.Viewer, err = s.viewerKey(w, r); err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.Gallery.ListPublicDeployments(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, galleryAnswer{
		GalleryPage: page,
		Page:        q.Offset/q.Limit + 1,
		Limit:       q.Limit,
		Offset:      q.Offset,
		HasMore:     q.Offset+len(page.Deployments) < page.Total,
	})
}

// allowGalleryWrite takes one write from the client's address and answers
// 429 when it is over GalleryWriteLimit.
func (s galleryAPI) allowGalleryWrite(w http.ResponseWriter, r *http.Request) bool {
	if s.GalleryWrites.Take(rateKey(s.clientIP(r))) {
		return true
	}
	w.Header().Set("Retry-After", strconv.Itoa(int(GalleryWriteWindow/time.Second)))
	s.writeError(w, r, gantry.Errorf(gantry.ETOOMANY, "Too many requests. Please wait a minute and try again."))
	return false
}

// handleRecordView counts a visit (Visit App) once per visitor, app and
// hour: {counted}. 404 "App not found" unless the app is listed.
func (s galleryAPI) handleRecordView(w http.ResponseWriter, r *http.Request) {
	if !s.allowGalleryWrite(w, r) {
		return
	}
	key, err := s.viewerKey(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	counted, err := s.Gallery.RecordView(r.Context(), r.PathValue("id"), key)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"counted": counted})
}

// handleToggleLike likes the app for the caller, or takes the like back:
// {likeCount, liked}. 404 "App not found" unless the app is listed.
func (s galleryAPI) handleToggleLike(w http.ResponseWriter, r *http.Request) {
	if !s.allowGalleryWrite(w, r) {
		return
	}
	key, err := s.viewerKey(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	count, liked, err := s.Gallery.ToggleLike(r.Context(), r.PathValue("id"), key)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"likeCount": count, "liked": liked})
}

// handleLikeStatus answers whether the caller likes the app: {liked}.
// 404 "App not found" unless the app is listed.
func (s galleryAPI) handleLikeStatus(w http.ResponseWriter, r *http.Request) {
	key, err := s.viewerKey(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	liked, err := s.Gallery.LikeStatus(r.Context(), r.PathValue("id"), key)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"liked": liked})
}

// handleWakeHint starts waking a sleeping listed app whose card a visitor
// sees, so the visit finds it awake: {waking}. Rate-limited per client
// address like views and likes; 404 "App not found" unless the app is
// listed.
func (s galleryAPI) handleWakeHint(w http.ResponseWriter, r *http.Request) {
	if !s.WakeHints.Take(rateKey(s.clientIP(r))) {
		w.Header().Set("Retry-After", strconv.Itoa(int(WakeHintWindow/time.Second)))
		s.writeError(w, r, gantry.Errorf(gantry.ETOOMANY, "Too many requests. Please wait a minute and try again."))
		return
	}
	waking, err := s.Deploys.WakeHint(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"waking": waking})
}
