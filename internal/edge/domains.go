package edge

import (
	"net/http"
	"strings"

	"github.com/gantryhq/gantry"
)

// customHosts maps a custom domain's name to its route (Edge.SetDomains).
type customHosts = map[string]gantry.DomainRoute

// SetDomains replaces the custom domains the edge answers for. A served
// route shows its project subdomain's site (or redirects, with 308, to
// RedirectTo); a route that is not served yet (waiting for DNS) gets the
// 404 page. Requests already being answered are not affected; the next
// ones see the new routes, so a removed domain stops being served at once.
func (e *Edge) SetDomains(routes []gantry.DomainRoute) {
	m := make(customHosts, len(routes))
	for _, r := range routes {
		m[r.Name] = r
	}
	e.domains.Store(&m)
}

// HasDomain reports whether host (a Host header: any case, a port and a
// trailing dot allowed) is one of the custom domains of SetDomains, served
// or not: the platform hands its requests to the edge.
func (e *Edge) HasDomain(host string) bool {
	_, ok := e.customRoute(host)
	return ok
}

// customRoute returns the route of the custom domain host names.
func (e *Edge) customRoute(host string) (gantry.DomainRoute, bool) {
	m := e.domains.Load()
	if m == nil || len(*m) == 0 {
		return gantry.DomainRoute{}, false
	}
	r, ok := (*m)[hostOnly(host)]
	return r, ok
}

// hostOnly returns the name of a Host header: lower case, without port and
// trailing dot.
func hostOnly(host string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// customDomain routes a request for a host that is not a subdomain of the
// live domain: the subdomain whose site a served custom domain shows, and
// true; or it answers itself (a redirect, the 404 page of a domain waiting
// for DNS, or "No site here" for a name it does not know) and returns
// false.
func (e *Edge) customDomain(w http.ResponseWriter, r *http.Request) (string, bool) {
	route, ok := e.customRoute(r.Host)
	if !ok {
		// A name the platform does not serve (a stranger's domain, or one
		// removed from its project that still points here): a plain 404
		// that neither repeats the name nor links to the platform, so the
		// name cannot pass for Gantry's own.
		e.page(w, r, http.StatusNotFound, pageNoSite, "")
		return "", false
	}
	if !route.Serve || route.Subdomain == "" {
		e.page(w, r, http.StatusNotFound, pageNoApp, route.Name)
		return "", false
	}
	if route.RedirectTo != "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		http.Redirect(w, r, scheme+"://"+route.RedirectTo+r.URL.RequestURI(), http.StatusPermanentRedirect)
		return "", false
	}
	return route.Subdomain, true
}
