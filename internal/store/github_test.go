package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// sealedToken looks like a value of internal/secret; the store only checks
// the prefix.
const sealedToken = "v1:bm90LWEtcmVhbC1jaXBoZXJ0ZXh0"

func githubLink(id int64, login string) gantry.GitHubLink {
	return gantry.GitHubLink{
		ID: id, Username: login, Avatar: "https://avatars.example.com/" + login + ".png",
		AccessToken: sealedToken,
		Repos: []gantry.GitHubRepo{
			{ID: 11, Name: "site", FullName: login + "/site", Description: "My site", Private: true,
				DefaultBranch: "main", UpdatedAt: t0.Add(time.Hour), URL: "https://github.com/" + login + "/site"},
			{ID: 12, Name: "blog", FullName: login + "/blog", DefaultBranch: "trunk",
				UpdatedAt: t0, URL: "https://github.com/" + login + "/blog"},
		},
	}
}

func TestSetGitHubLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := mustCreateUser(t, db, "ada")
	db.Now = func() time.Time { return t0.Add(time.Minute) }

	link := githubLink(4242, "ada-gh")
	if err := db.SetGitHubLink(ctx, u.ID, link); err != nil {
		t.Fatal(err)
	}
	got, err := db.FindUserByID(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := link
	want.Connected = true
	if diff := cmp.Diff(want, got.GitHub); diff != "" {
		t.Errorf("stored link (-want +got):\n%s", diff)
	}
	if want := t0.Add(time.Minute).Truncate(time.Millisecond); !got.UpdatedAt.Equal(want) {
		t.Errorf("got updatedAt %v, want %v", got.UpdatedAt, want)
	}
	if got.Username != "ada" || got.Email != u.Email || got.PasswordHash != u.PasswordHash {
		t.Errorf("other fields changed: %+v", got)
	}

	// Linking the same GitHub account again refreshes it.
	again := githubLink(4242, "ada-renamed")
	again.Repos = nil
	if err := db.SetGitHubLink(ctx, u.ID, again); err != nil {
		t.Fatalf("relink: %v", err)
	}
	got, _ = db.FindUserByID(ctx, u.ID)
	if got.GitHub.Username != "ada-renamed" || len(got.GitHub.Repos) != 0 || got.GitHub.Repos == nil {
		t.Errorf("after relink got %+v, want the new username and an empty list", got.GitHub)
	}
}

func TestSetGitHubLinkConflict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ada := mustCreateUser(t, db, "ada")
	bob := mustCreateUser(t, db, "bob")
	if err := db.SetGitHubLink(ctx, ada.ID, githubLink(7, "shared")); err != nil {
		t.Fatal(err)
	}
	err := db.SetGitHubLink(ctx, bob.ID, githubLink(7, "shared"))
	wantCode(t, err, gantry.ECONFLICT, store.MsgGitHubTaken)
	if got, _ := db.FindUserByID(ctx, bob.ID); got.GitHub.Connected || got.GitHub.ID != 0 {
		t.Errorf("bob got linked: %+v", got.GitHub)
	}
	// Once ada disconnects, bob may take it.
	if err := db.ClearGitHubLink(ctx, ada.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.SetGitHubLink(ctx, bob.ID, githubLink(7, "shared")); err != nil {
		t.Fatalf("link after the other account let go: %v", err)
	}
}

func TestSetGitHubLinkRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := mustCreateUser(t, db, "ada")

	plain := githubLink(1, "ada-gh")
	plain.AccessToken = "gho_plaintext_token"
	if err := db.SetGitHubLink(ctx, u.ID, plain); err == nil {
		t.Error("a plaintext token was stored")
	}
	wantCode(t, db.SetGitHubLink(ctx, u.ID, githubLink(0, "ada-gh")), gantry.EINVALID, "")
	wantCode(t, db.SetGitHubLink(ctx, u.ID, githubLink(1, "")), gantry.EINVALID, "")
	wantCode(t, db.SetGitHubLink(ctx, "no-such-user", githubLink(1, "x")), gantry.ENOTFOUND, "User not found")
	got, _ := db.FindUserByID(ctx, u.ID)
	if got.GitHub.Connected || got.GitHub.AccessToken != "" {
		t.Errorf("a refused link was stored: %+v", got.GitHub)
	}
}

func TestSetGitHubRepos(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := mustCreateUser(t, db, "ada")
	if err := db.SetGitHubLink(ctx, u.ID, githubLink(9, "ada-gh")); err != nil {
		t.Fatal(err)
	}
	paris := time.FixedZone("Paris", 3600)
	repos := []gantry.GitHubRepo{{ID: 99, Name: "new", FullName: "ada-gh/new", DefaultBranch: "main",
		UpdatedAt: time.Date(2025, 4, 1, 10, 0, 0, 0, paris), URL: "https://github.com/ada-gh/new"}}
	if err := db.SetGitHubRepos(ctx, u.ID, repos); err != nil {
		t.Fatal(err)
	}
	got, _ := db.FindUserByID(ctx, u.ID)
	want := []gantry.GitHubRepo{repos[0]}
	want[0].UpdatedAt = time.Date(2025, 4, 1, 9, 0, 0, 0, time.UTC)
	if diff := cmp.Diff(want, got.GitHub.Repos); diff != "" {
		t.Errorf("repos (-want +got):\n%s", diff)
	}
	if repos[0].UpdatedAt.Location() != paris {
		t.Error("SetGitHubRepos changed the caller's slice")
	}
	if !got.GitHub.Connected || got.GitHub.AccessToken != sealedToken || got.GitHub.ID != 9 {
		t.Errorf("the link changed: %+v", got.GitHub)
	}
	if err := db.SetGitHubRepos(ctx, u.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.FindUserByID(ctx, u.ID); got.GitHub.Repos == nil || len(got.GitHub.Repos) != 0 {
		t.Errorf("nil repos: got %#v, want an empty list", got.GitHub.Repos)
	}
	wantCode(t, db.SetGitHubRepos(ctx, "no-such-user", repos), gantry.ENOTFOUND, "User not found")
}

func TestClearGitHubLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := mustCreateUser(t, db, "ada")
	if err := db.SetGitHubLink(ctx, u.ID, githubLink(5, "ada-gh")); err != nil {
		t.Fatal(err)
	}
	if err := db.ClearGitHubLink(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	got, _ := db.FindUserByID(ctx, u.ID)
	if diff := cmp.Diff(gantry.GitHubLink{Repos: []gantry.GitHubRepo{}}, got.GitHub); diff != "" {
		t.Errorf("after clear (-want +got):\n%s", diff)
	}
	if err := db.ClearGitHubLink(ctx, u.ID); err != nil {
		t.Errorf("clearing twice: %v", err)
	}
	wantCode(t, db.ClearGitHubLink(ctx, "no-such-user"), gantry.ENOTFOUND, "User not found")
}
