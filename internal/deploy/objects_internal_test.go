package deploy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/blobs"
	"github.com/gantryhq/gantry/internal/objstore"
	"github.com/gantryhq/gantry/internal/objstore/s3test"
	"github.com/gantryhq/gantry/internal/sitecache"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// gatedDeletes holds every Delete of blobs until release is closed,
// telling entered when one starts: a removal caught between looking its
// blobs up and deleting them.
type gatedDeletes struct {
	objstore.Store
	entered, release chan struct{}
}

func (g *gatedDeletes) Delete(ctx context.Context, keys ...string) error {
	if len(keys) > 0 && strings.HasPrefix(keys[0], "blobs/") {
		close(g.entered)
		<-g.release
	}
	return g.Store.Delete(ctx, keys...)
}

// TestRemovalSparesABlobAnUploadReuses: a deployment's removal finds a
// blob no deployment links to any more and is about to delete it while a
// new deployment of the account, linking the same file, uploads: the
// upload waits for the removal (the account's object store lock) and then
// sends the blob again, so the new site is whole in the store. Before,
// the upload found the blob still there, sent nothing, and the removal
// deleted it: other replicas answered 503 for the new site.
func TestRemovalSparesABlobAnUploadReuses(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	srv := s3test.Start(t)
	gate := &gatedDeletes{Store: srv.Store("g"), entered: make(chan struct{}), release: make(chan struct{})}
	s := New(Config{SharedConfig: SharedConfig{Store: db, DataDir: t.TempDir()},
		StorageConfig: StorageConfig{Remote: &sitecache.Remote{Store: gate}}})
	user := storetest.MustCreateUser(t, db, "ada", "Ada")
	_, old := storetest.MustCreateApp(t, db, storetest.App{Owner: user, Name: "old", Type: "static"})
	_, cur := storetest.MustCreateApp(t, db, storetest.App{Owner: user, Name: "new", Type: "static"})
	publish := func(d *gantry.Deployment) {
		t.Helper()
		st := blobStore(s.storage, d.UserID)
		w, err := st.Begin()
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(s.SiteDir(d.ID), "index.html")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		e, err := w.Copy(strings.NewReader("the same page"), dst, false)
		if err != nil {
			t.Fatal(err)
		}
		e.Path = "index.html"
		if err := w.WriteManifest(d.ID, []blobs.Entry{e}); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if err := db.Blobs().Record(ctx, d.ID, []gantry.BlobRef{{Hash: e.Blob, Bytes: 4096}}, 4096); err != nil {
			t.Fatal(err)
		}
	}
	publish(old)
	if reason := uploadSite(ctx, s.storage, old); reason != "" {
		t.Fatal(reason)
	}
	// old is removed: its records go, its blob is found unused, and the
	// removal stops just before deleting it.
	if err := db.Blobs().Forget(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	removed := make(chan struct{})
	go func() { removeRemote(s.storage, old); close(removed) }()
	<-gate.entered
	// Meanwhile the new deployment, linking the same file, is recorded
	// and uploads.
	publish(cur)
	uploaded := make(chan string, 1)
	go func() { uploaded <- uploadSite(ctx, s.storage, cur) }()
	time.Sleep(500 * time.Millisecond) // an upload that does not wait ends meanwhile
	close(gate.release)
	<-removed
	select {
	case reason := <-uploaded:
		if reason != "" {
			t.Fatal(reason)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the upload never ended")
	}
	dir := t.TempDir()
	if _, _, err := s.Remote.Fill(ctx, sitecache.Site, cur.ID, dir); err != nil {
		t.Fatalf("the new site in the store after the old one's removal: %v", err)
	}
}
