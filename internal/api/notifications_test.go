package api_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/auth"
)

// notificationList is the answer of GET /api/notifications.
type notificationList struct {
	Notifications []gantry.Notification `json:"notifications"`
	UnreadCount   int                   `json:"unreadCount"`
	Total         int                   `json:"total"`
}

// notifications reads the notifications of token's user.
func (e *testEnv) notifications(t *testing.T, token, query string) notificationList {
	t.Helper()
	rec := e.do(request{method: "GET", url: "/api/notifications" + query, headers: bearer(token)})
	if rec.Code != 200 {
		t.Fatalf("list notifications: %d %s", rec.Code, rec.Body.String())
	}
	var l notificationList
	if err := json.Unmarshal(decodeAnswer(t, rec).Data, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

func listTitles(l notificationList) []string {
	out := []string{}
	for _, n := range l.Notifications {
		out = append(out, n.Title)
	}
	return out
}

// notificationScenario is one request against a fresh server where alice
// has, after her welcome, the notifications a1, a2, a3 (one minute apart)
// and bob has b1. In the URL, {a1} … {b1} stand for their ids. It runs as
// a scenario (scenario, below).
type notificationScenario struct {
	name   string
	before []request // sent as alice first, each must answer 200
	auth   bool      // sends alice's token
	request
	wantStatus   int
	wantMessage  string
	wantContains []string // with {a1} … replaced by ids
	wantAbsent   []string
	wantHeaders  map[string]string
	after        func(t *testing.T, e *testEnv, ids map[string]string)
}

// scenario is ns for the runner: its setup makes the notifications and
// sends the requests before, its prepare puts their ids in.
func (ns notificationScenario) scenario() scenario {
	ids := map[string]string{}
	expand := func(s string) string {
		for k, v := range ids {
			s = strings.ReplaceAll(s, "{"+k+"}", v)
		}
		return s
	}
	expandAll := func(ss []string) []string {
		var out []string
		for _, s := range ss {
			out = append(out, expand(s))
		}
		return out
	}
	sc := scenario{name: ns.name, auth: ns.auth, request: ns.request, wantStatus: ns.wantStatus,
		wantMessage: ns.wantMessage, wantHeaders: ns.wantHeaders}
	sc.setup = func(t *testing.T, e *testEnv) string {
		bob := e.otherToken(t)
		bobUser, err := e.accounts.Authenticate(context.Background(), bob)
		if err != nil {
			t.Fatal(err)
		}
		ids["bob"] = bob
		for _, n := range []struct{ key, user string }{{"a1", e.alice.ID}, {"a2", e.alice.ID}, {"a3", e.alice.ID}, {"b1", bobUser.ID}} {
			e.now = e.now.Add(time.Minute)
			note := &gantry.Notification{UserID: n.user, Type: gantry.NotifyInfo, Title: n.key, Message: "hello"}
			if err := e.db.Notifications().CreateNotification(context.Background(), note); err != nil {
				t.Fatal(err)
			}
			ids[n.key] = note.ID
		}
		for _, r := range ns.before {
			r.url, r.headers = expand(r.url), bearer(e.token)
			if rec := e.do(r); rec.Code != 200 {
				t.Fatalf("before: %s %s: %d %s", r.method, r.url, rec.Code, rec.Body.String())
			}
		}
		return ""
	}
	sc.prepare = func(_ *testing.T, _ *testEnv, sc *scenario) {
		sc.url = expand(sc.url)
		sc.wantContains, sc.wantAbsent = expandAll(ns.wantContains), expandAll(ns.wantAbsent)
	}
	if ns.after != nil {
		sc.after = func(t *testing.T, e *testEnv, _ *httptest.ResponseRecorder) { ns.after(t, e, ids) }
	}
	return sc
}

// wantList checks alice's titles (newest first) and unread count, and
// that bob still has both of his (welcome and b1) unread.
func wantList(titles []string, unread int) func(t *testing.T, e *testEnv, ids map[string]string) {
	return func(t *testing.T, e *testEnv, ids map[string]string) {
		t.Helper()
		l := e.notifications(t, e.token, "?limit=200")
		if diff := cmp.Diff(titles, listTitles(l)); diff != "" || l.UnreadCount != unread || l.Total != len(titles) {
			t.Errorf("alice's list: got %v unread %d total %d, want %v unread %d (diff %s)",
				listTitles(l), l.UnreadCount, l.Total, titles, unread, diff)
		}
		if b := e.notifications(t, ids["bob"], ""); b.Total != 2 || b.UnreadCount != 2 {
			t.Errorf("bob's: got total %d unread %d, want 2 unread", b.Total, b.UnreadCount)
		}
	}
}

func TestNotificationsAPI(t *testing.T) {
	t.Parallel()
	const welcome = "Welcome to Gantry"
	all := []string{"a3", "a2", "a1", welcome}
	get := func(url string) request { return request{method: "GET", url: url} }
	patch := func(url string) request { return request{method: "PATCH", url: url} }
	del := func(url string) request { return request{method: "DELETE", url: url} }
	const notFound = "Notification not found"
	const badLimit = "limit must be a whole number from 1 to 200"
	var scenarios []scenario
	for _, sc := range []notificationScenario{
		{name: "list newest first with counts", auth: true, request: get("/api/notifications"), wantStatus: 200,
			wantContains: []string{`"unreadCount":4`, `"total":4`, `"type":"system"`, `"actionUrl":"/projects/new"`},
			wantAbsent:   []string{`"title":"b1"`}, after: wantList(all, 4)},
		{name: "limit", auth: true, request: get("/api/notifications?limit=2"), wantStatus: 200,
			wantContains: []string{`"a3"`, `"a2"`, `"unreadCount":4`, `"total":4`}, wantAbsent: []string{`"a1"`, welcome}},
		{name: "unread only", before: []request{patch("/api/notifications/{a2}/read")}, auth: true,
			request: get("/api/notifications?unread=true"), wantStatus: 200,
			wantContains: []string{`"a3"`, `"a1"`, welcome, `"unreadCount":3`, `"total":4`}, wantAbsent: []string{`"a2"`}},
		{name: "limit 0", auth: true, request: get("/api/notifications?limit=0"), wantStatus: 400, wantMessage: badLimit},
		{name: "limit too large", auth: true, request: get("/api/notifications?limit=201"), wantStatus: 400, wantMessage: badLimit},
		{name: "limit not a number", auth: true, request: get("/api/notifications?limit=ten"), wantStatus: 400, wantMessage: badLimit},
		{name: "unread not a boolean", auth: true, request: get("/api/notifications?unread=yes"), wantStatus: 400,
			wantMessage: "unread must be true or false"},

		{name: "mark read", auth: true, request: patch("/api/notifications/{a2}/read"), wantStatus: 200,
			wantContains: []string{`"_id":"{a2}"`, `"read":true`, `"unreadCount":3`}, after: wantList(all, 3)},
		{name: "mark read twice keeps the count", before: []request{patch("/api/notifications/{a1}/read")}, auth: true,
			request: patch("/api/notifications/{a1}/read"), wantStatus: 200,
			wantContains: []string{`"unreadCount":3`}, after: wantList(all, 3)},
		{name: "mark someone else's read", auth: true, request: patch("/api/notifications/{b1}/read"),
			wantStatus: 404, wantMessage: notFound, after: wantList(all, 4)},
		{name: "mark an unknown id read", auth: true, request: patch("/api/notifications/nope/read"),
			wantStatus: 404, wantMessage: notFound},
		{name: "mark all read", auth: true, request: patch("/api/notifications/read-all"), wantStatus: 200,
			wantContains: []string{`{"success":true,"data":{"unreadCount":0,"updated":4}}`}, after: wantList(all, 0)},
		{name: "mark all read twice never goes below 0", before: []request{patch("/api/notifications/read-all")}, auth: true,
			request: patch("/api/notifications/read-all"), wantStatus: 200,
			wantContains: []string{`{"success":true,"data":{"unreadCount":0,"updated":0}}`}, after: wantList(all, 0)},
		{name: "mark read after all read stays at 0", before: []request{patch("/api/notifications/read-all")}, auth: true,
			request: patch("/api/notifications/{a3}/read"), wantStatus: 200,
			wantContains: []string{`"unreadCount":0`}, after: wantList(all, 0)},
		{name: "delete", auth: true, request: del("/api/notifications/{a2}"), wantStatus: 200,
			wantContains: []string{`{"success":true,"data":{"deleted":"{a2}","unreadCount":3}}`},
			after:        wantList([]string{"a3", "a1", welcome}, 3)},
		{name: "delete a read one keeps the count", before: []request{patch("/api/notifications/{a3}/read")}, auth: true,
			request: del("/api/notifications/{a3}"), wantStatus: 200,
			wantContains: []string{`"unreadCount":3`}, after: wantList([]string{"a2", "a1", welcome}, 3)},
		{name: "delete twice", before: []request{del("/api/notifications/{a3}")}, auth: true,
			request: del("/api/notifications/{a3}"), wantStatus: 404, wantMessage: notFound},
		{name: "delete someone else's", auth: true, request: del("/api/notifications/{b1}"),
			wantStatus: 404, wantMessage: notFound, after: wantList(all, 4)},
		{name: "clear all", auth: true, request: del("/api/notifications"), wantStatus: 200,
			wantContains: []string{`{"success":true,"data":{"deleted":4,"unreadCount":0}}`}, after: wantList([]string{}, 0)},
		{name: "clear when empty", before: []request{del("/api/notifications")}, auth: true, request: del("/api/notifications"),
			wantStatus: 200, wantContains: []string{`"deleted":0`}},

		// Route shapes: read-all is its own pattern and never taken for an id.
		{name: "read-all is not an id", auth: true, request: patch("/api/notifications/read-all/read"),
			wantStatus: 404, wantMessage: notFound, after: wantList(all, 4)},
		{name: "delete read-all is an unknown id", auth: true, request: del("/api/notifications/read-all"),
			wantStatus: 404, wantMessage: notFound, after: wantList(all, 4)},
		{name: "GET read-all", auth: true, request: get("/api/notifications/read-all"),
			wantStatus: 405, wantHeaders: map[string]string{"Allow": "PATCH, DELETE"}},
		{name: "PUT the list", auth: true, request: request{method: "PUT", url: "/api/notifications"},
			wantStatus: 405, wantHeaders: map[string]string{"Allow": "GET, DELETE"}},

		{name: "list signed out", request: get("/api/notifications"), wantStatus: 401, wantMessage: auth.MsgSignIn},
		{name: "read signed out", request: patch("/api/notifications/{a1}/read"), wantStatus: 401, wantMessage: auth.MsgSignIn,
			after: wantList(all, 4)},
		{name: "read-all signed out", request: patch("/api/notifications/read-all"), wantStatus: 401, wantMessage: auth.MsgSignIn,
			after: wantList(all, 4)},
		{name: "delete signed out", request: del("/api/notifications/{a1}"), wantStatus: 401, wantMessage: auth.MsgSignIn,
			after: wantList(all, 4)},
		{name: "clear signed out", request: del("/api/notifications"), wantStatus: 401, wantMessage: auth.MsgSignIn,
			after: wantList(all, 4)},
	} {
		scenarios = append(scenarios, sc.scenario())
	}
	runScenarios(t, scenarios)
}

// TestWelcomeNotification checks that registering leaves one unread
// welcome, addressed by the user's first name.
func TestWelcomeNotification(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := e.notifications(t, e.token, "")
	if len(l.Notifications) != 1 || l.UnreadCount != 1 {
		t.Fatalf("got %+v, want one unread welcome", l)
	}
	n := l.Notifications[0]
	if n.Type != gantry.NotifySystem || n.Title != "Welcome to Gantry" || n.ActionURL != "/projects/new" ||
		!strings.HasPrefix(n.Message, "Hi Alice!") || n.Read || n.CreatedAt.IsZero() {
		t.Errorf("got %+v", n)
	}
}

// TestNotificationEvents runs real builds: a project created, a deployment
// that goes live, one whose build exits 1, and a project deleted each leave
// their notification, for their owner only.
func TestNotificationEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("runs builds")
	}
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, true)
	bob := e.otherToken(t)
	e.do(request{method: "PATCH", url: "/api/notifications/read-all", headers: bearer(e.token)})

	good := d.createProject(t, d.site(t, "site", "ok"), "My Site")
	broken := d.createProject(t, d.git.Repo(t, "alice/broken", "main", "break the build", map[string]string{
		"package.json": `{"name":"broken","version":"1.0.0","scripts":{"build":"echo compiling; exit 1"}}`,
	}), "Broken App")
	deploy := func(project string) gantry.Deployment {
		t.Helper()
		rec := e.do(request{method: "POST", url: "/api/deployments", headers: bearer(e.token), body: `{"projectId":"` + project + `"}`})
		if rec.Code != 201 {
			t.Fatalf("deploy: %d %s", rec.Code, rec.Body.String())
		}
		return d.waitDeployment(t, dataField[gantry.Deployment](t, rec, "deployment").ID)
	}
	live := deploy(good)
	failed := deploy(broken)
	if live.Status != gantry.DeploymentLive || failed.Status != gantry.DeploymentFailed {
		t.Fatalf("got %s and %s, want live and failed", live.Status, failed.Status)
	}
	// A deployment's notification follows its final status: wait for both
	// before the delete, whose notification must come after them.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if l := e.notifications(t, e.token, "?unread=true"); l.UnreadCount >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the deployments' notifications did not arrive within 10 s")
		}
	}
	if rec := e.do(request{method: "DELETE", url: "/api/projects/" + good, headers: bearer(e.token)}); rec.Code != 200 {
		t.Fatalf("delete project: %d %s", rec.Code, rec.Body.String())
	}

	l := e.notifications(t, e.token, "?unread=true")
	type row struct{ Type, Title, ActionURL string }
	var got []row
	for _, n := range l.Notifications {
		got = append(got, row{n.Type, n.Title, n.ActionURL})
	}
	want := []row{
		{gantry.NotifyProject, "Project deleted", "/projects"},
		{gantry.NotifyError, "Deployment failed", "/deployments/" + failed.ID},
		{gantry.NotifySuccess, "Deployment live", "/deployments/" + live.ID},
		{gantry.NotifyProject, "Project created", "/projects/" + broken},
		{gantry.NotifyProject, "Project created", "/projects/" + good},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("alice's new notifications (-want +got):\n%s", diff)
	}
	if l.UnreadCount != len(want) {
		t.Errorf("got unread %d, want %d", l.UnreadCount, len(want))
	}
	msgs := map[string]string{}
	for _, n := range l.Notifications {
		msgs[n.Title] = n.Message
	}
	if m := msgs["Deployment failed"]; !strings.HasPrefix(m, "Broken App failed: ") || !strings.Contains(m, failed.Error) || failed.Error == "" {
		t.Errorf("failed message %q, want the project and the reason %q", m, failed.Error)
	}
	if m := msgs["Deployment live"]; m != "My Site is live at http://my-site.localhost:8080." {
		t.Errorf("live message %q", m)
	}
	if m := msgs["Project deleted"]; m != "My Site and its 1 deployment were deleted; its address no longer serves a site." {
		t.Errorf("deleted message %q", m)
	}
	// Bob only has his welcome.
	if b := e.notifications(t, bob, ""); len(b.Notifications) != 1 || b.Notifications[0].Title != "Welcome to Gantry" {
		t.Errorf("bob's notifications: %+v", b)
	}
}

// TestDashboardAPI checks the dashboard and the profile statistics against
// the same data, stored at chosen times.
func TestDashboardAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	bob := e.otherToken(t)
	// The account is 40 days and an hour old when the dashboard is read.
	readAt := e.alice.CreatedAt.Add(40*24*time.Hour + time.Hour)
	monthStart := time.Date(readAt.Year(), readAt.Month(), 1, 0, 0, 0, 0, time.UTC)

	at := func(tm time.Time) { e.now = tm.UTC().Truncate(time.Millisecond) }
	project := func(name string) *gantry.Project {
		t.Helper()
		p := &gantry.Project{UserID: e.alice.ID, Name: name, Type: "react", Branch: "main"}
		if err := e.db.CreateProject(ctx, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ms := func(v int64) *int64 { return &v }
	deployment := func(p *gantry.Project, status string, buildMS *int64) *gantry.Deployment {
		t.Helper()
		d := &gantry.Deployment{ProjectID: p.ID, UserID: e.alice.ID, Subdomain: p.Subdomain,
			URL: "http://" + p.Subdomain + ".localhost:8080"}
		if err := e.db.CreateDeployment(ctx, d); err != nil {
			t.Fatal(err)
		}
		d.Status = status
		if buildMS != nil {
			end := e.now.Add(time.Duration(*buildMS) * time.Millisecond)
			d.BuildInfo.StartTime, d.BuildInfo.EndTime, d.BuildInfo.Duration = &e.now, &end, *buildMS
		}
		if err := e.db.UpdateDeployment(ctx, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	// Portfolio: a stopped deployment just before this month, then a live
	// one (its active deployment) at the month's first instant.
	at(monthStart.Add(-10 * 24 * time.Hour))
	portfolio := project("Portfolio")
	at(monthStart.Add(-time.Second))
	d1 := deployment(portfolio, gantry.DeploymentStopped, ms(41600))
	at(monthStart)
	d2 := deployment(portfolio, gantry.DeploymentLive, ms(41600))
	if err := e.db.SetActiveDeployment(ctx, portfolio.ID, d2.ID); err != nil {
		t.Fatal(err)
	}
	// Recipes: a failed deployment, then one still building.
	at(monthStart.Add(time.Hour))
	recipes := project("Recipes")
	at(monthStart.Add(2 * time.Hour))
	d3 := deployment(recipes, gantry.DeploymentFailed, ms(1200))
	at(monthStart.Add(3 * time.Hour))
	d4 := deployment(recipes, gantry.DeploymentBuilding, nil)
	at(readAt)
	// Tokens of 40 days ago have expired: sign both in again.
	token := func(email string) string {
		t.Helper()
		u, err := e.db.FindUserByEmail(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := e.accounts.StartSession(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	e.token, bob = token("alice@example.com"), token("bob@example.com")

	rec := e.do(request{method: "GET", url: "/api/dashboard", headers: bearer(e.token)})
	if rec.Code != 200 {
		t.Fatalf("dashboard: %d %s", rec.Code, rec.Body.String())
	}
	var got gantry.Dashboard
	if err := json.Unmarshal(decodeAnswer(t, rec).Data, &got); err != nil {
		t.Fatal(err)
	}
	tp := func(tm time.Time) *time.Time { return &tm }
	url := "http://portfolio.localhost:8080"
	want := gantry.Dashboard{
		Stats: gantry.DashboardStats{TotalProjects: 2, ActiveDeployments: 1, TotalDeployments: 4, FailedDeployments: 1, ThisMonth: 3},
		RecentProjects: []gantry.DashboardProject{
			{ID: recipes.ID, Name: "Recipes", Type: "react", Status: "draft", LastDeployed: tp(d4.CreatedAt)},
			{ID: portfolio.ID, Name: "Portfolio", Type: "react", Status: "draft", LastDeployed: tp(d2.CreatedAt), URL: &url},
		},
		RecentDeployments: []gantry.DashboardDeployment{
			{ID: d4.ID, ProjectName: "Recipes", Subdomain: "recipes", Status: "building", DeployedAt: d4.CreatedAt},
			{ID: d3.ID, ProjectName: "Recipes", Subdomain: "recipes", Status: "failed", BuildTime: ms(1200), DeployedAt: d3.CreatedAt},
			{ID: d2.ID, ProjectName: "Portfolio", Subdomain: "portfolio", Status: "live", BuildTime: ms(41600), DeployedAt: d2.CreatedAt},
			{ID: d1.ID, ProjectName: "Portfolio", Subdomain: "portfolio", Status: "stopped", BuildTime: ms(41600), DeployedAt: d1.CreatedAt},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dashboard (-want +got):\n%s", diff)
	}
	// The SPEC's names, and null for what is not there.
	for _, s := range []string{`"recentProjects":[{"id":"` + recipes.ID + `","name":"Recipes","type":"react","status":"draft","lastDeployed":"`,
		`"url":null,"sleeping":false}`, `"buildTime":null,"deployedAt":"`, `"projectName":"Recipes","subdomain":"recipes"`} {
		if !strings.Contains(rec.Body.String(), s) {
			t.Errorf("answer does not contain %s: %s", s, rec.Body.String())
		}
	}

	// The profile's statistics count the same data.
	rec = e.do(request{method: "GET", url: "/api/users/stats", headers: bearer(e.token)})
	if got, want := strings.TrimSpace(rec.Body.String()),
		`{"success":true,"data":{"stats":{"totalProjects":2,"totalDeployments":4,"activeDeployments":1,"accountAge":40,"storage":{"used":0,"budget":1073741824,"files":0,"logs":0,"data":0,"sites":0,"apps":0,"rollbacks":0}}}}`; got != want {
		t.Errorf("stats: got %s, want %s", got, want)
	}

	// Bob sees an empty dashboard; nobody signed out sees one at all.
	rec = e.do(request{method: "GET", url: "/api/dashboard", headers: bearer(bob)})
	if got, want := strings.TrimSpace(rec.Body.String()), `{"success":true,"data":{"stats":{"totalProjects":0,"activeDeployments":0,`+
		`"totalDeployments":0,"failedDeployments":0,"thisMonth":0},"recentProjects":[],"recentDeployments":[]}}`; got != want {
		t.Errorf("bob's dashboard: got %s, want %s", got, want)
	}
	if rec := e.do(request{method: "GET", url: "/api/dashboard"}); rec.Code != 401 {
		t.Errorf("signed out: got %d, want 401", rec.Code)
	}
}

// TestGitHubNotifications checks the notifications of connecting,
// disconnecting and of GitHub refusing the stored access.
func TestGitHubNotifications(t *testing.T) {
	t.Parallel()
	g := withGitHub(t, newEnv(t), true)
	g.link.Notify = g.accounts.Notify
	g.do(request{method: "DELETE", url: "/api/notifications", headers: bearer(g.token)})

	g.connect(t, g.token, "alice-gh")
	g.do(request{method: "POST", url: "/api/auth/github/disconnect", headers: bearer(g.token)})
	g.do(request{method: "POST", url: "/api/auth/github/disconnect", headers: bearer(g.token)}) // nothing connected: silent
	g.connect(t, g.token, "alice-gh")
	g.aliceGH.Token = "gho_revoked"
	g.gh.AuthorizeAs("alice-gh") // orders the change before the server reads it
	if rec := g.do(request{method: "POST", url: "/api/auth/github/refresh", headers: bearer(g.token)}); rec.Code != 400 {
		t.Fatalf("refresh with a revoked token: %d %s", rec.Code, rec.Body.String())
	}

	type row struct{ Type, Title, Message, ActionURL string }
	var got []row
	for _, n := range g.notifications(t, g.token, "").Notifications {
		got = append(got, row{n.Type, n.Title, n.Message, n.ActionURL})
	}
	connected := row{"success", "GitHub connected", "@alice-gh is connected: 2 repositories ready to deploy.", "/github-integration"}
	want := []row{
		{"warning", "GitHub access revoked", "GitHub no longer accepts Gantry's access to @alice-gh, so it was disconnected. " +
			"Connect again to build private repositories.", "/github-integration"},
		connected,
		{"info", "GitHub disconnected", "@alice-gh was disconnected. Your projects stay; private repositories cannot be built " +
			"until you connect again.", "/github-integration"},
		connected,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
