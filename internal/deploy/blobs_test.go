package deploy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
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
