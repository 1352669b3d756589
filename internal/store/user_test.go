package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)

// newUser returns a valid user that CreateUser accepts.
func newUser(name string) *gantry.User {
	return &gantry.User{
		FullName:     "Ada " + name,
		Username:     name,
		Email:        name + "@Example.COM",
		PasswordHash: "hash-of-" + name,
		IsActive:     true,
	}
}

// mustCreateUser creates newUser(name) in db.
func mustCreateUser(tb testing.TB, db *store.DB, name string) *gantry.User {
	tb.Helper()
	u := newUser(name)
	if err := db.CreateUser(context.Background(), u); err != nil {
		tb.Fatalf("create user %s: %v", name, err)
	}
	return u
}

func wantCode(t *testing.T, err error, code, msg string) {
	t.Helper()
	if got := gantry.ErrorCode(err); got != code {
		t.Fatalf("got error %v (code %q), want code %q", err, got, code)
	}
	if msg != "" && gantry.ErrorMessage(err) != msg {
		t.Fatalf("got message %q, want %q", gantry.ErrorMessage(err), msg)
	}
}

func TestCreateUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	db.Now = func() time.Time { return t0 }

	u := mustCreateUser(t, db, "Ada_Lovelace")
	id, err := uuid.Parse(u.ID)
	if err != nil || id.Version() != 7 {
		t.Fatalf("got id %q (%v), want a UUIDv7", u.ID, err)
	}
	created := t0.Truncate(time.Millisecond)
	want := &gantry.User{
		ID:       u.ID,
		FullName: "Ada Ada_Lovelace",
		Username: "Ada_Lovelace",
		Email:    "ada_lovelace@example.com",
		Role:     gantry.RoleStudent,
		Subscription: gantry.Subscription{
			Plan: gantry.PlanFree, MaxProjects: 3, MaxDeployments: 5, MaxStorage: gantry.GiB,
		},
		IsActive:     true,
		CreatedAt:    created,
		UpdatedAt:    created,
		GitHub:       gantry.GitHubLink{Repos: []gantry.GitHubRepo{}},
		PasswordHash: "hash-of-Ada_Lovelace",
	}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("created user (-want +got):\n%s", diff)
	}
	got, err := db.FindUserByID(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FindUserByID (-want +got):\n%s", diff)
	}
	got, err = db.FindUserByEmail(ctx, "  ADA_LOVELACE@example.com ")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FindUserByEmail (-want +got):\n%s", diff)
	}
}

func TestCreateUserKeepsGivenFields(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	login := t0.Add(time.Hour)
	u := newUser("grace")
	u.Role = gantry.RoleAdmin
	u.Subscription = gantry.Subscription{Plan: gantry.PlanPro, MaxProjects: 50, MaxDeployments: 100}
	u.IsVerified = true
	u.Avatar = "https://example.com/a.png"
	u.LastLogin = &login
	u.GitHub = gantry.GitHubLink{
		Connected: true, ID: 42, Username: "gh-grace", Avatar: "https://example.com/g.png",
		AccessToken: "sealed-token",
		Repos: []gantry.GitHubRepo{{ID: 7, Name: "site", FullName: "gh-grace/site", Private: true,
			DefaultBranch: "main", UpdatedAt: t0, URL: "https://github.com/gh-grace/site"}},
	}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	got, err := db.FindUserByID(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(u, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// A second account may not take the same GitHub id.
	v := newUser("other")
	v.GitHub.ID = 42
	if err := db.CreateUser(ctx, v); gantry.ErrorCode(err) != gantry.EINTERNAL {
		t.Errorf("got %v, want a unique violation on github_id", err)
	}
}

func TestCreateUserConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	mustCreateUser(t, db, "linus")

	u := newUser("LINUS")
	u.Email = "someone@example.com"
	wantCode(t, db.CreateUser(ctx, u), gantry.ECONFLICT, "This username is already taken")

	u = newUser("torvalds")
	u.Email = "  Linus@EXAMPLE.com"
	wantCode(t, db.CreateUser(ctx, u), gantry.ECONFLICT, "An account with this email already exists")
}

func TestFindUserNotFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	_, err := db.FindUserByID(ctx, "nope")
	wantCode(t, err, gantry.ENOTFOUND, "")
	_, err = db.FindUserByEmail(ctx, "nobody@example.com")
	wantCode(t, err, gantry.ENOTFOUND, "")
}

func TestUpdateUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	db.Now = func() time.Time { return t0 }
	u := mustCreateUser(t, db, "barbara")
	mustCreateUser(t, db, "ken")
	later := t0.Add(time.Minute)
	db.Now = func() time.Time { return later }

	str := func(s string) *string { return &s }
	got, err := db.UpdateUser(ctx, u.ID, gantry.UserUpdate{
		FullName: str("  Barbara Liskov "),
		Email:    str("BARBARA@mit.edu"),
		Avatar:   str("https://example.com/b.png"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.FullName != "Barbara Liskov" || got.Email != "barbara@mit.edu" || got.Username != "barbara" ||
		got.Avatar != "https://example.com/b.png" || !got.UpdatedAt.Equal(later.Truncate(time.Millisecond)) || !got.CreatedAt.Equal(t0.Truncate(time.Millisecond)) {
		t.Errorf("got %+v", got)
	}
	found, err := db.FindUserByID(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, found); diff != "" {
		t.Errorf("stored user (-returned +stored):\n%s", diff)
	}

	// Changing the case of one's own username is allowed.
	if got, err := db.UpdateUser(ctx, u.ID, gantry.UserUpdate{Username: str("Barbara")}); err != nil {
		t.Fatal(err)
	} else if got.Username != "Barbara" {
		t.Errorf("got username %q, want Barbara", got.Username)
	}

	for _, tc := range []struct {
		name      string
		upd       gantry.UserUpdate
		code, msg string
	}{
		{"taken username", gantry.UserUpdate{Username: str("KEN")}, gantry.ECONFLICT, "This username is already taken"},
		{"taken email", gantry.UserUpdate{Email: str("Ken@example.com")}, gantry.ECONFLICT, "An account with this email already exists"},
		{"empty full name", gantry.UserUpdate{FullName: str(" ")}, gantry.EINVALID, "Full name is required"},
		{"short username", gantry.UserUpdate{Username: str("ab")}, gantry.EINVALID, "Username must be at least 3 characters long"},
		{"bad email", gantry.UserUpdate{Email: str("nope")}, gantry.EINVALID, "Please enter a valid email address"},
		{"bad avatar", gantry.UserUpdate{Avatar: str("javascript:alert(1)")}, gantry.EINVALID, "Avatar must be an https URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := db.FindUserByID(ctx, u.ID)
			_, err := db.UpdateUser(ctx, u.ID, tc.upd)
			wantCode(t, err, tc.code, tc.msg)
			after, _ := db.FindUserByID(ctx, u.ID)
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("a failed update changed the user (-before +after):\n%s", diff)
			}
		})
	}

	_, err = db.UpdateUser(ctx, "missing", gantry.UserUpdate{FullName: str("X")})
	wantCode(t, err, gantry.ENOTFOUND, "")
}

func TestPasswordAndLastLogin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := mustCreateUser(t, db, "margaret")

	if err := db.SetPasswordHash(ctx, u.ID, "new-hash"); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(48 * time.Hour)
	if err := db.TouchLastLogin(ctx, u.ID, at); err != nil {
		t.Fatal(err)
	}
	got, err := db.FindUserByID(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.PasswordHash != "new-hash" {
		t.Errorf("got hash %q, want new-hash", got.PasswordHash)
	}
	if got.LastLogin == nil || !got.LastLogin.Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("got lastLogin %v, want %v", got.LastLogin, at)
	}
	wantCode(t, db.SetPasswordHash(ctx, "missing", "x"), gantry.ENOTFOUND, "")
	wantCode(t, db.TouchLastLogin(ctx, "missing", at), gantry.ENOTFOUND, "")
}

func TestUserStats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	db.Now = func() time.Time { return t0 }
	u := mustCreateUser(t, db, "dennis")
	other := mustCreateUser(t, db, "ritchie")

	stats, err := db.UserStats(ctx, u.ID, t0.Add(47*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	free := gantry.StorageUsage{Budget: gantry.GiB}
	if diff := cmp.Diff(&gantry.UserStats{AccountAge: 1, Storage: free}, stats); diff != "" {
		t.Errorf("stats of a new user (-want +got):\n%s", diff)
	}

	addProject := func(owner *gantry.User, id string, statuses ...string) {
		t.Helper()
		if err := db.Exec(ctx, `INSERT INTO projects (id, user_id, name, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?)`, id, owner.ID, "p "+id, t0, t0); err != nil {
			t.Fatal(err)
		}
		for i, s := range statuses {
			if err := db.Exec(ctx, `INSERT INTO deployments (id, project_id, user_id, status, subdomain, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, fmt.Sprintf("%s-d%d", id, i), id, owner.ID, s, id, t0, t0); err != nil {
				t.Fatal(err)
			}
		}
	}
	addProject(u, "p1", gantry.DeploymentLive, gantry.DeploymentStopped, gantry.DeploymentFailed)
	addProject(u, "p2", gantry.DeploymentLive, gantry.DeploymentBuilding)
	addProject(u, "p3")
	addProject(other, "p4", gantry.DeploymentLive)

	stats, err = db.UserStats(ctx, u.ID, t0.Add(30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := &gantry.UserStats{TotalProjects: 3, TotalDeployments: 5, ActiveDeployments: 2, AccountAge: 30, Storage: free}
	if diff := cmp.Diff(want, stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}

	// Deleting a user removes their projects and deployments.
	if err := db.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	_, err = db.UserStats(ctx, u.ID, t0)
	wantCode(t, err, gantry.ENOTFOUND, "")
	stats, err = db.UserStats(ctx, other.ID, t0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&gantry.UserStats{TotalProjects: 1, TotalDeployments: 1, ActiveDeployments: 1, Storage: free}, stats); diff != "" {
		t.Errorf("other user's stats (-want +got):\n%s", diff)
	}
}

// TestConcurrentCreate checks that concurrent writers neither fail with
// "database is locked" nor let two accounts share an email.
func TestConcurrentCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)

	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			errs[i] = db.CreateUser(ctx, newUser(fmt.Sprintf("user%02d", i)))
		}()
		go func() {
			defer wg.Done()
			u := newUser(fmt.Sprintf("same%02d", i))
			u.Email = "same@example.com"
			errs[n+i] = db.CreateUser(ctx, u)
		}()
	}
	wg.Wait()
	for i, err := range errs[:n] {
		if err != nil {
			t.Errorf("create user%02d: %v", i, err)
		}
	}
	created := 0
	for _, err := range errs[n:] {
		switch gantry.ErrorCode(err) {
		case "":
			created++
		case gantry.ECONFLICT:
		default:
			t.Errorf("create with a shared email: %v", err)
		}
	}
	if created != 1 {
		t.Errorf("got %d accounts with the same email, want 1", created)
	}
}

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	if storetest.PostgresURL() != "" {
		t.Skip("reopening is tested on SQLite files")
	}
	ctx := context.Background()
	path := t.TempDir() + "/dir with space#/gantry.db"
	if err := mkdirAll(path); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	u := mustCreateUser(t, db, "alan")
	v, err := db.SchemaVersion(ctx)
	if err != nil || v < 1 {
		t.Fatalf("got schema version %d (%v), want ≥ 1", v, err)
	}
	db.Close()

	db, err = store.Open(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.FindUserByID(ctx, u.ID); err != nil {
		t.Errorf("after reopening: %v", err)
	}
	if db.Dialect() != store.SQLite {
		t.Errorf("got dialect %q, want sqlite", db.Dialect())
	}
}

func TestRebind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"a = ? AND b = ?", "a = $1 AND b = $2"},
		{"a = '?' AND b = ?", "a = '?' AND b = $1"},
		{"a = 'it''s ?' AND b = ?", "a = 'it''s ?' AND b = $1"},
	} {
		if got := store.Rebind(tc.in); got != tc.want {
			t.Errorf("Rebind(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSQLiteDSN(t *testing.T) {
	t.Parallel()
	const pragmas = "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(ON)&_pragma=synchronous(NORMAL)&_time_format=sqlite&_txlock=immediate"
	for _, tc := range []struct{ in, want string }{
		{"data/gantry.db", "file:data/gantry.db" + pragmas},
		{"sqlite:///var/lib/gantry.db", "file:/var/lib/gantry.db" + pragmas},
		{"file:/a b/c#d.db?mode=ro", "file:/a%20b/c%23d.db" + pragmas},
	} {
		if got := store.SQLiteDSN(tc.in); got != tc.want {
			t.Errorf("SQLiteDSN(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func mkdirAll(path string) error { return os.MkdirAll(filepath.Dir(path), 0o755) }

// TestSandboxSlot: each account gets a slot of its own, the same every
// time, and a deleted account's slot is not given again until
// ReleaseSandboxSlots returns it to the pool.
func TestSandboxSlot(t *testing.T) {
	db := storetest.MustOpenDB(t)
	ctx := context.Background()
	a, b := mustCreateUser(t, db, "slota"), mustCreateUser(t, db, "slotb")
	sa, err := db.SandboxSlot(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := db.SandboxSlot(ctx, a.ID); again != sa {
		t.Fatalf("slot changed: %d then %d", sa, again)
	}
	sb, err := db.SandboxSlot(ctx, b.ID)
	if err != nil || sb == sa {
		t.Fatalf("second account: slot %d (first %d), %v", sb, sa, err)
	}
	if err := db.DeleteUser(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	c := mustCreateUser(t, db, "slotc")
	sc, err := db.SandboxSlot(ctx, c.ID)
	if err != nil || sc == sb || sc == sa {
		t.Fatalf("an account after a deletion got slot %d (taken were %d, %d): %v", sc, sa, sb, err)
	}
	// Concurrent first builds of one account agree on its slot.
	d := mustCreateUser(t, db, "slotd")
	slots := make(chan int64, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := db.SandboxSlot(ctx, d.ID)
			if err != nil {
				t.Error(err)
			}
			slots <- s
		}()
	}
	wg.Wait()
	close(slots)
	first := int64(-1)
	for s := range slots {
		if first == -1 {
			first = s
		}
		if s != first {
			t.Fatalf("concurrent calls gave slots %d and %d", first, s)
		}
	}
	if _, err := db.SandboxSlot(ctx, "nobody"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("a missing user: %v", err)
	}
}

// TestSQLiteFilesPrivate checks that the database file and its -wal and
// -shm companions are readable by the platform only: on a fresh database,
// and when an older version left them readable by everyone (fixed at the
// next open).
func TestSQLiteFilesPrivate(t *testing.T) {
	t.Parallel()
	if storetest.PostgresURL() != "" {
		t.Skip("file modes concern SQLite")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gantry.db")
	files := []string{path, path + "-wal", path + "-shm"}
	check := func(when string) {
		t.Helper()
		for _, f := range files {
			fi, err := os.Stat(f)
			if err != nil {
				t.Errorf("%s: %v", when, err)
				continue
			}
			if got := fi.Mode().Perm(); got != 0o600 {
				t.Errorf("%s: %s has mode %04o, want 0600", when, filepath.Base(f), got)
			}
		}
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustCreateUser(t, db, "grace") // a write, so that the WAL files exist
	check("fresh database")

	for _, f := range files {
		if err := os.Chmod(f, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	again, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	check("files an older version left readable")
}

// TestSandboxSlotsReturnToThePool mounts the exhaustion of the uid range:
// accounts come and go, and others stop deploying, yet every account that
// ever built kept its slot for good, so that a range of N uids served N
// accounts ever. A deleted account's slot, and that of an account with
// nothing deployed for 30 days, return to the pool and the next account
// to build takes the smallest; an account with a live (or sleeping) app,
// a build under way, or a build within 30 days keeps its own.
func TestSandboxSlotsReturnToThePool(t *testing.T) {
	const slotIdle = 30 * 24 * time.Hour // deploy.SlotIdle
	db := storetest.MustOpenDB(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return t0 }
	slot := func(u *gantry.User) int64 {
		t.Helper()
		s, err := db.SandboxSlot(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	gone, idle, live, building, recent := mustCreateUser(t, db, "gone"), mustCreateUser(t, db, "idle"),
		mustCreateUser(t, db, "live"), mustCreateUser(t, db, "building"), mustCreateUser(t, db, "recent")
	for _, u := range []*gantry.User{gone, idle, live, building, recent} {
		slot(u)
	}
	sIdle := slot(idle)
	if got := []int64{slot(gone), sIdle, slot(live), slot(building), slot(recent)}; !slices.Equal(got, []int64{1, 2, 3, 4, 5}) {
		t.Fatalf("slots %v, want 1 to 5 in order", got)
	}
	mustDeployment(t, db, mustCreateProject(t, db, idle.ID, "idle-site"), gantry.DeploymentStopped)
	mustLive(t, db, mustCreateProject(t, db, live.ID, "live-site"))
	mustDeployment(t, db, mustCreateProject(t, db, building.ID, "building-site"), gantry.DeploymentBuilding)
	if err := db.DeleteUser(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}

	// 29 days on, only the deleted account's slot is free.
	db.Now = func() time.Time { return t0.Add(29 * 24 * time.Hour) }
	slot(recent) // a build now
	if n, err := db.ReleaseSandboxSlots(ctx, slotIdle); err != nil || n != 1 {
		t.Fatalf("released %d, %v; want 1 (the deleted account's)", n, err)
	}
	if s := slot(mustCreateUser(t, db, "newcomer1")); s != 1 {
		t.Errorf("a new account got slot %d, want the deleted account's 1", s)
	}
	// 31 days after the idle account last built, its slot returns too.
	db.Now = func() time.Time { return t0.Add(31 * 24 * time.Hour) }
	if n, err := db.ReleaseSandboxSlots(ctx, slotIdle); err != nil || n != 1 {
		t.Fatalf("released %d, %v; want 1 (the idle account's)", n, err)
	}
	if s := slot(mustCreateUser(t, db, "newcomer2")); s != sIdle {
		t.Errorf("a new account got slot %d, want the idle account's %d", s, sIdle)
	}
	// The others keep theirs; the idle account, building again, gets a
	// new one.
	for u, want := range map[*gantry.User]int64{live: 3, building: 4, recent: 5} {
		if s := slot(u); s != want {
			t.Errorf("%s now has slot %d, want %d", u.Username, s, want)
		}
	}
	if s := slot(idle); s != 6 {
		t.Errorf("the idle account, back, got slot %d, want the next never given, 6", s)
	}
	if n, err := db.ReleaseSandboxSlots(ctx, slotIdle); err != nil || n != 0 {
		t.Errorf("a second pass released %d, %v; want nothing", n, err)
	}
}
