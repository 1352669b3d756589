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
// workers free up, the first two builds taken are one of each account
// (u2's does not wait behind u1's three), and both replicas' workers take
// part.
func TestFairQueueAcrossReplicas(t *testing.T) {
	c := newCluster(t, map[string]string{"GANTRY_BUILD_CONCURRENCY": "1"})
	a, b := c.start("a"), c.start("b")
	// Accounts and projects first, so the deploys below are queued in a
	// moment while the busy builds run.
	projects := func(user string, n, ms int) (token string, ids []string) {
		token = register(t, a, user)
		url, cmd := c.slowSite(user, "site", ms, user)
		for i := range n {
			ids = append(ids, createProject(t, b, token, url, fmt.Sprintf("%s-%d", user, i), cmd).ID)
		}
		return token, ids
	}
	queue := func(token string, projects []string) (ids []string) {
		for _, p := range projects {
			ids = append(ids, deploy(t, a, token, p))
		}
		return ids
	}
	busyToken, busyProjects := projects("busy", 2, 6000)
	u1Token, u1Projects := projects("uone", 3, 1500)
	u2Token, u2Projects := projects("utwo", 1, 1500)
	queue(busyToken, busyProjects)
	builder(t, "build.js 6000", 60*time.Second, a)
	builder(t, "build.js 6000", 60*time.Second, b)
	u1 := queue(u1Token, u1Projects)
	u2 := queue(u2Token, u2Projects)

	// The order in which the queued builds left the queue.
	var started []string
	by := map[string]string{} // the replica that claimed each
	waiting := append(slices.Clone(u1), u2...)
	for deadline := time.Now().Add(2 * time.Minute); len(started) < len(waiting); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 2 minutes only %d of the 4 queued builds started", len(started))
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
	claimed := map[string]int{}
	for _, id := range started {
		claimed[by[id]]++
	}
	if claimed["a"] == 0 || claimed["b"] == 0 {
		t.Fatalf("the four queued builds were claimed by %v; want both replicas' workers taking part", claimed)
	}
}
