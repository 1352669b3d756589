package githost_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/githost/githubtest"
)

// TestGitHubWrites drives hooks, statuses and comments through go-github
// against the fake.
func TestGitHubWrites(t *testing.T) {
	t.Parallel()
	gh := githubtest.NewServer(t)
	alice := gh.AddUser("alice")
	bob := gh.AddUser("bob")
	gh.AddRepo(t, githubtest.Repo{Owner: "alice", Name: "site"}, map[string]string{"index.html": "hi"})
	c, err := githost.NewGitHub(gh.APIURL(), gh.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	id, err := c.CreateHook(ctx, alice.Token, "alice/site", "https://gantry.example/api/webhooks/github", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	hooks := gh.Hooks("alice/site")
	if len(hooks) != 1 || hooks[0].ID != id || hooks[0].Secret != "s3cret" || hooks[0].ContentType != "json" ||
		strings.Join(hooks[0].Events, ",") != "push,pull_request" || !hooks[0].Active {
		t.Fatalf("hooks %+v", hooks)
	}
	if _, err := c.CreateHook(ctx, bob.Token, "alice/site", "https://x.example/", "s"); gantry.ErrorCode(err) != gantry.EINVALID ||
		!strings.Contains(gantry.ErrorMessage(err), "needs admin access") {
		t.Fatalf("another account's hook: %v", err)
	}

	sha := strings.TrimSpace(gh.PushPayload(t, "alice/site", "main", "")["after"].(string))
	if err := c.SetStatus(ctx, alice.Token, "alice/site", sha, githost.Status{State: "pending",
		Description: strings.Repeat("é", 200), Context: "gantry/preview"}); err != nil {
		t.Fatal(err)
	}
	if st := gh.Statuses("alice/site", sha); len(st) != 1 || st[0].State != "pending" || len([]rune(st[0].Description)) != 140 {
		t.Fatalf("statuses %+v", st)
	}
	cid, err := c.CreateComment(ctx, alice.Token, "alice/site", 3, "first")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.EditComment(ctx, alice.Token, "alice/site", cid, "second"); err != nil {
		t.Fatal(err)
	}
	if cs := gh.Comments("alice/site", 3); len(cs) != 1 || cs[0].Body != "second" || cs[0].Edits != 1 {
		t.Fatalf("comments %+v", cs)
	}
	if err := c.EditComment(ctx, alice.Token, "alice/site", 999999, "x"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatal("editing a missing comment worked")
	}

	if err := c.DeleteHook(ctx, alice.Token, "alice/site", id); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteHook(ctx, alice.Token, "alice/site", id); err != nil {
		t.Fatalf("deleting a deleted hook: %v", err)
	}
	if len(gh.Hooks("alice/site")) != 0 {
		t.Fatal("the hook is still there")
	}
	gh.FailHooks(http.StatusInternalServerError)
	if _, err := c.CreateHook(ctx, alice.Token, "alice/site", "https://x.example/", "s"); gantry.ErrorCode(err) != gantry.EUNAVAILABLE {
		t.Fatalf("failing GitHub: %v", err)
	}
}
