package main

import (
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/auth"
	"github.com/gantryhq/gantry/internal/domains"
	"github.com/gantryhq/gantry/internal/previewaccess"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// On PostgreSQL (make test-pg) serve's limits that must hold across
// replicas count in the database: what this process's limiters take, a
// limiter of the same name on another process sees. On SQLite they stay
// in this process's memory and the database holds none of them.
func TestShareLimits(t *testing.T) {
	db := storetest.MustOpenDB(t)
	passwords, err := auth.NewPasswords(1)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := auth.NewTokens("a-test-secret-key-that-is-long-enough-0123456789", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	accounts := auth.NewService(db, passwords, tokens)
	srv := api.NewServer()
	custom := &domains.Service{}
	previews, err := previewaccess.New("a-test-secret-key-that-is-long-enough-0123456789", db, "http://localhost:8080",
		func(l string) string { return "http://" + l + ".localhost:8080" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	shareLimits(db, accounts, srv, custom, previews, nil)

	limits := []struct {
		name string
		l    *auth.Limiter
		max  int
		win  time.Duration
	}{
		{"login-ip", accounts.LoginByIP, auth.LoginFailuresPerAddress, auth.LimitWindow},
		{"register-ip", accounts.RegisterByIP, auth.RegisterLimit, auth.LimitWindow},
		{"deploy-hook", srv.DeployHooks, api.DeployHookLimit, api.DeployHookWindow},
		{"cert-name", custom.CertNames, domains.CertsPerName, domains.CertWindow},
		{"cert-all", custom.CertAll, domains.CertsTotal, domains.CertWindow},
		{"preview-ticket", previews.Redeemed, 1, previewaccess.TicketTTL},
	}
	for _, lim := range limits {
		if lim.l == nil {
			if db.Dialect() == store.Postgres {
				t.Errorf("%s: no limiter on PostgreSQL", lim.name)
			}
			continue
		}
		for range lim.max {
			lim.l.Take("203.0.113.9")
		}
		other := auth.NewLimiter(lim.max, lim.win)
		other.Share(db.RateBuckets(), lim.name, nil)
		seen := !other.Allow("203.0.113.9")
		if want := db.Dialect() == store.Postgres; seen != want {
			t.Errorf("%s: another replica sees this one's events: %v, want %v (%s)", lim.name, seen, want, db.Dialect())
		}
	}
}
