package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

func TestBuildCaches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ann := storetest.MustCreateUser(t, db, "ann", "Ann")
	bob := storetest.MustCreateUser(t, db, "bob", "Bob")
	p1, _ := storetest.MustCreateApp(t, db, storetest.App{Owner: ann, Name: "one"})
	p2, _ := storetest.MustCreateApp(t, db, storetest.App{Owner: ann, Name: "two"})
	p3, _ := storetest.MustCreateApp(t, db, storetest.App{Owner: bob, Name: "three"})
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, c := range []struct {
		id    string
		bytes int64
	}{{p1.ID, 100}, {p2.ID, 200}, {p3.ID, 400}} {
		if err := db.SetBuildCache(ctx, c.id, c.bytes, at.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetBuildCache(ctx, "no-such-project", 1, at); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Errorf("got %v for a missing project, want ENOTFOUND", err)
	}
	// p1 used again: p2 is the least recently used.
	if err := db.TouchBuildCache(ctx, p1.ID, at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, err := db.BuildCaches(ctx, ann.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []gantry.BuildCache{
		{ProjectID: p2.ID, UserID: ann.ID, Bytes: 200, UsedAt: at.Add(time.Minute)},
		{ProjectID: p1.ID, UserID: ann.ID, Bytes: 100, UsedAt: at.Add(time.Hour)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if u := mustUsage(t, db, ann.ID); u.Used != u.Files+u.Logs {
		t.Errorf("got usage %+v, want the caches not counted", u)
	}
	cacheBytes := func(userID string) int64 {
		t.Helper()
		cs, err := db.BuildCaches(ctx, userID)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, c := range cs {
			n += c.Bytes
		}
		return n
	}
	// A new size replaces the old; 0 forgets; deleting the project does too.
	if err := db.SetBuildCache(ctx, p1.ID, 150, at.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := cacheBytes(ann.ID); n != 350 {
		t.Errorf("got %d bytes of caches, want 350", n)
	}
	if err := db.SetBuildCache(ctx, p2.ID, 0, at); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteProject(ctx, ann.ID, p1.ID); err != nil {
		t.Fatal(err)
	}
	if n := cacheBytes(ann.ID); n != 0 {
		t.Errorf("got %d bytes of caches after forgetting both, want 0", n)
	}
	if n := cacheBytes(bob.ID); n != 400 {
		t.Errorf("bob's caches: %d", n)
	}
}

// The platform-wide list is every account's, least recently used first;
// an eviction forgets the caches and is remembered until the project goes.
func TestBuildCacheRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ann := storetest.MustCreateUser(t, db, "ann", "Ann")
	bob := storetest.MustCreateUser(t, db, "bob", "Bob")
	p1, _ := storetest.MustCreateApp(t, db, storetest.App{Owner: ann, Name: "one"})
	p2, _ := storetest.MustCreateApp(t, db, storetest.App{Owner: bob, Name: "two"})
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := db.SetBuildCache(ctx, p1.ID, 100, at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.SetBuildCache(ctx, p2.ID, 200, at); err != nil {
		t.Fatal(err)
	}
	recs := db.BuildCacheRecords()
	all, err := recs.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ProjectID != p2.ID || all[1].ProjectID != p1.ID || all[0].UserID != bob.ID {
		t.Fatalf("got %+v, want bob's then ann's", all)
	}
	if when, err := recs.Eviction(ctx, p2.ID); err != nil || !when.IsZero() {
		t.Fatalf("never evicted: got %v, %v", when, err)
	}
	if err := recs.Evicted(ctx, p2.ID, at.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := recs.Evicted(ctx, "no-such-project", at); err != nil {
		t.Errorf("a gone project: %v", err)
	}
	if when, err := recs.Eviction(ctx, p2.ID); err != nil || !when.Equal(at.Add(2*time.Hour)) {
		t.Errorf("got eviction %v, %v", when, err)
	}
	if all, _ = recs.All(ctx); len(all) != 1 || all[0].ProjectID != p1.ID {
		t.Errorf("left %+v, want ann's only", all)
	}
	if err := db.DeleteProject(ctx, bob.ID, p2.ID); err != nil {
		t.Fatal(err)
	}
	if when, err := recs.Eviction(ctx, p2.ID); err != nil || !when.IsZero() {
		t.Errorf("the eviction outlived its project: %v, %v", when, err)
	}
}

func TestDeploymentDiagnosis(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := storetest.MustCreateUser(t, db, "ann", "Ann")
	_, d := storetest.MustCreateApp(t, db, storetest.App{Owner: u, Name: "one", Status: gantry.DeploymentFailed})
	got, err := db.FindDeployment(ctx, "", d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Diagnosis != nil {
		t.Errorf("a new deployment has diagnosis %+v", got.Diagnosis)
	}
	diag := &gantry.Diagnosis{Title: "The build ran out of time", Detail: "Make the build command one that ends.", Lines: []int64{4, 7}}
	if err := db.SetDeploymentDiagnosis(ctx, d.ID, diag); err != nil {
		t.Fatal(err)
	}
	if got, err = db.FindDeployment(ctx, u.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Diagnosis, diag) {
		t.Errorf("got %+v, want %+v", got.Diagnosis, diag)
	}
	if err := db.SetDeploymentDiagnosis(ctx, "missing", diag); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Errorf("got %v, want ENOTFOUND", err)
	}
}
