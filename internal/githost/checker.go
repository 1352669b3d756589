package githost

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/netpolicy"
)

// Checker decides which hosts Gantry may contact on a user's behalf. A host
// is refused when any address it resolves to is restricted
// (netpolicy.Restricted: loopback, private, link-local including the cloud
// metadata services, unspecified, multicast, shared (CGNAT), documentation,
// benchmarking or otherwise reserved, the list the sandbox's network rules
// use too), and when any is one of the machine's own addresses
// (netpolicy.HostAddrs: a VPS's public address leads to its own services as
// 127.0.0.1 does, and the answers would tell a user which ports are open),
// unless the host, exactly as written in the URL, is on the allow list. An allow-listed IP lets through URLs
// that name that IP, not host names that happen to resolve to it.
//
// The zero Checker allows nothing private and uses net.DefaultResolver.
type Checker struct {
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver *net.Resolver

	allow []allowEntry
}

type allowEntry struct {
	host   string       // canonical name or IP; "" for a prefix entry
	port   string       // "" for any port
	prefix netip.Prefix // valid for CIDR entries such as 10.20.0.0/16
}

// NewChecker returns a Checker that also allows the given hosts. Entries are
// host names ("git.campus.edu"), IPs ("127.0.0.1", "::1"), either with a port
// ("127.0.0.1:8080", "[::1]:3000") to allow only that port, or CIDR prefixes
// ("10.20.0.0/16"). Empty entries are ignored; names are case-insensitive.
func NewChecker(allow ...string) *Checker {
	c := &Checker{}
	c.Allow(allow...)
	return c
}

// Allow adds entries (in NewChecker's syntax) to the allow list. It must not
// be called while c is in use.
func (c *Checker) Allow(entries ...string) {
	for _, e := range entries {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			c.allow = append(c.allow, allowEntry{prefix: p.Masked()})
			continue
		}
		if h, port, err := net.SplitHostPort(e); err == nil {
			c.allow = append(c.allow, allowEntry{host: canonicalName(h), port: port})
			continue
		}
		c.allow = append(c.allow, allowEntry{host: canonicalName(e)})
	}
}

// ParseAllowHosts splits the comma-separated GANTRY_GIT_ALLOW_HOSTS value.
func ParseAllowHosts(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// canonicalName lowercases a host, strips brackets and a trailing dot, and
// writes IPs in their canonical form.
func canonicalName(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Unmap().String()
	}
	return h
}

// Allowed reports whether host (a name or IP, as written in the URL) with
// port is on the allow list.
func (c *Checker) Allowed(host, port string) bool {
	h := canonicalName(host)
	ip, ipErr := netip.ParseAddr(h)
	for _, e := range c.allow {
		if e.prefix.IsValid() {
			if ipErr == nil && e.prefix.Contains(ip) {
				return true
			}
			continue
		}
		if e.host == h && (e.port == "" || e.port == port) {
			return true
		}
	}
	return false
}

// errHostNotAllowed is the message for a host that resolves to a restricted
// address.
func errHostNotAllowed(host string) error {
	return gantry.Errorf(gantry.EINVALID, "Host not allowed: %s resolves to a private address", shown(host))
}

// errHostIsServer is the message for a host that resolves to one of the
// machine's own addresses.
func errHostIsServer(host string) error {
	return gantry.Errorf(gantry.EINVALID, "Host not allowed: %s is this server's own address", shown(host))
}

// refused returns the error for contacting ip on behalf of host, or nil: ip
// is restricted, or one of the machine's own addresses (own, read once per
// check).
func refused(host string, ip netip.Addr, own []netip.Addr) error {
	ip = ip.Unmap()
	if netpolicy.Restricted(ip) {
		return errHostNotAllowed(host)
	}
	if slices.Contains(own, ip.WithZone("")) {
		return errHostIsServer(host)
	}
	return nil
}

// ownAddrs returns the machine's own addresses; when they cannot be read,
// an error refusing the contact (fail closed).
func ownAddrs(host string) ([]netip.Addr, error) {
	own, err := netpolicy.HostAddrs()
	if err != nil {
		return nil, gantry.Errorf(gantry.EUNAVAILABLE, "Could not check %s against this server's own addresses; try again later", shown(host))
	}
	return own, nil
}

// shown shows a host or a repository URL in a message: as it is when it
// is short (both were checked by ParseRepoURL: no spaces or controls), cut
// by gantry.Quote to QuoteMaxLen characters otherwise, so a message never
// repeats more of what a client sent.
func shown(h string) string {
	if len(h) <= gantry.QuoteMaxLen {
		return h
	}
	return gantry.Quote(h)
}

// Check resolves host and refuses it when it is not allow-listed and any of
// its addresses is Restricted or one of the machine's own. It returns the addresses to connect to (so a
// second resolution cannot answer differently), or nil for an allow-listed
// host. Resolution failures are EINVALID "Could not resolve host: <host>".
func (c *Checker) Check(ctx context.Context, host, port string) ([]netip.Addr, error) {
	h := canonicalName(host)
	if c.Allowed(h, port) {
		return nil, nil
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return nil, errHostNotAllowed(h)
	}
	own, err := ownAddrs(h)
	if err != nil {
		return nil, err
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		if err := refused(h, ip, own); err != nil {
			return nil, err
		}
		return []netip.Addr{ip.Unmap()}, nil
	}
	r := c.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", h)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, gantry.Errorf(gantry.EINVALID, "Could not resolve host: %s", shown(h))
	}
	if len(addrs) == 0 {
		return nil, gantry.Errorf(gantry.EINVALID, "Could not resolve host: %s", shown(h))
	}
	for i, a := range addrs {
		if err := refused(h, a, own); err != nil {
			return nil, err
		}
		addrs[i] = a.Unmap()
	}
	return addrs, nil
}

// DialContext dials addr like net.Dialer, resolving names with Resolver,
// but unless addr's host is allow-listed, a Control hook refuses every
// connection whose dialed IP is Restricted or one of the machine's own
// addresses. Checking the IP actually dialed (rather than an earlier DNS
// answer) defeats DNS rebinding; redirects are covered because every hop
// dials through here.
func (c *Checker) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Resolver: c.Resolver}
	if !c.Allowed(host, port) {
		name := canonicalName(host)
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return err
			}
			own, err := ownAddrs(name)
			if err != nil {
				return err
			}
			return refused(name, ap.Addr(), own)
		}
	}
	return d.DialContext(ctx, network, addr)
}

// HTTPClient returns an http.Client for user-supplied URLs: it dials through
// DialContext, ignores proxy environment variables, follows at most 5
// redirects and only to http(s) URLs without credentials, and gives up after
// timeout (0 means no overall timeout; use a context instead).
func (c *Checker) HTTPClient(timeout time.Duration) *http.Client {
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           c.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          20,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{Transport: t, Timeout: timeout, CheckRedirect: checkRedirect}
}

// checkRedirect refuses redirects to other schemes, to URLs carrying
// credentials, and chains longer than 5. Addresses are checked when dialing.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return gantry.Errorf(gantry.EINVALID, msgOnlyHTTP)
	}
	if req.URL.User != nil {
		return gantry.Errorf(gantry.EINVALID, msgCredentials)
	}
	return nil
}
