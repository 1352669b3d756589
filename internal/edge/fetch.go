package edge

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"
)

// SiteFetcher brings a site's files onto this server: the read-through
// cache of sites kept in the object store (issue 26, point 4).
type SiteFetcher interface {
	// Fetch fills dir, the cache folder of deployment id's site, with its
	// files, or fails (the store is unreachable, an object failed its
	// SHA-256 check). Concurrent calls for one site share one fetch.
	Fetch(ctx context.Context, id, dir string) error
}

// FetchTimeout bounds how long a request waits for its site's files.
const FetchTimeout = 30 * time.Second

// ConfigureFetch sets where the files of sites with Site.Fetched come
// from. Unset, such a site whose folder is missing answers 404 as any
// other.
func (e *Edge) ConfigureFetch(f SiteFetcher) { e.fetcher = f }

// fetchSite makes sure site's folder is here, fetching it when it is
// not, and reports whether the request may be served from it. A fetch
// that fails answers 503 "temporarily unavailable", never 404: the site
// exists, this server only could not load it.
func (e *Edge) fetchSite(w http.ResponseWriter, r *http.Request, site Site, sub string) bool {
	if e.fetcher == nil || dirExists(site.Dir) {
		return true
	}
	ctx, cancel := context.WithTimeout(r.Context(), FetchTimeout)
	defer cancel()
	if err := e.fetcher.Fetch(ctx, site.DeploymentID, site.Dir); err != nil {
		slog.Warn("edge: a site's files could not be fetched", "subdomain", sub, "deployment", site.DeploymentID, "err", err)
		w.Header()["Retry-After"] = []string{"30"}
		e.page(w, r, http.StatusServiceUnavailable, pageFilesUnavailable, sub+e.suffix)
		return false
	}
	if t, ok := e.resolver.(*Table); ok {
		t.Reopen(site.Dir) // later requests use the folder kept open
	}
	return true
}

func dirExists(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}
