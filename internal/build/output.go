package build

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// locateOutput resolves the configured output folder inside workspace and
// returns its real path (symlinks resolved).
//
// The folder must stay inside the workspace: absolute paths, paths that
// climb out with "..", and symlinks that resolve outside are refused. An
// empty dir means the repository root. For Angular, whose builders write
// dist/<app>/browser (v17+) or dist/<app>, the first of dir/browser, dir,
// and — when dir holds a single app folder — dir/<app>/browser and
// dir/<app> that contains an index.html is used.
func locateOutput(workspace, dir, framework string) (string, error) {
	shown := dir
	if strings.TrimSpace(dir) == "" {
		dir, shown = ".", "."
	}
	if filepath.IsAbs(dir) || strings.ContainsRune(dir, 0) {
		return "", &Error{Step: "output", Message: fmt.Sprintf("Output directory '%s' must be a relative path inside the repository", shown)}
	}
	clean := filepath.Clean(dir)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", &Error{Step: "output", Message: fmt.Sprintf("Output directory '%s' must be inside the repository", shown)}
	}
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", &Error{Step: "output", Message: "Could not read the build folder", Err: err, Platform: true}
	}

	cands := []string{clean}
	if framework == "angular" {
		cands = []string{filepath.Join(clean, "browser"), clean}
		if sub := singleSubdir(filepath.Join(root, clean)); sub != "" {
			cands = append(cands, filepath.Join(clean, sub, "browser"), filepath.Join(clean, sub))
		}
	}
	var first string
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(filepath.Join(root, c))
		if err != nil {
			continue // missing, or a dangling or looping symlink
		}
		if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
			return "", &Error{Step: "output", Message: fmt.Sprintf("Output directory '%s' resolves outside the repository", shown)}
		}
		fi, err := os.Stat(real)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			if c == clean {
				return "", &Error{Step: "output", Message: fmt.Sprintf("Output directory '%s' is not a folder", shown)}
			}
			continue
		}
		if len(cands) == 1 || exists(filepath.Join(real, "index.html")) {
			return real, nil
		}
		if first == "" {
			first = real
		}
	}
	if first != "" {
		return first, nil
	}
	return "", &Error{Step: "output", Message: fmt.Sprintf("Output directory '%s' was not found after the build", shown)}
}

// singleSubdir returns the name of the only folder in dir when dir holds
// exactly one folder and no index.html, else "".
func singleSubdir(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	name := ""
	for _, e := range entries {
		if e.Name() == "index.html" {
			return ""
		}
		if e.IsDir() {
			if name != "" {
				return ""
			}
			name = e.Name()
		}
	}
	return name
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist) && err == nil
}
