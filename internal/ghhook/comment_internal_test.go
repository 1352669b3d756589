package ghhook

import (
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
)

func TestCommentBody(t *testing.T) {
	t.Parallel()
	pr := &gantry.GitHubPullRequest{Number: 3, HeadSHA: "0123456789abcdef0123456789abcdef01234567"}
	got := commentBody(pr, "✅ Live", "http://site--pr-3.example.com", "https://gantry.example.com/deployments/d1", "2026-11-24 01:20 UTC")
	want := "<!-- gantry-preview -->\n**Gantry preview**\n\n" +
		"| Status | Preview | Commit | Updated |\n| --- | --- | --- | --- |\n" +
		"| ✅ Live | [http://site--pr-3.example.com](http://site--pr-3.example.com) | `0123456` | 2026-11-24 01:20 UTC |\n" +
		"\n[Deployment details and logs](https://gantry.example.com/deployments/d1)\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// A cell cannot break the table.
	if got := commentBody(pr, "a|b\nc", "", "", "now"); !strings.Contains(got, `| a\|b c | — |`) {
		t.Fatalf("escaping: %s", got)
	}
}
