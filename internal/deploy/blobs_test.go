package deploy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// siteFiles is a small site with some weight: a page, a script and a
// stylesheet big enough to get precompressed variants, and 20 images.
func siteFiles(title string) map[string]string {
	files := map[string]string{
		"index.html": "<h1>" + title + "</h1>" + strings.Repeat("<p>hello</p>\n", 200),
		"app.js":     strings.Repeat("console.log('gantry');\n", 3000),
		"style.css":  strings.Repeat("body { color: #123456; }\n", 2000),
	}
	for i := range 20 {
		files[fmt.Sprintf("img/%02d.bin", i)] = strings.Repeat(fmt.Sprintf("%02d-pixels ", i), 3000)
	}
	return files
}

func (e *env) usage() *gantry.StorageUsage {
	e.t.Helper()
	u, err := e.db.StorageUsage(context.Background(), e.user.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// sameFile reports whether a and b are the same file on disk (one inode).
func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	fa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(fa, fb)
}

// blobFiles counts the files of the account's blob store, and says
// whether one of them holds content.
func (e *env) blobFiles(content string) (n int, found bool) {
	e.t.Helper()
	root := filepath.Join(e.svc.DataDir, "blobs", e.user.ID, "objects")
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		n++
		if b, err := os.ReadFile(p); err == nil && string(b) == content {
			found = true
		}
		return nil
	})
	return n, found
}

// A redeploy of an unchanged commit stores (almost) nothing new, and a
// second project with the same files pays for them once: the account's
// storage grows by at most 2% each time, and the files served are one
// file on disk. Deleting a deployment deletes the files only it had and
// keeps those another deployment shares.
func TestSitesStoreEachFileOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	files := siteFiles("site")
	site := e.project("site", files)
	d1 := e.mustDeploy(site)
	first := e.usage()
	if first.Files < 150<<10 {
		t.Fatalf("first deploy stores %d bytes, want the site's files counted", first.Files)
	}
	t.Logf("first deploy: %+v", *first)

	d2 := e.mustDeploy(site)
	again := e.usage()
	if grew := again.Files - first.Files; grew > first.Files/50 {
		t.Errorf("a redeploy of the same commit added %s to %s stored (%+v), want at most 2%%",
			gantry.FormatSize(grew), gantry.FormatSize(first.Files), *again)
	}
	for _, f := range []string{"index.html", "app.js", "app.js.gz", "app.js.br", "img/07.bin"} {
		if !sameFile(t, filepath.Join(e.svc.SiteDir(d1.ID), f), filepath.Join(e.svc.SiteDir(d2.ID), f)) {
			t.Errorf("%s: the two deployments keep two copies", f)
		}
	}

	// Another project with the same files, and one of its own.
	twin := map[string]string{"only-twin.txt": "a file only the twin has"}
	for k, v := range files {
		twin[k] = v
	}
	other := e.project("twin", twin)
	t1 := e.mustDeploy(other)
	both := e.usage()
	if grew := both.Files - again.Files; grew > first.Files/50 {
		t.Errorf("a second project with the same files added %s to %s stored, want at most 2%%",
			gantry.FormatSize(grew), gantry.FormatSize(again.Files))
	}
	if !sameFile(t, filepath.Join(e.svc.SiteDir(d2.ID), "style.css"), filepath.Join(e.svc.SiteDir(t1.ID), "style.css")) {
		t.Error("style.css: the two projects keep two copies")
	}
	if code, body := e.get(other.Subdomain, "/"); code != 200 || !strings.Contains(body, "<h1>site</h1>") {
		t.Errorf("twin: got %d %q", code, body)
	}

	// Deleting the twin's deployment deletes its own file's blob; the
	// shared ones stay, and the site still serves them.
	before, _ := e.blobFiles("")
	if _, found := e.blobFiles(twin["only-twin.txt"]); !found {
		t.Fatal("the twin's own file is not in the blob store")
	}
	if err := e.svc.Delete(ctx, e.user.ID, t1.ID); err != nil {
		t.Fatal(err)
	}
	after, found := e.blobFiles(twin["only-twin.txt"])
	if found || after != before-1 {
		t.Errorf("after deleting the twin's deployment: %d blobs (was %d), its own file kept: %v; want exactly that one gone", after, before, found)
	}
	if code, body := e.get(site.Subdomain, "/app.js"); code != 200 || body != files["app.js"] {
		t.Errorf("site's app.js after the twin's deletion: %d (%d bytes)", code, len(body))
	}
	if u := e.usage(); u.Files > again.Files {
		t.Errorf("after deleting the twin: %d bytes stored, want at most %d", u.Files, again.Files)
	}

	// Shared files are read-only: nothing running as the account (or
	// anyone but the platform) can change one through any deployment.
	fi, err := os.Stat(filepath.Join(e.svc.SiteDir(d2.ID), "app.js"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("a shared file has mode %v, want read-only", fi.Mode())
	}
}

// overwriterApp is pyApp with /overwrite?path=P, which writes "CHANGED"
// over the start of the existing file P in place (open r+) and answers
// what the file then starts with, and a data file of the repository.
func overwriterApp(data string) map[string]string {
	files := pyApp("v1")
	files["app.py"] = strings.Replace(files["app.py"], `        elif url.path == "/read":`, `        elif url.path == "/overwrite":
            path = urllib.parse.parse_qs(url.query)["path"][0]
            try:
                with open(path, "r+b") as f:
                    f.write(b"CHANGED")
                with open(path, "rb") as f:
                    body = "now: %s" % f.read(7).decode()
            except OSError as e:
                body = "denied: %s" % e
        elif url.path == "/read":`, 1)
	files["data.txt"] = data
	return files
}

// A server app's workspace is stored by content too: a redeploy of the
// same commit adds at most 2% to the account's storage, its files are
// the same files on disk as the first deployment's, and the app, which
// may still write to any file of its workspace in place, changes only its
// own copy: the first deployment's file and the blob stay as they were.
func TestAppWorkspaceStoredOnce(t *testing.T) {
	e := newEnv(t)
	data := strings.Repeat("original data of the repository\n", 1<<18) // 8 MiB
	p := e.project("keeper", overwriterApp(data))
	d1 := e.deploy(p)
	e.mustLive(d1)
	first := e.usage()
	t.Logf("first deploy: %+v", *first)
	d2 := e.deploy(p)
	e.mustLive(d2)
	again := e.usage()
	t.Logf("redeploy: %+v", *again)
	if grew := again.Files - first.Files; grew > first.Files/50 {
		t.Errorf("a redeploy of the same commit added %s to %s stored, want at most 2%%",
			gantry.FormatSize(grew), gantry.FormatSize(first.Files))
	}
	files1, files2 := sandbox.FilesDir(e.svc.WorkDir(d1.ID)), sandbox.FilesDir(e.svc.WorkDir(d2.ID))
	for _, f := range []string{"app.py", "data.txt"} {
		if !sameFile(t, filepath.Join(files1, f), filepath.Join(files2, f)) {
			t.Errorf("%s: the two deployments keep two copies", f)
		}
	}

	if code, body := e.get(p.Subdomain, "/overwrite?path=data.txt"); code != 200 || body != "now: CHANGED" {
		t.Fatalf("the app writing to its own file: %d %q, want it changed for the app", code, body)
	}
	for _, f := range []string{filepath.Join(files1, "data.txt"), filepath.Join(files2, "data.txt")} {
		if b, err := os.ReadFile(f); err != nil || string(b) != data {
			t.Errorf("%s after the app wrote to its copy: %d bytes, %v; want the original", f, len(b), err)
		}
	}
	if code, body := e.get(p.Subdomain, "/read?path=data.txt"); code != 200 || body != fmt.Sprintf("read %d bytes", len(data)) {
		t.Errorf("the app reading its file back: %d %q", code, body)
	}
}

// A crash between a deployment's deletion in the database and the removal
// of its files leaves its folder, manifest and blobs, and a crashed
// publish leaves blobs no manifest names: the next start removes them
// all, and what the live site links to stays.
func TestRestartSweepsWhatACrashLeft(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	files := siteFiles("site")
	site := e.project("site", files)
	e.mustDeploy(site)
	twin := map[string]string{"only-twin.txt": "a file only the twin has"}
	for k, v := range files {
		twin[k] = v
	}
	t1 := e.mustDeploy(e.project("twin", twin))
	if _, err := e.db.DeleteDeployment(ctx, t1.ID); err != nil { // and the platform stops here
		t.Fatal(err)
	}
	stray := filepath.Join(e.svc.DataDir, "blobs", e.user.ID, "objects", "ff", "stray")
	if err := os.MkdirAll(filepath.Dir(stray), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stray, []byte("left by a publish that was killed"), 0o444); err != nil {
		t.Fatal(err)
	}
	before, _ := e.blobFiles("")

	_, _, addr := e.sleepy(time.Hour) // the next start
	if _, err := os.Stat(e.svc.SiteDir(t1.ID)); err == nil {
		t.Error("the deleted deployment's folder is left")
	}
	if _, err := os.Stat(filepath.Join(e.svc.DataDir, "blobs", e.user.ID, "manifests", t1.ID+".json")); err == nil {
		t.Error("the deleted deployment's manifest is left")
	}
	after, found := e.blobFiles(twin["only-twin.txt"])
	if found || after != before-2 {
		t.Errorf("%d blobs after the start (%d before), the twin's own file kept: %v; want it and the stray one gone", after, before, found)
	}
	if code, body := fetch(t, addr, site.Subdomain, "/app.js"); code != 200 || body != files["app.js"] {
		t.Errorf("the live site's app.js after the start: %d (%d bytes)", code, len(body))
	}
}
