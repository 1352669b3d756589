package build

import "testing"

// TestAllows follows npm's rule for os, cpu and libc: a list names where a
// package runs, "!x" where it does not, and an empty list allows all.
func TestAllows(t *testing.T) {
	for _, c := range []struct {
		list []string
		v    string
		want bool
	}{
		{nil, "linux", true},
		{[]string{"linux"}, "linux", true},
		{[]string{"darwin", "win32"}, "linux", false},
		{[]string{"!win32"}, "linux", true},
		{[]string{"!linux"}, "linux", false},
		{[]string{"musl"}, "glibc", false},
		{[]string{"glibc"}, "glibc", true},
		{[]string{"musl"}, "", true}, // unknown C library: nothing excluded
	} {
		if got := allows(c.list, c.v); got != c.want {
			t.Errorf("allows(%q, %q) = %v, want %v", c.list, c.v, got, c.want)
		}
	}
}

func TestPackageDirs(t *testing.T) {
	for rel, want := range map[string]string{
		"node_modules/next":                                "next",
		"node_modules/@next/swc-linux-x64-musl":            "@next/swc-linux-x64-musl",
		"node_modules/a/node_modules/b":                    "b",
		"node_modules/.pnpm/next@15.0.0/node_modules/next": "next",
		"node_modules/@next":                               "",
		"node_modules/.bin":                                "",
		"node_modules/next/dist":                           "",
	} {
		got := ""
		if isPackageDir(rel) {
			got = packageName(rel)
		}
		if got != want {
			t.Errorf("%s: got package %q, want %q", rel, got, want)
		}
	}
}

func TestPruneCommand(t *testing.T) {
	ws := t.TempDir()
	for _, c := range []struct {
		pm, install, want string
	}{
		{"npm", "npm ci", "npm prune --omit=dev --ignore-scripts"},
		{"npm", "npm install", "npm prune --omit=dev --ignore-scripts"},
		{"pnpm", "pnpm install --frozen-lockfile", "pnpm prune --prod --ignore-scripts"},
		{"yarn", "yarn install --frozen-lockfile", "yarn install --production --frozen-lockfile --ignore-scripts --prefer-offline --non-interactive"},
		{"npm", "bun install", ""}, // the project's own tool
		{"pip", "pip install -r requirements.txt", ""},
	} {
		if got := pruneCommand(Detection{PackageManager: c.pm}, c.install, ws); got != c.want {
			t.Errorf("%s, %q: got %q, want %q", c.pm, c.install, got, c.want)
		}
	}
}
