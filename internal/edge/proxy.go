package edge

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantryhq/gantry/internal/deadline"
)

// Defaults of ProxyConfig.
const (
	DefaultMaxBodySize           = 32 << 20 // bytes
	DefaultResponseHeaderTimeout = 60 * time.Second
	DefaultIdleConnTimeout       = 90 * time.Second
	DefaultDialTimeout           = 5 * time.Second
	DefaultUploadTimeout         = 5 * time.Minute
)

// ProxyConfig says how the edge proxies requests to server apps (sites
// with a ProxyTarget). Zero fields take the defaults above.
type ProxyConfig struct {
	// MaxBodySize is the largest request body passed to an app, in bytes
	// (default 32 MiB); a larger one is answered 413.
	MaxBodySize int64
	// ResponseHeaderTimeout is how long an app may take to start its answer
	// (default 60 s); after it the request is answered 504. Once the answer
	// has started it may stream for as long as it likes (SSE, downloads).
	ResponseHeaderTimeout time.Duration
	// IdleConnTimeout closes keep-alive connections to an app that stayed
	// unused this long (default 90 s).
	IdleConnTimeout time.Duration
	// DialTimeout bounds connecting to an app (default 5 s).
	DialTimeout time.Duration
	// UploadTimeout is how long the whole body of a request to a live site
	// may take to arrive (default 5 min), on the net/http path (from the
	// handler's start) and on the event loops (from the request's first
	// byte). A body still arriving then is answered 408 with
	// the connection closed (net/http), or its connection is closed (loops).
	// Once the body is in, the answer may take as long as the app likes.
	UploadTimeout time.Duration
	// TrustForwarded keeps the X-Forwarded-For, -Host and -Proto headers a
	// request arrived with (the client address is appended to the first),
	// for an edge behind a reverse proxy that sets them. Otherwise they are
	// replaced with what the edge itself sees.
	TrustForwarded bool
}

// proxyState is the Edge's reverse proxy: one ReverseProxy and its
// transport (appTransport, with a pool of connections per app address). Its
// zero value is ready: both are made on first use.
type proxyState struct {
	once    sync.Once
	cfg     ProxyConfig
	rp      *httputil.ReverseProxy
	buffers bufferPool
}

// ConfigureProxy sets how server apps are proxied. Call it before the edge
// serves its first request; later calls have no effect.
func (e *Edge) ConfigureProxy(c ProxyConfig) {
	e.proxy.once.Do(func() { e.initProxy(c) })
}

func (e *Edge) initProxy(c ProxyConfig) {
	if c.MaxBodySize <= 0 {
		c.MaxBodySize = DefaultMaxBodySize
	}
	if c.ResponseHeaderTimeout <= 0 {
		c.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
	}
	if c.IdleConnTimeout <= 0 {
		c.IdleConnTimeout = DefaultIdleConnTimeout
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.UploadTimeout <= 0 {
		c.UploadTimeout = DefaultUploadTimeout
	}
	p := &e.proxy
	p.cfg = c
	// upgrade carries WebSocket and other Upgrade requests; appTransport
	// every other one.
	upgrade := &http.Transport{
		Proxy:                 nil, // never through the platform's own HTTP proxy settings
		DialContext:           (&net.Dialer{Timeout: c.DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          4096,
		MaxIdleConnsPerHost:   1024,
		IdleConnTimeout:       c.IdleConnTimeout,
		ResponseHeaderTimeout: c.ResponseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true, // pass the app's encodings through untouched
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// serveProxy put the app's address in the inbound URL.
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = pr.In.URL.Host
			pr.Out.Host = pr.In.Host // the app sees its public host name
			if !c.TrustForwarded {
				pr.SetXForwarded()
				return
			}
			for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
				if v, ok := pr.In.Header[h]; ok {
					pr.Out.Header[h] = v
				}
			}
			host, proto := pr.Out.Header.Get("X-Forwarded-Host"), pr.Out.Header.Get("X-Forwarded-Proto")
			pr.SetXForwarded()
			if host != "" {
				pr.Out.Header.Set("X-Forwarded-Host", host)
			}
			if proto != "" {
				pr.Out.Header.Set("X-Forwarded-Proto", proto)
			}
		},
		Transport: &appTransport{
			dialer:        net.Dialer{Timeout: c.DialTimeout, KeepAlive: 30 * time.Second},
			headerTimeout: c.ResponseHeaderTimeout,
			idleTimeout:   c.IdleConnTimeout,
			maxIdle:       1024,
			upgrade:       upgrade,
		},
		// FlushInterval 0: answers of known length are written as the
		// server buffers them; event streams (text/event-stream) and answers
		// of unknown length (chunked) are flushed on every write.
		BufferPool:   &p.buffers,
		ErrorHandler: e.proxyError,
		ErrorLog:     log.New(io.Discard, "", 0), // clients leaving mid-answer are not news
	}
}

// serveProxy passes the request to the server app at target (a loopback
// "host:port") with httputil.ReverseProxy: the Host header is kept,
// X-Forwarded-For, -Host and -Proto are set, WebSocket and other Upgrade
// requests are tunnelled, and event streams and answers of unknown length
// (chunked) are passed on as the app writes them. A body larger than MaxBodySize is answered 413, an app that cannot be
// reached 502, one that does not start its answer in time 504, a body that
// does not arrive within UploadTimeout (see Edge.ServeHTTP) 408, each with a
// Gantry page. Requests are counted per target while they last, for
// Table.Drain.
func (e *Edge) serveProxy(w http.ResponseWriter, r *http.Request, target, sub string) {
	e.proxy.once.Do(func() { e.initProxy(ProxyConfig{}) })
	if t, ok := e.resolver.(*Table); ok {
		defer t.track(target)()
	}
	delete(w.Header(), "X-Content-Type-Options") // the app's headers are its own
	if r.ContentLength > e.proxy.cfg.MaxBodySize {
		e.page(w, r, http.StatusRequestEntityTooLarge, pageTooLarge, sub+e.suffix)
		return
	}
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Host = target
	r2.URL = &u
	if r.Body != nil && r.Body != http.NoBody {
		r2.Body = http.MaxBytesReader(w, r.Body, e.proxy.cfg.MaxBodySize)
	}
	e.proxy.rp.ServeHTTP(w, r2)
}

// proxyError answers a request the app could not answer.
func (e *Edge) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	host := r.Host
	if sub, ok := e.Subdomain(r.Host); ok {
		host = sub + e.suffix
	}
	var tooLarge *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.Is(err, deadline.ErrSlowBody):
		// Checked before the client's context, which net/http cancelled
		// when the body's read failed: the client is still there.
		w.Header().Set("Connection", "close")
		e.page(w, r, http.StatusRequestTimeout, pageSlowBody, host)
	case r.Context().Err() != nil:
		return // the client left: nobody reads an answer
	case errors.As(err, &tooLarge):
		e.page(w, r, http.StatusRequestEntityTooLarge, pageTooLarge, host)
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		e.page(w, r, http.StatusGatewayTimeout, pageTimeout, host)
	default:
		e.page(w, r, http.StatusBadGateway, pageAppDown, host)
	}
}

// track counts one request proxied to target until the returned function
// is called.
func (t *Table) track(target string) func() {
	v, ok := t.inflight.Load(target)
	if !ok {
		v, _ = t.inflight.LoadOrStore(target, new(atomic.Int64))
	}
	n := v.(*atomic.Int64)
	n.Add(1)
	return func() { n.Add(-1) }
}

// Drain waits until no request is being proxied to target any more (a
// server app its subdomain no longer points at), or ctx ends. It first
// waits a moment for requests that looked the subdomain up just before it
// was switched. Long-lived answers (WebSockets, event streams) keep it
// waiting, so callers bound ctx.
func (t *Table) Drain(ctx context.Context, target string) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	settled := time.Now().Add(100 * time.Millisecond)
	for {
		v, ok := t.inflight.Load(target)
		if !time.Now().Before(settled) && (!ok || v.(*atomic.Int64).Load() == 0) {
			if ok {
				t.inflight.CompareAndDelete(target, v)
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// bufferPool lends the 32 KiB buffers ReverseProxy copies answers with.
type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte {
	if v := b.p.Get(); v != nil {
		return *(v.(*[]byte))
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.p.Put(&buf) }
