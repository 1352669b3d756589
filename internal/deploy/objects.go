package deploy

import (
	"context"
	"errors"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sitecache"
)

// Deployments' files in the object store (GANTRY_OBJECT_STORE;
// internal/sitecache): a site, or the workspace a server app runs from,
// is uploaded after its build and before its go-live, so any replica's
// edge can fetch a site once it is live and a replica taking an app over
// can restore its workspace (sitecache.Remote.Fill); both are deleted
// with their deployment (only the blobs no deployment of the account
// still links to).

// removeTimeout bounds the object store's part of removing a deployment.
const removeTimeout = 2 * time.Minute

// uploadSite uploads d's files when there is an object store: a site's
// published folder, or a server app's stored workspace (a plain one, in
// sandbox mode none, has no manifest and is not shared). It returns why
// d may not go live ("" when it may): the upload failed.
func uploadSite(ctx context.Context, s *storage, d *gantry.Deployment) string {
	if s.Remote == nil {
		return ""
	}
	defer addPhase(&d.BuildInfo, "upload", time.Now())
	kind, dir := kindOf(d), s.SiteDir(d.ID)
	if IsApp(d) {
		dir = sandbox.FilesDir(s.WorkDir(d.ID))
	}
	err := guarded(ctx, s, d.UserID, false, func() error {
		return s.Remote.Publish(ctx, kind, blobStore(s, d.UserID), d.UserID, d.ID, dir)
	})
	if err == nil || IsApp(d) && errors.Is(err, sitecache.ErrNoManifest) {
		return ""
	}
	s.logger().Error("upload files", "deployment", d.ID, "err", err)
	if errors.Is(err, sitecache.ErrNoManifest) {
		return "Publishing failed: " + err.Error()
	}
	what := "site's files"
	if IsApp(d) {
		what = "app's files"
	}
	return "Publishing failed: the " + what + " could not be stored in the object store, so no other server could serve them. " +
		"Nothing went live; deploy again once the object store is reachable (the platform's operators see the error in the server log)"
}

// guarded runs f under userID's object store lock (store.Blobs.Guard):
// shared for an upload, which sends only the blobs the store lacks,
// exclusive for a removal, which deletes the blobs no deployment links
// to. The upload's blobs are recorded before it starts (recordFiles), so
// a removal either sees them linked or deletes them before the upload
// looks, which then sends them again.
func guarded(ctx context.Context, s *storage, userID string, exclusive bool, f func() error) error {
	release, err := s.Store.Blobs().Guard(ctx, userID, exclusive)
	if err != nil {
		return err
	}
	defer release()
	return f()
}

// kindOf is what d's files are in the object store.
func kindOf(d *gantry.Deployment) sitecache.Kind {
	if IsApp(d) {
		return sitecache.App
	}
	return sitecache.Site
}

// removeRemote deletes d's files from the object store (after its blob
// records were dropped, so its blobs no other deployment links to go
// with it) and from this replica's site cache.
func removeRemote(s *storage, d *gantry.Deployment) {
	if s.SiteCache != nil {
		s.SiteCache.Drop(d.ID)
	}
	if s.Remote == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	unused := func(account string, names []string) ([]string, error) {
		return s.Store.Blobs().Unused(ctx, account, names)
	}
	err := guarded(ctx, s, d.UserID, true, func() error { return s.Remote.Remove(ctx, kindOf(d), d.ID, unused) })
	if err != nil {
		s.logger().Error("remove files from the object store", "deployment", d.ID, "err", err)
	}
}

// siteMissing reports whether d, a static site's deployment, has no
// published files to serve again: none here and, with an object store,
// none there either (a replica may restart or promote a site another
// built). An unreachable store is an error that says so.
func siteMissing(ctx context.Context, s *Service, d *gantry.Deployment) (bool, error) {
	if IsApp(d) || fileExists(s.SiteDir(d.ID)) {
		return false, nil
	}
	if s.Remote == nil {
		return true, nil
	}
	ok, err := s.Remote.Has(ctx, sitecache.Site, d.ID)
	if err != nil {
		s.logger().Error("object store: look up a site", "deployment", d.ID, "err", err)
		return false, gantry.Errorf(gantry.EUNAVAILABLE, "The site's files are kept in the object store, which cannot be reached right now: try again in a minute")
	}
	return !ok, nil
}

// fetchThenRoute applies rt, a live site's route from the change feed
// whose files this replica lacks: it fetches them into the site cache
// first, meanwhile serving what the subdomain served (the site's previous
// version), and then switches, so a go-live elsewhere never makes this
// edge answer 404 or hold requests for the fetch. A subdomain this
// replica has not served yet is switched at once (its first requests
// fetch). A failed fetch switches anyway: requests try again, and answer
// 503 while the object store is down, rather than an old version for
// good.
func fetchThenRoute(s *Service, rt *gantry.Route) {
	if !routedBefore(s.release, rt) {
		s.release.route(rt)
		return
	}
	go func() {
		id := rt.Active.ID
		ctx, cancel := context.WithTimeout(context.Background(), sitecache.FetchTimeout)
		defer cancel()
		if err := s.SiteCache.Fetch(ctx, id, s.SiteCache.Path(id)); err != nil {
			s.logger().Warn("change feed: a live site's files could not be fetched; switching to it anyway",
				"subdomain", rt.Subdomain, "deployment", id, "err", err)
		}
		s.release.route(rt)
	}()
}

// routedBefore reports whether r applied a route of rt's key already.
func routedBefore(r *release, rt *gantry.Route) bool {
	r.routeMu.Lock()
	defer r.routeMu.Unlock()
	_, ok := r.routed[routeKey(rt)]
	return ok
}
