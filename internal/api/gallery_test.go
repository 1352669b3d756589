package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// seedApp is one app of the gallery fixture: what is stored and what the
// gallery must show.
type seedApp struct {
	name, description, typ, author string
	age                            time.Duration
	views, likes                   int
	status                         string // default live
	inactive                       bool   // not its project's active deployment
	id                             string // filled by seedGallery
	createdAt                      time.Time
}

// galleryAuthors are the fixture's accounts: username → full name.
var galleryAuthors = map[string]string{"ada": "Ada Lovelace", "grace": "Grace Hopper", "linus": "Linus Torvalds"}

// galleryFixture is the seeded gallery: ten listed apps across every
// category and two types outside them, and four apps that must never show.
// Views and likes are chosen so that no two trending scores are close.
func galleryFixture() []*seedApp {
	h, d := time.Hour, 24*time.Hour
	return []*seedApp{
		{name: "Pixel Garden", description: "A cozy plant tracker", typ: "react", author: "ada", age: 2 * h, views: 3, likes: 1},
		{name: "Weather Now", description: "Forecasts for your campus", typ: "vue", author: "grace", age: 1 * d, views: 10, likes: 4},
		{name: "Quiz Master", description: "Flashcards with spaced repetition", typ: "angular", author: "linus", age: 3 * d},
		{name: "next blog", description: "Notes about compilers", typ: "nextjs", author: "ada", age: 10 * d, views: 1, likes: 2},
		{name: "Flask API", description: "REST api for recipes", typ: "python", author: "grace", age: 5 * h, views: 6},
		{name: "Chat Server", description: "Websocket chat for the dorm", typ: "nodejs", author: "linus", age: 40 * d, views: 2, likes: 2},
		{name: "Portfolio", description: "Plain HTML portfolio of Ada", typ: "static", author: "ada", age: 20 * d, views: 7, likes: 3},
		{name: "Landing Page", description: "100% hand-written landing_page", typ: "static", author: "grace", age: 30 * time.Minute, likes: 5},
		{name: "Vanilla Game", description: "Snake in plain JS", typ: "vanilla", author: "linus", age: 7 * d, views: 4, likes: 1},
		{name: "Express Todo", description: "", typ: "express", author: "ada", age: 90 * d, views: 12},
		{name: "Hidden Stopped", description: "never listed", typ: "react", author: "ada", age: h, status: gantry.DeploymentStopped},
		{name: "Hidden Failed", description: "never listed", typ: "static", author: "grace", age: h, status: gantry.DeploymentFailed},
		{name: "Hidden Building", description: "never listed", typ: "vue", author: "linus", age: h, status: gantry.DeploymentBuilding},
		{name: "Hidden Inactive", description: "never listed", typ: "react", author: "ada", age: h, inactive: true},
	}
}

// listed reports whether the gallery must show a.
func (a *seedApp) listed() bool {
	return (a.status == "" || a.status == gantry.DeploymentLive) && !a.inactive
}

// seedGallery stores the fixture in e's database, with its views and likes
// recorded through the store by distinct visitors.
func seedGallery(t *testing.T, e *testEnv) []*seedApp {
	t.Helper()
	ctx := context.Background()
	users := map[string]*gantry.User{}
	for username, fullName := range galleryAuthors {
		users[username] = storetest.MustCreateUser(t, e.db, username, fullName)
	}
	apps := galleryFixture()
	for _, a := range apps {
		a.createdAt = e.now.Add(-a.age)
		_, d := storetest.MustCreateApp(t, e.db, storetest.App{Owner: users[a.author], Name: a.name,
			Description: a.description, Type: a.typ, CreatedAt: a.createdAt, Status: a.status, Inactive: a.inactive})
		a.id = d.ID
		if !a.listed() {
			continue
		}
		for i := 0; i < a.views; i++ {
			if _, err := e.db.Gallery().RecordView(ctx, a.id, fmt.Sprint("visitor:seed-", i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < a.likes; i++ {
			if _, _, err := e.db.Gallery().ToggleLike(ctx, a.id, fmt.Sprint("visitor:seed-", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return apps
}

// expectGallery is the reference implementation of the list: the names of
// the listed apps matching category and search, in the order of sort.
func expectGallery(apps []*seedApp, category, search, sortBy string, now time.Time) []string {
	var out []*seedApp
	needle := strings.ToLower(search)
	for _, a := range apps {
		if !a.listed() || (category != gantry.CategoryAll && gantry.CategoryOf(a.typ) != category) {
			continue
		}
		hay := strings.ToLower(strings.Join([]string{a.name, a.description, galleryAuthors[a.author], a.author}, "\n"))
		if needle != "" && !strings.Contains(hay, needle) {
			continue
		}
		out = append(out, a)
	}
	newer := func(a, b *seedApp) int { return b.createdAt.Compare(a.createdAt) }
	slices.SortStableFunc(out, func(a, b *seedApp) int {
		switch sortBy {
		case gantry.SortOldest:
			return a.createdAt.Compare(b.createdAt)
		case gantry.SortName:
			if c := strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name)); c != 0 {
				return c
			}
		case gantry.SortPopular:
			if a.likes != b.likes {
				return b.likes - a.likes
			}
			if a.views != b.views {
				return b.views - a.views
			}
		case gantry.SortTrending:
			sa := gantry.TrendingScore(a.views, a.likes, a.createdAt, now)
			sb := gantry.TrendingScore(b.views, b.likes, b.createdAt, now)
			if sa != sb {
				if sa > sb {
					return -1
				}
				return 1
			}
		}
		return newer(a, b)
	})
	names := []string{}
	for _, a := range out {
		names = append(names, a.name)
	}
	return names
}

// galleryList is the list's answer as the tests read it.
type galleryList struct {
	Deployments []gantry.PublicDeployment `json:"deployments"`
	Total       int                       `json:"total"`
	Page        int                       `json:"page"`
	Limit       int                       `json:"limit"`
	Offset      int                       `json:"offset"`
	HasMore     bool                      `json:"hasMore"`
	Stats       gantry.GalleryStats       `json:"stats"`
	Categories  gantry.CategoryCounts     `json:"categories"`
}

func (e *testEnv) gallery(t *testing.T, query string, headers map[string]string) galleryList {
	t.Helper()
	rec := e.do(request{method: "GET", url: "/api/deployments/public?" + query, headers: headers})
	if rec.Code != http.StatusOK {
		t.Fatalf("GET ?%s: got %d %s", query, rec.Code, rec.Body.String())
	}
	var l galleryList
	if err := json.Unmarshal(decodeAnswer(t, rec).Data, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

func listNames(l galleryList) []string {
	out := []string{}
	for _, d := range l.Deployments {
		out = append(out, d.Project.Name)
	}
	return out
}

// TestGalleryCombinations checks every sort × category × search on the
// seeded gallery against the reference implementation: the order, the
// total, the chip counts under the search and the header counts.
func TestGalleryCombinations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	apps := seedGallery(t, e)
	searches := []string{"", "ada", "GRACE", "lovelace", "blog", "web", "api", "100%", "%", "s_c", "landing_", "hidden", "zzz-nothing"}
	for _, sortBy := range append([]string{""}, gantry.GallerySorts...) {
		for _, category := range append([]string{""}, gantry.GalleryCategories...) {
			for _, search := range searches {
				q := url.Values{}
				for k, v := range map[string]string{"sort": sortBy, "category": category, "search": search} {
					if v != "" {
						q.Set(k, v)
					}
				}
				t.Run(q.Encode(), func(t *testing.T) {
					t.Parallel()
					wantSort, wantCategory := cmpOr(sortBy, gantry.SortRecent), cmpOr(category, gantry.CategoryAll)
					want := expectGallery(apps, wantCategory, search, wantSort, e.now)
					got := e.gallery(t, q.Encode(), nil)
					if !slices.Equal(listNames(got), want) {
						t.Fatalf("got %q, want %q", listNames(got), want)
					}
					if got.Total != len(want) || got.HasMore || got.Page != 1 || got.Limit != 24 || got.Offset != 0 {
						t.Errorf("got total %d hasMore %v page %d limit %d offset %d, want total %d on one page of 24",
							got.Total, got.HasMore, got.Page, got.Limit, got.Offset, len(want))
					}
					wantCounts := gantry.CategoryCounts{
						All:      len(expectGallery(apps, gantry.CategoryAll, search, wantSort, e.now)),
						Frontend: len(expectGallery(apps, gantry.CategoryFrontend, search, wantSort, e.now)),
						Backend:  len(expectGallery(apps, gantry.CategoryBackend, search, wantSort, e.now)),
						Static:   len(expectGallery(apps, gantry.CategoryStatic, search, wantSort, e.now)),
					}
					if got.Categories != wantCounts {
						t.Errorf("got categories %+v, want %+v", got.Categories, wantCounts)
					}
					if got.Stats != (gantry.GalleryStats{Apps: 10, Developers: 3}) {
						t.Errorf("got stats %+v, want 10 apps by 3 developers", got.Stats)
					}
					// Pages of 3 put together give the same list.
					var paged []string
					for page := 1; ; page++ {
						p := e.gallery(t, q.Encode()+fmt.Sprintf("&limit=3&page=%d", page), nil)
						paged = append(paged, listNames(p)...)
						if p.Total != len(want) || p.HasMore != (page*3 < len(want)) {
							t.Fatalf("page %d: total %d hasMore %v", page, p.Total, p.HasMore)
						}
						if !p.HasMore {
							break
						}
					}
					if !slices.Equal(paged, want) && !(len(paged) == 0 && len(want) == 0) {
						t.Errorf("pages of 3: got %q, want %q", paged, want)
					}
				})
			}
		}
	}
	// Every app's counts and fields as stored.
	l := e.gallery(t, "limit=100", nil)
	byName := map[string]*seedApp{}
	for _, a := range apps {
		byName[a.name] = a
	}
	for _, d := range l.Deployments {
		a := byName[d.Project.Name]
		if d.ID != a.id || d.Views != a.views || d.LikeCount != a.likes || !d.CreatedAt.Equal(a.createdAt) ||
			d.Project.Type != a.typ || d.Project.Description != a.description || d.User.Username != a.author ||
			d.User.FullName != galleryAuthors[a.author] || !strings.HasSuffix(d.URL, ".localhost:8080") || d.Liked {
			t.Errorf("got %+v, want %+v", d, *a)
		}
	}
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func TestGalleryQueryValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	refused := func(query, message string) scenario {
		return scenario{name: query, request: request{method: "GET", url: "/api/deployments/public?" + query},
			wantStatus: 400, wantMessage: message}
	}
	runScenariosOn(t, e, []scenario{
		refused("sort=best", "sort must be one of recent, oldest, name, popular, trending"),
		refused("category=games", "category must be one of all, frontend, backend, static"),
		refused("limit=0", "limit must be a whole number from 1 to 100"),
		refused("limit=101", "limit must be a whole number from 1 to 100"),
		refused("limit=ten", "limit must be a whole number from 1 to 100"),
		refused("page=0", "page must be a whole number from 1 to 1000000"),
		refused("page=-1", "page must be a whole number from 1 to 1000000"),
		refused("offset=-5", "offset must be a whole number from 0 to 100000000"),
		refused("page=2&offset=3", "Use page or offset, not both"),
		refused("search="+strings.Repeat("x", 101), "search cannot exceed 100 characters"),
	})
	// Accepted: case and spaces, offset paging, the largest page, an empty gallery.
	for _, q := range []string{"sort=TRENDING&category=%20Frontend%20", "offset=7&limit=100", "search=%20%20", "category=all&sort=name&page=3"} {
		if rec := e.do(request{method: "GET", url: "/api/deployments/public?" + q}); rec.Code != 200 {
			t.Errorf("?%s: got %d %s", q, rec.Code, rec.Body.String())
		}
	}
	l := e.gallery(t, "offset=7&limit=5", nil)
	if l.Page != 2 || l.Offset != 7 || l.Limit != 5 || len(l.Deployments) != 0 || l.Total != 0 {
		t.Errorf("got %+v", l)
	}
}

// TestGalleryPublicShape checks that an app's answer holds exactly the
// public fields, whoever asks (no email, ids of users, environment, logs).
func TestGalleryPublicShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seedGallery(t, e)
	// shape checks the keys of every app listed, and that there are 10.
	shape := func(t *testing.T, _ *testEnv, rec *httptest.ResponseRecorder) {
		var raw struct {
			Data struct {
				Deployments []map[string]json.RawMessage `json:"deployments"`
			} `json:"data"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		if len(raw.Data.Deployments) != 10 {
			t.Fatalf("got %d apps, want 10", len(raw.Data.Deployments))
		}
		for _, d := range raw.Data.Deployments {
			if got := sortedKeys(d); got != "_id,createdAt,likeCount,liked,project,sleeping,url,user,views" {
				t.Fatalf("app keys %s", got)
			}
			var project, user map[string]json.RawMessage
			json.Unmarshal(d["project"], &project)
			json.Unmarshal(d["user"], &user)
			if got := sortedKeys(project); got != "description,name,type" {
				t.Errorf("project keys %s", got)
			}
			if got := sortedKeys(user); got != "fullName,username" {
				t.Errorf("user keys %s", got)
			}
		}
	}
	secrets := []string{"@example.com", "email", "environment", "buildLogs", "buildInfo", "metadata", "password", "subdomain", "isPublic", "status"}
	var scenarios []scenario
	for name, headers := range map[string]map[string]string{"anonymous": nil, "alice": bearer(e.token), "bad token": bearer("not-a-token")} {
		scenarios = append(scenarios, scenario{name: name,
			request:    request{method: "GET", url: "/api/deployments/public?limit=100", headers: headers},
			wantStatus: 200, wantAbsent: secrets, after: shape})
	}
	runScenariosOn(t, e, scenarios)
}

func sortedKeys(m map[string]json.RawMessage) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

// visitorCookie returns the visitor cookie an answer sets, or nil.
func visitorCookie(rec *httptest.ResponseRecorder) *http.Cookie {
	for _, c := range rec.Result().Cookies() {
		if c.Name == api.VisitorCookie {
			return c
		}
	}
	return nil
}

func cookieHeader(c *http.Cookie) map[string]string {
	return map[string]string{"Cookie": c.Name + "=" + c.Value}
}

func TestGalleryLikesAndViews(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	withDeploys(t, e, false) // wake hints
	apps := seedGallery(t, e)
	app := apps[2] // Quiz Master: no views or likes yet
	base := "/api/deployments/public/" + app.id

	// A visitor's first contact sets the cookie.
	rec := e.do(request{method: "GET", url: base + "/like-status"})
	c := visitorCookie(rec)
	if rec.Code != 200 || c == nil {
		t.Fatalf("first contact: %d, cookie %v", rec.Code, c)
	}
	// A platform cookie: __Host-, Secure (localhost is a secure context), Path=/, no Domain.
	if c.Name != "__Host-gantry_visitor" || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || !c.Secure || c.Path != "/" ||
		c.Domain != "" || c.MaxAge != 365*24*3600 || len(c.Value) != 22 {
		t.Fatalf("cookie %+v", c)
	}
	if dataField[bool](t, rec, "liked") {
		t.Fatal("liked before liking")
	}
	visitor := cookieHeader(c)
	toggle := func(headers map[string]string) (int, bool) {
		t.Helper()
		rec := e.do(request{method: "POST", url: base + "/like", headers: headers})
		if rec.Code != 200 {
			t.Fatalf("like: %d %s", rec.Code, rec.Body.String())
		}
		return dataField[int](t, rec, "likeCount"), dataField[bool](t, rec, "liked")
	}
	status := func(headers map[string]string) bool {
		t.Helper()
		return dataField[bool](t, e.do(request{method: "GET", url: base + "/like-status", headers: headers}), "liked")
	}
	if n, liked := toggle(visitor); n != 1 || !liked {
		t.Fatalf("visitor likes: got %d %v", n, liked)
	}
	if rec := e.do(request{method: "POST", url: base + "/like", headers: visitor}); visitorCookie(rec) != nil {
		t.Fatal("a known visitor got a new cookie")
	} else if dataField[int](t, rec, "likeCount") != 0 {
		t.Fatalf("visitor takes the like back: %s", rec.Body.String())
	}
	toggle(visitor)
	// Alice is known by her account, with or without a cookie, and never gets one.
	rec = e.do(request{method: "POST", url: base + "/like", headers: bearer(e.token)})
	if visitorCookie(rec) != nil || dataField[int](t, rec, "likeCount") != 2 {
		t.Fatalf("alice likes: %s", rec.Body.String())
	}
	if !status(merge(bearer(e.token), cookieHeader(&http.Cookie{Name: api.VisitorCookie, Value: strings.Repeat("b", 22)}))) {
		t.Fatal("alice with another visitor's cookie: not liked")
	}
	if !status(visitor) || status(cookieHeader(&http.Cookie{Name: api.VisitorCookie, Value: strings.Repeat("c", 22)})) {
		t.Fatal("like status per visitor")
	}
	// A bad token counts as no token; a malformed cookie is replaced.
	if rec := e.do(request{method: "GET", url: base + "/like-status", headers: merge(bearer("expired"), visitor)}); !dataField[bool](t, rec, "liked") {
		t.Fatal("a bad token hid the visitor's like")
	}
	if rec := e.do(request{method: "GET", url: base + "/like-status", headers: map[string]string{"Cookie": api.VisitorCookie + "=../../x"}}); visitorCookie(rec) == nil {
		t.Fatal("a malformed cookie was kept")
	}
	// The list says what the caller likes.
	for _, tc := range []struct {
		headers map[string]string
		liked   bool
	}{{visitor, true}, {bearer(e.token), true}, {nil, false}} {
		for _, d := range e.gallery(t, "limit=100", tc.headers).Deployments {
			if d.ID == app.id && (d.Liked != tc.liked || d.LikeCount != 2) {
				t.Errorf("list: got liked %v count %d, want %v 2", d.Liked, d.LikeCount, tc.liked)
			}
		}
	}

	// Views: once per visitor and app per hour.
	start := e.now
	view := func(name string, at time.Duration, headers map[string]string, counted bool) scenario {
		return scenario{name: fmt.Sprintf("view by %s at +%s", name, at),
			setup:      func(*testing.T, *testEnv) string { e.now = start.Add(at); return "" },
			request:    request{method: "POST", url: base + "/view", headers: headers},
			wantStatus: 200, wantData: map[string]string{"counted": fmt.Sprint(counted)}}
	}
	runScenariosOn(t, e, []scenario{
		view("visitor", 0, visitor, true),
		view("visitor", 10*time.Minute, visitor, false),
		view("alice", 10*time.Minute, bearer(e.token), true),
		view("visitor", 59*time.Minute, visitor, false),
		view("visitor", 60*time.Minute, visitor, true),
		view("alice", 61*time.Minute, bearer(e.token), false),
		view("alice", 3*time.Hour, bearer(e.token), true),
		{name: "wake hint for an app that is awake", request: request{method: "POST", url: base + "/wake"},
			wantStatus: 200, wantData: map[string]string{"waking": "false"}},
	})
	for _, d := range e.gallery(t, "limit=100", nil).Deployments {
		if d.ID == app.id && d.Views != 4 {
			t.Fatalf("got %d views, want 4", d.Views)
		}
	}

	// Apps that are not listed answer 404 to everyone.
	var unlisted []scenario
	for _, a := range apps {
		if a.listed() {
			continue
		}
		for _, r := range []request{
			{method: "POST", url: "/api/deployments/public/" + a.id + "/view"},
			{method: "POST", url: "/api/deployments/public/" + a.id + "/like", headers: bearer(e.token)},
			{method: "GET", url: "/api/deployments/public/" + a.id + "/like-status", headers: visitor},
			{method: "POST", url: "/api/deployments/public/" + a.id + "/wake"},
		} {
			unlisted = append(unlisted, scenario{name: r.method + " " + a.name + " " + path.Base(r.url), request: r,
				wantStatus: 404, wantMessage: "App not found"})
		}
	}
	unlisted = append(unlisted, scenario{name: "like an unknown app",
		request: request{method: "POST", url: "/api/deployments/public/nope/like"}, wantStatus: 404})
	runScenariosOn(t, e, unlisted)
}

// TestGalleryConcurrentLikes sends 100 likes from 100 visitors at once
// through the API, then 100 more toggles of which half take a like back.
func TestGalleryConcurrentLikes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	apps := seedGallery(t, e)
	app := apps[0]
	start := app.likes
	cookies := make([]map[string]string, 150)
	for i := range cookies {
		cookies[i] = cookieHeader(&http.Cookie{Name: api.VisitorCookie, Value: fmt.Sprintf("visitor%015d", i)})
	}
	round := func(from, to int) {
		t.Helper()
		var wg sync.WaitGroup
		for i := from; i < to; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec := e.do(request{method: "POST", url: "/api/deployments/public/" + app.id + "/like", headers: cookies[i],
					remote: fmt.Sprintf("203.0.113.%d:1000", i%250)})
				if rec.Code != 200 {
					t.Errorf("like %d: %d %s", i, rec.Code, rec.Body.String())
				}
			}()
		}
		wg.Wait()
	}
	count := func() int {
		for _, d := range e.gallery(t, "limit=100", nil).Deployments {
			if d.ID == app.id {
				return d.LikeCount
			}
		}
		t.Fatal("app not listed")
		return 0
	}
	round(0, 100)
	if got := count(); got != start+100 {
		t.Fatalf("after 100 likes: got %d, want %d", got, start+100)
	}
	round(50, 150) // 50…99 take theirs back, 100…149 like
	if got := count(); got != start+100 {
		t.Fatalf("after 100 more toggles: got %d, want %d", got, start+100)
	}
}

func TestGalleryWriteLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	apps := seedGallery(t, e)
	e.srv.GalleryWrites.Now = func() time.Time { return e.now }
	url := "/api/deployments/public/" + apps[0].id + "/view"
	for i := 0; i < api.GalleryWriteLimit; i++ {
		if rec := e.do(request{method: "POST", url: url, remote: "198.51.100.9:1"}); rec.Code != 200 {
			t.Fatalf("view %d: %d", i, rec.Code)
		}
	}
	rec := e.do(request{method: "POST", url: "/api/deployments/public/" + apps[0].id + "/like", remote: "198.51.100.9:1"})
	if a := decodeAnswer(t, rec); rec.Code != 429 || a.Message != "Too many requests. Please wait a minute and try again." || rec.Header().Get("Retry-After") != "60" {
		t.Fatalf("over the limit: %d %q", rec.Code, a.Message)
	}
	if rec := e.do(request{method: "POST", url: url, remote: "198.51.100.10:1"}); rec.Code != 200 {
		t.Fatalf("another address: %d", rec.Code)
	}
	if rec := e.do(request{method: "GET", url: "/api/deployments/public", remote: "198.51.100.9:1"}); rec.Code != 200 {
		t.Fatalf("reading is not limited: %d", rec.Code)
	}
	e.now = e.now.Add(api.GalleryWriteWindow)
	if rec := e.do(request{method: "POST", url: url, remote: "198.51.100.9:1"}); rec.Code != 200 {
		t.Fatalf("a minute later: %d", rec.Code)
	}
}

// TestGalleryCookieAndRoutes checks the Secure cookie behind an HTTPS proxy and
// that the gallery routes never collide with the owner's deployment routes.
func TestGalleryCookieAndRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.TrustProxy = true
	rec := e.do(request{method: "GET", url: "/api/deployments/public", headers: map[string]string{"X-Forwarded-Proto": "https"}})
	if c := visitorCookie(rec); c == nil || !c.Secure || !c.HttpOnly {
		t.Fatalf("cookie %+v", c)
	}
	// The gallery's routes take precedence over /api/deployments/{id}, and
	// the owner's routes still work beside them.
	if rec := e.do(request{method: "GET", url: "/api/deployments/public", headers: bearer(e.token)}); rec.Code != 200 || visitorCookie(rec) != nil {
		t.Fatalf("signed-in list: %d %s", rec.Code, rec.Body.String())
	}
	if rec := e.do(request{method: "GET", url: "/api/deployments/some-id"}); rec.Code != 401 {
		t.Fatalf("GET /api/deployments/{id} without a token: %d", rec.Code)
	}
	if rec := e.do(request{method: "PUT", url: "/api/deployments/public"}); rec.Code != 405 || rec.Header().Get("Allow") == "" {
		t.Fatalf("PUT: %d %v", rec.Code, rec.Header())
	}
}

// TestGalleryFollowsDeployments deploys a real static site: it is listed
// once live, gone while stopped (likes and views then answer 404), back
// after a restart with its likes, and gone when deleted.
func TestGalleryFollowsDeployments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, true)
	project := d.createProject(t, d.site(t, "site", "hello"), "My Site")
	rec := e.do(request{method: "POST", url: "/api/deployments", headers: bearer(e.token), body: `{"projectId":"` + project + `"}`})
	id := dataField[gantry.Deployment](t, rec, "deployment").ID
	if l := e.gallery(t, "", nil); l.Total != 0 {
		t.Fatalf("listed before live: %+v", l)
	}
	dep := d.waitDeployment(t, id)
	if dep.Status != gantry.DeploymentLive {
		t.Fatalf("status %s", dep.Status)
	}
	l := e.gallery(t, "search=alice", nil)
	if l.Total != 1 || l.Deployments[0].ID != id || l.Deployments[0].URL != "http://my-site.localhost:8080" ||
		l.Deployments[0].User.FullName != "Alice Liddell" || l.Deployments[0].Project.Type != "static" || l.Stats.Apps != 1 {
		t.Fatalf("got %+v", l)
	}
	if rec := e.do(request{method: "POST", url: "/api/deployments/public/" + id + "/like", headers: bearer(e.token)}); dataField[int](t, rec, "likeCount") != 1 {
		t.Fatalf("like: %s", rec.Body.String())
	}
	e.do(request{method: "POST", url: "/api/deployments/hosting/stop/my-site", headers: bearer(e.token)})
	if l := e.gallery(t, "", nil); l.Total != 0 || l.Stats.Apps != 0 {
		t.Fatalf("listed while stopped: %+v", l)
	}
	if rec := e.do(request{method: "POST", url: "/api/deployments/public/" + id + "/like"}); rec.Code != 404 {
		t.Fatalf("like while stopped: %d", rec.Code)
	}
	e.do(request{method: "POST", url: "/api/deployments/hosting/restart/my-site", headers: bearer(e.token)})
	if l := e.gallery(t, "", bearer(e.token)); l.Total != 1 || l.Deployments[0].LikeCount != 1 || !l.Deployments[0].Liked {
		t.Fatalf("after restart: %+v", l)
	}
	e.do(request{method: "DELETE", url: "/api/deployments/" + id, headers: bearer(e.token)})
	if l := e.gallery(t, "", nil); l.Total != 0 {
		t.Fatalf("listed after delete: %+v", l)
	}
}
