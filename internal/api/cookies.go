package api

import (
	"net/http"
	"strings"
)

// Platform cookies (the GitHub sign-in's nonce, the visitor id) are named
// with the __Host- prefix: the browser keeps such a cookie only when it
// was set by this very host, Secure, with Path=/ and no Domain. So an app
// on a sibling name — with the public host gantry.example.com and live
// sites on apps.example.com, any site may set Domain=example.com cookies —
// cannot plant ("toss") one the platform would read.
//
// __Host- needs Secure, which browsers accept over https and on
// http://localhost and the loopback IPs (secure contexts). Over plain
// http on any other name a Secure cookie would be dropped, so there the
// cookie goes by its name without the prefix, not Secure: plain http is
// for trying Gantry out (docs/operations.md), and anyone on the network
// path can read and write its cookies anyway.

const hostPrefix = "__Host-"

// platformCookieName is the name a platform cookie (named with the
// __Host- prefix) is set and read under for r: with the prefix over https
// and on a loopback public host, without it otherwise.
func (s *Server) platformCookieName(r *http.Request, name string) string {
	if s.securePlatformCookies(r) {
		return name
	}
	return strings.TrimPrefix(name, hostPrefix)
}

// securePlatformCookies reports whether r's browser keeps Secure
// cookies: it reached us over https, or on a loopback name.
func (s *Server) securePlatformCookies(r *http.Request) bool {
	return s.isHTTPS(r) || isLoopbackName(hostName(r.Host))
}

// setPlatformCookie sets c as a platform cookie: under platformCookieName,
// Path=/, no Domain, HttpOnly, and Secure where the browser keeps Secure
// cookies.
func (s *Server) setPlatformCookie(w http.ResponseWriter, r *http.Request, c *http.Cookie) {
	c.Name = s.platformCookieName(r, c.Name)
	c.Path, c.Domain = "/", ""
	c.HttpOnly = true
	c.Secure = s.securePlatformCookies(r)
	http.SetCookie(w, c)
}

// isHTTPS reports whether the browser reached us over https: directly, or
// through a trusted proxy that says so.
func (s *Server) isHTTPS(r *http.Request) bool {
	return r.TLS != nil || (s.TrustProxy && r.Header.Get("X-Forwarded-Proto") == "https")
}
