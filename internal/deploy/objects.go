package deploy

import (
	"context"
	"errors"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/sitecache"
)

// Sites in the object store (GANTRY_OBJECT_STORE; internal/sitecache):
// a site is uploaded after its build and before its go-live, so any
// replica's edge can fetch it once it is live, and deleted with its
// deployment (only the blobs no deployment of the account still links
// to). Server apps' workspaces stay on the replica that built them.

// removeTimeout bounds the object store's part of removing a deployment.
const removeTimeout = 2 * time.Minute

// uploadSite uploads d's published site when there is an object store.
// It returns why d may not go live ("" when it may): the upload failed.
func uploadSite(ctx context.Context, s *storage, d *gantry.Deployment) string {
	if s.Remote == nil || IsApp(d) {
		return ""
	}
	defer addPhase(&d.BuildInfo, "upload", time.Now())
	err := s.Remote.Publish(ctx, blobStore(s, d.UserID), d.UserID, d.ID, s.SiteDir(d.ID))
	if err == nil {
		return ""
	}
	s.logger().Error("upload site", "deployment", d.ID, "err", err)
	reason := "Publishing failed: the site's files could not be stored in the object store, so no server could serve them. " +
		"Nothing went live; deploy again once the object store is reachable (the platform's operators see the error in the server log)"
	if errors.Is(err, sitecache.ErrNoManifest) {
		reason = "Publishing failed: " + err.Error()
	}
	return reason
}

// removeRemote deletes d's site from the object store (after its blob
// records were dropped, so its blobs no other deployment links to go
// with it) and from this replica's site cache.
func removeRemote(s *storage, d *gantry.Deployment) {
	if s.SiteCache != nil {
		s.SiteCache.Drop(d.ID)
	}
	if s.Remote == nil || IsApp(d) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	unused := func(account string, names []string) ([]string, error) {
		return s.Store.Blobs().Unused(ctx, account, names)
	}
	if err := s.Remote.Remove(ctx, d.ID, unused); err != nil {
		s.logger().Error("remove site from the object store", "deployment", d.ID, "err", err)
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
	ok, err := s.Remote.Has(ctx, d.ID)
	if err != nil {
		s.logger().Error("object store: look up a site", "deployment", d.ID, "err", err)
		return false, gantry.Errorf(gantry.EUNAVAILABLE, "The site's files are kept in the object store, which cannot be reached right now: try again in a minute")
	}
	return !ok, nil
}
