package gantry_test

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureImports keeps docs/architecture.md's list of imports true:
// the block after "<!-- imports: checked by architecture_test.go -->" must
// name, for every package of the module (bench/ aside), the module's own
// packages it imports (tests aside), as `go list` sees them.
func TestArchitectureImports(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- imports: checked by architecture_test.go -->\\s*```\\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/architecture.md has no checked imports block")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/gantryhq/gantry"
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ": ")
		pkg = short(module, pkg)
		if strings.HasPrefix(pkg, "bench") {
			continue
		}
		var own []string
		for _, imp := range strings.Fields(imports) {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				own = append(own, short(module, imp))
			}
		}
		slices.Sort(own)
		want = append(want, strings.TrimSpace(pkg+": "+strings.Join(own, " ")))
	}
	slices.Sort(want)
	got := strings.Split(strings.TrimSpace(string(bytes.TrimSpace(m[1]))), "\n")
	for i := range got {
		got[i] = strings.TrimSpace(got[i])
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/architecture.md's imports block is out of date; it should read:\n%s", strings.Join(want, "\n"))
	}
}

// short names a package of the module as the docs do: "gantry" for the
// root, the path inside the module for the others.
func short(module, path string) string {
	if path == module {
		return "gantry"
	}
	return strings.TrimPrefix(path, module+"/")
}

// TestFreshCloneCompiles holds that a clone with no web build compiles: the
// embed pattern of package web must match a tracked file (web/dist/.gitkeep),
// or `go vet ./...` fails with "pattern all:dist: no matching files found".
func TestFreshCloneCompiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tracked, err := exec.Command("git", "ls-files", "web/dist").Output()
	if err != nil {
		t.Skipf("not a git work tree: %v", err)
	}
	if len(bytes.TrimSpace(tracked)) == 0 {
		t.Fatal("web/dist has no tracked file: a fresh clone does not compile (commit web/dist/.gitkeep)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "clone", "-q", "--no-hardlinks", ".", dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	// Only tracked files are in the clone: what is committed must compile.
	cmd := exec.Command("go", "vet", "./web/")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet in a fresh clone without a web build: %v\n%s", err, out)
	}
}
