package store

// The parts of DB (store.go), one per entity or capability. Each holds
// the connection; DB embeds them all, so callers keep one handle.
type (
	users         struct{ db *DB }
	sessions      struct{ db *DB }
	projects      struct{ db *DB }
	deployments   struct{ db *DB }
	transitions   struct{ db *DB }
	githubHooks   struct{ db *DB }
	buildCaches   struct{ db *DB }
	previewAccess struct{ db *DB }
)
