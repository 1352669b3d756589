package gantry_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gantryhq/gantry"
)

func TestQuote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{"main", `"main"`},
		{"a\x00b", `"a\x00b"`},
		{"evil\u202etxt", `"evil\u202etxt"`},
		{"é", `"é"`},
		{"\xff", `"�"`},
		{strings.Repeat("k", 100), `"` + strings.Repeat("k", 100) + `"`},
		{strings.Repeat("k", 101), `"` + strings.Repeat("k", 100) + `…"`},
		{strings.Repeat("é", 600_000), `"` + strings.Repeat("é", 100) + `…"`},
	} {
		if got := gantry.Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%.20q) = %.200s, want %.200s", tc.in, got, tc.want)
		}
	}
}

func TestTextRule(t *testing.T) {
	t.Parallel()
	name := gantry.TextRule{Field: "Name", Max: 5, Required: true}
	text := gantry.TextRule{Field: "Text", Max: 5, Multiline: true}
	for _, tc := range []struct {
		rule gantry.TextRule
		in   string
		want string
	}{
		{name, "Ada", ""},
		{name, "ééééé", ""}, // characters, not bytes
		{name, "éééééé", "Name cannot exceed 5 characters"},
		{name, "", "Name is required"},
		{name, "   ", "Name is required"},
		{name, "\u200b", "Name is required"},
		{name, "\u3164", "Name is required"},
		{name, "\u0301", "Name is required"}, // a combining mark on its own
		{name, "a\x00", "Name cannot contain control or invisible characters (found U+0000)"},
		{name, "a\x1b", "Name cannot contain control or invisible characters (found U+001B)"},
		{name, "a\x7f", "Name cannot contain control or invisible characters (found U+007F)"},
		{name, "a\u0085", "Name cannot contain control or invisible characters (found U+0085)"},
		{name, "a\t", "Name cannot contain control or invisible characters (found U+0009)"},
		{name, "a\nb", "Name must be a single line"},
		{name, "a\rb", "Name must be a single line"},
		{name, "a\u202eb", "Name cannot contain control or invisible characters (found U+202E)"},
		{name, "a\u2066b", "Name cannot contain control or invisible characters (found U+2066)"},
		{name, "a\u200bb", "Name cannot contain control or invisible characters (found U+200B)"},
		{name, "a\ufeff", "Name cannot contain control or invisible characters (found U+FEFF)"},
		{name, "a\u00adb", "Name cannot contain control or invisible characters (found U+00AD)"},
		{name, "a\u2028b", "Name cannot contain control or invisible characters (found U+2028)"},
		{name, "👩\u200d💻", ""},
		{name, "\xffab", "Name must be valid UTF-8 text"},
		{text, "a\nb\tc", ""},
		{text, "a\r\nb", ""},
		{text, "", ""},
		{text, "a\x00", "Text cannot contain control or invisible characters (found U+0000)"},
		{text, "a\u202e", "Text cannot contain control or invisible characters (found U+202E)"},
	} {
		err := tc.rule.Check(tc.in)
		if got := gantry.ErrorMessage(err); got != tc.want {
			t.Errorf("%s.Check(%q) = %q, want %q", tc.rule.Field, tc.in, got, tc.want)
		}
		if err != nil && gantry.ErrorCode(err) != gantry.EINVALID {
			t.Errorf("%q: code %s, want EINVALID", tc.in, gantry.ErrorCode(err))
		}
	}
}

func TestCleanText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in        string
		max       int
		multiline bool
		want      string
	}{
		{"  A site  ", 10, false, "A site"},
		{"a\x00b\x1b[31mc", 10, false, "ab[31mc"},
		{"one\ntwo\tthree", 20, false, "one two three"},
		{"one\r\ntwo\x00", 20, true, "one\ntwo"},
		{"evil\u202etxt", 20, false, "eviltxt"},
		{"\xffok", 10, false, "ok"},
		{strings.Repeat("é", 600), 500, false, strings.Repeat("é", 499) + "…"},
	} {
		got := gantry.CleanText(tc.in, tc.max, tc.multiline)
		if got != tc.want {
			t.Errorf("CleanText(%.30q, %d) = %.40q, want %.40q", tc.in, tc.max, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n > tc.max {
			t.Errorf("CleanText(%.30q) has %d characters, more than %d", tc.in, n, tc.max)
		}
	}
}

func TestValidators(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"project name", gantry.ValidateProjectName("My Site"), ""},
		{"project name required", gantry.ValidateProjectName("\u200b"), "Project name is required"},
		{"project name 101", gantry.ValidateProjectName(strings.Repeat("ü", 101)), "Project name cannot exceed 100 characters"},
		{"description lines", gantry.ValidateDescription("one\ntwo"), ""},
		{"description NUL", gantry.ValidateDescription("\x00"), "Description cannot contain control or invisible characters (found U+0000)"},
		{"branch", gantry.ValidateBranch("feature/x-1"), ""},
		{"branch option", gantry.ValidateBranch("--upload-pack=touch /tmp/x"), `Invalid branch name: "--upload-pack=touch /tmp/x"`},
		{"branch dots", gantry.ValidateBranch("a..b"), `Invalid branch name: "a..b"`},
		{"branch lock", gantry.ValidateBranch("a.lock"), `Invalid branch name: "a.lock"`},
		{"branch NUL", gantry.ValidateBranch("a\x00"), "Branch cannot contain control or invisible characters (found U+0000)"},
		{"branch 256", gantry.ValidateBranch(strings.Repeat("b", 256)), "Branch cannot exceed 255 characters"},
		{"command", gantry.ValidateCommand("Build command", "npm run build && echo ok"), ""},
		{"command lines", gantry.ValidateCommand("Build command", "echo one\necho two"), "Build command must be a single line"},
		{"command 1001", gantry.ValidateCommand("Start command", strings.Repeat("é", 1001)), "Start command cannot exceed 1000 characters"},
		{"output", gantry.ValidateOutputDirectory("dist/web"), ""},
		{"output dot", gantry.ValidateOutputDirectory("."), ""},
		{"output absolute", gantry.ValidateOutputDirectory("/etc"), "Output directory must be a relative path inside the repository"},
		{"output backslash", gantry.ValidateOutputDirectory(`a\..\..`), "Output directory must be a relative path inside the repository"},
		{"version", gantry.ValidateVersion("v2.1.0-beta+3"), ""},
		{"version 50", gantry.ValidateVersion(strings.Repeat("1", 50)), ""},
		{"version 51", gantry.ValidateVersion(strings.Repeat("1", 51)), "Version cannot exceed 50 characters"},
		{"version space", gantry.ValidateVersion("1 0"), "Version can only contain letters, numbers, dots, hyphens, underscores and plus signs, starting with a letter or number"},
		{"version leading dot", gantry.ValidateVersion(".1"), "Version can only contain letters, numbers, dots, hyphens, underscores and plus signs, starting with a letter or number"},
		{"version HTML", gantry.ValidateVersion("<b>"), "Version can only contain letters, numbers, dots, hyphens, underscores and plus signs, starting with a letter or number"},
		{"env key", gantry.ValidateEnvKey("API_KEY"), ""},
		{"env key long", gantry.ValidateEnvKey(strings.Repeat("K", 600_000)), `Invalid variable name "` + strings.Repeat("K", 100) + `…": use letters, digits and underscores, not starting with a digit, at most 128 characters`},
		{"env value lines", gantry.ValidateEnvValue("PEM", "a\r\nb\tc"), ""},
		{"env value NUL", gantry.ValidateEnvValue("PEM", "\x00"), "The value of PEM cannot contain control or invisible characters (found U+0000)"},
		{"login email", gantry.ValidateLoginEmail("ada@example.com"), ""},
		{"login email NUL", gantry.ValidateLoginEmail("ada@example.com\x00"), "Email cannot contain control or invisible characters (found U+0000)"},
		{"query", gantry.ValidateQueryParam("search", "café"), ""},
		{"query NUL", gantry.ValidateQueryParam("search", "\x00zzzz"), `Query parameter "search" cannot contain control or invisible characters (found U+0000)`},
		{"path", gantry.ValidateRequestPath("/api/projects/\x00"), "The request path cannot contain control or invisible characters (found U+0000)"},
	} {
		if got := gantry.ErrorMessage(tc.err); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	for id, want := range map[string]bool{
		"0196f0c2-3b7e-7d1a-9a4e-6c0a2f1e9b11": true, "my-site": true, "": false, "a\x00": false,
		"a/b": false, strings.Repeat("a", 65): false,
	} {
		if got := gantry.ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestRepositoryClean(t *testing.T) {
	t.Parallel()
	r := gantry.Repository{
		ID: "1", Name: "site\x1b", FullName: "a/site", Description: strings.Repeat("d", 1_000_000),
		DefaultBranch: "--upload-pack=x",
		LastCommit:    &gantry.Commit{SHA: "not a sha", Message: "fix\r\n\x00bug\u202e", Author: "Ada\nLovelace"},
	}
	r.Clean()
	if r.Name != "site" || utf8.RuneCountInString(r.Description) != gantry.DescriptionMaxLen || r.DefaultBranch != "" ||
		r.LastCommit.SHA != "" || r.LastCommit.Message != "fix\nbug" || r.LastCommit.Author != "Ada Lovelace" {
		t.Errorf("got %+v, commit %+v", r, r.LastCommit)
	}
	if c := (&gantry.Commit{SHA: "ABCDEF1234"}).Cleaned(); c.SHA != "abcdef1234" {
		t.Errorf("got SHA %q", c.SHA)
	}
	if (*gantry.Commit)(nil).Cleaned() != nil {
		t.Errorf("a nil commit must stay nil")
	}
}
