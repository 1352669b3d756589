package clustertest

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestFairQueueAcrossReplicas (B8): two replicas building one build each
// (GANTRY_BUILD_CONCURRENCY=1) share one fair queue. While a third account
// keeps both busy, u1 queues 3 builds and then u2 queues 1; when the two
// workers free up, the next round takes one build of each account (u2's
// does not wait behind u1's three), one on each replica.
func TestFairQueueAcrossReplicas(t *testing.T) {
	c := newCluster(t, map[string]string{"GANTRY_BUILD_CONCURRENCY": "1"})
	a, b := c.start("a"), c.start("b")
	queue := func(user string, n, ms int) []string {
		token := register(t, a, user)
		url, cmd := c.slowSite(user, "site", ms, user)
		var ids []string
		for i := range n {
			p := createProject(t, b, token, url, fmt.Sprintf("%s-%d", user, i), cmd)
			ids = append(ids, deploy(t, a, token, p.ID))
		}
		return ids
	}
	queue("busy", 2, 6000)
	builder(t, "build.js 6000", 60*time.Second, a)
	builder(t, "build.js 6000", 60*time.Second, b)
	u1 := queue("uone", 3, 1500)
	u2 := queue("utwo", 1, 1500)

	// The order in which the queued builds left the queue.
	var started []string
	by := map[string]string{} // the replica that claimed each
	waiting := append(slices.Clone(u1), u2...)
	for deadline := time.Now().Add(2 * time.Minute); len(started) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 2 minutes only %d of the queued builds started", len(started))
		}
		for _, id := range waiting {
			var status string
			if err := c.db.QueryRow("SELECT status FROM deployments WHERE id = $1", id).Scan(&status); err != nil {
				t.Fatal(err)
			}
			if status != "pending" && !slices.Contains(started, id) {
				started = append(started, id)
				var node string
				_ = c.db.QueryRow("SELECT claimed_by FROM deployments WHERE id = $1", id).Scan(&node)
				by[id] = node
			}
		}
	}
	if !slices.Contains(started[:2], u2[0]) || !slices.Contains(started[:2], u1[0]) {
		t.Fatalf("the first round after the busy builds took %v; want u1's first (%s) and u2's (%s)", started[:2], u1[0], u2[0])
	}
	if by[started[0]] == "" || by[started[0]] == by[started[1]] {
		t.Fatalf("the round's builds were claimed by %q and %q; want one on each replica", by[started[0]], by[started[1]])
	}
}
