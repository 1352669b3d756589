package gantry

import (
	"context"
	"fmt"
	"time"
)

// Transitions. A deployment changes status only through the store's
// transition calls (DeploymentStore: ClaimDeployment, SaveBuild, GoLive,
// FailDeployment, StopDeployment, DeleteDeployment). Each is one
// transaction that first checks the status the change starts from — a
// compare-and-set, so of two racing changes one wins and the other gets a
// *TransitionError — and, in the same transaction, moves the project's
// active deployment and derives the project's status from its deployments
// (ProjectStatusOf). Two replicas sharing a database, or a crash between
// two writes, therefore never leave a project pointing at a deployment
// that a newer one replaced, nor with a status its deployments disagree
// with. docs/architecture.md ("Transitions") has the table.

// TransitionError is a deployment's change of status that did not happen:
// the deployment was no longer in a status the change starts from (another
// change won the race), or, for a restart, its files were pruned. Callers
// find it with errors.As; unhandled, it reads as an ECONFLICT error.
type TransitionError struct {
	ID     string // the deployment
	Status string // its status as the change found it
	Pruned bool   // a restart found its files pruned (MsgPruned)
}

// Error implements the error interface.
func (e *TransitionError) Error() string {
	if e.Pruned {
		return fmt.Sprintf("deployment %s: files pruned", e.ID)
	}
	return fmt.Sprintf("deployment %s is %s", e.ID, e.Status)
}

// Unwrap gives the ECONFLICT error the user reads when the caller does not
// handle the lost race itself.
func (e *TransitionError) Unwrap() error {
	if e.Pruned {
		return Errorf(ECONFLICT, MsgPruned)
	}
	return Errorf(ECONFLICT, "This deployment is %s now: reload to see its current state", e.Status)
}

// Change is what a transition writes besides the status, in the same
// transaction.
type Change struct {
	// At is when the change happens: a build that ends with it ends then
	// (BuildInfo.EndTime). Zero: the store's clock.
	At time.Time
	// Info, when set, replaces the deployment's build info (GoLive: what
	// the build produced, with its end time).
	Info *BuildInfo
	// Line, when set, is appended to the deployment's log (its Seq set),
	// so whoever sees the new status finds the line that says why.
	Line *LogEntry
	// Promote (GoLive) records the go-live as a promotion back to
	// production: PromotedAt becomes At.
	Promote bool
	// Attempt, when not 0, fences the change: it applies only while the
	// deployment is still in that attempt of its build (a replica that
	// lost its build to another gets a TransitionError).
	Attempt int
}

// Transition is what one committed change of a deployment's status did.
type Transition struct {
	// From is the status the deployment left.
	From string
	// Deployment is the deployment as committed; nil once deleted.
	Deployment *Deployment
	// Replaced lists the deployments a go-live stopped (the project's
	// previous live one; for a preview, the earlier live preview of its
	// label and the previews beyond MaxLivePreviews).
	Replaced []string
	// Previews are the routes of preview labels the change moved, each
	// with its own version.
	Previews []*Route
	// Route is the project's route after the change when the change moved
	// it (another active deployment, or the active one's status); nil
	// when the subdomain serves what it served before.
	Route *Route
}

// Route is what a project's subdomain serves, as the store committed it:
// its active deployment (nil: none) in that deployment's status. Version
// counts the route's changes (projects.route_version): of two routes of one
// project, the higher version is the newer, so an in-memory routing table
// applying them never lets an older one overwrite a newer one.
//
// A preview label has a route of its own (Preview set; Subdomain is the
// label), versioned per label (preview_routes.version).
type Route struct {
	ProjectID string
	Subdomain string
	Version   int64
	Active    *Deployment
	Preview   bool
}

// RouteChange is one route as the change feed between replicas has it
// (RouteFeed): the route as it is now (nil Active: the name answers "no
// app here"), or, with Removed, a name a deleted project held (its own
// subdomain, or a preview label when Route.Preview), under the route seq
// of the transition that last moved it.
type RouteChange struct {
	Seq     int64
	Route   *Route
	Removed bool
}

// RouteFeed reads the route changes stamped after a route seq, in seq
// order (store.Feed).
type RouteFeed interface {
	Routes(ctx context.Context, after int64) ([]RouteChange, error)
}

// ProjectStatusOf is a project's status as its deployments make it: that
// of its latest deployment (ProjectStatusFor; "" when it has none), except
// that a project whose active deployment is live stays deployed while its
// latest one is stopped (an older build stopped or deleted). The store
// derives it inside every transition.
func ProjectStatusOf(latest string, activeLive bool) string {
	status := ProjectStatusFor(latest)
	if latest != "" && status == ProjectDraft && activeLive {
		return ProjectDeployed
	}
	return status
}
