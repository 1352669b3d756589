package deploy_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/objstore/s3test"
	"github.com/gantryhq/gantry/internal/sitecache"
)

// dataApp is a Flask app (Debian's python3-flask: no package index
// needed, no requirements.txt) keeping rows in SQLite under $DATA_DIR, as
// a student's first full-stack app does: /where answers DATA_DIR, /add
// inserts a row and answers the count, /count answers it, /symlink plants
// a link to a host file, /fill?mb=N writes N MiB into the data folder (or
// says where the kernel stopped it).
func dataApp(version string) map[string]string {
	return map[string]string{"app.py": `import os, sqlite3
from flask import Flask, request

DATA = os.environ.get("DATA_DIR", "")
app = Flask(__name__)

def db():
    c = sqlite3.connect(os.path.join(DATA, "app.db"), timeout=10)
    c.execute("CREATE TABLE IF NOT EXISTS rows (v TEXT)")
    return c

@app.route("/")
def index():
    return "` + version + `"

@app.route("/where")
def where():
    return DATA

@app.route("/add")
def add():
    with db() as c:
        c.execute("INSERT INTO rows VALUES (?)", ("` + version + `",))
        return str(c.execute("SELECT COUNT(*) FROM rows").fetchone()[0])

@app.route("/count")
def count():
    with db() as c:
        return str(c.execute("SELECT COUNT(*) FROM rows").fetchone()[0])

@app.route("/symlink")
def symlink():
    os.symlink("/etc/passwd", os.path.join(DATA, "leak"))
    return "linked"

@app.route("/fill")
def fill():
    mb, n = int(request.args["mb"]), 0
    try:
        with open(os.path.join(DATA, "fill.bin"), "wb") as f:
            for _ in range(mb):
                f.write(b"x" * (1 << 20))
                f.flush()
                n += 1
            os.fsync(f.fileno())
        return "wrote %d MiB" % n
    except OSError as e:
        return "denied after %d MiB: %s" % (n, e)

app.run(host="0.0.0.0", port=int(os.environ["PORT"]), threaded=True)
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

// TestDataDownloadAndRestore mounts issue 28's point 2 (its download and
// restore): the archive holds the app's rows and stores a link the app
// planted to a host file as a link, never the file; a restore into a
// running app is refused; into the stopped app it brings the downloaded
// rows back; an archive that is not a .tar.gz, or that names paths
// outside the folder, changes nothing outside it.
func TestDataDownloadAndRestore(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("Vault", dataApp("v1"))
	d := e.deploy(p)
	e.mustLive(d)
	for _, path := range []string{"/add", "/add", "/symlink"} {
		if code, body := e.get("vault", path); code != 200 {
			t.Fatalf("%s: %d %q", path, code, body)
		}
	}
	name, write, err := e.svc.DataArchive(ctx, e.user.ID, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "vault-data-") || !strings.HasSuffix(name, ".tar.gz") {
		t.Fatalf("archive name %q", name)
	}
	var archive bytes.Buffer
	if err := write(&archive); err != nil {
		t.Fatal(err)
	}
	entries := tarEntries(t, archive.Bytes())
	if h := entries["leak"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "/etc/passwd" || h.Size != 0 {
		t.Fatalf("the planted link is stored as %+v", h)
	}
	if h := entries["app.db"]; h == nil || h.Size == 0 {
		t.Fatalf("entries %v", entries)
	}
	if _, _, err := e.svc.DataArchive(ctx, "someone-else", p.ID); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("another user's download: %v", err)
	}

	// A restore into the running app is refused.
	if err := e.svc.RestoreData(ctx, e.user.ID, p.ID, "", bytes.NewReader(archive.Bytes())); gantry.ErrorMessage(err) != deploy.MsgRestoreRunning {
		t.Fatalf("restore while live: %v", err)
	}
	e.get("vault", "/add") // a third row, after the download
	if _, err := e.svc.Stop(ctx, e.user.ID, "vault", d.ID); err != nil {
		t.Fatal(err)
	}
	// Not an archive: refused, nothing changed.
	if err := e.svc.RestoreData(ctx, e.user.ID, p.ID, "", strings.NewReader("not a tarball")); gantry.ErrorMessage(err) != deploy.MsgRestoreNotTarGz {
		t.Fatalf("restore of a text file: %v", err)
	}
	if err := e.svc.RestoreData(ctx, e.user.ID, p.ID, "", bytes.NewReader(archive.Bytes())); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Restart(ctx, e.user.ID, "vault", d.ID); err != nil {
		t.Fatal(err)
	}
	e.mustLive(e.find(d.ID))
	if _, body := e.get("vault", "/count"); body != "2" {
		t.Fatalf("after the restore the count is %q, want the downloaded 2", body)
	}

	// An archive naming paths outside the folder writes nothing outside it.
	if _, err := e.svc.Stop(ctx, e.user.ID, "vault", d.ID); err != nil {
		t.Fatal(err)
	}
	evil := makeTarGz(t, map[string]string{"../escape": "x", "/abs-escape": "y", "ok.txt": "fine"})
	_ = e.svc.RestoreData(ctx, e.user.ID, p.ID, "", bytes.NewReader(evil))
	vol := filepath.Join(e.stack.DataDir, "appdata", p.ID, gantry.ProductionData)
	for _, leaked := range []string{filepath.Join(vol, "escape"), filepath.Join(filepath.Dir(vol), "escape"), "/abs-escape"} {
		if _, err := os.Lstat(leaked); err == nil {
			t.Fatalf("a restore wrote %s", leaked)
		}
	}
}

// tarEntries reads a .tar.gz's headers by name.
func tarEntries(t *testing.T, b []byte) map[string]*tar.Header {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = h
	}
}

// makeTarGz is a .tar.gz of files, names as given.
func makeTarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return b.Bytes()
}

// TestDataSnapshots: the folder's daily snapshot is listed and restores
// the rows it held into the stopped app; snapshots past SnapshotKeep are
// removed (the newest always kept); an id that is not a snapshot is
// "Snapshot not found", paths included.
func TestDataSnapshots(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("Diary", dataApp("v1"))
	d := e.deploy(p)
	e.mustLive(d)
	e.get("diary", "/add")
	e.get("diary", "/add")
	// One left by an earlier week, and today's, taken now.
	dir := filepath.Join(e.stack.DataDir, "snapshots", p.ID, gantry.ProductionData)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "20200101T000000Z.tar.gz"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	deploy.TakeSnapshots(e.svc, ctx)
	snaps, err := e.svc.DataSnapshots(ctx, e.user.ID, p.ID)
	if err != nil || len(snaps) != 1 || snaps[0].Bytes == 0 || time.Since(snaps[0].At) > time.Minute {
		t.Fatalf("snapshots %+v, %v: want today's only (the old one removed)", snaps, err)
	}
	e.get("diary", "/add") // after the snapshot
	if _, err := e.svc.Stop(ctx, e.user.ID, "diary", d.ID); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../../../etc/passwd", "20200101T000000Z", "x"} {
		if err := e.svc.RestoreData(ctx, e.user.ID, p.ID, bad, nil); gantry.ErrorMessage(err) != "Snapshot not found" {
			t.Fatalf("restore of snapshot %q: %v", bad, err)
		}
	}
	if err := e.svc.RestoreData(ctx, e.user.ID, p.ID, snaps[0].ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Restart(ctx, e.user.ID, "diary", d.ID); err != nil {
		t.Fatal(err)
	}
	e.mustLive(e.find(d.ID))
	if _, body := e.get("diary", "/count"); body != "2" {
		t.Fatalf("after restoring the snapshot the count is %q, want 2", body)
	}
}

// TestDataSnapshotsInObjectStore: with an object store, a snapshot is
// stored there too, so a server that does not have it on its disk (one
// that took the app over) still lists and restores it; deleting the
// project deletes it there.
func TestDataSnapshotsInObjectStore(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	srv := s3test.Start(t)
	remote := &sitecache.Remote{Store: srv.Store("snaps")}
	e.svc.Remote = remote
	p := e.project("Journal", dataApp("v1"))
	d := e.deploy(p)
	e.mustLive(d)
	e.get("journal", "/add")
	deploy.TakeSnapshots(e.svc, ctx)
	keys, err := remote.Store.List(ctx, "snapshots/"+p.ID+"/")
	if err != nil || len(keys) != 1 {
		t.Fatalf("snapshots in the store: %v %v", keys, err)
	}
	// This server loses its copy.
	if err := os.RemoveAll(filepath.Join(e.stack.DataDir, "snapshots")); err != nil {
		t.Fatal(err)
	}
	snaps, err := e.svc.DataSnapshots(ctx, e.user.ID, p.ID)
	if err != nil || len(snaps) != 1 {
		t.Fatalf("snapshots listed: %+v %v", snaps, err)
	}
	e.get("journal", "/add")
	if _, err := e.svc.Stop(ctx, e.user.ID, "journal", d.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.RestoreData(ctx, e.user.ID, p.ID, snaps[0].ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Restart(ctx, e.user.ID, "journal", d.ID); err != nil {
		t.Fatal(err)
	}
	e.mustLive(e.find(d.ID))
	if _, body := e.get("journal", "/count"); body != "1" {
		t.Fatalf("after restoring the stored snapshot the count is %q, want 1", body)
	}
	if err := e.projects().DeleteProject(ctx, e.user.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	if keys, err := remote.Store.List(ctx, "snapshots/"+p.ID+"/"); err != nil || len(keys) != 0 {
		t.Fatalf("a deleted project's snapshots are still stored: %v %v", keys, err)
	}
}
