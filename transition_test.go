package gantry_test

import (
	"errors"
	"testing"

	"github.com/gantryhq/gantry"
)

func TestProjectStatusOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		latest     string
		activeLive bool
		want       string
	}{
		{"", false, gantry.ProjectDraft},
		{gantry.DeploymentPending, false, gantry.ProjectBuilding},
		{gantry.DeploymentBuilding, true, gantry.ProjectBuilding},
		{gantry.DeploymentDeploying, true, gantry.ProjectBuilding},
		{gantry.DeploymentLive, true, gantry.ProjectDeployed},
		{gantry.DeploymentFailed, true, gantry.ProjectFailed}, // a failed redeploy, the old one still serving
		{gantry.DeploymentStopped, false, gantry.ProjectDraft},
		{gantry.DeploymentStopped, true, gantry.ProjectDeployed}, // a newer build stopped, the active one live
	} {
		if got := gantry.ProjectStatusOf(tc.latest, tc.activeLive); got != tc.want {
			t.Errorf("ProjectStatusOf(%q, %v): got %q, want %q", tc.latest, tc.activeLive, got, tc.want)
		}
	}
}

func TestTransitionErrorIsAConflict(t *testing.T) {
	t.Parallel()
	var err error = &gantry.TransitionError{ID: "d1", Status: gantry.DeploymentStopped}
	if got := gantry.ErrorCode(err); got != gantry.ECONFLICT {
		t.Errorf("got code %q, want %q", got, gantry.ECONFLICT)
	}
	if got, want := gantry.ErrorMessage(err), "This deployment is stopped now: reload to see its current state"; got != want {
		t.Errorf("got message %q, want %q", got, want)
	}
	err = &gantry.TransitionError{ID: "d1", Status: gantry.DeploymentStopped, Pruned: true}
	if got := gantry.ErrorMessage(err); got != gantry.MsgPruned {
		t.Errorf("pruned: got message %q, want MsgPruned", got)
	}
	var te *gantry.TransitionError
	if !errors.As(err, &te) || !te.Pruned {
		t.Errorf("errors.As: got %v", te)
	}
}
