package build

// SetCompressBounds lowers precompression's bounds per deployment for a
// test, until restore.
func SetCompressBounds(total, best int64) (restore func()) {
	old := compressBounds
	compressBounds.total, compressBounds.best = total, best
	return func() { compressBounds = old }
}
