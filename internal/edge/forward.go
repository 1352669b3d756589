package edge

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"syscall"
	"time"

	"github.com/gantryhq/gantry/internal/peer"
)

// forwarder carries requests for server apps whose home is another
// replica (Site.Home) to that replica's peer port over the signed hop
// (internal/peer): one ReverseProxy with its own keep-alive pool per home,
// the Host header and the client's forwarded headers kept, the hop's
// headers signed last. A request that itself arrived over the hop is
// never forwarded again.
type forwarder struct {
	e   *Edge
	hop *peer.Hop
	rp  *httputil.ReverseProxy
}

// homeKey carries the home node's id from forward to the Rewrite.
type homeKey struct{}

// ConfigureHop makes the edge forward requests for apps homed on other
// replicas over h. Call it before the edge serves its first request;
// without it such requests are answered 503.
func (e *Edge) ConfigureHop(h *peer.Hop) {
	e.proxy.once.Do(func() { e.initProxy(ProxyConfig{}) })
	c := e.proxy.cfg
	f := &forwarder{e: e, hop: h}
	f.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = pr.In.URL.Host
			pr.Out.Host = pr.In.Host
			// The home's edge sets (or, trusting them, keeps) these as it
			// would for a request of its own.
			for _, k := range [...]string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
				if v, ok := pr.In.Header[k]; ok {
					pr.Out.Header[k] = v
				}
			}
			node, _ := pr.In.Context().Value(homeKey{}).(string)
			f.hop.Sign(pr.Out, node, pr.In.RemoteAddr, pr.In.TLS != nil)
		},
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: c.DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:          4096,
			MaxIdleConnsPerHost:   1024,
			IdleConnTimeout:       c.IdleConnTimeout,
			ResponseHeaderTimeout: c.ResponseHeaderTimeout,
			ExpectContinueTimeout: time.Second,
			DisableCompression:    true,
		},
		BufferPool:   &e.proxy.buffers,
		ErrorHandler: f.failed,
		ErrorLog:     log.New(io.Discard, "", 0),
	}
	e.hop = f
}

// forward passes r for sub to the app's home (site.Home, node
// site.HomeNode). Over the hop already, or without a hop configured, it
// answers 503: the app's home moved, and the next try finds its new one.
func (f *forwarder) forward(e *Edge, w http.ResponseWriter, r *http.Request, site Site, sub string) {
	if f == nil || peer.Arrived(r.Context()) || site.HomeNode == f.hop.Node() {
		w.Header().Set("Retry-After", "2")
		e.page(w, r, http.StatusServiceUnavailable, pageHomeUnreachable, sub+e.suffix)
		return
	}
	delete(w.Header(), "X-Content-Type-Options") // the app's headers are its own
	if r.ContentLength > e.proxy.cfg.MaxBodySize {
		e.page(w, r, http.StatusRequestEntityTooLarge, pageTooLarge, sub+e.suffix)
		return
	}
	r2 := r.WithContext(contextWithHome(r, site.HomeNode))
	u := *r.URL
	u.Host = site.Home
	r2.URL = &u
	if r.Body != nil && r.Body != http.NoBody {
		r2.Body = http.MaxBytesReader(w, r.Body, e.proxy.cfg.MaxBodySize)
	}
	f.rp.ServeHTTP(w, r2)
}

// failed answers a forwarded request the home did not: a home that cannot
// be reached (stopped, its takeover under way) is 503 with Retry-After;
// anything else as a local app's failure.
func (f *forwarder) failed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ECONNRESET) {
		host := r.Host
		if sub, ok := f.e.Subdomain(r.Host); ok {
			host = sub + f.e.suffix
		}
		w.Header().Set("Retry-After", "2")
		f.e.page(w, r, http.StatusServiceUnavailable, pageHomeUnreachable, host)
		return
	}
	f.e.proxyError(w, r, err)
}

func contextWithHome(r *http.Request, node string) context.Context {
	return context.WithValue(r.Context(), homeKey{}, node)
}
