package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

func mustCreateProject(tb testing.TB, db *store.DB, userID, name string) *gantry.Project {
	tb.Helper()
	p := &gantry.Project{UserID: userID, Name: name, Branch: "main", Type: "static",
		Repository:  gantry.Repository{FullName: "alice/" + name, CloneURL: "http://127.0.0.1/alice/" + name + ".git"},
		BuildConfig: gantry.BuildConfig{OutputDirectory: "dist"}}
	if err := db.CreateProject(context.Background(), p); err != nil {
		tb.Fatalf("create project %s: %v", name, err)
	}
	return p
}

func mustCreateDeployment(tb testing.TB, db *store.DB, p *gantry.Project) *gantry.Deployment {
	tb.Helper()
	d := &gantry.Deployment{ProjectID: p.ID, UserID: p.UserID, Version: "1.0.0", Subdomain: p.Subdomain,
		URL: "http://" + p.Subdomain + ".localhost:8080"}
	if err := db.CreateDeployment(context.Background(), d); err != nil {
		tb.Fatalf("create deployment: %v", err)
	}
	return d
}

func TestProjectSubdomainsAndLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	alice, bob := mustCreateUser(t, db, "alice"), mustCreateUser(t, db, "bob")

	for _, tc := range []struct{ user, name, want string }{
		{alice.ID, "My Cool App!", "my-cool-app"},
		{bob.ID, "my cool app", "my-cool-app-2"},
		{bob.ID, "API", "api-2"}, // reserved names are never handed out
		{alice.ID, "***", "app-2"},
	} {
		p := mustCreateProject(t, db, tc.user, tc.name)
		if p.Subdomain != tc.want || p.Status != gantry.ProjectDraft {
			t.Errorf("%q: got subdomain %q status %q, want %q draft", tc.name, p.Subdomain, p.Status, tc.want)
		}
	}
	mustCreateProject(t, db, alice.ID, "third")
	err := db.CreateProject(ctx, &gantry.Project{UserID: alice.ID, Name: "fourth"})
	wantCode(t, err, gantry.EFORBIDDEN, "Your Free plan allows 3 projects. Delete a project or upgrade your plan to create another.")
	if n, _ := db.CountProjects(ctx, alice.ID); n != 3 {
		t.Fatalf("got %d projects, want 3", n)
	}
}

func TestProjectOwnerOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	alice, bob := mustCreateUser(t, db, "alice"), mustCreateUser(t, db, "bob")
	p := mustCreateProject(t, db, alice.ID, "site")

	if _, err := db.FindProject(ctx, bob.ID, p.ID); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("bob finds alice's project: got %v, want not found", err)
	}
	if err := db.DeleteProject(ctx, bob.ID, p.ID); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("bob deletes alice's project: got %v, want not found", err)
	}
	upd := *p
	upd.UserID, upd.Name = bob.ID, "hijacked"
	if err := db.UpdateProject(ctx, &upd); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("bob updates alice's project: got %v, want not found", err)
	}
	got, err := db.FindProject(ctx, alice.ID, p.ID)
	if err != nil || got.Name != "site" || got.Repository.FullName != "alice/site" || got.BuildConfig.OutputDirectory != "dist" {
		t.Fatalf("got %+v, %v; want the unchanged project", got, err)
	}
	if list, _ := db.ListProjects(ctx, bob.ID); len(list) != 0 {
		t.Fatalf("bob lists %d projects, want 0", len(list))
	}
}

// TestSetRepository: a sync's write changes the repository facts only (an
// edit of the project's name made between the sync's read and its write
// stays), and only the owner's project.
func TestSetRepository(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	alice, bob := mustCreateUser(t, db, "alice"), mustCreateUser(t, db, "bob")
	p := mustCreateProject(t, db, alice.ID, "site")

	synced := p.Repository
	synced.LastCommit = &gantry.Commit{SHA: "0123456789abcdef0123456789abcdef01234567", Message: "v2", Author: "Ada"}
	edited := *p
	edited.Name = "Renamed"
	if err := db.UpdateProject(ctx, &edited); err != nil { // the edit lands while the sync reads the host
		t.Fatal(err)
	}
	if err := db.SetRepository(ctx, bob.ID, p.ID, synced); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("bob sets alice's repository: got %v, want not found", err)
	}
	if err := db.SetRepository(ctx, alice.ID, p.ID, synced); err != nil {
		t.Fatal(err)
	}
	got, err := db.FindProject(ctx, alice.ID, p.ID)
	if err != nil || got.Name != "Renamed" || got.Repository.LastCommit == nil || got.Repository.LastCommit.Message != "v2" ||
		got.Repository.FullName != "alice/site" {
		t.Fatalf("got %+v, %v; want the edit kept and the new commit", got, err)
	}
}

func TestDeploymentQueueAndCascade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	alice, bob := mustCreateUser(t, db, "alice"), mustCreateUser(t, db, "bob")
	p := mustCreateProject(t, db, alice.ID, "site")
	d1, d2 := mustCreateDeployment(t, db, p), mustCreateDeployment(t, db, p)

	if pos, _ := db.QueuePosition(ctx, d2.ID); pos != 2 {
		t.Fatalf("got queue position %d, want 2", pos)
	}
	c, err := db.ClaimDeployment(ctx, gantry.BuildClaim{})
	if err != nil || c.ID != d1.ID || c.Status != gantry.DeploymentBuilding {
		t.Fatalf("got %v, %v; want d1 building", c, err)
	}
	if c.Project.Name != "site" || c.User.Username != "alice" {
		t.Fatalf("got embeds %+v %+v", c.Project, c.User)
	}
	if pos, _ := db.QueuePosition(ctx, d2.ID); pos != 1 {
		t.Fatalf("got queue position %d, want 1", pos)
	}
	if _, err := db.FindDeployment(ctx, bob.ID, d1.ID); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("bob finds alice's deployment: %v", err)
	}
	c.Status = gantry.DeploymentLive
	if err := db.UpdateDeployment(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := db.SetActiveDeployment(ctx, p.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.CountLiveAfter(ctx, alice.ID, p.ID, ""); n != 1 {
		t.Fatalf("got %d live deployments after a redeploy, want 1", n)
	}
	got, _ := db.FindProject(ctx, alice.ID, p.ID)
	if got.ActiveDeployment == nil || got.ActiveDeployment.URL != c.URL || len(got.Deployments) != 2 {
		t.Fatalf("got active %+v and %d deployments", got.ActiveDeployment, len(got.Deployments))
	}
	if err := db.DeleteProject(ctx, alice.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindDeployment(ctx, "", d2.ID); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("deployment survived its project: %v", err)
	}
}

func TestClaimIsExclusive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	alice := mustCreateUser(t, db, "alice")
	p := mustCreateProject(t, db, alice.ID, "site")
	for i := 0; i < 20; i++ {
		mustCreateDeployment(t, db, p)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				d, err := db.ClaimDeployment(ctx, gantry.BuildClaim{})
				if gantry.ErrorCode(err) == gantry.ENOTFOUND {
					return
				} else if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[d.ID] {
					t.Errorf("deployment %s claimed twice", d.ID)
				}
				seen[d.ID] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 20 {
		t.Fatalf("claimed %d, want 20", len(seen))
	}
}

func TestLogs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	alice := mustCreateUser(t, db, "alice")
	d := mustCreateDeployment(t, db, mustCreateProject(t, db, alice.ID, "site"))
	for i := 1; i <= 5; i++ {
		e := &gantry.LogEntry{Level: gantry.LevelInfo, Type: gantry.LogDeployment, Message: fmt.Sprint("line ", i)}
		if err := db.AppendLog(ctx, d.ID, e); err != nil || e.Seq != int64(i) {
			t.Fatalf("append %d: seq %d, %v", i, e.Seq, err)
		}
	}
	newest, _ := db.Logs(ctx, d.ID, 0, 2)
	if len(newest) != 2 || newest[0].Message != "line 4" || newest[1].Message != "line 5" {
		t.Fatalf("got newest %+v, want lines 4 and 5 in order", newest)
	}
	after, _ := db.Logs(ctx, d.ID, 3, 0)
	if len(after) != 2 || after[0].Seq != 4 {
		t.Fatalf("got after 3: %+v", after)
	}
	if err := db.ClearLogs(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.CountLogs(ctx, d.ID); n != 0 {
		t.Fatalf("got %d logs after clear, want 0", n)
	}
	e := &gantry.LogEntry{Level: gantry.LevelInfo, Type: gantry.LogDeployment, Message: "after clear"}
	if err := db.AppendLog(ctx, d.ID, e); err != nil || e.Seq != 6 {
		t.Fatalf("got seq %d, %v; want 6 (numbering continues)", e.Seq, err)
	}
}

func TestTrimRuntimeLogs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	alice := mustCreateUser(t, db, "alice")
	d := mustCreateDeployment(t, db, mustCreateProject(t, db, alice.ID, "app"))
	other := mustCreateDeployment(t, db, mustCreateProject(t, db, alice.ID, "other"))
	// Build lines, then runtime lines interleaved with deployment lines.
	for i := 1; i <= 10; i++ {
		typ := gantry.LogRuntime
		if i <= 2 || i == 6 {
			typ = gantry.LogDeployment
		}
		for _, id := range []string{d.ID, other.ID} {
			e := &gantry.LogEntry{Level: gantry.LevelInfo, Type: typ, Message: fmt.Sprint("line ", i)}
			if err := db.AppendLog(ctx, id, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	n, err := db.TrimRuntimeLogs(ctx, d.ID, 3)
	if err != nil || n != 4 {
		t.Fatalf("got %d deleted, %v; want 4 (7 runtime lines, keep 3)", n, err)
	}
	logs, _ := db.Logs(ctx, d.ID, 0, 0)
	var got []string
	for _, l := range logs {
		got = append(got, l.Message)
	}
	if want := "line 1,line 2,line 6,line 8,line 9,line 10"; strings.Join(got, ",") != want {
		t.Fatalf("got %s, want %s", strings.Join(got, ","), want)
	}
	if n, err := db.TrimRuntimeLogs(ctx, d.ID, 3); err != nil || n != 0 {
		t.Fatalf("trim again: got %d, %v; want 0", n, err)
	}
	if c, _ := db.CountLogs(ctx, other.ID); c != 10 {
		t.Fatalf("the other deployment has %d entries, want 10", c)
	}
}
