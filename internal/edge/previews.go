package edge

import (
	"net/http"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
)

// PreviewGuard decides who sees previews of private repositories
// (previewaccess.Service is the real one; issue 24, point 20).
type PreviewGuard interface {
	// Open reports whether anyone may see preview label, and whether the
	// guard knows the label (without reading the store).
	Open(label string) (open, known bool)
	// Reload reads the store again for a label Open does not know but the
	// edge serves, and reports whether it is open.
	Reload(label string) bool
	// Check reports whether a cookie value lets its browser see label.
	Check(label, cookie string) bool
	// Redeem trades a hand-off ticket for label's cookie value.
	Redeem(label, ticket string) (string, bool)
	// SignInURL is where a visitor without the cookie is sent: the
	// platform's hand-off page for host and the page asked for.
	SignInURL(host, requestURI string) string
}

// previewCookie is the cookie a guarded preview's owner holds on its host
// (host-only, so no other site can plant it); without https it goes
// unprefixed (platformCookie).
const previewCookie = "__Host-gantry_preview"

// previewPath is where a guarded preview's host trades a ticket for the
// cookie (previewaccess.Path).
const previewPath = "/.gantry/preview-access"

// previewCookieTTL is how long the browser keeps the cookie (the value
// itself expires then too: previewaccess.CookieTTL).
const previewCookieTTL = 12 * time.Hour

// ConfigurePreviews sets who sees previews; without it (nil) every
// preview is public. Call it before serving.
func (e *Edge) ConfigurePreviews(g PreviewGuard) { e.previews = g }

// GuardsPreview reports whether host (a Host header) is a preview's while
// a PreviewGuard is set: the edge's event loops hand such requests to
// net/http, where ServeHTTP checks them (the check may read the store,
// which a loop must not wait for).
func (e *Edge) GuardsPreview(host string) bool {
	if e.previews == nil {
		return false
	}
	sub, ok := e.Subdomain(host)
	return ok && gantry.IsPreviewLabel(sub)
}

// guardPreview lets a request for preview sub through when anyone may see
// it or it carries the owner's cookie (which it then takes out, so the
// app never sees it); otherwise it answers itself — the ticket trade, a
// redirect to the platform's sign-in hand-off, or a 401 page — and
// returns false.
func (e *Edge) guardPreview(w http.ResponseWriter, r *http.Request, sub string) bool {
	if e.previews == nil || !gantry.IsPreviewLabel(sub) || e.previewOpen(sub) {
		return true
	}
	h := w.Header()
	h["X-Robots-Tag"] = noIndex
	name := e.previewCookieName(r)
	if r.URL.Path == previewPath {
		value, ok := e.previews.Redeem(sub, r.URL.Query().Get("ticket"))
		if !ok {
			e.page(w, r, http.StatusForbidden, pagePreviewLink, sub+e.suffix)
			return false
		}
		http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: int(previewCookieTTL / time.Second),
			HttpOnly: true, Secure: name == previewCookie, SameSite: http.SameSiteLaxMode})
		h["Referrer-Policy"] = noReferrer
		h["Cache-Control"] = noStore
		http.Redirect(w, r, gantry.LocalPath(r.URL.Query().Get("to")), http.StatusFound)
		return false
	}
	if c, err := r.Cookie(name); err == nil && e.previews.Check(sub, c.Value) {
		dropCookie(r, name)
		return true
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		h["Cache-Control"] = noStore
		http.Redirect(w, r, e.previews.SignInURL(r.Host, r.URL.RequestURI()), http.StatusFound)
		return false
	}
	e.page(w, r, http.StatusUnauthorized, pagePrivatePreview, sub+e.suffix)
	return false
}

// previewOpen asks the guard whether anyone may see preview sub. A label
// the guard does not know is guarded, unless the edge serves a site under
// it: then its route is in the store already, and the guard reads it.
func (e *Edge) previewOpen(sub string) bool {
	open, known := e.previews.Open(sub)
	if known {
		return open
	}
	if _, ok := e.resolver.Lookup(sub); !ok {
		return false
	}
	return e.previews.Reload(sub)
}

// previewCookieName is previewCookie where the browser keeps Secure
// cookies (https, or a name under localhost, a secure context), else
// without its prefix.
func (e *Edge) previewCookieName(r *http.Request) string {
	if r.TLS != nil || e.domain == "localhost" || e.proxy.cfg.TrustForwarded && r.Header.Get("X-Forwarded-Proto") == "https" {
		return previewCookie
	}
	return strings.TrimPrefix(previewCookie, "__Host-")
}

// dropCookie takes the cookie name out of r's Cookie headers.
func dropCookie(r *http.Request, name string) {
	var kept []string
	for _, line := range r.Header.Values("Cookie") {
		var parts []string
		for part := range strings.SplitSeq(line, ";") {
			if n, _, _ := strings.Cut(strings.TrimSpace(part), "="); n != name {
				parts = append(parts, strings.TrimSpace(part))
			}
		}
		if len(parts) > 0 {
			kept = append(kept, strings.Join(parts, "; "))
		}
	}
	if len(kept) == 0 {
		r.Header.Del("Cookie")
		return
	}
	r.Header["Cookie"] = kept
}

var (
	noIndex    = []string{"noindex, nofollow"}
	noReferrer = []string{"no-referrer"}
)
