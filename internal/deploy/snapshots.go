package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
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

// list returns the snapshots of projectID's folder name, newest first.
func (sn snapshots) list(projectID, name string) []gantry.DataSnapshot {
	entries, _ := os.ReadDir(sn.dir(projectID, name))
	out := []gantry.DataSnapshot{}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".tar.gz")
		at, err := time.Parse(snapshotLayout, id)
		info, ierr := e.Info()
		if !ok || err != nil || ierr != nil || !info.Mode().IsRegular() {
			continue
		}
		out = append(out, gantry.DataSnapshot{ID: id, At: at, Bytes: info.Size()})
	}
	slices.SortFunc(out, func(a, b gantry.DataSnapshot) int { return b.At.Compare(a.At) })
	return out
}

// file is snapshot id's archive of projectID's folder name; ENOTFOUND
// for an id that is not one of its snapshots.
func (sn snapshots) file(projectID, name, id string) (string, error) {
	if snapshotID.MatchString(id) {
		p := filepath.Join(sn.dir(projectID, name), id+".tar.gz")
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", gantry.Errorf(gantry.ENOTFOUND, "Snapshot not found")
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
	return os.Rename(tmp.Name(), filepath.Join(out, sn.k.now().Format(snapshotLayout)+".tar.gz"))
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
			list := sn.list(p.Name(), f.Name())
			if len(list) == 0 || k.now().Sub(list[0].At) >= every {
				if err := sn.take(ctx, p.Name(), f.Name()); err != nil && gantry.ErrorCode(err) != gantry.ENOTFOUND {
					k.logger().Error("data snapshot", "project", p.Name(), "folder", f.Name(), "err", err)
				}
				list = sn.list(p.Name(), f.Name())
			}
			for _, old := range list[min(1, len(list)):] {
				if k.now().Sub(old.At) > keep {
					_ = os.Remove(filepath.Join(sn.dir(p.Name(), f.Name()), old.ID+".tar.gz"))
				}
			}
		}
	}
}

// loop runs run now and then every hour until ctx ends.
func (sn snapshots) loop(ctx context.Context) {
	defer sn.k.wg.Done()
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		sn.run(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// remove deletes the snapshots of projectID's folder name, or all of the
// project's when name is "".
func (sn snapshots) remove(projectID, name string) {
	dir := filepath.Join(sn.k.DataDir, "snapshots", projectID)
	if name != "" {
		dir = filepath.Join(dir, name)
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
