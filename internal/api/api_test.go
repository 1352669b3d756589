package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/auth"
	"github.com/gantryhq/gantry/internal/notify"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

const (
	testSecret = "test-secret-key-0123456789abcdef0123456789"
	alicePass  = "secret123"
)

// testEnv is a real Server over a fresh database, with one registered user
// "alice" (alice@example.com, password secret123).
type testEnv struct {
	srv      *api.Server
	db       *store.DB
	accounts *auth.Service
	tokens   *auth.Tokens
	logs     *api.SyncBuffer
	alice    *gantry.User
	token    string // alice's
	now      time.Time
}

// webFS is the web app the tests serve.
var webFS = fstest.MapFS{
	"index.html":              {Data: []byte("<!doctype html><title>Gantry</title><div id=root></div>")},
	"favicon.svg":             {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`)},
	"assets/index-AbC123.js":  {Data: []byte("console.log('app')")},
	"assets/index-AbC123.css": {Data: []byte("body{}")},
	".gitkeep":                {Data: []byte("")},
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	db := storetest.MustOpenDB(t)
	passwords, err := auth.NewPasswords(1)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := auth.NewTokens(testSecret, 7*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{db: db, tokens: tokens, logs: &api.SyncBuffer{}, now: time.Now().UTC().Truncate(time.Millisecond)}
	clock := func() time.Time { return e.now }
	db.Now, tokens.Now = clock, clock
	e.accounts = auth.NewService(db, passwords, tokens)
	e.accounts.Notify = &notify.Service{Store: db.Notifications(), Logger: slog.New(slog.NewJSONHandler(e.logs, nil))}
	e.accounts.SetNow(clock)
	e.srv = api.NewServer()
	e.srv.Accounts, e.srv.Users, e.srv.Database, e.srv.Gallery = e.accounts, db, db, db.Gallery()
	e.srv.Notifications, e.srv.Dashboards = db.Notifications(), db
	e.srv.Version = "test-version"
	e.srv.PublicHost, e.srv.LiveDomain = "localhost", "localhost"
	e.srv.Web = webFS
	e.srv.Now = clock
	e.srv.Logger = slog.New(slog.NewJSONHandler(e.logs, nil))

	e.alice, e.token, err = e.accounts.Register(context.Background(), "198.51.100.1", gantry.Registration{
		Username: "alice", Email: "alice@example.com", Password: alicePass, FullName: "Alice Liddell",
	})
	if err != nil {
		t.Fatal(err)
	}
	e.accounts.RegisterByIP.Reset("198.51.100.1")
	return e
}

// request is one HTTP request a test sends.
type request struct {
	method, url, body string
	host              string // default "localhost:8080"
	remote            string // client address, default "192.0.2.10:1234"
	headers           map[string]string
}

func (e *testEnv) do(r request) *httptest.ResponseRecorder {
	var body io.Reader = http.NoBody
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req := httptest.NewRequest(r.method, r.url, body)
	req.Host = "localhost:8080"
	if r.host != "" {
		req.Host = r.host
	}
	req.RemoteAddr = "192.0.2.10:1234"
	if r.remote != "" {
		req.RemoteAddr = r.remote
	}
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	return rec
}

// bearer returns the Authorization header of a token.
func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// answer is a decoded API answer.
type answer struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func decodeAnswer(t *testing.T, rec *httptest.ResponseRecorder) answer {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("got Content-Type %q, want JSON; body %q", ct, rec.Body.String())
	}
	var a answer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("answer is not JSON: %v: %q", err, rec.Body.String())
	}
	return a
}

// dataField decodes one field of an answer's data.
func dataField[T any](t *testing.T, rec *httptest.ResponseRecorder, field string) T {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(decodeAnswer(t, rec).Data, &m); err != nil {
		t.Fatalf("data is not an object: %v: %s", err, rec.Body.String())
	}
	var v T
	if err := json.Unmarshal(m[field], &v); err != nil {
		t.Fatalf("data.%s: %v: %s", field, err, rec.Body.String())
	}
	return v
}

// scenario is one request and what its answer must be.
type scenario struct {
	name string
	// setup runs before the request; it may return a token to send as
	// bearer (overriding auth).
	setup func(t *testing.T, e *testEnv) string
	// prepare runs after setup and completes the scenario from what setup
	// made: its request (an id, a body, a cookie) or what the answer must
	// hold.
	prepare func(t *testing.T, e *testEnv, sc *scenario)
	// auth sends alice's token when true.
	auth bool
	request
	wantStatus   int      // 0: any
	wantMessage  string   // the exact message of a failure
	wantFailure  bool     // a JSON failure answer, whatever its message
	wantContains []string // substrings of the body
	wantAbsent   []string // substrings the body must not hold
	wantHeaders  map[string]string
	// wantData maps paths in the answer's data ("project.name") to the
	// JSON each must hold (`"site"`, `3`, `true`).
	wantData map[string]string
	// unchanged checks that alice and the user count are as before.
	unchanged bool
	after     func(t *testing.T, e *testEnv, rec *httptest.ResponseRecorder)
}

// run runs the scenario against a fresh environment of its own, in
// parallel with the others.
func (sc scenario) run(t *testing.T) {
	t.Parallel()
	sc.check(t, newEnv(t))
}

// check sends the scenario's request to e and checks the answer.
func (sc scenario) check(t *testing.T, e *testEnv) {
	t.Helper()
	var token string
	if sc.setup != nil {
		token = sc.setup(t, e)
	}
	if sc.prepare != nil {
		sc.prepare(t, e, &sc)
	}
	req := sc.request
	if sc.auth && token == "" {
		token = e.token
	}
	if token != "" {
		req.headers = merge(bearer(token), req.headers)
	}
	beforeUser, _ := e.db.FindUserByID(context.Background(), e.alice.ID)
	beforeCount := e.userCount(t)

	rec := e.do(req)
	if sc.wantStatus != 0 && rec.Code != sc.wantStatus {
		t.Fatalf("got status %d, want %d; body %s", rec.Code, sc.wantStatus, rec.Body.String())
	}
	if sc.wantMessage != "" || sc.wantFailure {
		a := decodeAnswer(t, rec)
		if a.Success || (sc.wantMessage != "" && a.Message != sc.wantMessage) {
			t.Errorf("got success %v message %q, want failure %q", a.Success, a.Message, sc.wantMessage)
		}
	}
	for path, want := range sc.wantData {
		if got := dataPath(t, rec, path); got != want {
			t.Errorf("data.%s = %s, want %s", path, got, want)
		}
	}
	body := rec.Body.String()
	for _, s := range sc.wantContains {
		if !strings.Contains(body, s) {
			t.Errorf("body does not contain %q: %s", s, body)
		}
	}
	for _, s := range sc.wantAbsent {
		if strings.Contains(body, s) {
			t.Errorf("body contains %q: %s", s, body)
		}
	}
	for k, v := range sc.wantHeaders {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if sc.unchanged {
		after, _ := e.db.FindUserByID(context.Background(), e.alice.ID)
		if beforeUser == nil || after == nil || *beforeUser.LastLogin != *after.LastLogin ||
			beforeUser.UpdatedAt != after.UpdatedAt || beforeUser.PasswordHash != after.PasswordHash ||
			beforeUser.Username != after.Username || beforeUser.Email != after.Email || beforeUser.FullName != after.FullName {
			t.Errorf("alice changed: before %+v, after %+v", beforeUser, after)
		}
		if n := e.userCount(t); n != beforeCount {
			t.Errorf("got %d users, want %d", n, beforeCount)
		}
	}
	if sc.after != nil {
		sc.after(t, e, rec)
	}
}

func runScenarios(t *testing.T, scenarios []scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.name, sc.run)
	}
}

// runScenariosInTurn runs each scenario in a fresh environment, one after
// another rather than in parallel: for scenarios whose hooks share the
// test's variables (what setup made, read again by prepare).
func runScenariosInTurn(t *testing.T, scenarios []scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { sc.check(t, newEnv(t)) })
	}
}

// runScenariosOn runs scenarios one after another against e, which they
// share: each sees what the ones before it did.
func runScenariosOn(t *testing.T, e *testEnv, scenarios []scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { sc.check(t, e) })
	}
}

// dataPath returns the JSON at a dotted path of an answer's data, compacted.
func dataPath(t *testing.T, rec *httptest.ResponseRecorder, path string) string {
	t.Helper()
	raw := decodeAnswer(t, rec).Data
	for _, key := range strings.Split(path, ".") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("data.%s: not an object at %q: %s", path, key, rec.Body.String())
		}
		raw = m[key]
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

func merge(a, b map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

// userCount counts the accounts in the database.
func (e *testEnv) userCount(t *testing.T) int {
	t.Helper()
	n, err := e.db.CountUsers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}
