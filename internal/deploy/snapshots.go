package deploy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/objstore"
)

// Daily snapshots of the data folders (issue 28, point 2). Every
// SnapshotEvery (default a day) each data folder that has none that
// recent is written as a .tar.gz (writeDataTar: nothing outside the
// folder is ever read) under <data>/snapshots/<project>/<name>/<time>.tar.gz,
// and snapshots older than SnapshotKeep (default 7 days) are removed, the
// newest always kept. They are the platform's backups: like the build
// caches, they do not count in the owner's storage budget; they go with
// their folder. A snapshot is restored as an uploaded archive is
// (RestoreData), into the stopped app.

// Defaults of StorageConfig.SnapshotEvery and SnapshotKeep.
const (
	DefaultSnapshotEvery = 24 * time.Hour
	DefaultSnapshotKeep  = 7 * 24 * time.Hour
)

// snapshotLayout names a snapshot by when it was taken (UTC), which is
// also its id.
const snapshotLayout = "20060102T150405Z"

var snapshotID = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z$`)

// snapshots takes, lists and prunes the data folders' snapshots.
type snapshots struct{ k *storage }

func (sn snapshots) dir(projectID, name string) string {
	return filepath.Join(sn.k.DataDir, "snapshots", projectID, name)
}

// key is snapshot id's object in the object store.
func (sn snapshots) key(projectID, name, id string) string {
	return "snapshots/" + projectID + "/" + name + "/" + id + ".tar.gz"
}

// list returns the snapshots of projectID's folder name, newest first:
// those on this server's disk and, with an object store, those stored
// there (taken on another server: their size is not known here, 0).
func (sn snapshots) list(ctx context.Context, projectID, name string) []gantry.DataSnapshot {
	entries, _ := os.ReadDir(sn.dir(projectID, name))
	out := []gantry.DataSnapshot{}
	seen := map[string]bool{}
	if r := sn.k.Remote; r != nil {
		keys, err := r.Store.List(ctx, "snapshots/"+projectID+"/"+name+"/")
		if err != nil {
			sn.k.logger().Warn("list data snapshots in the object store", "project", projectID, "err", err)
		}
		for _, key := range keys {
			id, _ := strings.CutSuffix(filepath.Base(key), ".tar.gz")
			if at, err := time.Parse(snapshotLayout, id); err == nil && !seen[id] {
				seen[id] = true
				out = append(out, gantry.DataSnapshot{ID: id, At: at})
			}
		}
	}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".tar.gz")
		at, err := time.Parse(snapshotLayout, id)
		info, ierr := e.Info()
		if !ok || err != nil || ierr != nil || !info.Mode().IsRegular() {
			continue
		}
		if i := slices.IndexFunc(out, func(d gantry.DataSnapshot) bool { return d.ID == id }); i >= 0 {
			out[i].Bytes = info.Size()
			continue
		}
		out = append(out, gantry.DataSnapshot{ID: id, At: at, Bytes: info.Size()})
	}
	slices.SortFunc(out, func(a, b gantry.DataSnapshot) int { return b.At.Compare(a.At) })
	return out
}

// file is snapshot id's archive of projectID's folder name, fetched
// from the object store when this server does not have it; ENOTFOUND for
// an id that is not one of its snapshots.
func (sn snapshots) file(ctx context.Context, projectID, name, id string) (string, error) {
	notFound := gantry.Errorf(gantry.ENOTFOUND, "Snapshot not found")
	if !snapshotID.MatchString(id) {
		return "", notFound
	}
	p := filepath.Join(sn.dir(projectID, name), id+".tar.gz")
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
		return p, nil
	}
	r := sn.k.Remote
	if r == nil {
		return "", notFound
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".fetching-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	_, err = r.Store.Get(ctx, sn.key(projectID, name, id), "", tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, objstore.ErrNotFound) {
		return "", notFound
	} else if err != nil {
		return "", fmt.Errorf("fetch data snapshot: %w", err)
	}
	return p, os.Rename(tmp.Name(), p)
}

// take writes a snapshot of projectID's folder name now (written aside,
// then renamed in: a snapshot is whole or absent).
func (sn snapshots) take(ctx context.Context, projectID, name string) error {
	dir, err := sn.k.dataDir(projectID, name)
	if err != nil {
		return err
	}
	out := sn.dir(projectID, name)
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(out, ".taking-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = writeDataTar(dir, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	id := sn.k.now().Format(snapshotLayout)
	p := filepath.Join(out, id+".tar.gz")
	if err := os.Rename(tmp.Name(), p); err != nil {
		return err
	}
	return sn.upload(ctx, projectID, name, id, p)
}

// upload stores snapshot id (file p) in the object store, when there is
// one, so that another server can restore it.
func (sn snapshots) upload(ctx context.Context, projectID, name, id, p string) error {
	r := sn.k.Remote
	if r == nil {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := r.Store.Put(ctx, sn.key(projectID, name, id), f, hex.EncodeToString(h.Sum(nil))); err != nil {
		return fmt.Errorf("store data snapshot: %w", err)
	}
	return nil
}

// run takes the snapshots that are due and prunes the old ones, for every
// data folder on this server.
func (sn snapshots) run(ctx context.Context) {
	k := sn.k
	every, keep := orDuration(k.SnapshotEvery, DefaultSnapshotEvery), orDuration(k.SnapshotKeep, DefaultSnapshotKeep)
	projects, _ := os.ReadDir(filepath.Join(k.DataDir, "appdata"))
	for _, p := range projects {
		folders, _ := os.ReadDir(filepath.Join(k.DataDir, "appdata", p.Name()))
		for _, f := range folders {
			if !f.IsDir() || ctx.Err() != nil {
				continue
			}
			list := sn.list(ctx, p.Name(), f.Name())
			if len(list) == 0 || k.now().Sub(list[0].At) >= every {
				if err := sn.take(ctx, p.Name(), f.Name()); err != nil && gantry.ErrorCode(err) != gantry.ENOTFOUND {
					k.logger().Error("data snapshot", "project", p.Name(), "folder", f.Name(), "err", err)
				}
				list = sn.list(ctx, p.Name(), f.Name())
			}
			for _, old := range list[min(1, len(list)):] {
				if k.now().Sub(old.At) > keep {
					sn.delete(ctx, p.Name(), f.Name(), old.ID)
				}
			}
		}
	}
}

// snapshotFirst is how long after start the first check runs: not at
// once, so a server started again and again (a crash loop, tests) does
// not write snapshots at every start; the due ones are taken then.
const snapshotFirst = 10 * time.Minute

// loop runs run snapshotFirst after start and then every hour until ctx
// ends.
func (sn snapshots) loop(ctx context.Context) {
	defer sn.k.wg.Done()
	t := time.NewTimer(snapshotFirst)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sn.run(ctx)
		t.Reset(time.Hour)
	}
}

// delete removes snapshot id, here and in the object store.
func (sn snapshots) delete(ctx context.Context, projectID, name, id string) {
	_ = os.Remove(filepath.Join(sn.dir(projectID, name), id+".tar.gz"))
	if r := sn.k.Remote; r != nil {
		if err := r.Store.Delete(ctx, sn.key(projectID, name, id)); err != nil {
			sn.k.logger().Warn("delete data snapshot", "project", projectID, "err", err)
		}
	}
}

// remove deletes the snapshots of projectID's folder name, or all of the
// project's when name is "", here and in the object store.
func (sn snapshots) remove(projectID, name string) {
	dir := filepath.Join(sn.k.DataDir, "snapshots", projectID)
	prefix := "snapshots/" + projectID + "/"
	if name != "" {
		dir = filepath.Join(dir, name)
		prefix += name + "/"
	}
	if r := sn.k.Remote; r != nil {
		ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
		defer cancel()
		keys, err := r.Store.List(ctx, prefix)
		if err == nil && len(keys) > 0 {
			err = r.Store.Delete(ctx, keys...)
		}
		if err != nil {
			sn.k.logger().Warn("delete data snapshots in the object store", "project", projectID, "err", err)
		}
	}
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		sn.k.logger().Error("remove data snapshots", "project", projectID, "err", fmt.Sprint(err))
	}
}

func orDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// restoreLatest gives d's app, starting on this server while its data
// folder was made on another (taken over from a node that stopped, or
// moved here by a deploy built here), the folder back from its newest
// snapshot (issue 28, point 5), and says in d's log how old that
// snapshot was — or that there was none. A folder never made anywhere
// (no app_data record) starts empty without a word.
func (sn snapshots) restoreLatest(ctx context.Context, d *gantry.Deployment, uid uint32) {
	k := sn.k
	name := gantry.DataFolderName(d)
	if _, err := os.Stat(k.dataPath(d.ProjectID, name) + ".img"); err == nil {
		return // this server has it (a node that came back)
	}
	if fs, err := k.Store.AppData().Folders(ctx, d.ProjectID); err != nil ||
		!slices.ContainsFunc(fs, func(f gantry.DataFolder) bool { return f.Name == name }) {
		return // never made on any server: it starts empty, as a new folder does
	}
	list := sn.list(ctx, d.ProjectID, name)
	if len(list) == 0 {
		k.log(ctx, d.ID, gantry.LevelWarning, gantry.LogDeployment,
			"The app's data folder stayed on the server that stopped, and it has no snapshot yet: /data starts empty here")
		return
	}
	latest := list[0]
	p, err := sn.file(ctx, d.ProjectID, name, latest.ID)
	if err == nil {
		_, _, err = k.openData(ctx, d, uid)
	}
	var f *os.File
	if err == nil {
		f, err = os.Open(p)
	}
	if err == nil {
		defer f.Close()
		err = k.restoreFolder(ctx, d.UserID, d.ProjectID, name, f)
	}
	if err != nil {
		k.logger().Error("restore a taken-over app's data", "deployment", d.ID, "err", err)
		k.log(ctx, d.ID, gantry.LevelError, gantry.LogDeployment,
			"The app's data folder could not be restored from its snapshot of "+latest.At.Format(time.RFC3339)+": /data may be empty or partial here")
		return
	}
	k.log(ctx, d.ID, gantry.LevelWarning, gantry.LogDeployment, fmt.Sprintf(
		"Restored /data from its snapshot of %s (%s old): what the app wrote after it stayed on the server that stopped",
		latest.At.Format(time.RFC3339), k.now().Sub(latest.At).Round(time.Minute)))
}
