package gantry

import "time"

// WatchState is what the commit watcher keeps of one project in the store:
// the head of its production branch it saw last ("" before its first
// check) and the interval it has backed off to.
type WatchState struct {
	ProjectID string
	Head      string
	Backoff   time.Duration
}

// WatchMaxBackoff is the longest the commit watcher waits between two
// checks of a branch that does not change.
const WatchMaxBackoff = 15 * time.Minute

// OnGitHub reports whether r is a GitHub repository (GitHub's numeric id);
// repositories of other hosts have ids starting with "git-".
func (r Repository) OnGitHub() bool {
	return r.ID != "" && !(len(r.ID) > 4 && r.ID[:4] == "git-")
}
