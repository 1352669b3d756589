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
		{"site", "feature/Login_Page", 0, "site--feature-login-page"},
		{"site", "--Weird..Name--", 0, "site--weird-name"},
		{"site", "main", 12, "site--pr-12"},
		{"site", "ü", 0, "site--branch"},
	} {
		if got := PreviewLabel(c.sub, c.branch, c.pr); got != c.want {
			t.Errorf("PreviewLabel(%q, %q, %d) = %q, want %q", c.sub, c.branch, c.pr, got, c.want)
		}
	}
	for _, c := range []struct{ sub, branch string }{
		{"site", strings.Repeat("feature-", 20)},
		{long, "x"},
		{long, strings.Repeat("b", 80)},
		{strings.Repeat("ab-", 20) + "abc", "feature/long-branch-name"},
	} {
		got := PreviewLabel(c.sub, c.branch, 0)
		if len(got) > DNSLabelMaxLen || !strings.Contains(got, PreviewSeparator) || strings.HasPrefix(got, "-") {
			t.Errorf("PreviewLabel(%q, %q) = %q (%d characters)", c.sub, c.branch, got, len(got))
		}
		if other := PreviewLabel(c.sub, c.branch+"2", 0); other == got {
			t.Errorf("two long branches share label %q", got)
		}
	}
	if SubdomainBase("a -- b") != "a-b" {
		t.Errorf("SubdomainBase keeps a double hyphen")
	}
}
