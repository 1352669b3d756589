package gantry_test

import (
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
)

func TestGitHubHeaderValidators(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"uuid", gantry.ValidateDeliveryID("72d3162e-cc78-11e3-81ab-4c9367dc0958"), true},
		{"empty id", gantry.ValidateDeliveryID(""), false},
		{"long id", gantry.ValidateDeliveryID(strings.Repeat("a", gantry.GitHubDeliveryIDMaxLen+1)), false},
		{"id with a slash", gantry.ValidateDeliveryID("a/b"), false},
		{"id with a newline", gantry.ValidateDeliveryID("a\nb"), false},
		{"push", gantry.ValidateGitHubEvent("pull_request"), true},
		{"empty event", gantry.ValidateGitHubEvent(""), false},
		{"event in capitals", gantry.ValidateGitHubEvent("Push"), false},
		{"event with a NUL", gantry.ValidateGitHubEvent("push\x00"), false},
	} {
		if (tc.err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, tc.err)
		}
		if tc.err != nil && gantry.ErrorCode(tc.err) != gantry.EINVALID {
			t.Errorf("%s: code %s", tc.name, gantry.ErrorCode(tc.err))
		}
	}
	for sha, want := range map[string]bool{
		strings.Repeat("a", 40): true, strings.Repeat("0", 64): true, strings.Repeat("A", 40): false,
		strings.Repeat("a", 39): false, "": false, strings.Repeat("g", 40): false,
	} {
		if gantry.ValidCommitSHA(sha) != want {
			t.Errorf("ValidCommitSHA(%q) = %v", sha, !want)
		}
	}
}
