package build_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// loadFailure reads a fixture of testdata/diagnose: header lines
// "# step: …", "# message: …", "# port: …", "# error: timeout|memory" and
// "# file: path=content" (written into a workspace), "# disk: inodes|bytes N"
// (the volume's limit reached), then the log lines
// (level error when they say so, as the log sink guesses).
func loadFailure(t *testing.T, name string) *build.Failure {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "diagnose", name))
	if err != nil {
		t.Fatal(err)
	}
	f := &build.Failure{Workspace: t.TempDir()}
	for line := range strings.SplitSeq(strings.TrimRight(string(b), "\n"), "\n") {
		if h, ok := strings.CutPrefix(line, "# "); ok {
			k, v, _ := strings.Cut(h, ": ")
			switch k {
			case "step":
				f.Step = v
			case "message":
				f.Message = v
			case "port":
				f.Port, _ = strconv.Atoi(v)
			case "error":
				switch v {
				case "timeout":
					f.Err = &sandbox.TimeoutError{}
				case "memory":
					f.Err = &sandbox.MemoryError{Limit: 1 << 30}
				}
			case "disk": // "inodes 200000" or "bytes 4294967296"
				kind, n, _ := strings.Cut(v, " ")
				f.DiskFull = kind
				if kind == "inodes" {
					f.Disk.Inodes, _ = strconv.ParseInt(n, 10, 64)
				} else {
					f.Disk.Bytes, _ = strconv.ParseInt(n, 10, 64)
				}
			case "file":
				p, content, _ := strings.Cut(v, "=")
				full := filepath.Join(f.Workspace, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		level := gantry.LevelInfo
		if l := strings.ToLower(line); strings.Contains(l, "error") || strings.Contains(l, "fatal") {
			level = gantry.LevelError
		}
		f.Lines = append(f.Lines, build.Line{Level: level, Message: line})
	}
	return f
}

func TestDiagnose(t *testing.T) {
	tests := []struct {
		fixture string
		cause   string
		title   string   // exactly
		detail  string   // contained
		lines   []string // each highlighted line contains one of these, and each of these is highlighted
	}{
		{"nextjs-google-fonts.log", "google-fonts",
			"The build could not download the font “Playfair Display” from Google Fonts",
			"Your code is fine: next/font/google downloads the fonts while the site builds",
			[]string{"Failed to fetch `Playfair Display`", "fonts.googleapis.com", "`next/font` error"}},
		{"flask-pip-unreachable.log", "pip-unreachable",
			"The build could not reach the Python package index",
			"pip tried to download blinker==1.9.0 and every attempt failed (the highlighted retries): this is the network, not your code",
			[]string{"Retrying (Retry(", "No matching distribution found for blinker==1.9.0"}},
		{"pip-missing.log", "pip-missing",
			"requirements.txt asks for flask==9.1.0, which pip could not find",
			"That version does not exist: the versions there are 0.1, 2.3.3, 3.0.0, 3.0.3, 3.1.0",
			[]string{"Could not find a version", "No matching distribution"}},
		{"no-build-script.log", "no-build-script",
			`package.json has no "build" script`,
			"Its scripts are: dev, start.",
			[]string{`Missing script: "build"`}},
		{"output-not-found.log", "output",
			"The build did not write “dist”",
			"Found `build/`: set the output directory to `build`",
			[]string{"The build folder is ready"}},
		{"lockfile.log", "lockfile",
			"package.json and the lockfile disagree",
			"commit the updated lockfile",
			[]string{"can only install packages when", "Missing: react-router"}},
		{"engines.log", "engines",
			"package.json asks for Node.js 14.x, which the build does not have",
			"Builds here run one Node.js version (22.11.0)",
			[]string{`The engine "node" is incompatible`}},
		{"module-case.log", "module-case",
			"“./Components/Header” differs only in letter case from the file “src/components/Header.jsx”",
			"Windows and macOS ignore letter case",
			[]string{`Could not resolve "./Components/Header"`}},
		{"npm-missing.log", "npm-missing",
			"package.json asks for reactt, which the npm registry does not have",
			"Check the package's name and version in package.json",
			[]string{"404 Not Found"}},
		{"memory.log", "memory",
			"The build ran out of memory (1 GiB)",
			"GENERATE_SOURCEMAP=false",
			[]string{"JavaScript heap out of memory"}},
		{"timeout.log", "timeout",
			"The build ran out of time",
			"a dev server, a watch mode or a test runner",
			[]string{"Local:"}},
		{"download.log", "download",
			"The build could not download api.example.org",
			"fetch the data in the browser when the page loads",
			[]string{"fetch failed", "getaddrinfo ENOTFOUND api.example.org"}},
		{"npm-unreachable.log", "npm-unreachable",
			"The build could not reach the npm registry",
			"this is the network, not your code",
			[]string{"EAI_AGAIN"}},
		{"missing-dependency.log", "missing-dependency",
			"The package axios is not installed",
			"Run `npm install axios`",
			[]string{"Can't resolve 'axios'"}},
		{"start-exit.log", "start-exit",
			"The app stopped right after it started",
			"The highlighted lines are the last it printed",
			[]string{"Cannot find module", "MODULE_NOT_FOUND", "loader"}},
		{"start-disk.log", "start-disk",
			"The app ran out of disk space",
			"log to the console rather than to files",
			[]string{"ENOSPC"}},
		{"start-port.log", "start-port",
			"The app listens on port 3000, not on the PORT it was given (8123)",
			"process.env.PORT",
			[]string{"Server listening on port 3000"}},
		{"start-silent.log", "start-silent",
			"The app never answered on its port",
			"on all interfaces (0.0.0.0)",
			[]string{"connecting to the database"}},
		{"disk-full.log", "disk",
			"The build created more files than its limit of 200,000",
			"Make it create fewer files",
			[]string{"No space left on device", "The build's disk is full"}},
		{"unknown.log", "unknown",
			"npm run build exited with code 2",
			"No known cause matched",
			[]string{"error TS2322"}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			f := loadFailure(t, tt.fixture)
			d := build.Diagnose(f)
			if d.Cause != tt.cause {
				t.Fatalf("got cause %q (%q), want %q", d.Cause, d.Title, tt.cause)
			}
			if d.Title != tt.title {
				t.Errorf("got title\n  %q\nwant\n  %q", d.Title, tt.title)
			}
			if !strings.Contains(d.Detail, tt.detail) {
				t.Errorf("got detail %q, want it to contain %q", d.Detail, tt.detail)
			}
			if !strings.HasPrefix(d.Text(), "Why it failed: "+d.Title+". ") {
				t.Errorf("got text %q", d.Text())
			}
			if len(d.Lines) == 0 {
				t.Fatal("no line highlighted")
			}
			seen := map[string]bool{}
			for _, i := range d.Lines {
				if i < 0 || i >= len(f.Lines) {
					t.Fatalf("line %d out of range", i)
				}
				ok := false
				for _, s := range tt.lines {
					if strings.Contains(f.Lines[i].Message, s) {
						ok, seen[s] = true, true
					}
				}
				if !ok {
					t.Errorf("highlighted line %d %q is none of %q", i, f.Lines[i].Message, tt.lines)
				}
			}
			for _, s := range tt.lines {
				if !seen[s] {
					t.Errorf("no highlighted line contains %q (highlighted %v)", s, d.Lines)
				}
			}
		})
	}
}

// Every fixture is in the table, and the table covers every cause.
func TestDiagnoseFixturesCovered(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "diagnose"))
	if err != nil {
		t.Fatal(err)
	}
	causes := map[string]bool{}
	for _, e := range entries {
		causes[build.Diagnose(loadFailure(t, e.Name())).Cause] = true
	}
	for _, c := range build.CauseNames() {
		if !causes[c] {
			t.Errorf("cause %q has no fixture in testdata/diagnose", c)
		}
	}
}
