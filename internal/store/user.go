package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
)

var _ gantry.UserStore = (*DB)(nil)

// Messages of the conflicts a user write may run into.
const (
	msgUsernameTaken = "This username is already taken"
	msgEmailTaken    = "An account with this email already exists"
)

// userColumns lists the users columns in the order scanUser reads them.
const userColumns = `id, username, email, full_name, avatar, password_hash, role, plan,
	max_projects, max_deployments, max_storage, is_verified, is_active,
	github_connected, github_id, github_username, github_avatar, github_access_token, github_repos,
	created_at, updated_at, last_login`

// CreateUser inserts u. It fills ID, CreatedAt and UpdatedAt, lowercases
// the email, and defaults an empty Role to student and an empty plan to the
// free plan with its limits. A taken username or email (compared
// case-insensitively) is ECONFLICT. The caller validates the fields.
func (st users) CreateUser(ctx context.Context, u *gantry.User) error {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	if err := createUser(ctx, tx, u); err != nil {
		return err
	}
	return tx.Commit()
}

func createUser(ctx context.Context, tx *Tx, u *gantry.User) error {
	id, err := newID()
	if err != nil {
		return err
	}
	u.Email = gantry.NormalizeEmail(u.Email)
	if u.Role == "" {
		u.Role = gantry.RoleStudent
	}
	if u.Subscription.Plan == "" {
		u.Subscription = gantry.Subscription{
			Plan:           gantry.PlanFree,
			MaxProjects:    gantry.DefaultMaxProjects,
			MaxDeployments: gantry.DefaultMaxDeployments,
		}
	}
	if u.Subscription.MaxStorage <= 0 {
		u.Subscription.MaxStorage = gantry.PlanMaxStorage(u.Subscription.Plan)
	}
	if u.GitHub.Repos == nil {
		u.GitHub.Repos = []gantry.GitHubRepo{}
	}
	if err := checkUserUnique(ctx, tx, "", u.Username, u.Email); err != nil {
		return err
	}
	repos, err := json.Marshal(u.GitHub.Repos)
	if err != nil {
		return fmt.Errorf("encode github repos: %w", err)
	}
	var lastLogin *time.Time
	if u.LastLogin != nil {
		t := u.LastLogin.UTC().Truncate(time.Millisecond)
		lastLogin = &t
	}
	_, err = tx.exec(ctx, `INSERT INTO users (`+userColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, u.Username, u.Email, u.FullName, u.Avatar, u.PasswordHash, u.Role, u.Subscription.Plan,
		u.Subscription.MaxProjects, u.Subscription.MaxDeployments, u.Subscription.MaxStorage, u.IsVerified, u.IsActive,
		u.GitHub.Connected, nullInt64(u.GitHub.ID), u.GitHub.Username, u.GitHub.Avatar, u.GitHub.AccessToken, string(repos),
		tx.now, tx.now, lastLogin)
	if err != nil {
		return userWriteError("create user", err)
	}
	u.ID, u.CreatedAt, u.UpdatedAt, u.LastLogin = id, tx.now, tx.now, lastLogin
	return nil
}

// FindUserByID returns the user with the given id, or ENOTFOUND.
func (st users) FindUserByID(ctx context.Context, id string) (*gantry.User, error) {
	db := st.db
	return scanUser(db.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
}

// FindUserByEmail returns the user with the given email, compared
// case-insensitively, or ENOTFOUND.
func (st users) FindUserByEmail(ctx context.Context, email string) (*gantry.User, error) {
	db := st.db
	return scanUser(db.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE email = ?`,
		gantry.NormalizeEmail(email)))
}

func findUserByID(ctx context.Context, tx *Tx, id string) (*gantry.User, error) {
	return scanUser(tx.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
}

// UpdateUser normalizes and validates upd (gantry.UserUpdate.Validate),
// applies the fields that are set, and returns the updated user. A missing
// user is ENOTFOUND; a username or email taken by another account is
// ECONFLICT. Changing only the case of one's own username is allowed.
func (st users) UpdateUser(ctx context.Context, id string, upd gantry.UserUpdate) (*gantry.User, error) {
	db := st.db
	upd.Normalize()
	if err := upd.Validate(); err != nil {
		return nil, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	u, err := findUserByID(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if v := upd.FullName; v != nil {
		u.FullName = *v
	}
	if v := upd.Username; v != nil {
		u.Username = *v
	}
	if v := upd.Email; v != nil {
		u.Email = *v
	}
	if v := upd.Avatar; v != nil {
		u.Avatar = *v
	}
	if err := checkUserUnique(ctx, tx, u.ID, u.Username, u.Email); err != nil {
		return nil, err
	}
	u.UpdatedAt = tx.now
	if _, err := tx.exec(ctx, `UPDATE users SET full_name = ?, username = ?, email = ?, avatar = ?, updated_at = ?
		WHERE id = ?`, u.FullName, u.Username, u.Email, u.Avatar, u.UpdatedAt, u.ID); err != nil {
		return nil, userWriteError("update user", err)
	}
	return u, tx.Commit()
}

// SetPasswordHash replaces a user's password hash; ENOTFOUND when the user
// does not exist.
func (st users) SetPasswordHash(ctx context.Context, id, hash string) error {
	db := st.db
	return db.updateOne(ctx, `UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?`, hash, db.now(), id)
}

// TouchLastLogin records a sign-in at the given time; ENOTFOUND when the
// user does not exist.
func (st users) TouchLastLogin(ctx context.Context, id string, at time.Time) error {
	db := st.db
	return db.updateOne(ctx, `UPDATE users SET last_login = ? WHERE id = ?`, at.UTC().Truncate(time.Millisecond), id)
}

// DeleteUser removes a user and, by cascade, their projects and
// deployments; ENOTFOUND when the user does not exist.
func (st users) DeleteUser(ctx context.Context, id string) error {
	db := st.db
	return db.updateOne(ctx, `DELETE FROM users WHERE id = ?`, id)
}

// updateOne runs a statement that must touch exactly one user row.
func (st users) updateOne(ctx context.Context, query string, args ...any) error {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	res, err := tx.exec(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("update user: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return gantry.Errorf(gantry.ENOTFOUND, "User not found")
	}
	return tx.Commit()
}

// UserStats counts a user's projects, deployments and live deployments,
// the whole days between the account's creation and now, and the storage
// the deployments use (see StorageUsage). A missing user is ENOTFOUND.
func (st users) UserStats(ctx context.Context, id string, now time.Time) (*gantry.UserStats, error) {
	db := st.db
	var created time.Time
	var s gantry.UserStats
	err := db.queryRow(ctx, `SELECT created_at,
			(SELECT COUNT(*) FROM projects WHERE user_id = u.id),
			(SELECT COUNT(*) FROM deployments WHERE user_id = u.id),
			(SELECT COUNT(*) FROM deployments WHERE user_id = u.id AND status = ?),
			`+storageColumns+`
		FROM users u WHERE u.id = ?`, gantry.DeploymentLive, id).
		Scan(&created, &s.TotalProjects, &s.TotalDeployments, &s.ActiveDeployments,
			&s.Storage.Budget, &s.Storage.Files, &s.Storage.Logs, &s.Storage.Data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "User not found")
	} else if err != nil {
		return nil, fmt.Errorf("user stats: %w", err)
	}
	if age := now.Sub(created); age > 0 {
		s.AccountAge = int(age / (24 * time.Hour))
	}
	if err := db.splitFiles(ctx, id, &s.Storage); err != nil {
		return nil, err
	}
	s.Storage.Used = s.Storage.Files + s.Storage.Logs + s.Storage.Data
	return &s, nil
}

// splitFiles fills u's Sites, Apps and Rollbacks from the user's
// deployments that keep files, and makes Files their sum: a server app
// is a deployment whose build info has a start command. A blob several
// deployments link to counts once, in the first of sites, apps and
// rollbacks that links to it.
func (st users) splitFiles(ctx context.Context, userID string, u *gantry.StorageUsage) error {
	db := st.db
	rows, err := db.db.QueryContext(ctx, db.rebind(`SELECT id, status, files_size, build_info FROM deployments
		WHERE user_id = ? AND files_size > 0`), userID)
	if err != nil {
		return fmt.Errorf("storage split: %w", err)
	}
	defer rows.Close()
	const sites, apps, rollbacks = 0, 1, 2
	var by [3]int64
	kind := map[string]int{}
	for rows.Next() {
		var id, status, info string
		var size int64
		if err := rows.Scan(&id, &status, &size, &info); err != nil {
			return fmt.Errorf("storage split: %w", err)
		}
		var bi struct {
			StartCommand string `json:"startCommand"`
		}
		_ = json.Unmarshal([]byte(info), &bi) // unreadable: counted as a site
		switch {
		case status == gantry.DeploymentStopped || status == gantry.DeploymentFailed:
			kind[id] = rollbacks
		case bi.StartCommand != "":
			kind[id] = apps
		default:
			kind[id] = sites
		}
		by[kind[id]] += size
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("storage split: %w", err)
	}
	rows.Close()
	if err := (&Blobs{db}).split(ctx, userID, kind, &by); err != nil {
		return err
	}
	u.Sites, u.Apps, u.Rollbacks = by[sites], by[apps], by[rollbacks]
	u.Files = u.Sites + u.Apps + u.Rollbacks
	return nil
}

// split takes out of by (per kind of deployment, see splitFiles) the
// blob bytes counted more than once: each blob stays in the first kind
// that links to it.
func (b *Blobs) split(ctx context.Context, userID string, kind map[string]int, by *[3]int64) error {
	rows, err := b.db.db.QueryContext(ctx, b.db.rebind(`SELECT deployment_id, hash, bytes FROM deployment_blobs
		WHERE user_id = ?`), userID)
	if err != nil {
		return fmt.Errorf("storage split: %w", err)
	}
	defer rows.Close()
	type blob struct {
		kind  int
		bytes int64
	}
	first := map[string]blob{}
	for rows.Next() {
		var id, hash string
		var n int64
		if err := rows.Scan(&id, &hash, &n); err != nil {
			return fmt.Errorf("storage split: %w", err)
		}
		k, ok := kind[id]
		if !ok {
			continue // keeps no files
		}
		by[k] -= n
		if f, seen := first[hash]; !seen || k < f.kind {
			first[hash] = blob{k, n}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("storage split: %w", err)
	}
	for _, f := range first {
		by[f.kind] += f.bytes
	}
	return nil
}

// checkUserUnique returns ECONFLICT when another user than selfID holds
// username (case-insensitively) or email. The unique indexes enforce the
// same rule; this check only gives the clearer message first.
func checkUserUnique(ctx context.Context, tx *Tx, selfID, username, email string) error {
	var n int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM users WHERE lower(username) = lower(?) AND id <> ?`,
		username, selfID).Scan(&n); err != nil {
		return fmt.Errorf("check username: %w", err)
	} else if n > 0 {
		return gantry.Errorf(gantry.ECONFLICT, msgUsernameTaken)
	}
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM users WHERE email = ? AND id <> ?`,
		email, selfID).Scan(&n); err != nil {
		return fmt.Errorf("check email: %w", err)
	} else if n > 0 {
		return gantry.Errorf(gantry.ECONFLICT, msgEmailTaken)
	}
	return nil
}

// userWriteError turns a unique violation that raced past checkUserUnique
// into ECONFLICT and wraps anything else.
func userWriteError(op string, err error) error {
	if detail, ok := uniqueViolation(err); ok {
		switch {
		case strings.Contains(detail, "email"):
			return gantry.Errorf(gantry.ECONFLICT, msgEmailTaken)
		case strings.Contains(detail, "username"):
			return gantry.Errorf(gantry.ECONFLICT, msgUsernameTaken)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// scanUser reads one row of userColumns; sql.ErrNoRows becomes ENOTFOUND.
func scanUser(row *sql.Row) (*gantry.User, error) {
	var u gantry.User
	var githubID sql.NullInt64
	var repos string
	var lastLogin sql.NullTime
	err := row.Scan(&u.ID, &u.Username, &u.Email, &u.FullName, &u.Avatar, &u.PasswordHash, &u.Role,
		&u.Subscription.Plan, &u.Subscription.MaxProjects, &u.Subscription.MaxDeployments, &u.Subscription.MaxStorage,
		&u.IsVerified, &u.IsActive,
		&u.GitHub.Connected, &githubID, &u.GitHub.Username, &u.GitHub.Avatar, &u.GitHub.AccessToken, &repos,
		&u.CreatedAt, &u.UpdatedAt, &lastLogin)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "User not found")
	} else if err != nil {
		return nil, fmt.Errorf("scan user: %w", err)
	}
	u.GitHub.ID = githubID.Int64
	if err := json.Unmarshal([]byte(repos), &u.GitHub.Repos); err != nil {
		return nil, fmt.Errorf("decode github repos of user %s: %w", u.ID, err)
	}
	if u.GitHub.Repos == nil {
		u.GitHub.Repos = []gantry.GitHubRepo{}
	}
	u.CreatedAt, u.UpdatedAt = u.CreatedAt.UTC(), u.UpdatedAt.UTC()
	if lastLogin.Valid {
		t := lastLogin.Time.UTC()
		u.LastLogin = &t
	}
	return &u, nil
}

// nullInt64 stores 0 as NULL, for optional ids.
func nullInt64(v int64) sql.NullInt64 { return sql.NullInt64{Int64: v, Valid: v != 0} }

// SetUserActive activates or deactivates an account; a deactivated account
// cannot sign in. ENOTFOUND when the user does not exist.
func (st users) SetUserActive(ctx context.Context, id string, active bool) error {
	db := st.db
	return db.updateOne(ctx, `UPDATE users SET is_active = ?, updated_at = ? WHERE id = ?`, active, db.now(), id)
}

// CountUsers returns the number of accounts.
func (st users) CountUsers(ctx context.Context) (int, error) {
	db := st.db
	var n int
	err := db.queryRow(ctx, `SELECT COUNT(*) FROM users`).Scan(&n)
	return n, err
}

// SandboxSlot returns the account's slot (1, 2, …) in the range of sandbox
// uids, giving it one the first time it is asked for, and again after its
// slot was given back (ReleaseSandboxSlots): the smallest slot in the pool
// of given-back ones, else the next never given. Every call records that
// the slot is in use now (a build or an app start), which keeps it the
// account's. A missing user is ENOTFOUND.
func (st users) SandboxSlot(ctx context.Context, userID string) (int64, error) {
	db := st.db
	for attempt := 1; ; attempt++ {
		slot, err := db.sandboxSlot(ctx, userID)
		if errors.Is(err, errSlotRace) && attempt < 10 {
			continue
		}
		return slot, err
	}
}

// errSlotRace is a slot of the pool taken by another account meanwhile.
var errSlotRace = errors.New("sandbox slot taken meanwhile")

func (st users) sandboxSlot(ctx context.Context, userID string) (int64, error) {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer rollback(tx)
	now := db.now()
	var slot sql.NullInt64
	if err := tx.queryRow(ctx, `SELECT sandbox_slot FROM users WHERE id = ?`, userID).Scan(&slot); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return 0, gantry.Errorf(gantry.ENOTFOUND, "User not found.")
		}
		return 0, err
	}
	if slot.Valid {
		if _, err := tx.exec(ctx, `UPDATE users SET sandbox_slot_used_at = ? WHERE id = ?`, now, userID); err != nil {
			return 0, err
		}
		return slot.Int64, tx.Commit()
	}
	err = tx.queryRow(ctx, `SELECT slot FROM sandbox_slots_free ORDER BY slot LIMIT 1`).Scan(&slot)
	switch {
	case err == nil:
		res, err := tx.exec(ctx, `DELETE FROM sandbox_slots_free WHERE slot = ?`, slot.Int64)
		if err != nil {
			return 0, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return 0, err
		} else if n != 1 {
			return 0, errSlotRace
		}
	case errors.Is(err, sql.ErrNoRows):
		// The highest slot ever given is kept in sandbox_slots_given: the
		// pool holds every lower one no account has.
		if _, err := tx.exec(ctx, `INSERT INTO sandbox_slots_given (id, last) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`); err != nil {
			return 0, err
		}
		if err := tx.queryRow(ctx, `UPDATE sandbox_slots_given SET last = last + 1 WHERE id = 1 RETURNING last`).Scan(&slot); err != nil {
			return 0, err
		}
	default:
		return 0, err
	}
	res, err := tx.exec(ctx, `UPDATE users SET sandbox_slot = ?, sandbox_slot_used_at = ? WHERE id = ? AND sandbox_slot IS NULL`, slot.Int64, now, userID)
	if err != nil {
		return 0, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return 0, err
	} else if n == 0 {
		// Another call for the same account was first: its slot wins, and
		// this one's stays in the pool (rolled back).
		_ = tx.Rollback()
		if err := db.queryRow(ctx, `SELECT sandbox_slot FROM users WHERE id = ?`, userID).Scan(&slot); err != nil {
			return 0, err
		}
		if !slot.Valid {
			return 0, errSlotRace
		}
		return slot.Int64, nil
	}
	return slot.Int64, tx.Commit()
}

// ReleaseSandboxSlots returns slots to the pool SandboxSlot gives from,
// and reports how many: the slots of deleted accounts (every slot up to
// the highest ever given that no account holds), and the slot of every
// account that has nothing deployed (no deployment pending, building,
// deploying or live, sleeping apps included) and neither deployed nor ran
// anything under its slot for idle. Nothing of such an account runs, so
// no process can carry its uid to the next owner; files it left keep the
// uid but lie in volumes and folders only its own runs mount, and its
// next build takes a slot anew (build caches and kept app volumes are
// re-owned when used: build.Pipeline, sandbox.Reown).
func (st users) ReleaseSandboxSlots(ctx context.Context, idle time.Duration) (int, error) {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer rollback(tx)
	now := db.now()
	cutoff := now.Add(-idle)
	busy := []any{gantry.DeploymentPending, gantry.DeploymentBuilding, gantry.DeploymentDeploying, gantry.DeploymentLive}
	idleWhere := `sandbox_slot IS NOT NULL AND (sandbox_slot_used_at IS NULL OR sandbox_slot_used_at < ?)
		AND NOT EXISTS (SELECT 1 FROM deployments d WHERE d.user_id = users.id AND (d.status IN (?, ?, ?, ?) OR d.updated_at >= ?))`
	idleArgs := append(append([]any{cutoff}, busy...), cutoff)
	rows, err := tx.query(ctx, `SELECT id, sandbox_slot FROM users WHERE `+idleWhere, idleArgs...)
	if err != nil {
		return 0, fmt.Errorf("release sandbox slots: %w", err)
	}
	type held struct {
		id   string
		slot int64
	}
	var idleUsers []held
	for rows.Next() {
		var h held
		if err := rows.Scan(&h.id, &h.slot); err != nil {
			rows.Close()
			return 0, err
		}
		idleUsers = append(idleUsers, h)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	released := 0
	for _, h := range idleUsers {
		// The conditions again, on the row itself: a build that began
		// meanwhile keeps the slot.
		res, err := tx.exec(ctx, `UPDATE users SET sandbox_slot = NULL, sandbox_slot_used_at = NULL
			WHERE id = ? AND sandbox_slot = ? AND `+idleWhere, append([]any{h.id, h.slot}, idleArgs...)...)
		if err != nil {
			return 0, fmt.Errorf("release sandbox slots: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			if _, err := tx.exec(ctx, `INSERT INTO sandbox_slots_free (slot, freed_at) VALUES (?, ?)`, h.slot, now); err != nil {
				return 0, fmt.Errorf("release sandbox slots: %w", err)
			}
			released++
		}
	}
	// Deleted accounts' slots: the ones up to the highest given that no
	// account holds and the pool does not hold yet.
	res, err := tx.exec(ctx, `WITH RECURSIVE n (slot) AS (
			SELECT 1 WHERE (SELECT COALESCE(MAX(last), 0) FROM sandbox_slots_given) >= 1
			UNION ALL
			SELECT slot + 1 FROM n WHERE slot < (SELECT MAX(last) FROM sandbox_slots_given))
		INSERT INTO sandbox_slots_free (slot, freed_at)
		SELECT slot, ? FROM n
		WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.sandbox_slot = n.slot)
		  AND NOT EXISTS (SELECT 1 FROM sandbox_slots_free f WHERE f.slot = n.slot)`, now)
	if err != nil {
		return 0, fmt.Errorf("release sandbox slots: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	return released + int(n), tx.Commit()
}
