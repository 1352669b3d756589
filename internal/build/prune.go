package build

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"

	"github.com/gantryhq/gantry"
)

// After a Node server app's build its node_modules is cut down to what the
// app runs with: the package manager's own prune drops the
// devDependencies (run in the sandbox, as the account, with the install's
// registry settings), and packages built for another platform (their
// package.json's os, cpu or libc exclude the sandbox's, such as Next.js's
// musl SWC binary beside the glibc one) are removed. What was there before
// is held, as hard links (no bytes of its own), in the volume beside the
// workspace (HeldFolder), where neither the app nor the build can see it,
// until the app answered on the pruned tree: the deployment service then
// drops it (DropHeld), or puts it back (RestoreHeld) and starts the app
// again when it does not start without its dev dependencies.

// HeldFolder is the folder of a server app's volume (beside workspace and
// tmp) that holds node_modules as the build left it, before pruning.
const HeldFolder = "node_modules.unpruned"

// heldTmp is where the sandboxed copy is made (in the workspace: a hard
// link cannot cross the sandbox's mounts) before the platform moves it to
// HeldFolder, out of the app's sight.
const heldTmp = ".gantry-unpruned"

// pruneCommand returns the package manager's command that removes the
// devDependencies from node_modules, or "" for installs it cannot prune
// (another tool, Yarn 2+).
func pruneCommand(det Detection, install, ws string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(install), " ")
	if first != det.PackageManager {
		return "" // the project installs with a command of its own
	}
	switch det.PackageManager {
	case "npm":
		return "npm prune --omit=dev --ignore-scripts"
	case "pnpm":
		return "pnpm prune --prod --ignore-scripts"
	case "yarn":
		if _, err := os.Lstat(filepath.Join(ws, ".yarnrc.yml")); err == nil {
			return "" // Yarn 2+: no prune of its own without a plugin
		}
		// Yarn 1 has no prune: an install for production removes the
		// devDependencies, from the lockfile and the cache the install
		// filled.
		return "yarn install --production --frozen-lockfile --ignore-scripts --prefer-offline --non-interactive"
	}
	return ""
}

// holdScript copies node_modules as hard links to heldTmp (the package
// managers' own records in it are copied, since they rewrite them in
// place).
const holdScript = `set -e
rm -rf ` + heldTmp + `
cp -al node_modules ` + heldTmp + `
for f in .package-lock.json .modules.yaml .pnpm/lock.yaml .yarn-integrity .yarn-state.yml; do
  if [ -f "node_modules/$f" ] && [ ! -L "node_modules/$f" ]; then rm -f "` + heldTmp + `/$f"; cp -p "node_modules/$f" "` + heldTmp + `/$f"; fi
done`

// prune cuts a Node server app's node_modules down to what it runs with
// and logs what it removed and saved. A prune that fails leaves
// node_modules as the build left it, with a warning: the build still
// succeeds. Only the caller's cancellation is returned.
func (r *run) prune(det Detection, cfg gantry.BuildConfig) error {
	ws := r.vol.Workspace
	if fi, err := os.Lstat(filepath.Join(ws, "node_modules")); err != nil || !fi.IsDir() {
		return nil
	}
	command := pruneCommand(det, cfg.InstallCommand, ws)
	keep := r.job.Project.KeepDevDependencies
	if keep {
		command = ""
	}
	before := packages(ws)
	size := workspaceSize(filepath.Join(ws, "node_modules"))
	root, err := os.OpenRoot(r.vol.Path)
	if err != nil {
		return nil
	}
	defer root.Close()
	_ = root.RemoveAll(HeldFolder)
	switch {
	case keep:
		r.log.step(gantry.LevelInfo, "Dev dependencies kept: the project's setting \"Keep dev dependencies\" is on")
	case command == "":
		r.log.step(gantry.LevelInfo, fmt.Sprintf("Dev dependencies kept: %s is not pruned by this platform (it prunes npm, pnpm and Yarn 1 installs)", shorten(cfg.InstallCommand, 100)))
	default:
		r.log.step(gantry.LevelInfo, "Removing dev dependencies: "+command)
		env := append(append([]string{"CI=true", "npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false"},
			r.registryEnv()...), userEnv(r.job.Env, true)...)
		tmp := path.Join("workspace", heldTmp)
		_, err := r.sandboxed("prune", holdScript, env)
		if err == nil {
			err = root.Rename(tmp, HeldFolder)
		}
		if r.ctx.Err() != nil {
			return r.interrupted("prune")
		}
		if err != nil {
			_ = root.RemoveAll(tmp)
			r.log.step(gantry.LevelWarning, "Dev dependencies kept: node_modules could not be held while they are removed, so the app runs with it as the build left it")
			return nil
		}
		if _, err := r.sandboxed("prune", command, env); err != nil {
			if r.ctx.Err() != nil {
				return r.interrupted("prune")
			}
			// Whatever it did is undone: node_modules is the build's again.
			_ = root.RemoveAll(path.Join("workspace", "node_modules"))
			_ = root.Rename(HeldFolder, path.Join("workspace", "node_modules"))
			r.log.step(gantry.LevelWarning, "Dev dependencies kept: "+command+" failed, so the app runs with node_modules as the build left it")
			return nil
		}
	}
	// Without a prune nothing is held: what is removed here is for another
	// platform, never loaded on this one.
	foreign := removeForeign(ws)
	after := packages(ws)
	var dev []string
	for p := range before {
		if !after[p] && !slices.Contains(foreign, p) {
			dev = append(dev, packageName(p))
		}
	}
	var other []string
	for _, p := range foreign {
		other = append(other, packageName(p))
	}
	dev, other = uniqueSorted(dev), uniqueSorted(other)
	saved := size - workspaceSize(filepath.Join(ws, "node_modules"))
	if len(dev) == 0 && len(other) == 0 {
		_ = root.RemoveAll(HeldFolder)
		if command != "" {
			r.log.step(gantry.LevelInfo, "Nothing to prune: node_modules holds only what the app runs with")
		}
		return nil
	}
	var parts []string
	if len(dev) > 0 {
		parts = append(parts, fmt.Sprintf("%d dev %s (%s)", len(dev), plural(len(dev), "dependency", "dependencies"), names(dev)))
	}
	if len(other) > 0 {
		parts = append(parts, fmt.Sprintf("%d %s for other platforms (%s)", len(other), plural(len(other), "package", "packages"), names(other)))
	}
	r.log.step(gantry.LevelInfo, fmt.Sprintf("Pruned %s: node_modules %s → %s, %s saved",
		strings.Join(parts, " and "), formatSize(size), formatSize(size-saved), formatSize(saved)))
	if _, err := root.Lstat(HeldFolder); err == nil {
		r.log.step(gantry.LevelInfo, "The pruned packages are held until the app answers without them: if it does not start, they are put back")
	}
	return nil
}

// packages returns the package folders under ws/node_modules (the folders
// holding a package.json right under a node_modules folder, or under a
// @scope in one), relative to ws, symlinks not followed.
func packages(ws string) map[string]bool {
	out := map[string]bool{}
	base := filepath.Join(ws, "node_modules")
	filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == base {
			return nil
		}
		rel, _ := filepath.Rel(ws, p)
		if isPackageDir(rel) {
			if fi, err := os.Lstat(filepath.Join(p, "package.json")); err == nil && fi.Mode().IsRegular() {
				out[rel] = true
			}
		}
		return nil
	})
	return out
}

// isPackageDir reports whether rel (slash or OS separated) names a folder
// where a package lives: node_modules/x or node_modules/@s/x.
func isPackageDir(rel string) bool {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	n := len(parts)
	switch {
	case n >= 2 && parts[n-2] == "node_modules" && !strings.HasPrefix(parts[n-1], "@") && !strings.HasPrefix(parts[n-1], "."):
		return true
	case n >= 3 && parts[n-3] == "node_modules" && strings.HasPrefix(parts[n-2], "@"):
		return true
	}
	return false
}

// packageName is the package's name from its folder: @s/x or x.
func packageName(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	n := len(parts)
	if n >= 2 && strings.HasPrefix(parts[n-2], "@") {
		return parts[n-2] + "/" + parts[n-1]
	}
	return parts[n-1]
}

func uniqueSorted(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// names lists up to five names, then how many more.
func names(s []string) string {
	if len(s) <= 5 {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:5], ", ") + fmt.Sprintf(" and %d more", len(s)-5)
}

// platformFields are the package.json fields that say where a package runs.
type platformFields struct {
	OS   []string `json:"os"`
	CPU  []string `json:"cpu"`
	Libc []string `json:"libc"`
}

// removeForeign removes from ws/node_modules the packages whose
// package.json excludes the sandbox's platform, and returns their folders
// (relative to ws). It reads and removes through an os.Root at ws, so no
// symlink the build left takes it outside.
func removeForeign(ws string) []string {
	root, err := os.OpenRoot(ws)
	if err != nil {
		return nil
	}
	defer root.Close()
	var removed []string
	for rel := range packages(ws) {
		b, err := root.ReadFile(filepath.Join(rel, "package.json"))
		if err != nil || len(b) > 1<<20 {
			continue
		}
		var f platformFields
		if json.Unmarshal(b, &f) != nil || runsHere(f) {
			continue
		}
		if root.RemoveAll(rel) == nil {
			removed = append(removed, rel)
		}
	}
	return removed
}

// runsHere reports whether a package with these fields may run on the
// sandbox's platform (npm's rule: a list names where it runs, "!x" where
// it does not; an empty list allows all).
func runsHere(f platformFields) bool {
	return allows(f.OS, "linux") && allows(f.CPU, nodeArch()) && allows(f.Libc, hostLibc())
}

func allows(list []string, v string) bool {
	if v == "" {
		return true
	}
	allowed, any := false, false
	for _, e := range list {
		if neg, ok := strings.CutPrefix(e, "!"); ok {
			if neg == v {
				return false
			}
			continue
		}
		any = true
		if e == v {
			allowed = true
		}
	}
	return !any || allowed
}

// nodeArch is Node's name (process.arch) for the platform's architecture.
func nodeArch() string {
	switch goruntime.GOARCH {
	case "amd64":
		return "x64"
	case "386":
		return "ia32"
	}
	return goruntime.GOARCH // arm64, arm, riscv64, s390x, ppc64, …
}

// hostLibc is the C library of the sandbox's system (it runs the host's):
// "musl" when the musl loader is there, "glibc" when glibc's is, else ""
// (unknown: libc then excludes nothing).
func hostLibc() string {
	if m, _ := filepath.Glob("/lib/ld-musl-*.so.1"); len(m) > 0 {
		return "musl"
	}
	for _, p := range []string{"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1", "/lib/ld-linux-armhf.so.3", "/lib/ld-linux.so.2"} {
		if _, err := os.Stat(p); err == nil {
			return "glibc"
		}
	}
	if m, _ := filepath.Glob("/lib/*-linux-gnu*/libc.so.6"); len(m) > 0 {
		return "glibc"
	}
	return ""
}

// RestoreHeld puts node_modules back as the build left it, from the volume
// at volume (the deployment's workspace volume), and reports whether it
// held one. The app must not be running.
func RestoreHeld(volume string) (bool, error) {
	root, err := os.OpenRoot(volume)
	if err != nil {
		return false, err
	}
	defer root.Close()
	if _, err := root.Lstat(HeldFolder); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	nm := path.Join("workspace", "node_modules")
	if err := root.RemoveAll(nm); err != nil {
		return false, err
	}
	if err := root.Rename(HeldFolder, nm); err != nil {
		return false, err
	}
	return true, nil
}

// Held reports whether the volume at volume holds node_modules as it was
// before pruning.
func Held(volume string) bool {
	_, err := os.Lstat(filepath.Join(volume, HeldFolder))
	return err == nil
}

// DropHeld removes the node_modules held before pruning from the volume at
// volume, which frees what the pruned packages took: the app answered
// without them.
func DropHeld(volume string) error {
	root, err := os.OpenRoot(volume)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer root.Close()
	return root.RemoveAll(HeldFolder)
}
