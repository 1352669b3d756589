package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/gantryhq/gantry"
)

var _ gantry.GalleryStore = (*DB)(nil)

// galleryFrom selects the listed deployments: live, public, the active
// deployment of their project, of an active account. Aliases: d the
// deployment, p its project, u its owner.
const galleryFrom = ` FROM projects p
	JOIN deployments d ON d.id = p.active_deployment_id
	JOIN users u ON u.id = p.user_id
	WHERE d.status = 'live' AND d.is_public AND u.is_active`

// gallerySearch matches a lowercased, LIKE-escaped pattern against the
// project's name and description and the author's full name and username.
// SQLite folds the case of ASCII letters only; PostgreSQL of every letter.
const gallerySearch = ` AND (lower(p.name) LIKE ? ESCAPE '\' OR lower(p.description) LIKE ? ESCAPE '\'
	OR lower(u.full_name) LIKE ? ESCAPE '\' OR lower(u.username) LIKE ? ESCAPE '\')`

// likePattern turns a search into a LIKE pattern matching it anywhere,
// case-insensitively, with %, _ and \ taken literally.
func likePattern(search string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(search)) + "%"
}

// inList returns "(?, ?, …)" for the values and the values as arguments.
func inList(values []string) (string, []any) {
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	return "(?" + strings.Repeat(", ?", len(values)-1) + ")", args
}

// galleryOrder returns the ORDER BY clause of a sort. Every order ends in
// the deployment id so that pages never overlap. Trending orders by the
// generated column trending_base (migration 00004): 0.4 × views + 0.6 ×
// likes − 0.1 × createdAt in days since an epoch. That is
// gantry.TrendingScore minus 0.1 × now in days, the same for every row, so
// it orders exactly as the score does, and it can be indexed.
func galleryOrder(sort string) string {
	switch sort {
	case gantry.SortOldest:
		return ` ORDER BY d.created_at ASC, d.id ASC`
	case gantry.SortName:
		return ` ORDER BY lower(p.name) ASC, d.created_at DESC, d.id DESC`
	case gantry.SortPopular:
		return ` ORDER BY d.like_count DESC, d.views DESC, d.created_at DESC, d.id DESC`
	case gantry.SortTrending:
		return ` ORDER BY d.trending_base DESC, d.created_at DESC, d.id DESC`
	}
	return ` ORDER BY d.created_at DESC, d.id DESC`
}

// ListPublicDeployments answers one page of the public gallery for q
// (normalized and valid: see gantry.GalleryQuery), its total under the
// search and category, the chip counts under the search, and the header
// counts of the whole gallery. Every count and the page come from one
// snapshot of the database.
func (db *DB) ListPublicDeployments(ctx context.Context, q gantry.GalleryQuery) (*gantry.GalleryPage, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if db.dialect == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)

	where, args := galleryFrom, []any{}
	if q.Search != "" {
		pat := likePattern(q.Search)
		where += gallerySearch
		args = append(args, pat, pat, pat, pat)
	}

	page := &gantry.GalleryPage{Deployments: []*gantry.PublicDeployment{}}
	// The chip counts under the search, and with no search the header's too.
	counts := `SELECT COUNT(*), COUNT(DISTINCT p.user_id)`
	var countArgs []any
	for _, c := range []string{gantry.CategoryFrontend, gantry.CategoryBackend, gantry.CategoryStatic} {
		list, a := inList(gantry.CategoryTypes[c])
		counts += `, COALESCE(SUM(CASE WHEN p.type IN ` + list + ` THEN 1 ELSE 0 END), 0)`
		countArgs = append(countArgs, a...)
	}
	var developers int
	c := &page.Categories
	if err := tx.queryRow(ctx, counts+where, append(countArgs, args...)...).Scan(
		&c.All, &developers, &c.Frontend, &c.Backend, &c.Static); err != nil {
		return nil, fmt.Errorf("count public deployments: %w", err)
	}
	page.Total = c.Of(q.Category)
	if q.Search == "" {
		page.Stats = gantry.GalleryStats{Apps: c.All, Developers: developers}
	} else if err := tx.queryRow(ctx, `SELECT COUNT(*), COUNT(DISTINCT p.user_id)`+galleryFrom).Scan(
		&page.Stats.Apps, &page.Stats.Developers); err != nil {
		return nil, fmt.Errorf("count public deployments: %w", err)
	}
	if page.Total == 0 || q.Offset >= page.Total {
		return page, nil
	}

	if types, ok := gantry.CategoryTypes[q.Category]; ok {
		list, a := inList(types)
		where += ` AND p.type IN ` + list
		args = append(args, a...)
	}
	rows, err := tx.query(ctx, `SELECT d.id, d.url, d.created_at, p.name, p.description, p.type,
			u.full_name, u.username, d.views, d.like_count`+where+galleryOrder(q.Sort)+` LIMIT ? OFFSET ?`,
		append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, fmt.Errorf("list public deployments: %w", err)
	}
	byID := map[string]*gantry.PublicDeployment{}
	for rows.Next() {
		var d gantry.PublicDeployment
		if err := rows.Scan(&d.ID, &d.URL, &d.CreatedAt, &d.Project.Name, &d.Project.Description, &d.Project.Type,
			&d.User.FullName, &d.User.Username, &d.Views, &d.LikeCount); err != nil {
			rows.Close()
			return nil, fmt.Errorf("scan public deployment: %w", err)
		}
		d.CreatedAt = d.CreatedAt.UTC()
		page.Deployments = append(page.Deployments, &d)
		byID[d.ID] = &d
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list public deployments: %w", err)
	}

	if q.Viewer != "" && len(byID) > 0 {
		ids := make([]string, 0, len(byID))
		for id := range byID {
			ids = append(ids, id)
		}
		list, a := inList(ids)
		rows, err := tx.query(ctx, `SELECT deployment_id FROM deployment_likes WHERE liker = ? AND deployment_id IN `+list,
			append([]any{q.Viewer}, a...)...)
		if err != nil {
			return nil, fmt.Errorf("liked deployments: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return nil, fmt.Errorf("scan liked deployment: %w", err)
			}
			byID[id].Liked = true
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("liked deployments: %w", err)
		}
	}
	return page, nil
}

// lockListed checks inside tx that deployment id is listed in the gallery
// (ENOTFOUND "App not found" otherwise). With lock, on PostgreSQL, it also
// takes the deployment's row lock, so that writers of its counters queue
// behind each other and each sees the rows the one before it committed
// (SQLite's write transaction already holds the database's write lock).
func lockListed(ctx context.Context, tx *Tx, id string, lock bool) error {
	q := `SELECT d.id` + galleryFrom + ` AND d.id = ?`
	if lock && tx.db.dialect == Postgres {
		q += ` FOR UPDATE OF d`
	}
	var got string
	err := tx.queryRow(ctx, q, id).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return gantry.Errorf(gantry.ENOTFOUND, gantry.MsgAppNotFound)
	} else if err != nil {
		return fmt.Errorf("find public deployment: %w", err)
	}
	return nil
}

// checkKey refuses an empty or oversized viewer key.
func checkKey(key string) error {
	if key == "" || len(key) > 200 {
		return gantry.Errorf(gantry.EINVALID, "A viewer key is required")
	}
	return nil
}

// RecordView counts a visit of visitor to the listed deployment id, unless
// the same visitor was counted for it less than gantry.ViewWindow ago, and
// reports whether it counted. One row per deployment and visitor holds the
// time of the last counted visit; the upsert that moves it forward only
// when it is old enough is what makes concurrent visits count once.
func (db *DB) RecordView(ctx context.Context, deploymentID, visitor string) (bool, error) {
	if err := checkKey(visitor); err != nil {
		return false, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer rollback(tx)
	if err := lockListed(ctx, tx, deploymentID, false); err != nil {
		return false, err
	}
	res, err := tx.exec(ctx, `INSERT INTO deployment_views (deployment_id, visitor, counted_at) VALUES (?, ?, ?)
		ON CONFLICT (deployment_id, visitor) DO UPDATE SET counted_at = excluded.counted_at
		WHERE deployment_views.counted_at <= ?`,
		deploymentID, visitor, tx.now, tx.now.Add(-gantry.ViewWindow))
	if err != nil {
		return false, fmt.Errorf("record view: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, err
	} else if n == 0 {
		return false, nil // counted within the window
	}
	if _, err := tx.exec(ctx, `UPDATE deployments SET views = views + 1 WHERE id = ?`, deploymentID); err != nil {
		return false, fmt.Errorf("count view: %w", err)
	}
	return true, tx.Commit()
}

// ToggleLike likes the listed deployment for liker, or takes the like back
// when liker already likes it, and answers the new like count and whether
// liker now likes it. The (deployment, liker) primary key keeps one like
// per liker; the count is recounted from the likes in the same transaction,
// behind the deployment's row lock (PostgreSQL) or the write lock (SQLite),
// so it stays exact under concurrent toggles.
func (db *DB) ToggleLike(ctx context.Context, deploymentID, liker string) (int, bool, error) {
	if err := checkKey(liker); err != nil {
		return 0, false, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, err
	}
	defer rollback(tx)
	if err := lockListed(ctx, tx, deploymentID, true); err != nil {
		return 0, false, err
	}
	res, err := tx.exec(ctx, `INSERT INTO deployment_likes (deployment_id, liker, created_at) VALUES (?, ?, ?)
		ON CONFLICT (deployment_id, liker) DO NOTHING`, deploymentID, liker, tx.now)
	if err != nil {
		return 0, false, fmt.Errorf("like: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, false, err
	}
	liked := n == 1
	if !liked {
		if _, err := tx.exec(ctx, `DELETE FROM deployment_likes WHERE deployment_id = ? AND liker = ?`,
			deploymentID, liker); err != nil {
			return 0, false, fmt.Errorf("unlike: %w", err)
		}
	}
	var count int
	if err := tx.queryRow(ctx, `UPDATE deployments
		SET like_count = (SELECT COUNT(*) FROM deployment_likes WHERE deployment_id = ?) WHERE id = ?
		RETURNING like_count`, deploymentID, deploymentID).Scan(&count); err != nil {
		return 0, false, fmt.Errorf("count likes: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, false, err
	}
	return count, liked, nil
}

// LikeStatus reports whether liker likes the listed deployment id.
func (db *DB) LikeStatus(ctx context.Context, deploymentID, liker string) (bool, error) {
	if err := checkKey(liker); err != nil {
		return false, err
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return false, err
	}
	defer rollback(tx)
	if err := lockListed(ctx, tx, deploymentID, false); err != nil {
		return false, err
	}
	var n int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM deployment_likes WHERE deployment_id = ? AND liker = ?`,
		deploymentID, liker).Scan(&n); err != nil {
		return false, fmt.Errorf("like status: %w", err)
	}
	return n > 0, nil
}
