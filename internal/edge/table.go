package edge

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Site is what one subdomain serves.
type Site struct {
	// DeploymentID is the deployment the subdomain points at.
	DeploymentID string
	// Dir is the deployment's published folder; nothing outside it is
	// ever served.
	Dir string
	// Status is gantry.DeploymentLive to serve the site; any other value
	// (gantry.DeploymentStopped) answers 503 "This app is stopped".
	Status string
	// SPA makes unknown extension-less paths serve /index.html (client-side
	// routing).
	SPA bool
	// ProxyTarget is the loopback address ("127.0.0.1:PORT") of a server
	// app. When set, every request (any method) is proxied there and Dir
	// and SPA are unused.
	ProxyTarget string
	// App, for a server app, is its request clock and wake state (see
	// Table.App). A live site with App set and no ProxyTarget is a
	// sleeping app: its requests wake it (Edge.ConfigureWake).
	App *AppState
	// Home, for a server app whose home is another replica (issue 26,
	// point 5), is that replica's peer address and HomeNode its node id:
	// every request is forwarded there over the signed hop
	// (Edge.ConfigureHop), and the other fields are unused.
	Home     string
	HomeNode string
	// Fetched, for a site whose files come from the object store, is its
	// use clock (the UnixNano of its last request) for the site cache's
	// eviction; Dir is then a cache folder the edge's SiteFetcher fills
	// on the first request that finds it missing (Edge.ConfigureFetch).
	Fetched *atomic.Int64
}

// Resolver finds the site a subdomain serves. Lookup is called on every
// request and must be fast and safe for concurrent use.
type Resolver interface {
	Lookup(sub string) (Site, bool)
}

// Table is an in-memory Resolver. Readers never lock: every change builds
// a new map and swaps it in atomically, so a request sees either the old
// site or the new one, never a mix. Writers are serialised. The zero value
// is an empty table ready for use.
//
// The Table also keeps each site's folder open (an os.Root, one file
// descriptor per site) so requests need not open it again; Set opens it
// anew — call Set again if a site's folder is replaced on disk — and the
// old one is closed once requests using it are done.
type Table struct {
	mu       sync.Mutex // serialises writers
	sites    atomic.Pointer[map[string]entry]
	inflight sync.Map // server app address → *atomic.Int64 of requests proxied there (proxy.go)
	apps     sync.Map // deployment id → *AppState (sleep.go)
}

// entry is a site and its open folder (nil when it could not be opened;
// requests then open it themselves).
type entry struct {
	site Site
	root *siteRoot
}

var _ Resolver = (*Table)(nil)

// NewTable returns an empty Table.
func NewTable() *Table { return &Table{} }

// Lookup returns the site for subdomain sub.
func (t *Table) Lookup(sub string) (Site, bool) {
	s, _, ok := t.lookupRoot(sub)
	return s, ok
}

// lookupRoot returns the site for sub and its open folder, if any.
func (t *Table) lookupRoot(sub string) (Site, *siteRoot, bool) {
	m := t.sites.Load()
	if m == nil {
		return Site{}, nil, false
	}
	e, ok := (*m)[sub]
	return e.site, e.root, ok
}

// Set points sub at s, replacing what it pointed at.
func (t *Table) Set(sub string, s Site) {
	e := entry{site: s, root: openRoot(s.Dir)}
	t.update(func(m map[string]entry) []*siteRoot {
		old := m[sub].root
		m[sub] = e
		return []*siteRoot{old}
	})
}

// SetIf points sub at s when cond, given what sub points at now (the
// zero Site and false when nothing), holds, and reports whether it did:
// a compare-and-set for writers racing other writers.
func (t *Table) SetIf(sub string, s Site, cond func(old Site, ok bool) bool) bool {
	e := entry{site: s, root: openRoot(s.Dir)}
	done := false
	t.update(func(m map[string]entry) []*siteRoot {
		old, ok := m[sub]
		if !cond(old.site, ok) {
			return []*siteRoot{e.root}
		}
		done = true
		m[sub] = e
		return []*siteRoot{old.root}
	})
	return done
}

// Reopen opens again the folder of every site served from dir (it was
// filled or removed on disk): requests then use the new folder, or find
// none and fetch it.
func (t *Table) Reopen(dir string) {
	t.update(func(m map[string]entry) []*siteRoot {
		var closed []*siteRoot
		for sub, e := range m {
			if e.site.Dir == dir && e.site.ProxyTarget == "" {
				closed = append(closed, e.root)
				m[sub] = entry{site: e.site, root: openRoot(dir)}
			}
		}
		return closed
	})
}

// Delete removes sub; its requests then get the "no app" page.
func (t *Table) Delete(sub string) {
	t.update(func(m map[string]entry) []*siteRoot {
		old := m[sub].root
		delete(m, sub)
		return []*siteRoot{old}
	})
}

// Replace makes sites the whole table (at start-up).
func (t *Table) Replace(sites map[string]Site) {
	m := make(map[string]entry, len(sites))
	for sub, s := range sites {
		m[sub] = entry{site: s, root: openRoot(s.Dir)}
	}
	t.mu.Lock()
	old := t.sites.Swap(&m)
	t.mu.Unlock()
	if old != nil {
		for _, e := range *old {
			closeRoot(e.root)
		}
	}
}

// Len returns the number of subdomains in the table.
func (t *Table) Len() int {
	m := t.sites.Load()
	if m == nil {
		return 0
	}
	return len(*m)
}

// update applies change to a copy of the map, swaps it in, then closes
// the roots change replaced. A request still using one keeps it usable
// until it is done (os.Root counts its users); a request that picks it up
// after Close reopens the folder.
func (t *Table) update(change func(map[string]entry) []*siteRoot) {
	t.mu.Lock()
	var m map[string]entry
	if old := t.sites.Load(); old != nil {
		m = maps.Clone(*old)
	}
	if m == nil {
		m = map[string]entry{}
	}
	closed := change(m)
	t.sites.Store(&m)
	t.mu.Unlock()
	for _, r := range closed {
		closeRoot(r)
	}
}

func openRoot(dir string) *siteRoot {
	if dir == "" {
		return nil
	}
	r, err := openSiteRoot(dir, true)
	if err != nil {
		return nil
	}
	return r
}

func closeRoot(r *siteRoot) {
	if r != nil {
		_ = r.Close()
	}
}
