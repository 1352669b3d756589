package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// tickingClock makes db's clock advance a second at every reading, so rows
// created one after the other never share a timestamp.
func tickingClock(db *store.DB) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	db.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
}

// TestFairQueueRoundRobin queues backlogs of three users (alice's first and
// biggest) and checks that workers serve them in turns, that every
// position announced beforehand was the place the build was claimed at,
// and that a newcomer goes before the users already served.
func TestFairQueueRoundRobin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	tickingClock(db)
	alice, bob, carol := mustCreateUser(t, db, "alice"), mustCreateUser(t, db, "bob"), mustCreateUser(t, db, "carol")
	pa, pb, pc := mustCreateProject(t, db, alice.ID, "a"), mustCreateProject(t, db, bob.ID, "b"), mustCreateProject(t, db, carol.ID, "c")

	name := map[string]string{}
	queue := func(p *gantry.Project, label string) {
		d := mustCreateDeployment(t, db, p)
		name[d.ID] = label
	}
	for _, l := range []string{"a1", "a2", "a3", "a4", "a5"} {
		queue(pa, l)
	}
	for _, l := range []string{"b1", "b2", "b3"} {
		queue(pb, l)
	}
	for _, l := range []string{"c1", "c2"} {
		queue(pc, l)
	}
	want := []string{"a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "a4", "a5"}

	// The positions the builds are told when nothing else arrives.
	pos := map[string]int{}
	for id, l := range name {
		n, err := db.QueuePosition(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		pos[l] = n
	}
	for i, l := range want {
		if pos[l] != i+1 {
			t.Errorf("position of %s: got %d, want %d", l, pos[l], i+1)
		}
	}

	var got []string
	for range want {
		d, err := db.ClaimDeployment(ctx, gantry.BuildClaim{})
		if err != nil {
			t.Fatalf("claim after %v: %v", got, err)
		}
		if d.Status != gantry.DeploymentBuilding {
			t.Fatalf("claimed %s is %s, want building", name[d.ID], d.Status)
		}
		got = append(got, name[d.ID])
		if len(got) == 4 {
			// Alice and bob have been served twice, carol once: dave,
			// never served, goes next even though his build is the newest.
			dave := mustCreateUser(t, db, "dave")
			queue(mustCreateProject(t, db, dave.ID, "d"), "d1")
			want = append(want[:4], append([]string{"d1"}, want[4:]...)...)
			for id, l := range name {
				if l == "d1" {
					if n, _ := db.QueuePosition(ctx, id); n != 1 {
						t.Errorf("dave's position: got %d, want 1", n)
					}
				}
				if l == "b2" {
					// bob's turn is older than carol's and alice's.
					if n, _ := db.QueuePosition(ctx, id); n != 2 {
						t.Errorf("b2's position after dave queued: got %d, want 2", n)
					}
				}
			}
		}
	}
	// The loop ran len(want) times before dave's build was added: one more.
	d, err := db.ClaimDeployment(ctx, gantry.BuildClaim{})
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, name[d.ID])
	if len(got) != len(want) {
		t.Fatalf("claimed %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("claim order %v, want %v", got, want)
		}
	}
	if _, err := db.ClaimDeployment(ctx, gantry.BuildClaim{}); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("claim of an empty queue: %v, want not found", err)
	}
	if n, _ := db.QueuePosition(ctx, d.ID); n != 0 {
		t.Fatalf("position of a claimed build: got %d, want 0", n)
	}
}

// TestFairQueueTurnSurvivesDelete checks that deleting a claimed build
// does not give its owner an earlier turn.
func TestFairQueueTurnSurvivesDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	tickingClock(db)
	alice, bob := mustCreateUser(t, db, "alice"), mustCreateUser(t, db, "bob")
	pa, pb := mustCreateProject(t, db, alice.ID, "a"), mustCreateProject(t, db, bob.ID, "b")
	mustCreateDeployment(t, db, pb)
	mustCreateDeployment(t, db, pb)
	mustCreateDeployment(t, db, pa)
	mustCreateDeployment(t, db, pa)

	b1, err1 := db.ClaimDeployment(ctx, gantry.BuildClaim{}) // bob's build is the oldest
	a1, err2 := db.ClaimDeployment(ctx, gantry.BuildClaim{}) // then alice, never served
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if b1.UserID != bob.ID || a1.UserID != alice.ID {
		t.Fatalf("claimed %s's then %s's build, want bob's then alice's", b1.User.Username, a1.User.Username)
	}
	if _, err := db.DeleteDeployment(ctx, a1.ID); err != nil {
		t.Fatal(err)
	}
	next, err := db.ClaimDeployment(ctx, gantry.BuildClaim{})
	if err != nil {
		t.Fatal(err)
	}
	if next.UserID != bob.ID {
		t.Fatalf("after alice deleted her running build, claimed %s's; want bob's (his turn is older)", next.User.Username)
	}
}

// TestQueueDeploymentCap queues deployments of one user from many
// goroutines at once: exactly the cap gets in, the rest are refused with
// the message, other users are not affected, and a build that starts
// frees a place.
func TestQueueDeploymentCap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	alice, bob := mustCreateUser(t, db, "alice"), mustCreateUser(t, db, "bob")
	pa, pb := mustCreateProject(t, db, alice.ID, "a"), mustCreateProject(t, db, bob.ID, "b")
	newDeployment := func(p *gantry.Project) *gantry.Deployment {
		return &gantry.Deployment{ProjectID: p.ID, UserID: p.UserID, Version: "1.0.0", Subdomain: p.Subdomain}
	}

	const tries, max = 16, 3
	var wg sync.WaitGroup
	errs := make([]error, tries)
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.QueueDeployment(ctx, newDeployment(pa), max)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case gantry.ErrorCode(err) == gantry.ETOOMANY:
			if msg := gantry.ErrorMessage(err); msg != "You already have 3 builds waiting. Wait for one to start, or delete a waiting one, then deploy again." {
				t.Errorf("got message %q", msg)
			}
		default:
			t.Errorf("queue: %v", err)
		}
	}
	pending, err := db.ListDeployments(ctx, alice.ID, gantry.DeploymentFilter{Status: gantry.DeploymentPending})
	if err != nil {
		t.Fatal(err)
	}
	if ok != max || len(pending) != max {
		t.Fatalf("%d of %d concurrent deploys were queued and %d are pending, want %d", ok, tries, len(pending), max)
	}

	if err := db.QueueDeployment(ctx, newDeployment(pb), max); err != nil {
		t.Fatalf("bob's deploy while alice's queue is full: %v", err)
	}
	wantCode(t, db.QueueDeployment(ctx, newDeployment(pa), 1), gantry.ETOOMANY,
		"You already have 1 build waiting. Wait for one to start, or delete a waiting one, then deploy again.")

	// A build that starts no longer waits.
	for {
		d, err := db.ClaimDeployment(ctx, gantry.BuildClaim{})
		if err != nil {
			t.Fatal(err)
		}
		if d.UserID == alice.ID {
			break
		}
	}
	if err := db.QueueDeployment(ctx, newDeployment(pa), max); err != nil {
		t.Fatalf("deploy after one of alice's builds started: %v", err)
	}
	wantCode(t, db.QueueDeployment(ctx, newDeployment(pa), max), gantry.ETOOMANY, "")
}
