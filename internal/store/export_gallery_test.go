package store

// SetWalkLimit changes when a gallery page stops stepping through its
// sort's index, and returns the previous value. Not safe to call while
// other tests run.
func SetWalkLimit(n int64) int64 {
	prev := walkLimit
	walkLimit = n
	return prev
}
