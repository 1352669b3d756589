package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// Each due domain check runs once across replicas: two checkers claiming
// at the same moment (on PostgreSQL, make test-pg, as on SQLite) get
// disjoint domains that together are every due one; claimed domains are
// not due again until the claim lapses (a replica that died mid-check);
// a saved check's outcome sets the next check as before and lets go.
func TestClaimDueDomains(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := mustCreateUser(t, db, "ada")
	p := mustCreateProject(t, db, u.ID, "site")
	now := time.Now().UTC().Truncate(time.Millisecond)
	for i := range 12 {
		d := &gantry.Domain{ProjectID: p.ID, UserID: u.ID, Name: fmt.Sprintf("www%d.example.com", i), Token: "t",
			Status: gantry.DomainWaitingDNS, NextCheckAt: now.Add(-time.Minute)}
		if err := db.Domains().CreateDomain(ctx, d, 100, "free"); err != nil {
			t.Fatal(err)
		}
	}
	later := &gantry.Domain{ProjectID: p.ID, UserID: u.ID, Name: "later.example.com", Token: "t",
		Status: gantry.DomainWaitingDNS, NextCheckAt: now.Add(time.Hour)}
	if err := db.Domains().CreateDomain(ctx, later, 100, "free"); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 2 { // two replicas' checkers, 10 at a time each
		wg.Add(1)
		go func() {
			defer wg.Done()
			due, err := db.Domains().ClaimDueDomains(ctx, now, 10)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, d := range due {
				seen[d.Name]++
			}
		}()
	}
	wg.Wait()
	if len(seen) != 12 {
		t.Fatalf("the two checkers got %d distinct due domains, want 12: %v", len(seen), seen)
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%s was handed to %d checkers", name, n)
		}
	}
	if due, _ := db.Domains().ClaimDueDomains(ctx, now.Add(time.Minute), 20); len(due) != 0 {
		t.Fatalf("%d claimed domains were due again within the claim", len(due))
	}
	due, err := db.Domains().ClaimDueDomains(ctx, now.Add(store.DomainCheckClaim), 20)
	if err != nil || len(due) != 12 {
		t.Fatalf("after the claim lapsed (a checker died): %d due, %v; want 12", len(due), err)
	}
	d := due[0]
	d.Attempts, d.Error, d.NextCheckAt = 1, "no TXT record", now.Add(30*time.Minute)
	if _, err := db.Domains().SaveDomainCheck(ctx, d, ""); err != nil {
		t.Fatal(err)
	}
	due, _ = db.Domains().ClaimDueDomains(ctx, now.Add(2*store.DomainCheckClaim+time.Second), 20)
	for _, x := range due {
		if x.Name == d.Name || x.Name == later.Name {
			t.Errorf("%s was due before its next check", x.Name)
		}
	}
	if len(due) != 11 {
		t.Errorf("%d due after one saved check, want 11", len(due))
	}
	// Its claim was let go: it is due again at its next check, not later.
	again, _ := db.Domains().ClaimDueDomains(ctx, now.Add(30*time.Minute), 20)
	names := map[string]bool{}
	for _, x := range again {
		names[x.Name] = true
	}
	if !names[d.Name] || names[later.Name] {
		t.Errorf("at its next check the saved domain due: %v (the later one: %v)", names[d.Name], names[later.Name])
	}
}
