package build

// Detection is what the detector concluded about a repository: the SPEC §3
// project type and the commands that install, build and (for server apps)
// start it. Empty commands mean "nothing to run".
type Detection struct {
	Framework       string            // SPEC §3 type: react, vue, angular, nextjs, static, vanilla, nodejs, express, python, flask, django, …
	PackageManager  string            // npm, yarn, pnpm, pip or ""
	InstallCommand  string            // e.g. "npm ci"
	BuildCommand    string            // e.g. "npm run build"
	OutputDirectory string            // e.g. "dist"; "." for a site served as is
	StartCommand    string            // set only for server apps
	Env             map[string]string // build-time variables, e.g. PUBLIC_URL=/ for Create React App
	SPA             bool              // client-routed: unknown paths fall back to /index.html
}

// Detect inspects the checked-out repository in dir and returns the first
// matching detector's conclusion. It is implemented in detectors.go.
func Detect(dir string) (Detection, error) { return detect(dir) }
