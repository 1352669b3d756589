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
)

// dataApp is a Python standard-library server keeping rows in SQLite
// under $DATA_DIR: /where answers DATA_DIR, /add inserts a row and
// answers the count, /count answers it, /fill?mb=N writes N MiB into the
// data folder (or says where the kernel stopped it).
func dataApp(version string) map[string]string {
	return map[string]string{"app.py": `import os, sqlite3, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DATA = os.environ.get("DATA_DIR", "")

def db():
    c = sqlite3.connect(os.path.join(DATA, "app.db"), timeout=10)
    c.execute("CREATE TABLE IF NOT EXISTS rows (v TEXT)")
    return c

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path == "/where":
            body = DATA
        elif url.path in ("/add", "/count"):
            with db() as c:
                if url.path == "/add":
                    c.execute("INSERT INTO rows VALUES (?)", ("` + version + `",))
                body = str(c.execute("SELECT COUNT(*) FROM rows").fetchone()[0])
        elif url.path == "/fill":
            mb = int(urllib.parse.parse_qs(url.query)["mb"][0])
            n = 0
            try:
                with open(os.path.join(DATA, "fill.bin"), "wb") as f:
                    for _ in range(mb):
                        f.write(b"x" * (1 << 20))
                        f.flush()
                        n += 1
                    os.fsync(f.fileno())
                body = "wrote %d MiB" % n
            except OSError as e:
                body = "denied after %d MiB: %s" % (n, e)
        else:
            body = "` + version + `"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

ThreadingHTTPServer(("0.0.0.0", int(os.environ["PORT"])), Handler).serve_forever()
`}
}

// TestDataFolderOutlivesDeployments mounts issue 28's point 1: a server
// app's rows in SQLite under /data survive a redeploy, a rollback and a
// platform restart; a preview gets a folder of its own; what the folder
// holds counts in the owner's storage; deleting the project deletes it.
// (Before, an app had no DATA_DIR and lost everything at its next deploy.)
func TestDataFolderOutlivesDeployments(t *testing.T) {
	e := newEnv(t)
	e.withPlan(5)
	ctx := context.Background()
	p := e.project("Ledger", dataApp("v1"))
	d1 := e.deploy(p)
	e.mustLive(d1)
	if code, body := e.get("ledger", "/where"); code != 200 || body != gantry.DataMount {
		t.Fatalf("DATA_DIR: %d %q", code, body)
	}
	for i := 1; i <= 2; i++ {
		if _, body := e.get("ledger", "/add"); body != fmt.Sprint(i) {
			t.Fatalf("add %d: %q", i, body)
		}
	}

	// A redeploy of a new commit: the rows are there.
	e.git.Repo(t, "ada/ledger", "main", "v2", dataApp("v2"))
	d2 := e.deploy(p)
	e.mustLive(d2)
	if _, body := e.get("ledger", "/"); body != "v2" {
		t.Fatalf("after the redeploy the app answers %q", body)
	}
	if _, body := e.get("ledger", "/add"); body != "3" {
		t.Fatalf("after the redeploy the count is %q, want 3", body)
	}

	// A rollback to the first deployment: still the same folder.
	if _, err := e.svc.Restart(ctx, e.user.ID, "ledger", d1.ID); err != nil {
		t.Fatal(err)
	}
	e.mustLive(e.find(d1.ID))
	if _, body := e.get("ledger", "/"); body != "v1" {
		t.Fatalf("after the rollback the app answers %q", body)
	}
	if _, body := e.get("ledger", "/count"); body != "3" {
		t.Fatalf("after the rollback the count is %q, want 3", body)
	}

	// A preview has a folder of its own, empty at first.
	e.git.Repo(t, "ada/ledger", "feature", "feature", dataApp("feature"))
	pv := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Branch: "feature"}))
	if _, body := e.get(pv.Subdomain, "/count"); body != "0" {
		t.Fatalf("the preview's count is %q, want 0", body)
	}

	// The platform restarts: the app starts again over its rows.
	e.svc.Close()
	get := e.restartGet()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if code, _ := get("ledger", "/"); code == 200 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the app did not start again after the platform restarted: %d", code)
		}
	}
	if _, body := get("ledger", "/count"); body != "3" {
		t.Fatalf("after a platform restart the count is %q, want 3", body)
	}

	// What the folder holds counts in the owner's storage.
	if _, body := get("ledger", "/fill?mb=3"); body != "wrote 3 MiB" {
		t.Fatalf("fill: %q", body)
	}
	folders := e.dataFolders(p.ID)
	if len(folders) != 2 || folders[0].Name != gantry.ProductionData || folders[1].Name != "preview-"+pv.Subdomain {
		t.Fatalf("data folders %+v", folders)
	}
	u, err := e.db.StorageUsage(ctx, e.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Data < folders[0].Bytes || u.Used != u.Files+u.Logs+u.Data {
		t.Fatalf("storage %+v with folders %+v", u, folders)
	}

	// Deleting the project deletes its folders.
	if err := e.restarted.projects().DeleteProject(ctx, e.user.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.stack.DataDir, "appdata", p.ID)); !os.IsNotExist(err) {
		t.Fatalf("the project's data folders are still there: %v", err)
	}
	if u, _ := e.db.StorageUsage(ctx, e.user.ID); u.Data != 0 {
		t.Fatalf("a deleted project's data still counts: %+v", u)
	}
}

// TestDataFolderBoundedByBudget: an app that fills /data is stopped by
// the kernel (ENOSPC) near what its owner has left of the storage budget.
func TestDataFolderBoundedByBudget(t *testing.T) {
	e := newEnv(t)
	const budget = 64 << 20
	u := &gantry.User{FullName: "Data Filler", Username: "datafiller", Email: "datafiller@example.com", PasswordHash: "x", IsActive: true,
		Subscription: gantry.Subscription{Plan: gantry.PlanFree, MaxProjects: 3, MaxDeployments: 5, MaxStorage: budget}}
	if err := e.db.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	e.user = u
	d := e.deploy(e.project("Hoarder", dataApp("v1")))
	e.mustLive(d)
	code, body := e.get("hoarder", "/fill?mb=200")
	var n int
	fmt.Sscanf(body, "denied after %d MiB", &n)
	if code != 200 || !strings.Contains(body, "No space left on device") || n > budget>>20 {
		t.Fatalf("filling /data with a %d MiB budget: %d %q", budget>>20, code, body)
	}
}

// restartGet is restart, its getter asking for any path.
func (e *env) restartGet() func(sub, path string) (int, string) {
	e.t.Helper()
	e.restart()
	return func(sub, path string) (int, string) { return e.restarted.get(sub, path) }
}

// dataFolders lists the project's data folders as recorded.
func (e *env) dataFolders(projectID string) []gantry.DataFolder {
	e.t.Helper()
	fs, err := e.db.AppData().Folders(context.Background(), projectID)
	if err != nil {
		e.t.Fatal(err)
	}
	return fs
}
