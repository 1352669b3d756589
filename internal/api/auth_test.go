package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/auth"
)

// reg returns a registration body, with fields overridden by kv pairs
// (a value of nil leaves the field out).
func reg(kv ...any) string {
	m := map[string]any{"username": "bob", "email": "bob@example.com", "password": "hunter22", "fullName": "Bob Builder"}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(m, kv[i].(string))
		} else {
			m[kv[i].(string)] = kv[i+1]
		}
	}
	return mustJSON(m)
}

func TestRegister(t *testing.T) {
	t.Parallel()
	post := func(body string) request { return request{method: "POST", url: "/api/auth/register", body: body} }
	invalid := func(name, body, msg string) scenario {
		return scenario{name: name, request: post(body), wantStatus: 400, wantMessage: msg, unchanged: true}
	}
	runScenarios(t, []scenario{
		{
			name: "created with defaults", request: post(reg("email", " Bob@Example.COM ", "username", " Bob_the-2nd ")),
			wantStatus: 201,
			wantContains: []string{`"success":true`, `"username":"Bob_the-2nd"`, `"email":"bob@example.com"`,
				`"fullName":"Bob Builder"`, `"role":"student"`, `"subscription":{"plan":"free","maxProjects":3,"maxDeployments":5,"maxStorage":1073741824}`,
				`"isVerified":false`, `"isActive":true`, `"avatar":""`, `"token":"`, `"_id":"`, `"repos":[]`},
			wantAbsent: []string{"hunter22", "argon2", "passwordHash", "accessToken"},
			after: func(t *testing.T, e *testEnv, rec *httptest.ResponseRecorder) {
				u := dataField[gantry.User](t, rec, "user")
				if u.LastLogin == nil || u.CreatedAt.IsZero() {
					t.Errorf("got lastLogin %v createdAt %v, want both set", u.LastLogin, u.CreatedAt)
				}
				token := dataField[string](t, rec, "token")
				me := e.do(request{method: "GET", url: "/api/auth/me", headers: bearer(token)})
				if me.Code != 200 || dataField[gantry.User](t, me, "user").ID != u.ID {
					t.Errorf("the new token does not sign in: %d %s", me.Code, me.Body.String())
				}
			},
		},
		{name: "full name of 100 characters", request: post(reg("fullName", strings.Repeat("é", 100))), wantStatus: 201},
		{name: "username of 3 characters", request: post(reg("username", "bob")), wantStatus: 201},

		invalid("empty object reports the first rule", `{}`, "Username is required"),
		invalid("username missing", reg("username", nil), "Username is required"),
		invalid("username blank", reg("username", "   "), "Username is required"),
		invalid("username too short", reg("username", "ab"), "Username must be at least 3 characters long"),
		invalid("username with space", reg("username", "bob smith"), "Username can only contain letters, numbers, underscores, and hyphens"),
		invalid("username with non-ASCII letter", reg("username", "bøb"), "Username can only contain letters, numbers, underscores, and hyphens"),
		invalid("username with dot", reg("username", "bob.b"), "Username can only contain letters, numbers, underscores, and hyphens"),
		invalid("username too long", reg("username", strings.Repeat("b", 31)), "Username cannot exceed 30 characters"),
		invalid("email missing", reg("email", nil), "Email is required"),
		invalid("email blank", reg("email", " "), "Email is required"),
		invalid("email without domain", reg("email", "bob@"), "Please enter a valid email address"),
		invalid("email without at", reg("email", "bob.example.com"), "Please enter a valid email address"),
		invalid("email without dot", reg("email", "bob@example"), "Please enter a valid email address"),
		invalid("email with space", reg("email", "bob smith@example.com"), "Please enter a valid email address"),
		invalid("password missing", reg("password", nil), "Password is required"),
		invalid("password too short", reg("password", "12345"), "Password must be at least 6 characters long"),
		invalid("password too long", reg("password", strings.Repeat("p", 129)), "Password cannot exceed 128 characters"),
		invalid("full name missing", reg("fullName", nil), "Full name is required"),
		invalid("full name blank", reg("fullName", "  "), "Full name is required"),
		invalid("full name too long", reg("fullName", strings.Repeat("x", 101)), "Full name cannot exceed 100 characters"),
		invalid("email rule before password rule", reg("email", "nope", "password", "1"), "Please enter a valid email address"),
		invalid("password rule before full name rule", reg("password", "1", "fullName", ""), "Password must be at least 6 characters long"),

		{name: "username taken in another case", request: post(reg("username", "ALICE")), wantStatus: 409, wantMessage: "This username is already taken", unchanged: true},
		{name: "email taken in another case", request: post(reg("email", "Alice@EXAMPLE.com")), wantStatus: 409, wantMessage: "An account with this email already exists", unchanged: true},

		invalid("unknown field cannot make an admin", `{"username":"bob","email":"bob@example.com","password":"hunter22","fullName":"Bob","role":"admin"}`, `Unknown field "role"`),
		invalid("confirm password is not a server field", reg("confirmPassword", "hunter22"), `Unknown field "confirmPassword"`),
		invalid("wrong type", reg("username", 5), `Invalid value for field "username": expected string`),
		invalid("wrong type object", reg("fullName", map[string]any{"a": 1}), `Invalid value for field "fullName": expected string`),
		invalid("malformed", `{"username": "bob",`, "Malformed JSON: unexpected end of input"),
		invalid("malformed trailing comma", `{"username": "bob",}`, "Malformed JSON at byte 20: invalid character '}' looking for beginning of object key string"),
		invalid("not JSON", `username=bob`, "Malformed JSON at byte 1: invalid character 'u' looking for beginning of value"),
		invalid("array", `[]`, "Request body must be a JSON object"),
		invalid("null", `null`, "Request body must be a JSON object"),
		invalid("string", `"bob"`, "Request body must be a JSON object"),
		invalid("trailing data", reg()+` {}`, "Malformed JSON: unexpected data after the object"),
		invalid("trailing garbage", reg()+`x`, "Malformed JSON: unexpected data after the object"),
		{name: "empty body", request: request{method: "POST", url: "/api/auth/register"}, wantStatus: 400,
			wantMessage: "Request body is empty: expected a JSON object", unchanged: true},
		invalid("body over 1 MiB", reg("fullName", strings.Repeat("x", 1<<20)), "Request body too large (limit 1 MiB)"),
	})
}

func TestRegisterRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 10 {
		rec := e.do(request{method: "POST", url: "/api/auth/register", remote: "203.0.113.7:5000",
			body: reg("username", fmt.Sprintf("user%d", i), "email", fmt.Sprintf("user%d@example.com", i))})
		if rec.Code != 201 {
			t.Fatalf("registration %d: got %d %s", i, rec.Code, rec.Body.String())
		}
	}
	rec := e.do(request{method: "POST", url: "/api/auth/register", remote: "203.0.113.7:5001", body: reg()})
	wantTooMany(t, rec, auth.MsgTooManyRegisters, auth.LimitWindow)
	if _, err := e.db.FindUserByEmail(context.Background(), "bob@example.com"); err == nil {
		t.Error("the refused registration created an account")
	}
	// Another client is not limited, nor one in another /64.
	for i, remote := range []string{"203.0.113.8:1", "[2001:db8:0:1::1]:1"} {
		rec = e.do(request{method: "POST", url: "/api/auth/register", remote: remote,
			body: reg("username", fmt.Sprintf("other%d", i), "email", fmt.Sprintf("other%d@example.com", i))})
		if rec.Code != 201 {
			t.Errorf("from %s: got %d %s", remote, rec.Code, rec.Body.String())
		}
	}
	// IPv6 clients are counted by /64.
	for i := range 9 {
		e.do(request{method: "POST", url: "/api/auth/register", remote: fmt.Sprintf("[2001:db8:0:1::%x]:1", i+2),
			body: reg("username", fmt.Sprintf("six%d", i), "email", fmt.Sprintf("six%d@example.com", i))})
	}
	rec = e.do(request{method: "POST", url: "/api/auth/register", remote: "[2001:db8:0:1:ffff::1]:1", body: reg()})
	if rec.Code != 429 {
		t.Errorf("11th registration from one /64: got %d", rec.Code)
	}
	// The window passes.
	e.now = e.now.Add(auth.LimitWindow)
	rec = e.do(request{method: "POST", url: "/api/auth/register", remote: "203.0.113.7:5002", body: reg()})
	if rec.Code != 201 {
		t.Errorf("after the window: got %d %s", rec.Code, rec.Body.String())
	}
}

func TestLogin(t *testing.T) {
	t.Parallel()
	post := func(body string) request { return request{method: "POST", url: "/api/auth/login", body: body} }
	runScenarios(t, []scenario{
		{
			name: "signed in", request: post(`{"email":"alice@example.com","password":"secret123"}`),
			setup: func(t *testing.T, e *testEnv) string {
				e.now = e.now.Add(time.Hour)
				return ""
			},
			wantStatus: 200, wantContains: []string{`"token":"`, `"username":"alice"`},
			wantAbsent: []string{"secret123", "argon2"},
			after: func(t *testing.T, e *testEnv, rec *httptest.ResponseRecorder) {
				u := dataField[gantry.User](t, rec, "user")
				if u.LastLogin == nil || !u.LastLogin.Equal(e.now) {
					t.Errorf("answer lastLogin = %v, want %v", u.LastLogin, e.now)
				}
				stored, _ := e.db.FindUserByID(context.Background(), e.alice.ID)
				if stored.LastLogin == nil || !stored.LastLogin.Equal(e.now) {
					t.Errorf("stored lastLogin = %v, want %v", stored.LastLogin, e.now)
				}
			},
		},
		{name: "email in another case", request: post(`{"email":" ALICE@Example.com ","password":"secret123"}`), wantStatus: 200},
		{name: "wrong password", request: post(`{"email":"alice@example.com","password":"secret124"}`),
			wantStatus: 401, wantMessage: "Invalid email or password", unchanged: true},
		{name: "unknown email", request: post(`{"email":"nobody@example.com","password":"secret123"}`),
			wantStatus: 401, wantMessage: "Invalid email or password", unchanged: true},
		{name: "email missing", request: post(`{"password":"secret123"}`), wantStatus: 400, wantMessage: "Email is required", unchanged: true},
		{name: "password missing", request: post(`{"email":"alice@example.com"}`), wantStatus: 400, wantMessage: "Password is required", unchanged: true},
		{name: "unknown field", request: post(`{"email":"alice@example.com","password":"secret123","rememberMe":true}`),
			wantStatus: 400, wantMessage: `Unknown field "rememberMe"`, unchanged: true},
		{name: "wrong type", request: post(`{"email":"alice@example.com","password":123456}`),
			wantStatus: 400, wantMessage: `Invalid value for field "password": expected string`, unchanged: true},
		{
			name: "deactivated account", request: post(`{"email":"alice@example.com","password":"secret123"}`),
			setup: func(t *testing.T, e *testEnv) string {
				if err := e.db.SetUserActive(context.Background(), e.alice.ID, false); err != nil {
					t.Fatal(err)
				}
				return ""
			},
			wantStatus: 403, wantMessage: auth.MsgInactive,
		},
		{
			name: "deactivated account with a wrong password", request: post(`{"email":"alice@example.com","password":"nope12"}`),
			setup: func(t *testing.T, e *testEnv) string {
				e.db.SetUserActive(context.Background(), e.alice.ID, false)
				return ""
			},
			wantStatus: 401, wantMessage: "Invalid email or password",
		},
		{name: "GET is not allowed", request: request{method: "GET", url: "/api/auth/login"}, wantStatus: 405,
			wantHeaders: map[string]string{"Allow": "POST"}, wantContains: []string{`"success":false`}},
	})
}

func login(e *testEnv, remote, email, password string) *httptest.ResponseRecorder {
	return e.do(request{method: "POST", url: "/api/auth/login", remote: remote,
		body: mustJSON(map[string]string{"email": email, "password": password})})
}

// wantTooMany checks a 429 answer: msg and a Retry-After of retry.
func wantTooMany(t *testing.T, rec *httptest.ResponseRecorder, msg string, retry time.Duration) {
	t.Helper()
	if rec.Code != 429 || decodeAnswer(t, rec).Message != msg {
		t.Fatalf("got %d %s, want 429 %q", rec.Code, rec.Body.String(), msg)
	}
	if got, want := rec.Header().Get("Retry-After"), strconv.Itoa(int(retry/time.Second)); got != want {
		t.Errorf("got Retry-After %q, want %q", got, want)
	}
}

// TestLoginLockout is issue 12's scenario: wrong passwords for the owner's
// email from one address lock that address out, not the owner.
func TestLoginLockout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const attacker = "203.0.113.66:4444"
	for i := range auth.LoginFailuresPerPair {
		if rec := login(e, attacker, "alice@example.com", fmt.Sprintf("guess-%d", i)); rec.Code != 401 {
			t.Fatalf("guess %d: got %d %s", i, rec.Code, rec.Body.String())
		}
	}
	// The attacker's address is refused, even with the right password...
	wantTooMany(t, login(e, attacker, "alice@example.com", "guess-x"), auth.MsgTooManyLogins, auth.LimitWindow)
	wantTooMany(t, login(e, attacker, "ALICE@example.com", alicePass), auth.MsgTooManyLogins, auth.LimitWindow)
	// ...and the wait shrinks as the window slides.
	e.now = e.now.Add(5 * time.Minute)
	wantTooMany(t, login(e, attacker, "alice@example.com", alicePass), auth.MsgTooManyLogins, 10*time.Minute)

	// The owner signs in from a new address, and from the one they
	// registered from.
	for _, remote := range []string{"192.0.2.77:1", "198.51.100.1:5"} {
		if rec := login(e, remote, "alice@example.com", alicePass); rec.Code != 200 {
			t.Errorf("the owner from %s: got %d %s", remote, rec.Code, rec.Body.String())
		}
	}
	// The owner can still change the password (failed sign-ins do not count).
	rec := e.do(request{method: "PUT", url: "/api/auth/change-password", headers: bearer(e.token),
		body: `{"currentPassword":"secret123","newPassword":"new-secret"}`})
	if rec.Code != 200 {
		t.Errorf("change password after the attack: got %d %s", rec.Code, rec.Body.String())
	}
	// The attacker's address may try again once the window has passed.
	e.now = e.now.Add(10 * time.Minute)
	if rec := login(e, attacker, "alice@example.com", "guess-again"); rec.Code != 401 {
		t.Errorf("after the window: got %d %s", rec.Code, rec.Body.String())
	}
}

// TestLoginRateLimitPerAccount checks the slower limit per account: guesses
// from many addresses fill it, which then refuses addresses that have not
// signed in to the account, but not those that have.
func TestLoginRateLimitPerAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const before = "192.0.2.50:1" // signs in before the attack
	if rec := login(e, before, "alice@example.com", alicePass); rec.Code != 200 {
		t.Fatalf("sign-in before the attack: got %d", rec.Code)
	}
	e.now = e.now.Add(time.Minute)
	perAddress := auth.LoginFailuresPerPair
	for i := range auth.LoginFailuresPerAccount {
		remote := fmt.Sprintf("203.0.%d.%d:1", i/perAddress/250, i/perAddress%250)
		if rec := login(e, remote, "alice@example.com", "wrong-password"); rec.Code != 401 {
			t.Fatalf("failure %d from %s: got %d %s", i, remote, rec.Code, rec.Body.String())
		}
	}
	// An address new to the account is refused, right password or not.
	wantTooMany(t, login(e, "203.0.113.99:1", "alice@example.com", alicePass), auth.MsgTooManyLogins, auth.AccountWindow)
	// Addresses that signed in to it are not: the one it registered from,
	// and the one that signed in before the attack.
	for _, remote := range []string{"198.51.100.1:1", before} {
		if rec := login(e, remote, "Alice@example.com", alicePass); rec.Code != 200 {
			t.Errorf("known address %s: got %d %s", remote, rec.Code, rec.Body.String())
		}
	}
	// Other accounts are not limited.
	e.accounts.Register(context.Background(), "x", gantry.Registration{Username: "carol", Email: "carol@example.com", Password: "carol-pass", FullName: "Carol"})
	if rec := login(e, "203.0.113.99:1", "carol@example.com", "carol-pass"); rec.Code != 200 {
		t.Errorf("another account: got %d", rec.Code)
	}
	// The oldest failure leaves the window an hour after it happened.
	e.now = e.now.Add(auth.AccountWindow)
	if rec := login(e, "203.0.113.99:1", "alice@example.com", alicePass); rec.Code != 200 {
		t.Errorf("after the window: got %d %s", rec.Code, rec.Body.String())
	}
}

// TestLoginConcurrentGuesses checks that a burst of simultaneous guesses
// gets no more tries than the limits: from one address, the limit of the
// (account, address) pair; from many, the account's.
func TestLoginConcurrentGuesses(t *testing.T) {
	t.Parallel()
	burst := func(t *testing.T, e *testEnv, n int, remote func(i int) string) map[int]int {
		codes := make(chan int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes <- login(e, remote(i), "alice@example.com", fmt.Sprintf("guess-%d", i)).Code
			}()
		}
		wg.Wait()
		close(codes)
		count := map[int]int{}
		for c := range codes {
			count[c]++
		}
		return count
	}
	t.Run("one address", func(t *testing.T) {
		t.Parallel()
		const n = 30
		count := burst(t, newEnv(t), n, func(int) string { return "203.0.113.5:1" })
		if want := auth.LoginFailuresPerPair; count[401] != want || count[429] != n-want {
			t.Errorf("got statuses %v, want %d×401 and %d×429", count, want, n-want)
		}
	})
	t.Run("many addresses", func(t *testing.T) {
		t.Parallel()
		const n = auth.LoginFailuresPerAccount + 30
		count := burst(t, newEnv(t), n, func(i int) string { return fmt.Sprintf("203.0.%d.%d:1", i/200, i%200) })
		if want := auth.LoginFailuresPerAccount; count[401] != want || count[429] != n-want {
			t.Errorf("got statuses %v, want %d×401 and %d×429", count, want, n-want)
		}
	})
}

// TestLoginSuccessResetsPairCount checks that an owner who mistypes and
// then signs in starts again with a clean count at that address.
func TestLoginSuccessResetsPairCount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for round := range 3 {
		for range auth.LoginFailuresPerPair - 1 {
			login(e, "203.0.113.20:1", "alice@example.com", "wrong-password")
		}
		if rec := login(e, "203.0.113.20:1", "alice@example.com", alicePass); rec.Code != 200 {
			t.Fatalf("round %d: got %d %s", round, rec.Code, rec.Body.String())
		}
	}
}

func TestLoginRateLimitPerIP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const attacker = "198.51.100.66:4444"
	for i := range auth.LoginFailuresPerAddress {
		if rec := login(e, attacker, fmt.Sprintf("guess%d@example.com", i), "whatever1"); rec.Code != 401 {
			t.Fatalf("failure %d: got %d", i, rec.Code)
		}
	}
	wantTooMany(t, login(e, attacker, "alice@example.com", alicePass), auth.MsgTooManyLogins, auth.LimitWindow)
	if rec := login(e, "198.51.100.67:1", "alice@example.com", alicePass); rec.Code != 200 {
		t.Errorf("another address: got %d", rec.Code)
	}
	// IPv6 clients are counted by /64.
	for i := range auth.LoginFailuresPerAddress {
		login(e, fmt.Sprintf("[2001:db8:0:7::%x]:1", i+1), fmt.Sprintf("six%d@example.com", i), "whatever1")
	}
	wantTooMany(t, login(e, "[2001:db8:0:7:ffff::1]:1", "alice@example.com", alicePass), auth.MsgTooManyLogins, auth.LimitWindow)
}

func TestTrustProxy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.TrustProxy = true
	xff := func(ip string) map[string]string { return map[string]string{"X-Forwarded-For": "10.9.9.9, " + ip} }
	for i := range auth.LoginFailuresPerAddress {
		e.do(request{method: "POST", url: "/api/auth/login", remote: "127.0.0.1:1", headers: xff("203.0.113.50"),
			body: mustJSON(map[string]string{"email": fmt.Sprintf("g%d@example.com", i), "password": "whatever1"})})
	}
	rec := e.do(request{method: "POST", url: "/api/auth/login", remote: "127.0.0.1:1", headers: xff("203.0.113.50"),
		body: mustJSON(map[string]string{"email": "alice@example.com", "password": alicePass})})
	if rec.Code != 429 {
		t.Errorf("same forwarded client: got %d", rec.Code)
	}
	rec = e.do(request{method: "POST", url: "/api/auth/login", remote: "127.0.0.1:1", headers: xff("203.0.113.51"),
		body: mustJSON(map[string]string{"email": "alice@example.com", "password": alicePass})})
	if rec.Code != 200 {
		t.Errorf("another forwarded client behind the same proxy: got %d", rec.Code)
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	me := request{method: "GET", url: "/api/auth/me"}
	withHeader := func(v string) request {
		r := me
		r.headers = map[string]string{"Authorization": v}
		return r
	}
	unauthorized := map[string]string{"WWW-Authenticate": `Bearer realm="gantry"`}
	runScenarios(t, []scenario{
		{name: "valid", auth: true, request: me, wantStatus: 200,
			wantContains: []string{`"username":"alice"`, `"email":"alice@example.com"`}, wantAbsent: []string{"argon2"},
			wantHeaders: map[string]string{"Cache-Control": "no-store"}},
		{name: "missing", request: me, wantStatus: 401, wantMessage: "Not authorized: please sign in", wantHeaders: unauthorized},
		{name: "garbage", request: withHeader("Bearer garbage"), wantStatus: 401, wantMessage: auth.MsgBadToken, wantHeaders: unauthorized},
		{name: "empty bearer", request: withHeader("Bearer "), wantStatus: 401, wantMessage: auth.MsgSignIn},
		{name: "basic scheme", request: withHeader("Basic YWxpY2U6c2VjcmV0"), wantStatus: 401, wantMessage: auth.MsgSignIn},
		{
			name: "expired", request: me, wantStatus: 401, wantMessage: auth.MsgTokenExpired,
			setup: func(t *testing.T, e *testEnv) string {
				e.now = e.now.Add(7*24*time.Hour + time.Second)
				return e.token
			},
		},
		{
			name: "wrong signature", request: me, wantStatus: 401, wantMessage: auth.MsgBadToken,
			setup: func(t *testing.T, e *testEnv) string {
				other, _ := auth.NewTokens(strings.Repeat("z", 40), time.Hour)
				tok, _, _ := other.Issue(e.alice.ID)
				return tok
			},
		},
		{
			name: "signed but without a session (issued before sessions were stored)", request: me,
			wantStatus: 401, wantMessage: auth.MsgSignIn, wantHeaders: unauthorized,
			setup: func(t *testing.T, e *testEnv) string {
				tok, _, err := e.tokens.Issue(e.alice.ID)
				if err != nil {
					t.Fatal(err)
				}
				return tok
			},
		},
		{
			name: "deleted user", request: me, wantStatus: 401, wantMessage: auth.MsgSignIn,
			setup: func(t *testing.T, e *testEnv) string {
				if err := e.db.DeleteUser(context.Background(), e.alice.ID); err != nil {
					t.Fatal(err)
				}
				return e.token
			},
		},
		{
			name: "deactivated user", request: me, wantStatus: 403, wantMessage: auth.MsgInactive,
			setup: func(t *testing.T, e *testEnv) string {
				e.db.SetUserActive(context.Background(), e.alice.ID, false)
				return e.token
			},
		},
	})
	t.Run("lowercase bearer works", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		rec := e.do(request{method: "GET", url: "/api/auth/me", headers: map[string]string{"Authorization": "bearer " + e.token}})
		if rec.Code != 200 {
			t.Errorf("got %d", rec.Code)
		}
	})
}

func TestChangePassword(t *testing.T) {
	t.Parallel()
	put := func(body string) request { return request{method: "PUT", url: "/api/auth/change-password", body: body} }
	runScenarios(t, []scenario{
		{
			name: "changed", auth: true, request: put(`{"currentPassword":"secret123","newPassword":"new-secret"}`),
			wantStatus: 200, wantContains: []string{`{"success":true,"data":{}}`},
			after: func(t *testing.T, e *testEnv, _ *httptest.ResponseRecorder) {
				if rec := login(e, "192.0.2.1:1", "alice@example.com", "new-secret"); rec.Code != 200 {
					t.Errorf("new password: got %d", rec.Code)
				}
				if rec := login(e, "192.0.2.1:1", "alice@example.com", alicePass); rec.Code != 401 {
					t.Errorf("old password: got %d", rec.Code)
				}
				if rec := e.do(request{method: "GET", url: "/api/auth/me", headers: bearer(e.token)}); rec.Code != 200 {
					t.Errorf("the session token stopped working: %d", rec.Code)
				}
			},
		},
		{name: "wrong current password", auth: true, request: put(`{"currentPassword":"secret124","newPassword":"new-secret"}`),
			wantStatus: 400, wantMessage: "Current password is incorrect", unchanged: true},
		{name: "new password too short", auth: true, request: put(`{"currentPassword":"secret123","newPassword":"12345"}`),
			wantStatus: 400, wantMessage: "Password must be at least 6 characters long", unchanged: true},
		{name: "current password missing", auth: true, request: put(`{"newPassword":"new-secret"}`),
			wantStatus: 400, wantMessage: "Current password is required", unchanged: true},
		{name: "new password missing", auth: true, request: put(`{"currentPassword":"secret123"}`),
			wantStatus: 400, wantMessage: "New password is required", unchanged: true},
		{name: "unknown field", auth: true, request: put(`{"currentPassword":"secret123","newPassword":"new-secret","confirm":"x"}`),
			wantStatus: 400, wantMessage: `Unknown field "confirm"`, unchanged: true},
		{name: "signed out", request: put(`{"currentPassword":"secret123","newPassword":"new-secret"}`),
			wantStatus: 401, wantMessage: auth.MsgSignIn, unchanged: true},
		{
			name: "rate limited", auth: true, request: put(`{"currentPassword":"secret123","newPassword":"new-secret"}`),
			setup: func(t *testing.T, e *testEnv) string {
				for range auth.PasswordChecks {
					e.do(request{method: "PUT", url: "/api/auth/change-password", headers: bearer(e.token),
						body: `{"currentPassword":"guess-guess","newPassword":"new-secret"}`})
				}
				e.now = e.now.Add(time.Minute)
				return ""
			},
			wantStatus: 429, wantMessage: auth.MsgTooManyPasswords, unchanged: true,
			wantHeaders: map[string]string{"Retry-After": "840"},
		},
		{
			name: "limited per account", auth: true, request: put(`{"currentPassword":"secret123","newPassword":"new-secret"}`),
			setup: func(t *testing.T, e *testEnv) string {
				// Another account's wrong guesses do not count against alice.
				_, bob, err := e.accounts.Register(context.Background(), "x", gantry.Registration{
					Username: "bob", Email: "bob@example.com", Password: "bob-secret", FullName: "Bob"})
				if err != nil {
					t.Fatal(err)
				}
				for range auth.PasswordChecks + 1 {
					e.do(request{method: "PUT", url: "/api/auth/change-password", headers: bearer(bob),
						body: `{"currentPassword":"guess-guess","newPassword":"new-secret"}`})
				}
				return ""
			},
			wantStatus: 200,
		},
	})
}

func TestProfile(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"/api/auth/profile", "/api/users/profile"} {
		put := func(body string) request { return request{method: "PUT", url: path, body: body} }
		withBob := func(t *testing.T, e *testEnv) string {
			if _, _, err := e.accounts.Register(context.Background(), "x", gantry.Registration{
				Username: "bob", Email: "bob@example.com", Password: "bob-secret", FullName: "Bob"}); err != nil {
				t.Fatal(err)
			}
			return ""
		}
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			runScenarios(t, []scenario{
				{
					name: "updated", auth: true,
					request: put(`{"fullName":" Alice Pleasance Liddell ","username":"Alice_L","email":"ALICE.L@Example.org","avatar":"https://example.org/a.png"}`),
					setup: func(t *testing.T, e *testEnv) string {
						e.now = e.now.Add(time.Minute)
						return ""
					},
					wantStatus: 200,
					wantContains: []string{`"fullName":"Alice Pleasance Liddell"`, `"username":"Alice_L"`,
						`"email":"alice.l@example.org"`, `"avatar":"https://example.org/a.png"`},
					after: func(t *testing.T, e *testEnv, rec *httptest.ResponseRecorder) {
						me := e.do(request{method: "GET", url: "/api/auth/me", headers: bearer(e.token)})
						u := dataField[gantry.User](t, me, "user")
						if u.Username != "Alice_L" || u.Email != "alice.l@example.org" || !u.UpdatedAt.Equal(e.now) {
							t.Errorf("stored %+v", u)
						}
						if rec := login(e, "192.0.2.1:1", "alice.l@example.org", alicePass); rec.Code != 200 {
							t.Errorf("sign in with the new email: %d", rec.Code)
						}
					},
				},
				{name: "only the full name", auth: true, request: put(`{"fullName":"Al"}`), wantStatus: 200,
					wantContains: []string{`"fullName":"Al"`, `"username":"alice"`, `"email":"alice@example.com"`}},
				{name: "own username in another case", auth: true, request: put(`{"username":"ALICE"}`), wantStatus: 200,
					wantContains: []string{`"username":"ALICE"`}},
				{name: "username taken", auth: true, setup: withBob, request: put(`{"username":"Bob"}`),
					wantStatus: 409, wantMessage: "This username is already taken", unchanged: true},
				{name: "email taken", auth: true, setup: withBob, request: put(`{"email":"BOB@example.com"}`),
					wantStatus: 409, wantMessage: "An account with this email already exists", unchanged: true},
				{name: "full name required", auth: true, request: put(`{"fullName":"","username":"alice","email":"alice@example.com"}`),
					wantStatus: 400, wantMessage: "Full name is required", unchanged: true},
				{name: "full name too long", auth: true, request: put(mustJSON(map[string]string{"fullName": strings.Repeat("a", 101)})),
					wantStatus: 400, wantMessage: "Full name cannot exceed 100 characters", unchanged: true},
				{name: "username required", auth: true, request: put(`{"username":" "}`),
					wantStatus: 400, wantMessage: "Username is required", unchanged: true},
				{name: "username short", auth: true, request: put(`{"username":"al"}`),
					wantStatus: 400, wantMessage: "Username must be at least 3 characters long", unchanged: true},
				{name: "username characters", auth: true, request: put(`{"username":"al ice"}`),
					wantStatus: 400, wantMessage: "Username can only contain letters, numbers, underscores, and hyphens", unchanged: true},
				{name: "email required", auth: true, request: put(`{"email":""}`),
					wantStatus: 400, wantMessage: "Email is required", unchanged: true},
				{name: "email format", auth: true, request: put(`{"email":"alice"}`),
					wantStatus: 400, wantMessage: "Please enter a valid email address", unchanged: true},
				{name: "avatar not https", auth: true, request: put(`{"avatar":"http://example.org/a.png"}`),
					wantStatus: 400, wantMessage: "Avatar must be an https URL", unchanged: true},
				{name: "avatar script", auth: true, request: put(`{"avatar":"javascript:alert(1)"}`),
					wantStatus: 400, wantMessage: "Avatar must be an https URL", unchanged: true},
				{name: "role cannot be set", auth: true, request: put(`{"fullName":"A","role":"admin"}`),
					wantStatus: 400, wantMessage: `Unknown field "role"`, unchanged: true},
				{name: "plan cannot be set", auth: true, request: put(`{"subscription":{"plan":"pro"}}`),
					wantStatus: 400, wantMessage: `Unknown field "subscription"`, unchanged: true},
				{name: "wrong type", auth: true, request: put(`{"email":["a@b.co"]}`),
					wantStatus: 400, wantMessage: `Invalid value for field "email": expected string`, unchanged: true},
				{name: "malformed", auth: true, request: put(`{"fullName":`),
					wantStatus: 400, wantMessage: "Malformed JSON: unexpected end of input", unchanged: true},
				{name: "too large", auth: true, request: put(mustJSON(map[string]string{"fullName": strings.Repeat("a", 2<<20)})),
					wantStatus: 400, wantMessage: "Request body too large (limit 1 MiB)", unchanged: true},
				{name: "signed out", request: put(`{"fullName":"X"}`), wantStatus: 401, wantMessage: auth.MsgSignIn, unchanged: true},
			})
		})
	}
}

func TestUserStats(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{
			name: "new account", auth: true, request: request{method: "GET", url: "/api/users/stats"},
			setup: func(t *testing.T, e *testEnv) string {
				e.now = e.alice.CreatedAt.Add(3*24*time.Hour + time.Hour)
				return e.token
			},
			wantStatus:   200,
			wantContains: []string{`{"success":true,"data":{"stats":{"totalProjects":0,"totalDeployments":0,"activeDeployments":0,"accountAge":3,"storage":{"used":0,"budget":1073741824,"files":0,"logs":0,"data":0,"sites":0,"apps":0,"rollbacks":0}}}}`},
		},
		{name: "signed out", request: request{method: "GET", url: "/api/users/stats"}, wantStatus: 401, wantMessage: auth.MsgSignIn},
	})
}

func TestHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(request{method: "GET", url: "/api/health"})
	if rec.Code != 200 {
		t.Fatalf("got %d %s", rec.Code, rec.Body.String())
	}
	want := `{"success":true,"data":{"status":"ok","version":"test-version","database":"` + e.db.Dialect() + `"}}`
	if got := strings.TrimSpace(rec.Body.String()); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	e.srv.Database = downDB{}
	rec = e.do(request{method: "GET", url: "/api/health"})
	if rec.Code != http.StatusServiceUnavailable || decodeAnswer(t, rec).Message != "Database unavailable" {
		t.Errorf("closed database: got %d %s", rec.Code, rec.Body.String())
	}
}

// downDB is a database that does not answer.
type downDB struct{}

func (downDB) Ping(context.Context) error { return errors.New("connection refused") }
func (downDB) Dialect() string            { return "sqlite" }
