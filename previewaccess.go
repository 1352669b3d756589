package gantry

import "strings"

// Previews of private repositories are the owner's alone unless the owner
// opens them (issue 24, point 20): the edge asks for the owner's sign-in (a
// signed cookie on the preview's host, handed over by the platform) before
// it serves a preview whose label is not open.

// PreviewRoute is one routed preview label and whether anyone may see it
// (a public repository, or previews opened by the owner).
type PreviewRoute struct {
	Label string
	Open  bool
}

// PreviewAccess is a project's preview setting: whether its repository is
// private, and whether its owner opened its previews to anyone with their
// address. Previews need the owner's sign-in when Private && !Open.
type PreviewAccess struct {
	Private bool `json:"private"`
	Open    bool `json:"open"`
}

// Guarded reports whether the project's previews need the owner's sign-in.
func (a PreviewAccess) Guarded() bool { return a.Private && !a.Open }

// IsPreviewLabel reports whether a live-domain label is a preview's: it
// holds PreviewSeparator, which project subdomains never do.
func IsPreviewLabel(label string) bool { return strings.Contains(label, PreviewSeparator) }

// LocalPath is to when it is a path of the same host ("/…", not "//…" nor
// "/\…", which browsers read as another host), else "/": where a preview's
// hand-off may send the browser.
func LocalPath(to string) string {
	if !strings.HasPrefix(to, "/") || strings.HasPrefix(to, "//") || strings.HasPrefix(to, "/\\") {
		return "/"
	}
	return to
}
