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
