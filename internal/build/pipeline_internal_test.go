package build

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/google/go-cmp/cmp"
)

func TestMergeConfig(t *testing.T) {
	det := Detection{InstallCommand: "npm ci", BuildCommand: "npm run build", OutputDirectory: "dist"}
	for _, tc := range []struct {
		name          string
		project, call gantry.BuildConfig
		want          gantry.BuildConfig
	}{
		{"detection only", gantry.BuildConfig{}, gantry.BuildConfig{},
			gantry.BuildConfig{InstallCommand: "npm ci", BuildCommand: "npm run build", OutputDirectory: "dist"}},
		{"project wins", gantry.BuildConfig{InstallCommand: "yarn", OutputDirectory: "build"}, gantry.BuildConfig{},
			gantry.BuildConfig{InstallCommand: "yarn", BuildCommand: "npm run build", OutputDirectory: "build"}},
		{"call wins over project", gantry.BuildConfig{BuildCommand: "make", OutputDirectory: "build"}, gantry.BuildConfig{BuildCommand: "npm run export", OutputDirectory: "out"},
			gantry.BuildConfig{InstallCommand: "npm ci", BuildCommand: "npm run export", OutputDirectory: "out"}},
		{"blank is unset", gantry.BuildConfig{BuildCommand: "  "}, gantry.BuildConfig{},
			gantry.BuildConfig{InstallCommand: "npm ci", BuildCommand: "npm run build", OutputDirectory: "dist"}},
		{"a start command makes a server app", gantry.BuildConfig{StartCommand: "npx serve -s dist"}, gantry.BuildConfig{},
			gantry.BuildConfig{InstallCommand: "npm ci", BuildCommand: "npm run build", StartCommand: "npx serve -s dist"}},
		{"start command wins over an output directory", gantry.BuildConfig{StartCommand: "node server.js", OutputDirectory: "build"}, gantry.BuildConfig{},
			gantry.BuildConfig{InstallCommand: "npm ci", BuildCommand: "npm run build", StartCommand: "node server.js"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, mergeConfig(det, tc.project, tc.call)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	server := Detection{InstallCommand: "npm ci", StartCommand: "npm start"}
	for _, tc := range []struct {
		name          string
		project, call gantry.BuildConfig
		want          gantry.BuildConfig
	}{
		{"detected server", gantry.BuildConfig{}, gantry.BuildConfig{},
			gantry.BuildConfig{InstallCommand: "npm ci", StartCommand: "npm start"}},
		{"an output directory makes a static site", gantry.BuildConfig{OutputDirectory: "public"}, gantry.BuildConfig{},
			gantry.BuildConfig{InstallCommand: "npm ci", OutputDirectory: "public"}},
		{"project start command replaces the detected one", gantry.BuildConfig{StartCommand: "node app.js"}, gantry.BuildConfig{},
			gantry.BuildConfig{InstallCommand: "npm ci", StartCommand: "node app.js"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, mergeConfig(server, tc.project, tc.call)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLocateOutputAngular(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  []string
		output string
		want   string
	}{
		{"v17 browser folder", []string{"dist/shop/browser/index.html", "dist/shop/server/server.mjs"}, "dist", "dist/shop/browser"},
		{"older layout", []string{"dist/shop/index.html"}, "dist", "dist/shop"},
		{"configured app folder", []string{"dist/shop/browser/index.html"}, "dist/shop", "dist/shop/browser"},
		{"flat dist", []string{"dist/index.html"}, "dist", "dist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			for _, f := range tc.files {
				p := filepath.Join(ws, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := locateOutput(ws, tc.output, "angular")
			if err != nil {
				t.Fatal(err)
			}
			real, _ := filepath.EvalSymlinks(ws)
			if want := filepath.Join(real, tc.want); got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

func TestStderrLevel(t *testing.T) {
	for line, want := range map[string]string{
		"npm warn deprecated inflight@1.0.6":     gantry.LevelWarning,
		"npm WARN EBADENGINE":                    gantry.LevelWarning,
		"npm error code E404":                    gantry.LevelError,
		"npm ERR! missing script: build":         gantry.LevelError,
		"Error: Cannot find module 'react'":      gantry.LevelError,
		"FATAL ERROR: Reached heap limit":        gantry.LevelError,
		"> vite build":                           gantry.LevelInfo,
		"Browserslist: caniuse-lite is outdated": gantry.LevelInfo,
	} {
		if got := stderrLevel(line); got != want {
			t.Errorf("stderrLevel(%q): got %s, want %s", line, got, want)
		}
	}
}

func TestStripANSI(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[32m✓\x1b[39m built in \x1b[1m1.2s\x1b[22m": "✓ built in 1.2s",
		"\x1b]8;;https://x\x07link\x1b]8;;\x07":          "link",
		"plain":                                          "plain",
		"\x1b[2K\x1b[1Gdone":                             "done",
		"trailing \x1b":                                  "trailing ",
	} {
		if got := stripANSI(in); got != want {
			t.Errorf("stripANSI(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestLockfileOutOfSync(t *testing.T) {
	for line, want := range map[string]bool{
		"npm error `npm ci` can only install packages when your package.json and package-lock.json or npm-shrinkwrap.json are in sync. Please update your lock file with `npm install` before continuing.": true,
		"npm error Missing: local-lib@1.0.0 from lock file":                                     true,
		"npm error Invalid: lock file's react@18.2.0 does not satisfy react@18.3.1":             true,
		"npm error The `npm ci` command can only install with an existing package-lock.json or": true,
		"npm error code E404": false,
		"npm error network request to https://registry.example/x failed": false,
	} {
		if got := lockfileOutOfSync(line); got != want {
			t.Errorf("lockfileOutOfSync(%q): got %v, want %v", line, got, want)
		}
	}
}

func TestRepoNameHidesCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/alice/site.git":                    "alice/site",
		"https://x-access-token:ghp_abc@github.com/alice/site": "alice/site",
		"http://127.0.0.1:3000/alice/site.git":                 "alice/site",
		"::not a url":                                          "the repository",
	} {
		if got := repoName(in); got != want {
			t.Errorf("repoName(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestCommitLine(t *testing.T) {
	got := commitLine(&gantry.Commit{SHA: "3f9a2c1d4e5b6a7c", Message: "Fix the header\n\nLong body", Author: "Ada"})
	if want := "Commit 3f9a2c1: Fix the header (Ada)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
