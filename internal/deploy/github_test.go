package deploy_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/githost/githubtest"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
	"github.com/gantryhq/gantry/internal/servetest"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// lockedBuffer collects the service's own log lines.
type lockedBuffer = servetest.LockedBuffer

// TestBuildPrivateGitHubRepo builds a private repository of the fake
// GitHub through the real sandboxed pipeline with the owner's token, and
// checks the token shows up in no log line, project, deployment or error.
func TestBuildPrivateGitHubRepo(t *testing.T) {
	sb := sandboxtest.Require(t, sandbox.Config{})
	ctx := context.Background()
	gh := githubtest.NewServer(t)
	owner := gh.AddUser("ada-gh")
	repo := gh.AddRepo(t, githubtest.Repo{Owner: "ada-gh", Name: "private-site", Private: true},
		map[string]string{"index.html": "<h1>top secret</h1>"})

	hosts, err := githost.New(githost.Config{
		AllowHosts: []string{"127.0.0.1"}, GitHubAPIURL: gh.APIURL(), GitHubWebURL: gh.URL,
		ClientID: gh.ClientID, ClientSecret: gh.ClientSecret, RedirectURL: "http://localhost:8080/api/auth/github/callback",
		Sandbox: sb,
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: storetest.MustOpenDB(t)}
	e.stack = deploytest.New(t, deploytest.Options{DB: e.db, Sandbox: sb, Repos: hosts})
	e.svc, e.table, e.hosts = e.stack.Deploys, e.stack.Table, hosts
	e.user = &gantry.User{FullName: "Ada", Username: "ada", Email: "ada@example.com", PasswordHash: "x", IsActive: true}
	if err := e.db.CreateUser(ctx, e.user); err != nil {
		t.Fatal(err)
	}
	sealed, err := e.stack.Tokens.Seal(owner.Token)
	if err != nil {
		t.Fatal(err)
	}
	repos, err := hosts.GitHub.Repos(ctx, owner.Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.SetGitHubLink(ctx, e.user.ID, gantry.GitHubLink{ID: owner.ID, Username: owner.Login,
		AccessToken: sealed, Repos: repos}); err != nil {
		t.Fatal(err)
	}
	serverLog := &lockedBuffer{}
	e.svc.Logger = slog.New(slog.NewTextHandler(serverLog, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.edge = edge.New("localhost", e.table, "http://localhost:8080")
	if err := e.svc.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.svc.Close() })

	u, err := e.db.FindUserByID(ctx, e.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.projects().CreateFromGitHub(ctx, u, project.GitHubInput{RepositoryID: project.GitHubRepoID(repo.ID)})
	if err != nil {
		t.Fatalf("create from GitHub: %v", err)
	}
	if !p.Repository.Private || p.Repository.LastCommit == nil || p.Name != "private-site" {
		t.Fatalf("project %+v", p)
	}
	d := e.deploy(p)
	if d.Status != gantry.DeploymentLive {
		t.Fatalf("got %q, want live; logs:\n%s", d.Status, strings.Join(e.logs(d.ID), "\n"))
	}
	if code, body := e.get(p.Subdomain, "/"); code != 200 || body != "<h1>top secret</h1>" {
		t.Fatalf("edge: got %d %q", code, body)
	}

	// Without the token (disconnected), the private repository no longer clones.
	if err := e.db.ClearGitHubLink(ctx, e.user.ID); err != nil {
		t.Fatal(err)
	}
	d2 := e.deploy(p)
	if d2.Status != gantry.DeploymentFailed {
		t.Fatalf("without the token got %q, want failed; logs:\n%s", d2.Status, strings.Join(e.logs(d2.ID), "\n"))
	}

	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + owner.Token))
	var everything []string
	for _, id := range []string{d.ID, d2.ID} {
		everything = append(everything, e.logs(id)...)
		got, err := e.db.FindDeployment(ctx, "", id)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(got)
		everything = append(everything, string(raw), got.Error)
	}
	stored, _ := e.db.FindProject(ctx, e.user.ID, p.ID)
	raw, _ := json.Marshal(stored)
	everything = append(everything, string(raw), serverLog.String())
	for _, s := range everything {
		for _, secret := range []string{owner.Token, basic, sealed} {
			if strings.Contains(s, secret) {
				t.Fatalf("%q appears in %q", secret, s)
			}
		}
	}
	if !strings.Contains(strings.Join(e.logs(d2.ID), "\n"), "private") {
		t.Errorf("the failed clone does not say the repository is private:\n%s", strings.Join(e.logs(d2.ID), "\n"))
	}
}
