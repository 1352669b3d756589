// Package api is Gantry's HTTP front: the JSON API under /api, the
// embedded React app on every other path of the public host, and the
// hand-off of live-site hosts (<sub>.<live-domain>, and custom domains) to
// the edge.
//
// Adding a resource: write <resource>.go with a method
//
//	func (s *Server) <resource>Routes() {
//		s.mux.HandleFunc("GET /api/things/{id}", s.requireUser(s.handleThing))
//	}
//
// call it from Server.routes, and write handlers that decode (decode), call
// one service method, and answer (writeJSON) or fail (s.writeError). Put
// the new dependency on Server as an interface or pointer field, set in
// cmd/gantry.
package api

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/auth"
	"github.com/gantryhq/gantry/internal/deadline"
	"github.com/gantryhq/gantry/web"
)

// Database is what the health check needs of the store.
type Database interface {
	Ping(ctx context.Context) error
	Dialect() string // "sqlite" or "postgres"
}

// Server routes every request Gantry receives. Create it with NewServer,
// set the fields, and use it as the http.Server's Handler. Fields are read
// at request time and must not change once serving has begun.
type Server struct {
	requestPart // who, from where, the access log (middleware.go)

	// Accounts signs users up and in and checks bearer tokens.
	Accounts *auth.Service
	// Users reads and updates accounts for the profile and stats calls.
	Users gantry.UserStore
	// Notifications lists and changes the signed-in user's notifications.
	Notifications gantry.NotificationStore
	// Dashboards computes GET /api/dashboard.
	Dashboards gantry.DashboardStore
	// Deploys runs deployments: the queue, stop, restart, delete, logs.
	Deploys DeploymentService
	// Projects keeps projects and their environment variables.
	Projects ProjectService
	// Domains keeps projects' custom domains; nil answers 503.
	Domains DomainService
	// GitHub connects accounts to GitHub (OAuth, repository lists); nil
	// answers as when no OAuth app is configured.
	GitHub GitHubService
	// Webhooks is push to deploy from GitHub (deliveries, webhooks, pull
	// requests); nil answers 503 on its endpoints.
	Webhooks WebhookService
	// PreviewAccess keeps previews of private repositories to their
	// owner; nil answers 503 on its endpoints.
	PreviewAccess PreviewAccessService
	// Gallery lists Discover and keeps its views and likes.
	Gallery gantry.GalleryStore
	// GalleryWrites limits the views and likes of one client address
	// (NewServer: GalleryWriteLimit per GalleryWriteWindow).
	GalleryWrites *auth.Limiter
	// WakeHints limits the wake hints of one client address (NewServer:
	// WakeHintLimit per WakeHintWindow).
	WakeHints *auth.Limiter
	// Lookups and LookupsRunning limit each user's repository lookups
	// (NewServer: LookupLimit per LookupWindow, LookupConcurrency at once).
	Lookups        *auth.Limiter
	LookupsRunning *auth.Slots
	// DeployHooks limits the deployments of one deploy hook token
	// (NewServer: DeployHookLimit per DeployHookWindow; nil: no limit).
	DeployHooks *auth.Limiter
	// Database is pinged by GET /api/health and named in its answer.
	Database Database
	// Unreachable reports whether an error without a code says the
	// database could not be reached (store.Unreachable): such errors
	// answer 503 MsgDatabaseAway instead of 500. Nil: none does.
	Unreachable func(error) bool
	// Version is reported by GET /api/health.
	Version string

	// PublicHost is the host name (lowercase, no port) of the UI and API:
	// they answer only requests for it (on any port) and, when it is a
	// loopback name (localhost, 127.0.0.1, ::1), for the other loopback
	// names, which only the machine itself can send. Requests for any
	// other host go to LiveHandler, which answers live subdomains, custom
	// domains, and a plain 404 ("No site here") for every other name, so
	// that a stranger's domain pointed here never frames the sign-in
	// page. Empty: no host is public.
	PublicHost string
	// LiveDomain is the domain whose subdomains are deployments (lowercase,
	// e.g. "localhost" for <sub>.localhost).
	LiveDomain string
	// NoAPI and NoEdge say this replica's GANTRY_ROLES leave out api or
	// edge: the public host (all but /api/health, for load balancers) or
	// the live hosts answer 421 Misdirected Request, saying so.
	NoAPI, NoEdge bool
	// LiveHandler serves requests for every host but the public one:
	// <sub>.<LiveDomain>, custom domains and unknown names. NewServer sets
	// a handler that answers a 404 page; cmd/gantry replaces it with the
	// edge.
	LiveHandler http.Handler
	// Web is the built React app (index.html and assets/), served on every
	// path of the public host outside /api. NewServer sets web.Dist().
	Web fs.FS

	// TrustProxy takes the client IP from the last X-Forwarded-For entry
	// rather than the connection, for rate limits and logs. Only enable it
	// behind a reverse proxy that sets that header.
	TrustProxy bool
	// BodyTimeout is how long the whole body of a request to the public
	// host (the API) may take to arrive, from the handler's start
	// (NewServer: DefaultBodyTimeout). A body still arriving then is
	// answered 408 and its connection closed. Live hosts' bodies are the
	// LiveHandler's (the edge's UploadTimeout).
	BodyTimeout time.Duration
	// Heartbeat is how often an idle log stream sends an SSE comment, and
	// checks that its deployment and the session still exist (NewServer:
	// DefaultHeartbeat).
	Heartbeat time.Duration
	// Logger receives one line per request and every internal error.
	Logger *slog.Logger
	// Now returns the current time; tests replace it.
	Now func() time.Time

	mux       *http.ServeMux
	spa       *spaHandler
	spaOnce   sync.Once
	closing   chan struct{}
	closeOnce sync.Once
}

var _ http.Handler = (*Server)(nil)

// DefaultBodyTimeout is Server.BodyTimeout's default.
const DefaultBodyTimeout = 30 * time.Second

// NewServer returns a Server with its API routes registered, the
// placeholder live handler, the embedded web app, the gallery's write
// limit and the repository lookups' limits, the default body timeout and
// heartbeat, slog.Default() as logger and time.Now as clock.
func NewServer() *Server {
	s := &Server{
		LiveHandler: http.HandlerFunc(noDeployment),
		Web:         web.Dist(),
		Logger:      slog.Default(),
		Now:         time.Now,
		BodyTimeout: DefaultBodyTimeout,
		Heartbeat:   DefaultHeartbeat,
		mux:         http.NewServeMux(),
		closing:     make(chan struct{}),

		GalleryWrites:  auth.NewLimiter(GalleryWriteLimit, GalleryWriteWindow),
		WakeHints:      auth.NewLimiter(WakeHintLimit, WakeHintWindow),
		Lookups:        auth.NewLimiter(LookupLimit, LookupWindow),
		LookupsRunning: auth.NewSlots(LookupConcurrency),
		DeployHooks:    auth.NewLimiter(DeployHookLimit, DeployHookWindow),
	}
	s.requestPart = requestPart{s}
	s.routes()
	return s
}

// routes registers every API route: one line per resource file.
func (s *Server) routes() {
	s.healthRoutes()
	s.authRoutes()
	s.userRoutes()
	s.notificationRoutes()
	s.dashboardRoutes()
	s.projectRoutes()
	s.envRoutes()
	s.deploymentRoutes()
	s.triggerRoutes()
	s.githubRoutes()
	s.webhookRoutes()
	s.galleryRoutes()
	s.domainRoutes()
	s.previewAccessRoutes()

	// Anything else under /api is a JSON 404 (or 405 for a known path).
	s.mux.HandleFunc("/api/", s.handleAPINotFound)
	s.mux.HandleFunc("/api", s.handleAPINotFound)
}

// Shutdown tells long-lived handlers (event streams) to finish: call it
// when the http.Server starts shutting down (http.Server.RegisterOnShutdown).
// It is safe to call more than once.
func (s *Server) Shutdown() { s.closeOnce.Do(func() { close(s.closing) }) }

// Closing returns a channel closed by Shutdown. Streaming handlers select
// on it next to r.Context().Done() and return when it closes.
func (s *Server) Closing() <-chan struct{} { return s.closing }

// ServeHTTP logs the request and recovers from panics, then hands every
// host but the public one to LiveHandler (live sites, custom domains, and
// the edge's 404 for names it does not know), and the public host's
// requests to /api (the API) or the web app, with the security headers
// and a body bounded by BodyTimeout. A request head over MaxHeaderBytes is
// answered 431 (the JSON envelope under /api), and an API path that is not
// clean (/api/./x, /api//x) 400, where net/http would answer in plain text
// (its 431, ServeMux's 307).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rw := &responseWriter{ResponseWriter: w, status: http.StatusOK}
	defer func() { s.logRequest(r, rw, start) }()
	defer s.recoverPanic(rw, r)

	public := s.isPublicHost(hostName(r.Host))
	api := public && (r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/"))
	if headBytes(r) > MaxHeaderBytes {
		headTooLarge(rw, api)
		return
	}
	if !public {
		if s.NoEdge {
			misdirected(rw, false, "This server serves no live sites or apps (GANTRY_ROLES leaves out edge): send the live domain's traffic to the servers with the edge role")
			return
		}
		s.LiveHandler.ServeHTTP(rw, r)
		return
	}
	if s.NoAPI && r.URL.Path != "/api/health" {
		misdirected(rw, api, "This server serves no API or web app (GANTRY_ROLES leaves out api): send the public host's traffic to the servers with the api role")
		return
	}
	r = deadline.Body(rw, r, s.BodyTimeout)
	setSecurityHeaders(rw.Header())
	if api {
		rw.Header().Set("Cache-Control", "no-store")
		if err := checkRequestText(r); err != nil {
			s.writeError(rw, r, err)
			return
		}
		if c := cleanPath(r.URL.Path); c != r.URL.Path {
			s.writeError(rw, r, gantry.Errorf(gantry.EINVALID,
				"The path %s is not in its plain form (no //, . or .. segments): call %s", r.URL.Path, c))
			return
		}
		s.mux.ServeHTTP(rw, r)
		return
	}
	s.spaOnce.Do(func() { s.spa = newSPAHandler(s.Web) })
	s.spa.ServeHTTP(rw, r)
}

// MaxHeaderBytes is the largest request head (request line and headers)
// Gantry answers. The http.Server reads heads up to ReadHeaderBytes, so
// that ServeHTTP, not net/http, refuses the ones in between: net/http's
// own 431 is plain text and knows no path.
const MaxHeaderBytes = 64 << 10

// ReadHeaderBytes is the http.Server's MaxHeaderBytes: a head past it is
// cut off by net/http itself (its plain-text 431) before its path is read.
const ReadHeaderBytes = 1 << 20

// headBytes is about the size of r's head as it arrived: the request line
// and every header line (net/http counts the same way, give or take the
// spaces it trims).
func headBytes(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4 + len(r.Host) + 8
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// headTooLarge answers a head over MaxHeaderBytes: 431 with the JSON
// envelope for the API, in plain text otherwise (as net/http would), and
// the connection closed.
func headTooLarge(w http.ResponseWriter, api bool) {
	w.Header().Set("Connection", "close")
	if !api {
		http.Error(w, "431 Request Header Fields Too Large", http.StatusRequestHeaderFieldsTooLarge)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeEnvelope(w, http.StatusRequestHeaderFieldsTooLarge, envelope{Success: false,
		Message: "The request's headers are larger than 64 KiB: send fewer or shorter headers (cookies included)"})
}

// cleanPath is the path ServeMux would redirect p to: p without empty, "."
// and ".." segments, its trailing slash kept.
func cleanPath(p string) string {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// checkRequestText refuses an API call whose decoded path or any query
// parameter (name or value) holds control or invisible characters or
// invalid UTF-8 (gantry.ValidateRequestPath, gantry.ValidateQueryParam):
// ids and searches reach the database, and PostgreSQL refuses NUL. Each
// parameter's own rules (lengths, values) are its handler's.
func checkRequestText(r *http.Request) error {
	if err := gantry.ValidateRequestPath(r.URL.Path); err != nil {
		return err
	}
	for name, values := range r.URL.Query() {
		for _, v := range values {
			if err := gantry.ValidateQueryParam(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// hostName returns the host of a Host header, lowercased, without port and
// trailing dot.
func hostName(hostport string) string {
	host := hostport
	// SplitHostPort's error for a Host without a port is an allocation;
	// the edge's loops look up every request's Host.
	if strings.IndexByte(hostport, ':') >= 0 {
		if h, _, err := net.SplitHostPort(hostport); err == nil {
			host = h
		}
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// IsLiveHost reports whether a Host header names a live site, as
// ServeHTTP decides it (for the edge's event loop).
func (s *Server) IsLiveHost(hostport string) bool { return s.isLiveHost(hostport) }

// isLiveHost reports whether a Host header names <sub>.<LiveDomain> (and
// not the public host itself).
func (rp requestPart) isLiveHost(hostport string) bool {
	s := rp.s
	host := hostName(hostport)
	// (The loopback aliases of the public host end in no domain's suffix.)
	if s.LiveDomain == "" || host == s.PublicHost {
		return false
	}
	// host ends with "." + LiveDomain, with something before it.
	n := len(host) - len(s.LiveDomain)
	return n >= 2 && host[n-1] == '.' && host[n:] == s.LiveDomain
}

// isPublicHost reports whether host (hostName's form) is PublicHost, or,
// when PublicHost is a loopback name, another loopback name.
func (rp requestPart) isPublicHost(host string) bool {
	s := rp.s
	if host == "" || s.PublicHost == "" {
		return false
	}
	return host == s.PublicHost || (isLoopbackName(s.PublicHost) && isLoopbackName(host))
}

// isLoopbackName reports whether host is "localhost" or a loopback IP
// literal (127.0.0.0/8, ::1; brackets allowed).
func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	if host == "" || host[0] != '[' && host[0] != ':' && (host[0] < '0' || host[0] > '9') {
		return false // not an IP literal (and no parse error to allocate)
	}
	ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return err == nil && ip.IsLoopback()
}

// setSecurityHeaders sets the headers every public-host answer carries: a
// Content-Security-Policy that allows only the app's own scripts, styles
// (inline styles too) and API, images from itself, data: and https:, and
// no framing; no MIME sniffing; and a referrer cut to the origin across
// sites.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: https:; style-src 'self' 'unsafe-inline'; "+
		"connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	h.Set("X-Frame-Options", "DENY")
}

// clientIP returns the address a request came from: the connection's peer,
// or with TrustProxy the last X-Forwarded-For entry when it is an IP.
func (rp requestPart) clientIP(r *http.Request) string {
	s := rp.s
	var xff string
	if v := r.Header.Values("X-Forwarded-For"); len(v) > 0 {
		xff = v[len(v)-1]
	}
	peer, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		peer = r.RemoteAddr
	}
	return s.ClientIP(peer, xff)
}

// ClientIP returns the client address of a request from its peer's IP and
// its last X-Forwarded-For header value (xff, "" for none): the peer, or
// with TrustProxy the last entry of xff when it is an IP. The edge's event
// loops log with it too.
func (s *Server) ClientIP(peer, xff string) string {
	if s.TrustProxy && xff != "" {
		if i := strings.LastIndexByte(xff, ','); i >= 0 {
			xff = xff[i+1:]
		}
		if ip := net.ParseIP(strings.TrimSpace(xff)); ip != nil {
			return ip.String()
		}
	}
	return peer
}

// rateKey returns the key rate limits count a client under: its IPv4
// address, or the /64 network of its IPv6 address (one host usually holds a
// whole /64).
func rateKey(ip string) string {
	parsed := net.ParseIP(ip)
	if parsed == nil || parsed.To4() != nil {
		return ip
	}
	return parsed.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// The API's handlers are grouped by what they serve, each group a type
// that embeds the Server (its services, limits and helpers) and is made by
// the group's <resource>Routes: accounts (sign-up, sessions, profile,
// notifications, dashboard), deployments (and their triggers), projects
// (with their environment and custom domains), GitHub (connect and
// webhooks), Discover, and preview access.
type (
	accountAPI    struct{ *Server }
	deploymentAPI struct{ *Server }
	projectAPI    struct{ *Server }
	githubAPI     struct{ *Server }
	galleryAPI    struct{ *Server }
	previewAPI    struct{ *Server }
)

// misdirected answers 421 Misdirected Request with msg: the JSON
// envelope under /api (api), plain text elsewhere.
func misdirected(w http.ResponseWriter, api bool, msg string) {
	if api {
		writeEnvelope(w, http.StatusMisdirectedRequest, envelope{Message: msg})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusMisdirectedRequest)
	io.WriteString(w, msg+"\n")
}
