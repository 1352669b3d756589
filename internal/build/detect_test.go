package build

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDetect runs Detect on each tree under testdata/detect.
func TestDetect(t *testing.T) {
	t.Parallel()
	const venv = "python3 -m venv --system-site-packages .venv && .venv/bin/pip install -r requirements.txt"
	tests := []struct {
		dir  string
		want Detection
	}{
		{"nextjs", Detection{Framework: "nextjs", PackageManager: "npm", InstallCommand: "npm ci",
			BuildCommand: "npm run build", StartCommand: "npm start"}},
		{"nextjs-export", Detection{Framework: "nextjs", PackageManager: "yarn", InstallCommand: "yarn install --frozen-lockfile",
			BuildCommand: "yarn build", OutputDirectory: "out"}},
		{"angular", Detection{Framework: "angular", PackageManager: "npm", InstallCommand: "npm ci",
			BuildCommand: "npm run build", OutputDirectory: "dist/todo-app/browser", SPA: true}},
		{"angular-browser", Detection{Framework: "angular", PackageManager: "npm", InstallCommand: "npm install",
			BuildCommand: "npm run build", OutputDirectory: "dist/shop", SPA: true}},
		{"angular-object-output", Detection{Framework: "angular", PackageManager: "pnpm", InstallCommand: "pnpm install --frozen-lockfile",
			BuildCommand: "pnpm run build", OutputDirectory: "out/site", SPA: true}},
		{"vue-vite", Detection{Framework: "vue", PackageManager: "npm", InstallCommand: "npm ci",
			BuildCommand: "npm run build", OutputDirectory: "dist", SPA: true}},
		{"react-vite-pnpm", Detection{Framework: "react", PackageManager: "pnpm", InstallCommand: "pnpm install --frozen-lockfile",
			BuildCommand: "pnpm run build", OutputDirectory: "dist", SPA: true}},
		{"react-cra-yarn", Detection{Framework: "react", PackageManager: "yarn", InstallCommand: "yarn install --frozen-lockfile",
			BuildCommand: "yarn build", OutputDirectory: "build", SPA: true, Env: map[string]string{"PUBLIC_URL": "/"}}},
		{"react-yarn-berry", Detection{Framework: "react", PackageManager: "yarn", InstallCommand: "yarn install --immutable",
			BuildCommand: "yarn build", OutputDirectory: "dist", SPA: true}},
		{"react-no-build", Detection{Framework: "react", PackageManager: "npm", InstallCommand: "npm install",
			OutputDirectory: "dist", SPA: true}},
		{"svelte", Detection{Framework: "svelte", PackageManager: "npm", InstallCommand: "npm install",
			BuildCommand: "npm run build", OutputDirectory: "dist", SPA: true}},
		{"sveltekit-static", Detection{Framework: "sveltekit", PackageManager: "npm", InstallCommand: "npm install",
			BuildCommand: "npm run build", OutputDirectory: "build", SPA: true}},
		{"astro", Detection{Framework: "astro", PackageManager: "npm", InstallCommand: "npm install",
			BuildCommand: "npm run build", OutputDirectory: "dist"}},
		{"express", Detection{Framework: "express", PackageManager: "npm", InstallCommand: "npm ci",
			StartCommand: "npm start"}},
		{"express-main", Detection{Framework: "express", PackageManager: "npm", InstallCommand: "npm install",
			StartCommand: "node src/index.js"}},
		{"express-no-start", Detection{Framework: "static", OutputDirectory: "."}},
		{"fullstack", Detection{Framework: "express", PackageManager: "npm", InstallCommand: "npm install",
			BuildCommand: "npm run build", StartCommand: "npm start"}},
		{"nodejs", Detection{Framework: "nodejs", PackageManager: "npm", InstallCommand: "npm ci",
			BuildCommand: "npm run build", StartCommand: "npm start"}},
		{"nodejs-main", Detection{Framework: "nodejs", PackageManager: "npm", InstallCommand: "npm install",
			StartCommand: "node index.js"}},
		{"vanilla-vite", Detection{Framework: "vanilla", PackageManager: "npm", InstallCommand: "npm install",
			BuildCommand: "npm run build", OutputDirectory: "dist", SPA: true}},
		{"vanilla-webpack", Detection{Framework: "vanilla", PackageManager: "npm", InstallCommand: "npm install",
			BuildCommand: "npm run build", OutputDirectory: "dist"}},
		{"static-root", Detection{Framework: "static", OutputDirectory: "."}},
		{"static-public", Detection{Framework: "static", OutputDirectory: "public"}},
		{"static-other-html", Detection{Framework: "static", OutputDirectory: "."}},
		{"static-with-package", Detection{Framework: "static", OutputDirectory: "."}},
		{"django", Detection{Framework: "django", PackageManager: "pip", InstallCommand: venv,
			StartCommand: ".venv/bin/python manage.py runserver 0.0.0.0:$PORT"}},
		{"django-gunicorn", Detection{Framework: "django", PackageManager: "pip", InstallCommand: venv,
			StartCommand: ".venv/bin/gunicorn --bind 0.0.0.0:$PORT shop.wsgi"}},
		{"flask", Detection{Framework: "flask", PackageManager: "pip", InstallCommand: venv,
			StartCommand: ".venv/bin/flask --app app:app run --host 0.0.0.0 --port $PORT"}},
		{"flask-gunicorn", Detection{Framework: "flask", PackageManager: "pip", InstallCommand: venv,
			StartCommand: ".venv/bin/gunicorn --bind 0.0.0.0:$PORT main:server"}},
		{"flask-pyproject", Detection{Framework: "flask", PackageManager: "pip",
			InstallCommand: "python3 -m venv --system-site-packages .venv && .venv/bin/pip install .",
			StartCommand:   ".venv/bin/flask --app wsgi:app run --host 0.0.0.0 --port $PORT"}},
		{"python", Detection{Framework: "python", PackageManager: "pip", InstallCommand: venv,
			StartCommand: ".venv/bin/python main.py"}},
		{"python-no-reqs", Detection{Framework: "python", PackageManager: "pip", StartCommand: "python3 app.py"}},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			t.Parallel()
			got, err := Detect(filepath.Join("testdata", "detect", tc.dir))
			if err != nil {
				t.Fatalf("Detect: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Detect(%s) mismatch (-want +got):\n%s", tc.dir, diff)
			}
		})
	}
}

func TestDetectErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dir, want string
	}{
		{"malformed-package-json", "package.json is not valid JSON: invalid character '}'"},
		{"nothing", "No supported framework detected: add an index.html or a package.json"},
		{"requirements-only", "No supported framework detected: add an index.html or a package.json"},
		{"does-not-exist", "could not open the repository"},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			t.Parallel()
			got, err := Detect(filepath.Join("testdata", "detect", tc.dir))
			if err == nil {
				t.Fatalf("Detect = %+v, want error %q", got, tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got error %q, want it to start with %q", err, tc.want)
			}
		})
	}
}

// TestDetectSymlinksStayInside proves detection never reads outside the
// repository: a package.json linking to a file outside is an error naming
// the file, not its content, and an index.html linking outside does not
// count.
func TestDetectSymlinksStayInside(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(outside, []byte(`{"dependencies":{"next":"14"}}`), 0o600); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "package.json")); err != nil {
		t.Fatal(err)
	}
	_, err := Detect(dir)
	if err == nil || !strings.HasPrefix(err.Error(), "could not read package.json") {
		t.Errorf("got %v, want a could-not-read error", err)
	}

	dir = t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "index.html")); err != nil {
		t.Fatal(err)
	}
	if got, err := Detect(dir); err != ErrNoFramework {
		t.Errorf("Detect = %+v, %v; want ErrNoFramework", got, err)
	}

	// A link that stays inside is followed.
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "real.json"), []byte(`{"scripts":{"build":"vite build"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.json", filepath.Join(dir, "package.json")); err != nil {
		t.Fatal(err)
	}
	if got, err := Detect(dir); err != nil || got.Framework != "vanilla" {
		t.Errorf("Detect = %+v, %v; want vanilla", got, err)
	}
}

func TestDetectPackageJSONTooLarge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := `{"description":"` + strings.Repeat("x", maxManifestSize) + `"}`
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Detect(dir); err == nil || err.Error() != "could not read package.json: larger than 1 MiB" {
		t.Errorf("got %v, want the size error", err)
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	fw, cfg, err := Suggest(filepath.Join("testdata", "detect", "react-cra-yarn"))
	if err != nil {
		t.Fatal(err)
	}
	if fw != "react" || cfg.InstallCommand != "yarn install --frozen-lockfile" || cfg.BuildCommand != "yarn build" ||
		cfg.OutputDirectory != "build" || cfg.StartCommand != "" {
		t.Errorf("Suggest = %q, %+v", fw, cfg)
	}
}
