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

// platformCookies sets and reads the platform's cookies for the server's
// setting of TrustProxy (whether a proxy's X-Forwarded-Proto is believed).
type platformCookies struct{ trustProxy bool }

func (s *Server) cookies() platformCookies { return platformCookies{trustProxy: s.TrustProxy} }

// name is the name a platform cookie (named with the
// __Host- prefix) is set and read under for r: with the prefix over https
// and on a loopback public host, without it otherwise.
func (c platformCookies) name(r *http.Request, name string) string {
	if c.secure(r) {
		return name
	}
	return strings.TrimPrefix(name, hostPrefix)
}

// secure reports whether r's browser keeps Secure
// cookies: it reached us over https, or on a loopback name.
func (c platformCookies) secure(r *http.Request) bool {
	return isHTTPS(r, c.trustProxy) || isLoopbackName(hostName(r.Host))
}

// set sets ck as a platform cookie: under name,
// Path=/, no Domain, HttpOnly, and Secure where the browser keeps Secure
// cookies.
func (c platformCookies) set(w http.ResponseWriter, r *http.Request, ck *http.Cookie) {
	ck.Name = c.name(r, ck.Name)
	ck.Path, ck.Domain = "/", ""
	ck.HttpOnly = true
	ck.Secure = c.secure(r)
	http.SetCookie(w, ck)
}

// isHTTPS reports whether the browser reached us over https: directly, or
// through a proxy trusted to say so.
func isHTTPS(r *http.Request, trustProxy bool) bool {
	return r.TLS != nil || (trustProxy && r.Header.Get("X-Forwarded-Proto") == "https")
}
