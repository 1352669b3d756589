package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/gantryhq/gantry"
)

// Gallery is Discover: the public deployments, their views and likes
// (gantry.GalleryStore).
type Gallery struct{ db *DB }

// Gallery returns the store's gallery.
func (db *DB) Gallery() *Gallery { return &Gallery{db} }

var _ gantry.GalleryStore = (*Gallery)(nil)

// The gallery reads gallery_apps (alias g): one row per listed deployment
// (live, public, the active deployment of its project, of an active
// account), kept in step with deployments, projects and users by the
// triggers of migration 00004, in the same transaction as every change.
//
// gallerySearch matches a lowercased, LIKE-escaped pattern against the
// project's name and description and the author's full name and username,
// lowercased into g.search one per line. SQLite folds the case of ASCII
// letters only; PostgreSQL of every letter.
const gallerySearch = `g.search LIKE ? ESCAPE '\'`

// walkLimit is how many rows a page may expect to step over in its sort's
// index before the other plan (collect the matches, then sort them) is
// cheaper; see ListPublicDeployments. Tests change it to try both plans.
var walkLimit int64 = 2000

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

// galleryOrder returns the ORDER BY clause of a sort and the index of
// gallery_apps that serves it. Every order ends in the deployment id so
// that pages never overlap. Trending orders by the generated column
// trending_base: 0.4 × views + 0.6 × likes − 0.1 × createdAt in days since
// an epoch. That is gantry.TrendingScore minus 0.1 × now in days, the same
// for every row, so it orders exactly as the score does.
func galleryOrder(sort string) (orderBy, index string) {
	switch sort {
	case gantry.SortOldest:
		return ` ORDER BY g.created_at ASC, g.deployment_id ASC`, "gallery_apps_recent"
	case gantry.SortName:
		return ` ORDER BY g.name_key ASC, g.created_at DESC, g.deployment_id DESC`, "gallery_apps_name"
	case gantry.SortPopular:
		return ` ORDER BY g.like_count DESC, g.views DESC, g.created_at DESC, g.deployment_id DESC`, "gallery_apps_popular"
	case gantry.SortTrending:
		return ` ORDER BY g.trending_base DESC, g.created_at DESC, g.deployment_id DESC`, "gallery_apps_trending"
	}
	return ` ORDER BY g.created_at DESC, g.deployment_id DESC`, "gallery_apps_recent"
}

// indexedBy returns SQLite's clause forcing index, or "" on PostgreSQL,
// whose planner chooses well without it. SQLite's planner has no
// statistics (nothing runs ANALYZE) and, left alone, reads gallery_apps
// through the narrow type index for every search, a table lookup per row.
func (db *DB) indexedBy(index string) string {
	if db.dialect == SQLite {
		return ` INDEXED BY ` + index
	}
	return ""
}

// ListPublicDeployments answers one page of the public gallery for q
// (normalized and valid: see gantry.GalleryQuery), its total under the
// search and category, the chip counts under the search, the header counts
// of the whole gallery, and which of the page's apps q.Viewer likes. All of
// it comes from one snapshot of the database.
//
// On SQLite each step has its plan: the counts read covering indexes
// (gallery_apps_search holds the lowercased text, type and user); the page
// steps through its sort's index when the matches are dense enough to fill
// it within walkLimit rows, and otherwise collects the matches from the
// search (or type) index and sorts just them.
func (x *Gallery) ListPublicDeployments(ctx context.Context, q gantry.GalleryQuery) (*gantry.GalleryPage, error) {
	db := x.db
	opts := &sql.TxOptions{ReadOnly: true}
	if db.dialect == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)

	page := &gantry.GalleryPage{Deployments: []*gantry.PublicDeployment{}}
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM gallery_apps`).Scan(&page.Stats.Apps); err != nil {
		return nil, fmt.Errorf("count public deployments: %w", err)
	}
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM (SELECT DISTINCT user_id FROM gallery_apps`+
		db.indexedBy("gallery_apps_user")+`) developers`).Scan(&page.Stats.Developers); err != nil {
		return nil, fmt.Errorf("count developers: %w", err)
	}

	// The chips: apps per type under the search, summed per category.
	var filter []string
	var args []any
	countFrom := ` FROM gallery_apps g` + db.indexedBy("gallery_apps_type")
	if q.Search != "" {
		filter, args = append(filter, gallerySearch), append(args, likePattern(q.Search))
		countFrom = ` FROM gallery_apps g` + db.indexedBy("gallery_apps_search")
	}
	rows, err := tx.query(ctx, `SELECT g.type, COUNT(*)`+countFrom+where(filter)+` GROUP BY g.type`, args...)
	if err != nil {
		return nil, fmt.Errorf("count public deployments: %w", err)
	}
	c := &page.Categories
	for rows.Next() {
		var typ string
		var n int
		if err := rows.Scan(&typ, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("count public deployments: %w", err)
		}
		c.All += n
		switch gantry.CategoryOf(typ) {
		case gantry.CategoryFrontend:
			c.Frontend += n
		case gantry.CategoryBackend:
			c.Backend += n
		case gantry.CategoryStatic:
			c.Static += n
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count public deployments: %w", err)
	}
	page.Total = c.Of(q.Category)
	if page.Total == 0 || q.Offset >= page.Total {
		return page, nil
	}

	if types, ok := gantry.CategoryTypes[q.Category]; ok {
		list, a := inList(types)
		filter, args = append(filter, `g.type IN `+list), append(args, a...)
	}
	orderBy, sortIndex := galleryOrder(q.Sort)
	from := ` FROM gallery_apps g` + db.indexedBy(sortIndex) + where(filter)
	// Rows the sort's index is expected to step over to fill the page.
	walk := int64(q.Offset+q.Limit) * int64(page.Stats.Apps) / int64(page.Total)
	if db.dialect == SQLite && len(filter) > 0 && walk > walkLimit {
		matchIndex := "gallery_apps_type"
		if q.Search != "" {
			matchIndex = "gallery_apps_search"
		}
		from = ` FROM gallery_apps g NOT INDEXED WHERE g.rowid IN (SELECT g.rowid FROM gallery_apps g INDEXED BY ` +
			matchIndex + where(filter) + `)`
	}
	rows, err = tx.query(ctx, `SELECT g.deployment_id, g.url, g.created_at, g.name, g.description, g.type,
			g.full_name, g.username, g.views, g.like_count`+from+orderBy+` LIMIT ? OFFSET ?`,
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

	if len(byID) > 0 {
		ids := make([]string, 0, len(byID))
		for id := range byID {
			ids = append(ids, id)
		}
		list, a := inList(ids)
		rows, err := tx.query(ctx, `SELECT id FROM deployments WHERE sleeping AND id IN `+list, a...)
		if err != nil {
			return nil, fmt.Errorf("sleeping deployments: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("scan sleeping deployment: %w", err)
			}
			byID[id].Sleeping = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sleeping deployments: %w", err)
		}
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

// where joins conditions into a WHERE clause ("" for none).
func where(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return ` WHERE ` + strings.Join(conds, ` AND `)
}

// lockListed checks inside tx that deployment id is listed in the gallery
// (ENOTFOUND "App not found" otherwise). With lock, on PostgreSQL, it first
// takes the deployment's row lock, so that writers of its counters queue
// behind each other and each sees the rows the one before it committed
// (SQLite's write transaction already holds the database's write lock).
func lockListed(ctx context.Context, tx *Tx, id string, lock bool) error {
	if lock && tx.db.dialect == Postgres {
		if _, err := tx.exec(ctx, `SELECT id FROM deployments WHERE id = ? FOR UPDATE`, id); err != nil {
			return fmt.Errorf("lock deployment: %w", err)
		}
	}
	var n int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM gallery_apps WHERE deployment_id = ?`, id).Scan(&n); err != nil {
		return fmt.Errorf("find public deployment: %w", err)
	} else if n == 0 {
		return gantry.Errorf(gantry.ENOTFOUND, gantry.MsgAppNotFound)
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
// when it is old enough is what makes concurrent visits count once. Rows
// of the app older than the window are deleted on the way.
func (x *Gallery) RecordView(ctx context.Context, deploymentID, visitor string) (bool, error) {
	db := x.db
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
	// A visit counted a full window ago says nothing any more: forget it, so
	// the table holds only the last window's visitors of each app.
	windowStart := tx.now.Add(-gantry.ViewWindow)
	if _, err := tx.exec(ctx, `DELETE FROM deployment_views WHERE deployment_id = ? AND counted_at <= ?`,
		deploymentID, windowStart); err != nil {
		return false, fmt.Errorf("prune views: %w", err)
	}
	res, err := tx.exec(ctx, `INSERT INTO deployment_views (deployment_id, visitor, counted_at) VALUES (?, ?, ?)
		ON CONFLICT (deployment_id, visitor) DO UPDATE SET counted_at = excluded.counted_at
		WHERE deployment_views.counted_at <= ?`,
		deploymentID, visitor, tx.now, windowStart)
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
func (x *Gallery) ToggleLike(ctx context.Context, deploymentID, liker string) (int, bool, error) {
	db := x.db
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
func (x *Gallery) LikeStatus(ctx context.Context, deploymentID, liker string) (bool, error) {
	db := x.db
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
