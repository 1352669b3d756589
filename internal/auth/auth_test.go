package auth_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/auth"
	"github.com/gantryhq/gantry/internal/secret"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

const secretKey = "0123456789abcdef0123456789abcdef"

func mustPasswords(tb testing.TB) *auth.Passwords {
	tb.Helper()
	p, err := auth.NewPasswords(1)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestPasswords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := mustPasswords(t)
	h1, err := p.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := p.Hash(ctx, "correct horse")
	if h1 == h2 {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
	if !strings.HasPrefix(h1, "$argon2id$v=19$m=1024,t=2,p=1$") {
		t.Errorf("got hash %q, want PHC argon2id with m=1024,t=2,p=1", h1)
	}
	for _, tc := range []struct {
		password string
		want     bool
	}{
		{"correct horse", true},
		{"correct horse ", false},
		{"Correct horse", false},
		{"", false},
	} {
		if ok, err := p.Verify(ctx, h1, tc.password); err != nil || ok != tc.want {
			t.Errorf("Verify(%q) = %v, %v; want %v", tc.password, ok, err, tc.want)
		}
	}
	// A hash made with another cost still verifies.
	p19, err := auth.NewPasswords(2)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := p19.Verify(ctx, h1, "correct horse"); !ok || err != nil {
		t.Errorf("verify with another cost: %v, %v", ok, err)
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=1024,t=2,p=1$c2FsdA$a2V5", "$argon2id$v=19$m=99999999,t=2,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5"} {
		if _, err := p.Verify(ctx, bad, "x"); err == nil {
			t.Errorf("Verify accepted malformed hash %q", bad)
		}
	}
	if _, err := auth.NewPasswords(0); err == nil {
		t.Error("NewPasswords(0) succeeded")
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	tokens, err := auth.NewTokens(secretKey, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tokens.Now = func() time.Time { return now }
	tok, issued, err := tokens.Issue("user-1")
	if err != nil {
		t.Fatal(err)
	}
	if !issued.ExpiresAt.Equal(now.Add(time.Hour)) || issued.UserID != "user-1" || len(issued.SessionID) < 20 {
		t.Errorf("got claims %+v, want user-1, a session id and expiry %v", issued, now.Add(time.Hour))
	}
	if c, err := tokens.Verify(tok); err != nil || c.UserID != "user-1" || c.SessionID != issued.SessionID {
		t.Fatalf("Verify = %+v, %v; want user-1 and session %s", c, err, issued.SessionID)
	}
	// A second sign-in in the same second gets a token and session of its own.
	if again, c, _ := tokens.Issue("user-1"); again == tok || c.SessionID == issued.SessionID {
		t.Error("two tokens issued at the same instant are identical")
	}

	// Expired an hour later.
	tokens.Now = func() time.Time { return now.Add(time.Hour + time.Second) }
	_, err = tokens.Verify(tok)
	wantUnauthorized(t, err, auth.MsgTokenExpired)
	tokens.Now = func() time.Time { return now }

	other, _ := auth.NewTokens(strings.Repeat("x", 32), time.Hour)
	otherTok, _, _ := other.Issue("user-1")

	key, _ := secret.DeriveKey(secretKey, secret.TokenSigning, 32)
	sign := func(method jwt.SigningMethod, claims jwt.Claims, k any) string {
		s, err := jwt.NewWithClaims(method, claims).SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	valid := jwt.RegisteredClaims{Issuer: "gantry", Subject: "user-1", ID: "s1", ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}
	noID := jwt.RegisteredClaims{Issuer: "gantry", Subject: "user-1", ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}
	noExp := jwt.RegisteredClaims{Issuer: "gantry", Subject: "user-1"}
	otherIssuer := jwt.RegisteredClaims{Issuer: "evil", Subject: "user-1", ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}
	noSubject := jwt.RegisteredClaims{Issuer: "gantry", ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}

	if _, err := tokens.Verify(sign(jwt.SigningMethodHS256, valid, key)); err != nil {
		t.Fatalf("hand-made valid token rejected: %v", err)
	}
	for name, tok := range map[string]string{
		"garbage":        "not.a.token",
		"empty":          "",
		"other key":      otherTok,
		"alg none":       sign(jwt.SigningMethodNone, valid, jwt.UnsafeAllowNoneSignatureType),
		"HS512":          sign(jwt.SigningMethodHS512, valid, key),
		"no expiry":      sign(jwt.SigningMethodHS256, noExp, key),
		"other issuer":   sign(jwt.SigningMethodHS256, otherIssuer, key),
		"no subject":     sign(jwt.SigningMethodHS256, noSubject, key),
		"no session id":  sign(jwt.SigningMethodHS256, noID, key),
		"tampered":       tok[:len(tok)-2] + "xx",
		"raw secret key": sign(jwt.SigningMethodHS256, valid, []byte(secretKey)),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tokens.Verify(tok)
			wantUnauthorized(t, err, auth.MsgBadToken)
		})
	}
}

func wantUnauthorized(t *testing.T, err error, msg string) {
	t.Helper()
	if gantry.ErrorCode(err) != gantry.EUNAUTHORIZED || gantry.ErrorMessage(err) != msg {
		t.Errorf("got %v, want EUNAUTHORIZED %q", err, msg)
	}
}

func TestSlots(t *testing.T) {
	t.Parallel()
	s := auth.NewSlots(2)
	if !s.Acquire("a") || !s.Acquire("a") {
		t.Fatal("the first two slots were refused")
	}
	if s.Acquire("a") {
		t.Fatal("a third slot was given")
	}
	if !s.Acquire("b") {
		t.Fatal("another key was refused")
	}
	s.Release("a")
	if s.Held("a") != 1 || !s.Acquire("a") {
		t.Fatalf("after a release: held %d, or the freed slot was refused", s.Held("a"))
	}
	s.Release("a")
	s.Release("a")
	s.Release("b")
	if s.Held("a") != 0 || s.Held("b") != 0 {
		t.Fatalf("held %d and %d after every release, want 0", s.Held("a"), s.Held("b"))
	}

	// Concurrent acquirers never hold more than max.
	s = auth.NewSlots(3)
	var held, most atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if s.Acquire("k") {
					n := held.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					held.Add(-1)
					s.Release("k")
				}
			}
		}()
	}
	wg.Wait()
	if most.Load() > 3 || s.Held("k") != 0 {
		t.Fatalf("at most %d held at once (want ≤ 3), %d left", most.Load(), s.Held("k"))
	}
}

func TestLimiter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	l := auth.NewLimiter(3, 15*time.Minute)
	l.Now = func() time.Time { return now }

	for i := range 3 {
		if !l.Allow("a") {
			t.Fatalf("blocked after %d events, want 3 allowed", i)
		}
		l.Hit("a")
		now = now.Add(time.Minute)
	}
	if l.Allow("a") {
		t.Error("allowed after 3 events in the window")
	}
	if !l.Allow("b") {
		t.Error("another key is blocked")
	}
	// The first event leaves the window 15 minutes after it happened.
	now = now.Add(12*time.Minute - time.Second)
	if l.Allow("a") {
		t.Error("allowed before the first event left the window")
	}
	now = now.Add(time.Second)
	if !l.Allow("a") {
		t.Error("still blocked after the first event left the window")
	}
	l.Hit("a")
	if l.Allow("a") {
		t.Error("allowed after a new event filled the window again")
	}
	l.Reset("a")
	if !l.Allow("a") {
		t.Error("blocked after Reset")
	}

	// Wait: how long until the oldest event of a full window leaves it.
	l.Reset("w")
	if d := l.Wait("w"); d != 0 {
		t.Errorf("Wait of an empty key = %v, want 0", d)
	}
	for range 3 {
		l.Hit("w")
		now = now.Add(time.Minute)
	}
	if d := l.Wait("w"); d != 12*time.Minute {
		t.Errorf("Wait of a full key = %v, want 12m (the first event is 3m old)", d)
	}
	now = now.Add(12 * time.Minute)
	if d := l.Wait("w"); d != 0 {
		t.Errorf("Wait once the first event left = %v, want 0", d)
	}
	l.Reset("w")

	// Take counts and checks at once; Return undoes it.
	l.Reset("t")
	for i := range 3 {
		if !l.Take("t") {
			t.Fatalf("Take %d refused, want 3 taken", i)
		}
	}
	if l.Take("t") {
		t.Error("a 4th Take succeeded")
	}
	l.Return("t")
	if !l.Take("t") {
		t.Error("Take refused after Return")
	}
	l.Reset("t")
	l.Return("t") // nothing to return: no panic

	// Keys whose events are all old are evicted.
	for i := range 50 {
		l.Hit(fmt.Sprintf("k%d", i))
	}
	if l.Len() != 50 {
		t.Fatalf("tracking %d keys, want 50", l.Len())
	}
	now = now.Add(16 * time.Minute)
	l.Hit("fresh")
	if l.Len() != 1 {
		t.Errorf("tracking %d keys after the window passed, want 1", l.Len())
	}
}

func newService(t *testing.T) *auth.Service {
	t.Helper()
	tokens, err := auth.NewTokens(secretKey, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return auth.NewService(storetest.MustOpenDB(t), mustPasswords(t), tokens)
}

func TestServiceFlow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newService(t)
	u, tok, err := s.Register(ctx, "192.0.2.1", gantry.Registration{
		Username: " Ada ", Email: " ADA@example.com ", Password: "secret1", FullName: " Ada Lovelace ",
	})
	if err != nil {
		t.Fatal(err)
	}
	if u.Username != "Ada" || u.Email != "ada@example.com" || u.FullName != "Ada Lovelace" || u.LastLogin == nil ||
		u.Role != "student" || u.Subscription.Plan != "free" || !u.IsActive || u.IsVerified {
		t.Errorf("registered %+v", u)
	}
	if got, err := s.Authenticate(ctx, tok); err != nil || got.ID != u.ID {
		t.Fatalf("Authenticate = %v, %v", got, err)
	}

	_, tok2, err := s.Login(ctx, "192.0.2.1", "ada@EXAMPLE.com", "secret1")
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	sess2 := mustSession(t, s, tok2)
	if err := s.ChangePassword(ctx, sess2, "wrong!", "secret2"); gantry.ErrorMessage(err) != auth.MsgWrongPassword {
		t.Errorf("got %v, want %q", err, auth.MsgWrongPassword)
	}
	if _, err := s.Authenticate(ctx, tok); err != nil {
		t.Errorf("a refused password change ended the other session: %v", err)
	}
	if err := s.ChangePassword(ctx, sess2, "secret1", "secret2"); err != nil {
		t.Fatal(err)
	}
	// The other session ended; the one that changed the password goes on.
	_, err = s.Authenticate(ctx, tok)
	wantUnauthorized(t, err, auth.MsgSignIn)
	mustSession(t, s, tok2)
	if _, _, err := s.Login(ctx, "192.0.2.1", "ada@example.com", "secret1"); gantry.ErrorMessage(err) != auth.MsgInvalidLogin {
		t.Errorf("old password: got %v", err)
	}
	_, tok3, err := s.Login(ctx, "192.0.2.1", "ada@example.com", "secret2")
	if err != nil {
		t.Errorf("new password: %v", err)
	}

	// Logout ends one session; doing it twice is no error.
	if err := s.Logout(ctx, sess2); err != nil {
		t.Fatal(err)
	}
	_, err = s.Authenticate(ctx, tok2)
	wantUnauthorized(t, err, auth.MsgSignIn)
	if err := s.Logout(ctx, sess2); err != nil {
		t.Errorf("a second logout: %v", err)
	}
	sess3 := mustSession(t, s, tok3)
	_, tok4, _ := s.Login(ctx, "192.0.2.2", "ada@example.com", "secret2")
	if n, err := s.LogoutAll(ctx, sess3); err != nil || n != 2 {
		t.Fatalf("LogoutAll = %d, %v; want 2 sessions ended", n, err)
	}
	for _, tok := range []string{tok3, tok4} {
		_, err = s.Authenticate(ctx, tok)
		wantUnauthorized(t, err, auth.MsgSignIn)
	}
}

func mustSession(t *testing.T, s *auth.Service, token string) *auth.Session {
	t.Helper()
	sess, err := s.Session(context.Background(), token)
	if err != nil {
		t.Fatalf("session of a live token: %v", err)
	}
	return sess
}

// TestSessionExpiry checks that a session ends with its token, that the
// expired rows are deleted when the next session starts, and that a token
// signed correctly but without a stored session (issued before sessions
// were stored, or for a session deleted by hand) is refused.
func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	tokens, err := auth.NewTokens(secretKey, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	s := auth.NewService(db, mustPasswords(t), tokens)
	now := time.Now().UTC().Truncate(time.Millisecond)
	s.SetNow(func() time.Time { return now })
	db.Now = s.Now
	u, tok, err := s.Register(ctx, "192.0.2.1", gantry.Registration{Username: "ada", Email: "ada@example.com", Password: "secret1", FullName: "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	unstored, _, _ := tokens.Issue(u.ID)
	_, err = s.Authenticate(ctx, unstored)
	wantUnauthorized(t, err, auth.MsgSignIn)

	now = now.Add(time.Hour + time.Second)
	_, err = s.Authenticate(ctx, tok)
	wantUnauthorized(t, err, auth.MsgTokenExpired)
	if n, _ := db.CountSessions(ctx, ""); n != 1 {
		t.Fatalf("%d sessions stored before the next sign-in, want the expired one", n)
	}
	if _, _, err := s.Login(ctx, "192.0.2.1", "ada@example.com", "secret1"); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.CountSessions(ctx, u.ID); n != 1 {
		t.Errorf("%d sessions stored after the next sign-in, want only the new one", n)
	}
	if _, err := s.StartSession(ctx, "no-such-user"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Errorf("a session of a missing user: got %v, want ENOTFOUND", err)
	}
}

func TestKnown(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	k := auth.NewKnown(time.Hour)
	k.SetNow(func() time.Time { return now })
	if k.Has("a") {
		t.Fatal("an empty Known has a key")
	}
	k.Add("a")
	now = now.Add(59 * time.Minute)
	if !k.Has("a") || k.Has("b") {
		t.Fatal("a key added 59 minutes ago is forgotten, or another one is known")
	}
	k.Add("b")
	now = now.Add(time.Minute)
	if k.Has("a") || !k.Has("b") {
		t.Error("after the ttl: a should be forgotten and b known")
	}
}
