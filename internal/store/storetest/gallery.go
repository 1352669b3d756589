package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
)

// MustCreateUser creates an active account with a placeholder password
// hash and the enterprise plan (so that it may own many projects).
func MustCreateUser(tb testing.TB, db *store.DB, username, fullName string) *gantry.User {
	tb.Helper()
	u := &gantry.User{Username: username, FullName: fullName, Email: username + "@example.com",
		PasswordHash: "not-a-hash", IsActive: true, Subscription: gantry.Subscription{Plan: gantry.PlanEnterprise,
			MaxProjects: 1_000_000, MaxDeployments: 1_000_000}}
	if err := db.CreateUser(context.Background(), u); err != nil {
		tb.Fatalf("create user %s: %v", username, err)
	}
	return u
}

// App is a project with one deployment, for gallery tests.
type App struct {
	Owner       *gantry.User
	Name        string
	Description string
	Type        string
	// CreatedAt is when the deployment was made (default: db.Now()).
	CreatedAt time.Time
	// Status is the deployment's status (default live).
	Status string
	// Inactive leaves the project without an active deployment.
	Inactive bool
	// Private makes the repository private; Hidden turns the project's
	// "Show in Discover" off (it is on otherwise, private or not).
	Private, Hidden bool
}

// MustCreateApp creates a's project and its deployment, makes the
// deployment the project's active one (unless a.Inactive) and returns both.
// It sets db.Now for the duration of the call: do not run it in parallel
// with other writers of the same db.
func MustCreateApp(tb testing.TB, db *store.DB, a App) (*gantry.Project, *gantry.Deployment) {
	tb.Helper()
	ctx := context.Background()
	if !a.CreatedAt.IsZero() {
		prev := db.Now
		db.Now = func() time.Time { return a.CreatedAt }
		defer func() { db.Now = prev }()
	}
	p := &gantry.Project{UserID: a.Owner.ID, Name: a.Name, Description: a.Description, Type: a.Type, Branch: "main",
		Repository: gantry.Repository{FullName: a.Owner.Username + "/" + a.Name, Private: a.Private}, ShowInDiscover: !a.Hidden}
	if err := db.CreateProject(ctx, p); err != nil {
		tb.Fatalf("create project %s: %v", a.Name, err)
	}
	d := &gantry.Deployment{ProjectID: p.ID, UserID: p.UserID, Version: gantry.DefaultVersion, Subdomain: p.Subdomain,
		URL: fmt.Sprintf("http://%s.localhost:8080", p.Subdomain)}
	if err := db.CreateDeployment(ctx, d); err != nil {
		tb.Fatalf("create deployment of %s: %v", a.Name, err)
	}
	d.Status = a.Status
	if d.Status == "" {
		d.Status = gantry.DeploymentLive
	}
	if err := db.UpdateDeployment(ctx, d); err != nil {
		tb.Fatalf("update deployment of %s: %v", a.Name, err)
	}
	if !a.Inactive {
		if err := db.SetActiveDeployment(ctx, p.ID, d.ID); err != nil {
			tb.Fatalf("activate deployment of %s: %v", a.Name, err)
		}
	}
	return p, d
}
