package store

import "context"

// SetWalkLimit changes when a gallery page stops stepping through its
// sort's index, and returns the previous value. Not safe to call while
// other tests run.
func SetWalkLimit(n int64) int64 {
	prev := walkLimit
	walkLimit = n
	return prev
}

// CountViewRows returns how many visitors' last visits are kept for a deployment.
func CountViewRows(tb interface{ Fatal(...any) }, db *DB, deploymentID string) int {
	var n int
	if err := db.queryRow(context.Background(), `SELECT COUNT(*) FROM deployment_views WHERE deployment_id = ?`,
		deploymentID).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}
