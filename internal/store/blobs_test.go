package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// An account's storage counts each blob once: a redeploy linking the same
// blobs adds only what it keeps outside them, two projects sharing blobs
// pay once, the profile's split puts a shared blob in the first of sites,
// apps and rollbacks, and removing a deployment frees only the blobs no
// other deployment of the account links to (FilesWithout). Another
// account's identical blobs are its own.
func TestBlobsCountOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	alice, bob := mustCreateUser(t, db, "alice"), mustCreateUser(t, db, "bob")
	site := mustCreateProject(t, db, alice.ID, "site")
	app := mustCreateProject(t, db, alice.ID, "app")
	const mb = 1 << 20
	record := func(d *gantry.Deployment, private int64, refs ...gantry.BlobRef) {
		t.Helper()
		size := private
		for _, r := range refs {
			size += r.Bytes
		}
		if err := db.Blobs().Record(ctx, d.ID, refs, size); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := gantry.BlobRef{Hash: "aa", Bytes: 100 * mb}, gantry.BlobRef{Hash: "bb", Bytes: 10 * mb}, gantry.BlobRef{Hash: "cc", Bytes: 1 * mb}

	s1 := mustBuilt(t, db, site, gantry.DeploymentStopped, 1, false)
	record(s1, 0, a, b)
	s2 := mustBuilt(t, db, site, gantry.DeploymentLive, 1, false)
	record(s2, 4096, a, b) // the same commit again
	if u := mustUsage(t, db, alice.ID); u.Files != 110*mb+4096 {
		t.Errorf("after a redeploy: files %d, want %d (each blob once)", u.Files, 110*mb+4096)
	}
	ap := mustBuilt(t, db, app, gantry.DeploymentLive, 1, true)
	record(ap, 5*mb, a, c)
	bobs := mustBuilt(t, db, mustCreateProject(t, db, bob.ID, "bobs"), gantry.DeploymentLive, 1, false)
	record(bobs, 0, a)

	u := mustUsage(t, db, alice.ID)
	if want := int64(110*mb + 4096 + 5*mb + 1*mb); u.Files != want || u.Used != want {
		t.Errorf("files %d, used %d; want %d", u.Files, u.Used, want)
	}
	if u := mustUsage(t, db, bob.ID); u.Files != 100*mb {
		t.Errorf("bob: files %d, want %d (his own copy counted)", u.Files, 100*mb)
	}
	st, err := db.UserStats(ctx, alice.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Storage; got.Sites != 110*mb+4096 || got.Apps != 6*mb || got.Rollbacks != 0 || got.Files != u.Files {
		t.Errorf("split %+v: want sites %d (a, b, s2's own), apps %d (c, its own), rollbacks 0 (all shared)",
			got, 110*mb+4096, 6*mb)
	}

	// Removing the rollback frees nothing (its blobs are linked by s2);
	// removing the app frees c and what it kept of its own.
	for _, tc := range []struct {
		ids  []string
		want int64
	}{
		{nil, u.Files},
		{[]string{s1.ID}, u.Files},
		{[]string{ap.ID}, u.Files - 6*mb},
		{[]string{s1.ID, s2.ID}, 100*mb + 6*mb},
	} {
		got, err := db.Blobs().FilesWithout(ctx, alice.ID, tc.ids)
		if err != nil || got != tc.want {
			t.Errorf("without %v: %d, %v; want %d", tc.ids, got, err, tc.want)
		}
	}

	// A pruned deployment and a forgotten one count nothing.
	if ok, err := db.PruneDeployment(ctx, s1.ID, time.Now()); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := db.Blobs().Forget(ctx, ap.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.SetDeploymentFiles(ctx, ap.ID, 0); err != nil {
		t.Fatal(err)
	}
	if u := mustUsage(t, db, alice.ID); u.Files != 110*mb+4096 {
		t.Errorf("after pruning s1 and removing the app: files %d, want %d", u.Files, 110*mb+4096)
	}
	if err := db.Blobs().Record(ctx, "no-such-deployment", nil, 1); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Errorf("record for a missing deployment: %v, want ENOTFOUND", err)
	}
}

// TestBlobsUnused: of a removed deployment's blobs, Unused keeps those no
// deployment of the same account links to any more; another account
// linking the same blob does not keep it (object keys are per account).
func TestBlobsUnused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	alice, bob := mustCreateUser(t, db, "alice"), mustCreateUser(t, db, "bob")
	site := mustCreateProject(t, db, alice.ID, "site")
	old := mustBuilt(t, db, site, gantry.DeploymentStopped, 1, false)
	cur := mustBuilt(t, db, site, gantry.DeploymentLive, 1, false)
	bobs := mustBuilt(t, db, mustCreateProject(t, db, bob.ID, "bobs"), gantry.DeploymentLive, 1, false)
	for d, hashes := range map[*gantry.Deployment][]string{old: {"shared", "old-only", "bob-too"}, cur: {"shared"}, bobs: {"bob-too"}} {
		var refs []gantry.BlobRef
		for _, h := range hashes {
			refs = append(refs, gantry.BlobRef{Hash: h, Bytes: 4096})
		}
		if err := db.Blobs().Record(ctx, d.ID, refs, 4096); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Blobs().Forget(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	got, err := db.Blobs().Unused(ctx, alice.ID, []string{"shared", "old-only", "bob-too"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "old-only" || got[1] != "bob-too" {
		t.Fatalf("unused %v, want [old-only bob-too]", got)
	}
	if got, err := db.Blobs().Unused(ctx, alice.ID, nil); err != nil || len(got) != 0 {
		t.Fatalf("none asked: %v %v", got, err)
	}
}

// TestBlobsGuard: an account's exclusive object store lock waits for its
// shared holders and they for it; shared holders do not wait for each
// other, nor does another account.
func TestBlobsGuard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	alice, bob := mustCreateUser(t, db, "alice"), mustCreateUser(t, db, "bob")
	g := db.Blobs()
	r1, err := g.Guard(ctx, alice.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := g.Guard(ctx, alice.ID, false) // another upload at once
	if err != nil {
		t.Fatal(err)
	}
	rb, err := g.Guard(ctx, bob.ID, true) // another account's deletion
	if err != nil {
		t.Fatal(err)
	}
	rb()
	got := make(chan func(), 1)
	go func() {
		r, err := g.Guard(ctx, alice.ID, true)
		if err != nil {
			t.Error(err)
			r = func() {}
		}
		got <- r
	}()
	select {
	case <-got:
		t.Fatal("a deletion took the lock while uploads held it")
	case <-time.After(300 * time.Millisecond):
	}
	r1()
	r2()
	var rx func()
	select {
	case rx = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the deletion did not get the lock once the uploads ended")
	}
	up := make(chan func(), 1)
	go func() {
		r, err := g.Guard(ctx, alice.ID, false)
		if err != nil {
			t.Error(err)
			r = func() {}
		}
		up <- r
	}()
	select {
	case <-up:
		t.Fatal("an upload took the lock while a deletion held it")
	case <-time.After(300 * time.Millisecond):
	}
	rx()
	select {
	case r := <-up:
		r()
	case <-time.After(5 * time.Second):
		t.Fatal("the upload did not get the lock once the deletion ended")
	}
}
