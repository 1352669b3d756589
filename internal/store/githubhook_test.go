package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

func TestGitHubHooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := mustCreateUser(t, db, "ada")
	p := &gantry.Project{UserID: u.ID, Name: "site", Type: "static", Branch: "main"}
	if err := db.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveGitHubHook(ctx, &gantry.GitHubHook{ProjectID: p.ID, RepoID: 7, Secret: "plain"}); err == nil {
		t.Fatal("a plaintext secret was stored")
	}
	if err := db.SaveGitHubHook(ctx, &gantry.GitHubHook{ProjectID: "nope", RepoID: 7, Secret: sealedToken}); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("missing project: %v", err)
	}
	h := &gantry.GitHubHook{ProjectID: p.ID, RepoID: 7, RepoName: "ada/site", Secret: sealedToken, Error: "boom"}
	if err := db.SaveGitHubHook(ctx, h); err != nil {
		t.Fatal(err)
	}
	h.HookID, h.Error = 99, ""
	if err := db.SaveGitHubHook(ctx, h); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := db.RecordGitHubDelivery(ctx, p.ID, gantry.GitHubDelivery{At: at, Event: "push", Result: gantry.DeliveryOK, Message: "queued"}); err != nil {
		t.Fatal(err)
	}
	list, err := db.GitHubHooksByRepo(ctx, 7)
	if err != nil || len(list) != 1 {
		t.Fatalf("by repo: %v %v", list, err)
	}
	got := list[0]
	if got.HookID != 99 || got.Error != "" || got.Secret != sealedToken || got.RepoName != "ada/site" ||
		got.Last == nil || !got.Last.At.Equal(at) || got.Last.Message != "queued" {
		t.Errorf("hook %+v last %+v", got, got.Last)
	}
	if ok, err := db.ClaimGitHubDelivery(ctx, "d-1"); !ok || err != nil {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	if ok, err := db.ClaimGitHubDelivery(ctx, "d-1"); ok || err != nil {
		t.Fatalf("replayed claim: %v %v", ok, err)
	}

	pr := &gantry.GitHubPullRequest{ProjectID: p.ID, Number: 3, Title: "Fix", State: gantry.PullRequestOpen, HeadSHA: "abc"}
	if err := db.SaveGitHubPullRequest(ctx, pr); err != nil {
		t.Fatal(err)
	}
	pr.CommentID, pr.DeploymentID = 5, "dep"
	if err := db.SaveGitHubPullRequest(ctx, pr); err != nil {
		t.Fatal(err)
	}
	if got, err := db.FindGitHubPullRequestByDeployment(ctx, p.ID, "dep"); err != nil || got.CommentID != 5 || got.Title != "Fix" {
		t.Fatalf("by deployment: %+v %v", got, err)
	}
	if prs, err := db.ListGitHubPullRequests(ctx, p.ID); err != nil || len(prs) != 1 {
		t.Fatalf("list: %v %v", prs, err)
	}
	if _, err := db.FindGitHubPullRequest(ctx, p.ID, 4); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("unknown: %v", err)
	}
	if err := db.DeleteProject(ctx, u.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindGitHubHook(ctx, p.ID); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("hook after the project's deletion: %v", err)
	}
}
