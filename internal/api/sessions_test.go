package api_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/auth"
)

// signIn signs alice in from remote and returns the new session's token.
func (e *testEnv) signIn(t *testing.T, remote string) string {
	t.Helper()
	rec := login(e, remote, "alice@example.com", alicePass)
	if rec.Code != 200 {
		t.Fatalf("sign in: got %d %s", rec.Code, rec.Body.String())
	}
	return dataField[string](t, rec, "token")
}

func (e *testEnv) me(token string) *httptest.ResponseRecorder {
	return e.do(request{method: "GET", url: "/api/auth/me", headers: bearer(token)})
}

// wantSignedOut checks that token is refused as an ended session is.
func wantSignedOut(t *testing.T, e *testEnv, name, token string) {
	t.Helper()
	rec := e.me(token)
	if rec.Code != 401 || decodeAnswer(t, rec).Message != auth.MsgSignIn ||
		rec.Header().Get("WWW-Authenticate") != `Bearer realm="gantry"` {
		t.Errorf("%s: got %d %s, want 401 %q", name, rec.Code, rec.Body.String(), auth.MsgSignIn)
	}
}

func wantSignedIn(t *testing.T, e *testEnv, name, token string) {
	t.Helper()
	if rec := e.me(token); rec.Code != 200 {
		t.Errorf("%s: got %d %s, want 200", name, rec.Code, rec.Body.String())
	}
}

func TestLogout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.signIn(t, "192.0.2.1:1")
	rec := e.do(request{method: "POST", url: "/api/auth/logout", headers: bearer(e.token)})
	if rec.Code != 200 || rec.Body.String() != "{\"success\":true,\"data\":{}}\n" {
		t.Fatalf("logout: got %d %s", rec.Code, rec.Body.String())
	}
	// The token stops working at once, for every call; the other session goes on.
	wantSignedOut(t, e, "the signed-out token", e.token)
	if rec := e.do(request{method: "GET", url: "/api/projects", headers: bearer(e.token)}); rec.Code != 401 {
		t.Errorf("the signed-out token on another call: got %d", rec.Code)
	}
	wantSignedIn(t, e, "the other session", other)
	// Signing out again with the ended token, or with none, is refused.
	runScenariosOn(t, e, []scenario{
		{name: "logout again", request: request{method: "POST", url: "/api/auth/logout", headers: bearer(e.token)},
			wantStatus: 401, wantMessage: auth.MsgSignIn},
		{name: "logout without a token", request: request{method: "POST", url: "/api/auth/logout"},
			wantStatus: 401, wantMessage: auth.MsgSignIn},
		{name: "GET logout", request: request{method: "GET", url: "/api/auth/logout", headers: bearer(other)}, wantStatus: 405},
	})
	wantSignedIn(t, e, "the other session after the refused calls", other)
	// Signing in again works.
	wantSignedIn(t, e, "a new session", e.signIn(t, "192.0.2.1:1"))
}

func TestLogoutAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tokens := []string{e.token, e.signIn(t, "192.0.2.1:1"), e.signIn(t, "192.0.2.2:1")}
	_, bob, err := e.accounts.Register(context.Background(), "x", gantry.Registration{
		Username: "bob", Email: "bob@example.com", Password: "bob-secret", FullName: "Bob"})
	if err != nil {
		t.Fatal(err)
	}
	rec := e.do(request{method: "POST", url: "/api/auth/logout-all", headers: bearer(tokens[1])})
	if rec.Code != 200 || dataField[int](t, rec, "ended") != 3 {
		t.Fatalf("logout-all: got %d %s, want 200 with 3 ended", rec.Code, rec.Body.String())
	}
	for i, tok := range tokens {
		wantSignedOut(t, e, "alice's session "+string(rune('1'+i)), tok)
	}
	wantSignedIn(t, e, "another account's session", bob)
	if n, _ := e.db.CountSessions(context.Background(), e.alice.ID); n != 0 {
		t.Errorf("%d sessions of alice left, want 0", n)
	}
	if rec := e.do(request{method: "POST", url: "/api/auth/logout-all"}); rec.Code != 401 {
		t.Errorf("logout-all without a token: got %d", rec.Code)
	}
	wantSignedIn(t, e, "a new session", e.signIn(t, "192.0.2.1:1"))
}

func TestPasswordChangeEndsOtherSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	others := []string{e.signIn(t, "192.0.2.1:1"), e.signIn(t, "192.0.2.2:1")}
	put := func(token, body string) *httptest.ResponseRecorder {
		return e.do(request{method: "PUT", url: "/api/auth/change-password", headers: bearer(token), body: body})
	}
	// A refused change ends nothing.
	if rec := put(e.token, `{"currentPassword":"wrong-one","newPassword":"new-secret"}`); rec.Code != 400 {
		t.Fatalf("wrong current password: got %d", rec.Code)
	}
	for _, tok := range others {
		wantSignedIn(t, e, "another session after a refused change", tok)
	}
	if rec := put(e.token, `{"currentPassword":"secret123","newPassword":"new-secret"}`); rec.Code != 200 {
		t.Fatalf("change password: got %d %s", rec.Code, rec.Body.String())
	}
	wantSignedIn(t, e, "the session that changed the password", e.token)
	for _, tok := range others {
		wantSignedOut(t, e, "another session", tok)
	}
	if n, _ := e.db.CountSessions(context.Background(), e.alice.ID); n != 1 {
		t.Errorf("%d sessions of alice left, want 1", n)
	}
}
