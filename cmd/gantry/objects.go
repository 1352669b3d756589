package main

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/gantryhq/gantry/internal/cachesync"
	"github.com/gantryhq/gantry/internal/config"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/objstore"
	"github.com/gantryhq/gantry/internal/sitecache"
)

// openSiteStore opens the object store published sites are shared
// through (GANTRY_OBJECT_STORE) and this replica's cache of them, in
// <data-dir>/site-cache bounded by GANTRY_SITE_CACHE; evicting a site
// reopens its folder in table. Unset: nil, nil (local folders only).
func openSiteStore(ctx context.Context, cfg *config.Config, logger *slog.Logger, table *edge.Table) (*sitecache.Remote, *sitecache.Cache, error) {
	o := cfg.ObjectStore
	if o == nil {
		return nil, nil, nil
	}
	st, err := objstore.New(ctx, objstore.Options{Bucket: o.Bucket, Prefix: o.Prefix, Endpoint: o.Endpoint,
		Region: o.Region, PathStyle: o.PathStyle})
	if err != nil {
		return nil, nil, err
	}
	remote := &sitecache.Remote{Store: st}
	cache, err := sitecache.Open(filepath.Join(cfg.DataDir, "site-cache"), cfg.SiteCache, remote)
	if err != nil {
		return nil, nil, err
	}
	cache.OnEvict = table.Reopen
	// Not fatal: the edge serves what it has while the store is down.
	if _, err := st.Has(ctx, "gantry-probe"); err != nil {
		logger.Warn("object store not reachable: sites not cached here answer 503 and deployments fail until it is", "store", o.String(), "err", err)
	} else {
		logger.Info("object store ready", "store", o.String(), "site_cache_bytes", cfg.SiteCache, "cached_bytes", cache.Bytes())
	}
	return remote, cache, nil
}

// cacheSync keeps build caches in the same object store as the sites
// (nil without one).
func cacheSync(remote *sitecache.Remote) *cachesync.Sync {
	if remote == nil {
		return nil
	}
	return &cachesync.Sync{Store: remote.Store}
}
