package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/api"
)

const (
	msgTooManyLookups = "Too many repository lookups: at most 20 a minute. Please wait a minute and try again."
	msgLookupsRunning = "You already have 2 repository lookups running. Wait for them to finish, then try again."
	msgTooManyPending = "You already have 3 builds waiting. Wait for one to start, or delete a waiting one, then deploy again."
)

// lookup sends a repository lookup of repoURL with token.
func (e *testEnv) lookup(token, repoURL string) *httptest.ResponseRecorder {
	return e.do(request{method: "POST", url: "/api/projects/public-repo", headers: bearer(token),
		body: fmt.Sprintf(`{"repoUrl":%q}`, repoURL)})
}

// fillLookups makes alice's n lookups of the window (blank URLs: refused at
// once, but counted) with the limiter on the test clock.
func fillLookups(t *testing.T, e *testEnv, n int) {
	t.Helper()
	e.srv.Lookups.Now = func() time.Time { return e.now }
	for i := range n {
		if rec := e.lookup(e.token, " "); rec.Code != 400 {
			t.Fatalf("lookup %d: %d %s", i+1, rec.Code, rec.Body.String())
		}
	}
}

// hangingLookups starts two lookups of alice's against a git host that
// does not answer until finish is called (or the test ends), and returns
// once both are running. finish waits for both to end.
func hangingLookups(t *testing.T, e *testEnv) (finish func()) {
	t.Helper()
	arrived, release := make(chan struct{}, 8), make(chan struct{})
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.NotFound(w, r)
	}))
	var wg sync.WaitGroup
	var once sync.Once
	finish = func() { once.Do(func() { close(release); wg.Wait() }) }
	t.Cleanup(func() { finish(); host.Close() })
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.lookup(e.token, fmt.Sprintf("%s/slow/repo%d.git", host.URL, i))
		}()
	}
	for range 2 {
		select {
		case <-arrived:
		case <-time.After(20 * time.Second):
			t.Fatal("the two lookups never reached the git host")
		}
	}
	return finish
}

func TestRepositoryLookupLimits(t *testing.T) {
	t.Parallel()
	lookup := request{method: "POST", url: "/api/projects/public-repo", body: `{"repoUrl":" "}`}
	var finishHanging func() // the running lookups of "a third lookup while two run"
	runScenarios(t, []scenario{
		{
			name: "the 21st lookup of a minute",
			setup: func(t *testing.T, e *testEnv) string {
				withDeploys(t, e, false)
				fillLookups(t, e, api.LookupLimit)
				return ""
			},
			auth: true, request: lookup,
			wantStatus: 429, wantMessage: msgTooManyLookups,
			wantHeaders: map[string]string{"Retry-After": "60"},
			after: func(t *testing.T, e *testEnv, _ *httptest.ResponseRecorder) {
				// Another user is not limited by alice's lookups.
				if rec := e.lookup(e.otherToken(t), " "); rec.Code != 400 {
					t.Errorf("bob's lookup: %d %s", rec.Code, rec.Body.String())
				}
				// The window slides: 40 s later it is still full (Retry-After
				// says how long is left), after a minute it is open again.
				e.now = e.now.Add(40 * time.Second)
				if rec := e.lookup(e.token, " "); rec.Code != 429 || rec.Header().Get("Retry-After") != "20" {
					t.Errorf("40 s later: %d, Retry-After %q; want 429 and 20", rec.Code, rec.Header().Get("Retry-After"))
				}
				e.now = e.now.Add(20 * time.Second)
				if rec := e.lookup(e.token, " "); rec.Code != 400 {
					t.Errorf("a minute later: %d %s", rec.Code, rec.Body.String())
				}
			},
		},
		{
			name: "creating a project from GitHub is a lookup too",
			setup: func(t *testing.T, e *testEnv) string {
				withDeploys(t, e, false)
				fillLookups(t, e, api.LookupLimit)
				return ""
			},
			auth:       true,
			request:    request{method: "POST", url: "/api/projects", body: `{"repositoryId":1,"name":"x"}`},
			wantStatus: 429, wantMessage: msgTooManyLookups,
			wantHeaders: map[string]string{"Retry-After": "60"},
			after: func(t *testing.T, e *testEnv, _ *httptest.ResponseRecorder) {
				if ps, _ := e.db.ListProjects(t.Context(), e.alice.ID); len(ps) != 0 {
					t.Errorf("alice has %d projects, want none", len(ps))
				}
			},
		},
		{
			name: "a body that does not decode is not a lookup",
			setup: func(t *testing.T, e *testEnv) string {
				withDeploys(t, e, false)
				for range api.LookupLimit + 5 {
					if rec := e.do(request{method: "POST", url: "/api/projects/public-repo", headers: bearer(e.token), body: `{"repoUrl":`}); rec.Code != 400 {
						t.Fatalf("malformed body: %d", rec.Code)
					}
				}
				return ""
			},
			auth: true, request: lookup,
			wantStatus: 400, wantMessage: "Please enter a repository URL",
		},
		{
			name: "a third lookup while two run",
			setup: func(t *testing.T, e *testEnv) string {
				withDeploys(t, e, false)
				e.srv.Lookups.Now = func() time.Time { return e.now }
				finishHanging = hangingLookups(t, e)
				return ""
			},
			auth: true, request: lookup,
			wantStatus: 429, wantMessage: msgLookupsRunning,
			wantHeaders: map[string]string{"Retry-After": "5"},
			after: func(t *testing.T, e *testEnv, _ *httptest.ResponseRecorder) {
				if rec := e.lookup(e.otherToken(t), " "); rec.Code != 400 {
					t.Errorf("bob's lookup while alice's two run: %d %s", rec.Code, rec.Body.String())
				}
				// Once they end, the slots are free again; the refused
				// lookup did not count: 2 ran, 18 more fit in the minute,
				// the 21st does not.
				finishHanging()
				fillLookups(t, e, api.LookupLimit-2)
				if rec := e.lookup(e.token, " "); rec.Code != 429 {
					t.Errorf("21st lookup: %d %s", rec.Code, rec.Body.String())
				}
			},
		},
	})
}

// TestPendingBuildCap deploys with no workers running, so builds stay
// pending: the fourth waiting build of a user is refused and changes
// nothing, other users are not affected, and deleting a waiting build
// makes room. Concurrent deploys never get past the cap.
func TestPendingBuildCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, false)
	project := d.createProject(t, d.site(t, "site", "hello"), "My Site")
	deploy := func(token, project string) *httptest.ResponseRecorder {
		return e.do(request{method: "POST", url: "/api/deployments", headers: bearer(token), body: `{"projectId":"` + project + `"}`})
	}
	pending := func() []gantry.Deployment {
		rec := e.do(request{method: "GET", url: "/api/deployments?status=pending", headers: bearer(e.token)})
		return dataField[[]gantry.Deployment](t, rec, "deployments")
	}

	var ids []string
	for i := range 3 {
		rec := deploy(e.token, project)
		if rec.Code != http.StatusCreated {
			t.Fatalf("deploy %d: %d %s", i+1, rec.Code, rec.Body.String())
		}
		ids = append(ids, dataField[gantry.Deployment](t, rec, "deployment").ID)
	}
	rec := deploy(e.token, project)
	if a := decodeAnswer(t, rec); rec.Code != 429 || a.Message != msgTooManyPending {
		t.Fatalf("4th deploy: %d %q, want 429 %q", rec.Code, a.Message, msgTooManyPending)
	}
	if n := len(pending()); n != 3 {
		t.Fatalf("%d builds pending after the refused deploy, want 3", n)
	}

	// Bob deploys while alice's queue is full; his build is served second
	// (alice's oldest first, then bob, who has had no turn), and its log
	// says so.
	bob := e.otherToken(t)
	rec = e.do(request{method: "POST", url: "/api/projects/public", headers: bearer(bob),
		body: fmt.Sprintf(`{"repository":{"url":%q},"name":"Bob Site","buildConfig":{"outputDirectory":"."}}`, d.site(t, "bob", "bob"))})
	if rec.Code != http.StatusCreated {
		t.Fatalf("bob's project: %d %s", rec.Code, rec.Body.String())
	}
	rec = deploy(bob, dataField[gantry.Project](t, rec, "project").ID)
	if rec.Code != http.StatusCreated {
		t.Fatalf("bob's deploy: %d %s", rec.Code, rec.Body.String())
	}
	bobDep := dataField[gantry.Deployment](t, rec, "deployment").ID
	logs := dataField[[]gantry.LogEntry](t, e.do(request{method: "GET", url: "/api/deployments/" + bobDep + "/logs", headers: bearer(bob)}), "logs")
	if len(logs) == 0 || logs[0].Message != "Deployment queued: position 2, waiting for 1 build ahead" {
		t.Fatalf("bob's queue line: %+v", logs)
	}

	// Deleting a waiting build makes room for one more.
	if rec := e.do(request{method: "DELETE", url: "/api/deployments/" + ids[0], headers: bearer(e.token)}); rec.Code != 200 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body.String())
	}
	if rec := deploy(e.token, project); rec.Code != http.StatusCreated {
		t.Fatalf("deploy after a delete: %d %s", rec.Code, rec.Body.String())
	}

	// From empty, eight deploys at once: three are queued.
	for _, dep := range pending() {
		if rec := e.do(request{method: "DELETE", url: "/api/deployments/" + dep.ID, headers: bearer(e.token)}); rec.Code != 200 {
			t.Fatalf("delete: %d", rec.Code)
		}
	}
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = deploy(e.token, project).Code
		}()
	}
	wg.Wait()
	created, refused := 0, 0
	for _, c := range codes {
		switch c {
		case http.StatusCreated:
			created++
		case http.StatusTooManyRequests:
			refused++
		}
	}
	if created != 3 || refused != 5 || len(pending()) != 3 {
		t.Fatalf("8 concurrent deploys: %v; %d pending; want 3 created and 5 refused", codes, len(pending()))
	}
}
