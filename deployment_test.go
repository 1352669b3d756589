package gantry_test

import (
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/google/go-cmp/cmp"
)

func TestMaskedEnv(t *testing.T) {
	t.Parallel()
	vars := []gantry.EnvVar{
		{Key: "PLAIN", Value: "visible"},
		{Key: "TOKEN", Value: "s3cret", IsSecret: true},
		{Key: "EMPTY", Value: "", IsSecret: true},
	}
	want := []gantry.EnvVar{
		{Key: "PLAIN", Value: "visible"},
		{Key: "TOKEN", Value: gantry.SecretMask, IsSecret: true},
		{Key: "EMPTY", Value: gantry.SecretMask, IsSecret: true},
	}
	if diff := cmp.Diff(want, gantry.MaskedEnv(vars)); diff != "" {
		t.Errorf("MaskedEnv (-want +got):\n%s", diff)
	}
	if vars[1].Value != "s3cret" {
		t.Errorf("got %q left in the input, want it unchanged", vars[1].Value)
	}
	if got := gantry.MaskedEnv(nil); got == nil || len(got) != 0 {
		t.Errorf("MaskedEnv(nil) = %#v, want an empty list", got)
	}
	env := gantry.DeploymentEnv{Variables: vars}
	if diff := cmp.Diff(gantry.DeploymentEnv{Variables: want}, env.Masked()); diff != "" {
		t.Errorf("DeploymentEnv.Masked (-want +got):\n%s", diff)
	}
	if got := (gantry.DeploymentEnv{}).Masked(); got.Variables != nil {
		t.Errorf("got %#v, want no variables to stay nil", got.Variables)
	}
}
