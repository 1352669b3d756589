package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// App placements (issue 26, point 5), on SQLite here and by the database's
// clock under scripts/with-postgres: the node that starts an app first is
// its home; another node's claim is refused while the home renews (a
// forced one, a restart through that node, takes it with a new
// generation); a home that stops beating for 3 leases is listed as lapsed
// and exactly one of several nodes taking it over at once wins, bumping
// the generation; the old home's next beat no longer lists the app, so it
// stops its copy; every node reads each live app's home and peer address.
func TestAppPlacements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	pl := db.Placements()
	u := mustCreateUser(t, db, "ada")
	d := mustCreateDeployment(t, db, mustCreateProject(t, db, u.ID, "app"))
	if err := db.Exec(ctx, `UPDATE deployments SET status = 'live' WHERE id = ?`, d.ID); err != nil {
		t.Fatal(err)
	}
	const lease = 300 * time.Millisecond
	if _, err := pl.Beat(ctx, "a", "127.0.0.1:9081", lease); err != nil {
		t.Fatal(err)
	}
	if _, err := pl.Beat(ctx, "b", "127.0.0.1:9082", lease); err != nil {
		t.Fatal(err)
	}
	if gen, ok, err := pl.Claim(ctx, d.ID, "a", lease, false); !ok || err != nil || gen != 1 {
		t.Fatalf("a's claim: %d %v %v; want generation 1", gen, ok, err)
	}
	if _, ok, err := pl.Claim(ctx, d.ID, "b", lease, false); ok || err != nil {
		t.Fatalf("b claimed a's app: %v %v", ok, err)
	}
	if gen, ok, _ := pl.Claim(ctx, d.ID, "a", lease, false); !ok || gen != 1 {
		t.Fatalf("a's claim again: %d %v; want its generation 1 kept", gen, ok)
	}
	homes, err := pl.Homes(ctx)
	if err != nil || len(homes) != 1 || homes[0] != (gantry.AppPlacement{DeploymentID: d.ID, Node: "a", Generation: 1, PeerAddr: "127.0.0.1:9081"}) {
		t.Fatalf("homes: %+v, %v", homes, err)
	}
	// a keeps beating past 3 leases: nothing lapses.
	for i := 0; i < 5; i++ {
		time.Sleep(lease / 2)
		held, err := pl.Beat(ctx, "a", "127.0.0.1:9081", lease)
		if err != nil || len(held) != 1 || held[0].Generation != 1 {
			t.Fatalf("a's beat: %+v, %v", held, err)
		}
	}
	if lapsed, _ := pl.Lapsed(ctx, lease); len(lapsed) != 0 {
		t.Fatalf("lapsed while its home beats: %+v", lapsed)
	}
	time.Sleep(2*lease + 100*time.Millisecond) // a stops beating: 3 leases since its last renewal
	if lapsed, _ := pl.Lapsed(ctx, lease); len(lapsed) != 0 {
		t.Fatalf("lapsed after less than 3 leases: %+v", lapsed)
	}
	time.Sleep(lease)
	lapsed, err := pl.Lapsed(ctx, lease)
	if err != nil || len(lapsed) != 1 || lapsed[0].Node != "a" {
		t.Fatalf("lapsed: %+v, %v; want a's app", lapsed, err)
	}
	var wins sync.WaitGroup
	won := make(chan string, 4)
	for _, n := range []string{"b", "c", "d", "e"} {
		wins.Add(1)
		go func() {
			defer wins.Done()
			if ok, err := pl.TakeOver(ctx, lapsed[0], n, lease); err != nil {
				t.Error(err)
			} else if ok {
				won <- n
			}
		}()
	}
	wins.Wait()
	close(won)
	var winners []string
	for n := range won {
		winners = append(winners, n)
	}
	if len(winners) != 1 {
		t.Fatalf("%d nodes took the app over (%v), want 1", len(winners), winners)
	}
	if ok, _ := pl.TakeOver(ctx, lapsed[0], "f", lease); ok {
		t.Fatal("a stale generation was taken over again")
	}
	homes, _ = pl.Homes(ctx, d.ID)
	if len(homes) != 1 || homes[0].Node != winners[0] || homes[0].Generation != 2 {
		t.Fatalf("home after the takeover: %+v; want %s, generation 2", homes, winners[0])
	}
	// a comes back: its renewal no longer holds the app.
	if held, err := pl.Beat(ctx, "a", "127.0.0.1:9081", lease); err != nil || len(held) != 0 {
		t.Fatalf("a's beat after the takeover holds %+v, %v; want nothing", held, err)
	}
	// A restart through a (forced) takes it back under a new generation.
	if gen, ok, err := pl.Claim(ctx, d.ID, "a", lease, true); !ok || err != nil || gen != 3 {
		t.Fatalf("forced claim: %d %v %v; want generation 3", gen, ok, err)
	}
	// Only live deployments have homes.
	if err := db.Exec(ctx, `UPDATE deployments SET status = 'stopped' WHERE id = ?`, d.ID); err != nil {
		t.Fatal(err)
	}
	if homes, _ := pl.Homes(ctx); len(homes) != 0 {
		t.Fatalf("a stopped deployment has a home: %+v", homes)
	}
}
