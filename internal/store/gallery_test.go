package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

func listAll(t *testing.T, db *store.DB, q gantry.GalleryQuery) *gantry.GalleryPage {
	t.Helper()
	q.Normalize()
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	page, err := db.Gallery().ListPublicDeployments(context.Background(), q)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	return page
}

func names(page *gantry.GalleryPage) []string {
	out := []string{}
	for _, d := range page.Deployments {
		out = append(out, d.Project.Name)
	}
	return out
}

func TestGalleryListsOnlyLivePublicActive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ada := storetest.MustCreateUser(t, db, "ada", "Ada Lovelace")
	gone := storetest.MustCreateUser(t, db, "gone", "Deactivated User")
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	_, live := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "live", Description: "shown", Type: "react", CreatedAt: base})
	_, stopped := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "stopped", Type: "static", Status: gantry.DeploymentStopped})
	_, failed := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "failed", Type: "static", Status: gantry.DeploymentFailed})
	_, building := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "building", Type: "static", Status: gantry.DeploymentBuilding})
	_, inactive := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "inactive", Type: "static", Inactive: true})
	_, private := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "private", Type: "static"})
	if err := db.Exec(ctx, `UPDATE deployments SET is_public = ? WHERE id = ?`, false, private.ID); err != nil {
		t.Fatal(err)
	}
	_, deactivated := storetest.MustCreateApp(t, db, storetest.App{Owner: gone, Name: "deactivated", Type: "static"})
	if err := db.SetUserActive(ctx, gone.ID, false); err != nil {
		t.Fatal(err)
	}
	// An older live deployment of a project whose subdomain serves a newer one.
	p, _ := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "replaced", Type: "vue"})
	older := &gantry.Deployment{ProjectID: p.ID, UserID: ada.ID, Version: "0.9.0", Subdomain: p.Subdomain}
	if err := db.CreateDeployment(ctx, older); err != nil {
		t.Fatal(err)
	}
	older.Status = gantry.DeploymentLive
	if err := db.UpdateDeployment(ctx, older); err != nil {
		t.Fatal(err)
	}

	page := listAll(t, db, gantry.GalleryQuery{Sort: gantry.SortName})
	if got, want := fmt.Sprint(names(page)), "[live replaced]"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if page.Total != 2 || page.Stats != (gantry.GalleryStats{Apps: 2, Developers: 1}) ||
		page.Categories != (gantry.CategoryCounts{All: 2, Frontend: 2}) {
		t.Fatalf("got total %d stats %+v categories %+v", page.Total, page.Stats, page.Categories)
	}
	got := *page.Deployments[0]
	want := gantry.PublicDeployment{ID: live.ID, URL: "http://live.localhost:8080", CreatedAt: base,
		Project: gantry.PublicProject{Name: "live", Description: "shown", Type: "react"},
		User:    gantry.PublicAuthor{FullName: "Ada Lovelace", Username: "ada"}}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}

	for _, id := range []string{stopped.ID, failed.ID, building.ID, inactive.ID, private.ID, deactivated.ID, older.ID, "nope"} {
		if _, err := db.Gallery().RecordView(ctx, id, "visitor:x"); gantry.ErrorCode(err) != gantry.ENOTFOUND || gantry.ErrorMessage(err) != "App not found" {
			t.Errorf("view of %s: got %v, want App not found", id, err)
		}
		if _, _, err := db.Gallery().ToggleLike(ctx, id, "visitor:x"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
			t.Errorf("like of %s: got %v, want not found", id, err)
		}
		if _, err := db.Gallery().LikeStatus(ctx, id, "visitor:x"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
			t.Errorf("like status of %s: got %v, want not found", id, err)
		}
	}
	if _, _, err := db.Gallery().ToggleLike(ctx, live.ID, ""); gantry.ErrorCode(err) != gantry.EINVALID {
		t.Errorf("like without a key: got %v, want invalid", err)
	}
}

func TestToggleLike(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ada := storetest.MustCreateUser(t, db, "ada", "Ada Lovelace")
	_, d := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "app", Type: "react"})

	for i, want := range []struct {
		liker string
		count int
		liked bool
	}{
		{"user:1", 1, true},
		{"visitor:a", 2, true},
		{"user:1", 1, false},
		{"user:1", 2, true},
		{"visitor:a", 1, false},
	} {
		count, liked, err := db.Gallery().ToggleLike(ctx, d.ID, want.liker)
		if err != nil || count != want.count || liked != want.liked {
			t.Fatalf("toggle %d by %s: got %d %v %v, want %d %v", i, want.liker, count, liked, err, want.count, want.liked)
		}
	}
	for liker, want := range map[string]bool{"user:1": true, "visitor:a": false, "visitor:b": false} {
		if got, err := db.Gallery().LikeStatus(ctx, d.ID, liker); err != nil || got != want {
			t.Errorf("status of %s: got %v %v, want %v", liker, got, err, want)
		}
	}
	page := listAll(t, db, gantry.GalleryQuery{Viewer: "user:1"})
	if len(page.Deployments) != 1 || !page.Deployments[0].Liked || page.Deployments[0].LikeCount != 1 {
		t.Fatalf("got %+v, want liked with 1 like", page.Deployments[0])
	}
	if page := listAll(t, db, gantry.GalleryQuery{Viewer: "visitor:a"}); page.Deployments[0].Liked {
		t.Fatal("visitor:a sees its taken-back like")
	}
}

// TestToggleLikeConcurrent toggles from 100 visitors at once, then takes
// back half of the likes at once while the other half like again: the
// count is exact after each round (run it on PostgreSQL too:
// scripts/with-postgres go test ./internal/store/...).
func TestToggleLikeConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ada := storetest.MustCreateUser(t, db, "ada", "Ada Lovelace")
	_, d := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "app", Type: "react"})

	const n = 100
	round := func(likers func(i int) []string) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, 2*n)
		for i := 0; i < n; i++ {
			for _, liker := range likers(i) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, _, err := db.Gallery().ToggleLike(ctx, d.ID, liker); err != nil {
						errs <- err
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("toggle: %v", err)
		}
	}
	count := func() int {
		t.Helper()
		page := listAll(t, db, gantry.GalleryQuery{})
		return page.Deployments[0].LikeCount
	}

	round(func(i int) []string { return []string{fmt.Sprint("visitor:", i)} })
	if got := count(); got != n {
		t.Fatalf("after %d likes: got %d", n, got)
	}
	// Visitors 0…49 take theirs back; 100…149 like for the first time.
	round(func(i int) []string {
		if i < n/2 {
			return []string{fmt.Sprint("visitor:", i), fmt.Sprint("visitor:", n+i)}
		}
		return nil
	})
	if got := count(); got != n {
		t.Fatalf("after the second round: got %d, want %d", got, n)
	}
	for i, want := range map[int]bool{0: false, 49: false, 50: true, 99: true, 100: true, 149: true, 150: false} {
		if got, _ := db.Gallery().LikeStatus(ctx, d.ID, fmt.Sprint("visitor:", i)); got != want {
			t.Errorf("visitor %d: got liked %v, want %v", i, got, want)
		}
	}
	// The same visitor toggling twice at once ends where it began.
	round(func(i int) []string {
		if i == 0 {
			return []string{"visitor:same", "visitor:same"}
		}
		return nil
	})
	if got := count(); got != n {
		t.Fatalf("after a double toggle: got %d, want %d", got, n)
	}
}

func TestRecordView(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ada := storetest.MustCreateUser(t, db, "ada", "Ada Lovelace")
	_, d := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "app", Type: "react"})
	_, other := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "other", Type: "react"})
	t0 := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	now := t0
	db.Now = func() time.Time { return now }

	for _, step := range []struct {
		at      time.Duration
		id      string
		visitor string
		want    bool
	}{
		{0, d.ID, "visitor:a", true},
		{time.Minute, d.ID, "visitor:a", false},
		{59*time.Minute + 59*time.Second, d.ID, "visitor:a", false},
		{time.Minute, d.ID, "visitor:b", true},
		{time.Minute, d.ID, "user:1", true},
		{time.Minute, other.ID, "visitor:a", true},
		{time.Hour, d.ID, "visitor:a", true}, // a full hour after the counted visit
		{time.Hour + time.Minute, d.ID, "visitor:a", false},
		{2*time.Hour + 30*time.Minute, d.ID, "visitor:a", true},
	} {
		now = t0.Add(step.at)
		got, err := db.Gallery().RecordView(ctx, step.id, step.visitor)
		if err != nil || got != step.want {
			t.Fatalf("view by %s at +%s: got %v %v, want %v", step.visitor, step.at, got, err, step.want)
		}
	}
	// 20 visits of one new visitor at once count once.
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := db.Gallery().RecordView(ctx, d.ID, "visitor:burst"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	views := map[string]int{}
	for _, dep := range listAll(t, db, gantry.GalleryQuery{}).Deployments {
		views[dep.Project.Name] = dep.Views
	}
	if views["app"] != 6 || views["other"] != 1 {
		t.Fatalf("got views %v, want app 6 other 1", views)
	}
}

// TestGalleryPlansAgree lists every sort × category × search × page with
// both of SQLite's plans for a page (step through the sort's index; collect
// the matches and sort them) and wants the same answers. It changes a
// package setting, so it does not run in parallel.
func TestGalleryPlansAgree(t *testing.T) {
	db := storetest.MustOpenDB(t)
	users := []*gantry.User{
		storetest.MustCreateUser(t, db, "ada", "Ada Lovelace"),
		storetest.MustCreateUser(t, db, "grace", "Grace Hopper"),
		storetest.MustCreateUser(t, db, "linus", "Linus Torvalds"),
	}
	types := []string{"react", "vue", "python", "static", "vanilla", "nodejs", "nextjs"}
	words := []string{"Garden", "Quiz", "chat", "Map", "garden"}
	now := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		_, d := storetest.MustCreateApp(t, db, storetest.App{Owner: users[i%3], Type: types[i%len(types)],
			Name:        fmt.Sprintf("%s %d", words[i%len(words)], i%7), // repeated names: ties for the name sort
			Description: words[(i+2)%len(words)], CreatedAt: now.Add(-time.Duration(i%9) * time.Hour)})
		for v := 0; v < i%4; v++ {
			db.Gallery().RecordView(ctx, d.ID, fmt.Sprint("visitor:", v))
		}
		for l := 0; l < i%3; l++ {
			db.Gallery().ToggleLike(ctx, d.ID, fmt.Sprint("visitor:", l))
		}
	}
	list := func(q gantry.GalleryQuery, limit int64) string {
		prev := store.SetWalkLimit(limit)
		defer store.SetWalkLimit(prev)
		page := listAll(t, db, q)
		var b strings.Builder
		for _, d := range page.Deployments {
			fmt.Fprintf(&b, "%s %s %d %d\n", d.ID, d.Project.Name, d.Views, d.LikeCount)
		}
		return fmt.Sprintf("total %d %+v %+v\n%s", page.Total, page.Categories, page.Stats, b.String())
	}
	for _, sortBy := range gantry.GallerySorts {
		for _, category := range gantry.GalleryCategories {
			for _, search := range []string{"", "garden", "quiz", "grace", "zzz"} {
				for _, offset := range []int{0, 5, 30} {
					q := gantry.GalleryQuery{Sort: sortBy, Category: category, Search: search, Limit: 7, Offset: offset}
					walked, collected := list(q, 1<<62), list(q, -1)
					if walked != collected {
						t.Fatalf("%+v:\nstepping through the index:\n%s\ncollecting the matches:\n%s", q, walked, collected)
					}
				}
			}
		}
	}
}

// TestGalleryFollowsChanges edits what the gallery shows through the
// store's ordinary methods and wants the listing to follow at once: the
// triggers of migration 00004 keep gallery_apps in step.
func TestGalleryFollowsChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ada := storetest.MustCreateUser(t, db, "ada", "Ada Lovelace")
	bob := storetest.MustCreateUser(t, db, "bob", "Bob Builder")
	p, d := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "Garden", Description: "plants", Type: "react"})
	_, other := storetest.MustCreateApp(t, db, storetest.App{Owner: bob, Name: "Other", Type: "static"})
	shown := func(q gantry.GalleryQuery) string {
		t.Helper()
		var out []string
		for _, d := range listAll(t, db, q).Deployments {
			out = append(out, fmt.Sprintf("%s|%s|%s|%s|%s", d.Project.Name, d.Project.Description, d.Project.Type, d.User.FullName, d.User.Username))
		}
		return strings.Join(out, ", ")
	}
	byName := gantry.GalleryQuery{Sort: gantry.SortName}
	if got := shown(byName); got != "Garden|plants|react|Ada Lovelace|ada, Other||static|Bob Builder|bob" {
		t.Fatalf("got %s", got)
	}

	name, username := "Ada King", "ada_k"
	if _, err := db.UpdateUser(ctx, ada.ID, gantry.UserUpdate{FullName: &name, Username: &username}); err != nil {
		t.Fatal(err)
	}
	p.Name, p.Description, p.Type = "Zen Garden", "bonsai", "vue"
	if err := db.UpdateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	if got := shown(byName); got != "Other||static|Bob Builder|bob, Zen Garden|bonsai|vue|Ada King|ada_k" {
		t.Fatalf("after edits: got %s", got)
	}
	if got := shown(gantry.GalleryQuery{Search: "KING"}); got != "Zen Garden|bonsai|vue|Ada King|ada_k" {
		t.Fatalf("search by the new name: got %s", got)
	}
	if got := shown(gantry.GalleryQuery{Search: "lovelace"}); got != "" {
		t.Fatalf("search by the old name: got %s", got)
	}

	if err := db.SetUserActive(ctx, ada.ID, false); err != nil {
		t.Fatal(err)
	}
	if got := shown(byName); got != "Other||static|Bob Builder|bob" {
		t.Fatalf("owner deactivated: got %s", got)
	}
	if err := db.SetUserActive(ctx, ada.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := db.SetActiveDeployment(ctx, p.ID, ""); err != nil {
		t.Fatal(err)
	}
	if got := shown(byName); got != "Other||static|Bob Builder|bob" {
		t.Fatalf("no active deployment: got %s", got)
	}
	if err := db.SetActiveDeployment(ctx, p.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteDeployment(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	if got := shown(byName); got != "Other||static|Bob Builder|bob" {
		t.Fatalf("deployment deleted: got %s", got)
	}
	if err := db.DeleteUser(ctx, bob.ID); err != nil {
		t.Fatal(err)
	}
	if page := listAll(t, db, byName); page.Total != 0 || page.Stats != (gantry.GalleryStats{}) {
		t.Fatalf("owner deleted: got %+v", page)
	}
	if _, _, err := db.Gallery().ToggleLike(ctx, other.ID, "visitor:x"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("like of a deleted owner's app: %v", err)
	}
}

// TestRecordViewPrunes keeps only the last hour's visitors of an app.
func TestRecordViewPrunes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ada := storetest.MustCreateUser(t, db, "ada", "Ada Lovelace")
	_, d := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "app", Type: "react"})
	t0 := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	now := t0
	db.Now = func() time.Time { return now }
	for i := 0; i < 50; i++ {
		if _, err := db.Gallery().RecordView(ctx, d.ID, fmt.Sprint("visitor:", i)); err != nil {
			t.Fatal(err)
		}
	}
	now = t0.Add(gantry.ViewWindow + time.Second)
	if counted, err := db.Gallery().RecordView(ctx, d.ID, "visitor:late"); err != nil || !counted {
		t.Fatalf("got %v %v", counted, err)
	}
	if n := store.CountViewRows(t, db, d.ID); n != 1 {
		t.Fatalf("got %d rows of visits, want 1 (the last hour's)", n)
	}
}

// TestGalleryShowInDiscover: a project whose owner turned "Show in
// Discover" off is never listed, whatever else changes (its views and
// status, its owner's name, a new live deployment), and its app answers
// like, view and like-status as unknown; turning it on lists it again.
func TestGalleryShowInDiscover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ada := storetest.MustCreateUser(t, db, "ada", "Ada Lovelace")
	storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "public shown", Type: "react"})
	storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "private shown", Type: "react", Private: true})
	hidden, d := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "private hidden", Type: "static",
		Private: true, Hidden: true})
	want := func(label, listed string) {
		t.Helper()
		page := listAll(t, db, gantry.GalleryQuery{Sort: gantry.SortName})
		if got := strings.Join(names(page), ", "); got != listed || page.Stats.Apps != len(page.Deployments) {
			t.Fatalf("%s: got %s (%d apps), want %s", label, got, page.Stats.Apps, listed)
		}
	}
	notListed := func(label string) {
		t.Helper()
		if _, err := db.Gallery().RecordView(ctx, d.ID, "visitor:v"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
			t.Fatalf("%s: view: %v", label, err)
		}
		if _, _, err := db.Gallery().ToggleLike(ctx, d.ID, "visitor:v"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
			t.Fatalf("%s: like: %v", label, err)
		}
		if _, err := db.Gallery().LikeStatus(ctx, d.ID, "visitor:v"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
			t.Fatalf("%s: like status: %v", label, err)
		}
	}
	want("created", "private shown, public shown")
	notListed("created")

	// Changes that refresh the gallery row keep it out.
	name := "Ada King"
	if _, err := db.UpdateUser(ctx, ada.ID, gantry.UserUpdate{FullName: &name}); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(ctx, `UPDATE deployments SET views = views + 5 WHERE id = ?`, d.ID); err != nil {
		t.Fatal(err)
	}
	hidden.Name = "private hidden renamed"
	if err := db.UpdateProject(ctx, hidden); err != nil {
		t.Fatal(err)
	}
	next := &gantry.Deployment{ProjectID: hidden.ID, UserID: ada.ID, Version: "2.0.0", Subdomain: hidden.Subdomain}
	if err := db.CreateDeployment(ctx, next); err != nil {
		t.Fatal(err)
	}
	next.Status = gantry.DeploymentLive
	if err := db.UpdateDeployment(ctx, next); err != nil {
		t.Fatal(err)
	}
	if err := db.SetActiveDeployment(ctx, hidden.ID, next.ID); err != nil {
		t.Fatal(err)
	}
	want("after changes", "private shown, public shown")

	// The owner turns it on, then off again.
	hidden.ShowInDiscover = true
	if err := db.UpdateProject(ctx, hidden); err != nil {
		t.Fatal(err)
	}
	if got, err := db.FindProject(ctx, ada.ID, hidden.ID); err != nil || !got.ShowInDiscover {
		t.Fatalf("stored: %+v, %v", got, err)
	}
	want("shown", "private hidden renamed, private shown, public shown")
	if _, _, err := db.Gallery().ToggleLike(ctx, next.ID, "visitor:v"); err != nil {
		t.Fatalf("like once shown: %v", err)
	}
	hidden.ShowInDiscover = false
	if err := db.UpdateProject(ctx, hidden); err != nil {
		t.Fatal(err)
	}
	want("hidden again", "private shown, public shown")
	d = next
	notListed("hidden again")
}
