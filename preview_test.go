package gantry

import (
	"strings"
	"testing"
)

func TestPreviewLabel(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, c := range []struct {
		sub, branch string
		pr          int
		want        string
	}{
		{"site", "feature-login-page", 0, "site--feature-login-page"},
		{"site", "feature/Login_Page", 0, "site--feature-login-page--9c368488"},
		{"site", "--Weird..Name--", 0, "site--weird-name--312b8767"},
		{"site", "main", 12, "site--pr-12"},
		{"site", "pr-12", 0, "site--pr-12--f864d021"},
		{"site", "ü", 0, "site--branch--353b6352"},
	} {
		if got := PreviewLabel("p1", c.sub, c.branch, c.pr); got != c.want {
			t.Errorf("PreviewLabel(%q, %q, %d) = %q, want %q", c.sub, c.branch, c.pr, got, c.want)
		}
	}
	for _, c := range []struct{ sub, branch string }{
		{"site", strings.Repeat("feature-", 20)},
		{long, "x"},
		{long, strings.Repeat("b", 80)},
		{strings.Repeat("ab-", 20) + "abc", "feature/long-branch-name"},
	} {
		got := PreviewLabel("p1", c.sub, c.branch, 0)
		if len(got) > DNSLabelMaxLen || !strings.Contains(got, PreviewSeparator) || strings.HasPrefix(got, "-") {
			t.Errorf("PreviewLabel(%q, %q) = %q (%d characters)", c.sub, c.branch, got, len(got))
		}
		if other := PreviewLabel("p1", c.sub, c.branch+"2", 0); other == got {
			t.Errorf("two long branches share label %q", got)
		}
		if other := PreviewLabel("p2", c.sub, c.branch, 0); other == got {
			t.Errorf("two projects share label %q", got)
		}
	}
	// One project's branches and pull requests never share a label.
	seen := map[string]string{}
	for _, b := range []string{"pr-1", "#1", "Feature/UPPER_case", "feature-upper-case", "feature--upper-case",
		"ünïcode-branch", "n-code-branch", "ü", "", "branch"} {
		for _, pr := range []int{0, 1} {
			if pr == 1 && b != "#1" {
				continue
			}
			l := PreviewLabel("p1", "site", b, pr)
			if other, ok := seen[l]; ok {
				t.Errorf("%q #%d and %s share label %q", b, pr, other, l)
			}
			seen[l] = b
		}
	}
	if SubdomainBase("a -- b") != "a-b" {
		t.Errorf("SubdomainBase keeps a double hyphen")
	}
}
