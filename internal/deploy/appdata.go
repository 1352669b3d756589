package deploy

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// Apps' persistent data folders (issue 28, point 1). A server app gets
// /data (DATA_DIR=/data): a Volume of its own at
// <data>/appdata/<project>/<name>, name "production" or
// "preview-<label>" (gantry.DataFolderName), the same folder for every
// deployment of that target — across redeploys, restarts, sleep and
// wake, promote and rollback. Its size is bounded by the kernel: what it
// holds plus what the account has left of its storage budget (at most
// DefaultDataDisk more, at least build.MinAppDisk), set when no app has it
// open. What it holds is measured as its app stops and every MeasureEvery
// while it runs, and counts in the budget (store.AppData). A redeploy
// starts the new version while the old one finishes the requests it has
// (at most DrainTimeout): for that overlap both processes see the same
// folder, so an app should write through SQLite (whose locks hold across
// the two) or replace files atomically. Deleting the project deletes its
// folders; a removed preview's folder goes with it.

// DefaultDataDisk bounds how much a data folder may grow beyond what it
// holds, when the account's budget leaves more.
const DefaultDataDisk = 1 << 30

// dataPath is the volume of projectID's data folder name.
func (k *storage) dataPath(projectID, name string) string {
	return filepath.Join(k.DataDir, "appdata", projectID, name)
}

// openData returns the volume of d's app's data folder and the host
// folder mounted at /data: its target's data folder, made empty on its
// first start, owned by uid, and sized to what the account has left
// unless an app has it open. It is called under the account's lock
// (startApp).
func (k *storage) openData(ctx context.Context, d *gantry.Deployment, uid uint32) (path, dir string, err error) {
	sb := k.apps.Apps.Sandbox
	path = k.dataPath(d.ProjectID, gantry.DataFolderName(d))
	if err := os.MkdirAll(filepath.Dir(path), 0o711); err != nil {
		return "", "", err
	}
	v, err := sb.OpenVolume(path, sandbox.Disk{Bytes: k.dataFree(ctx, d, 0)}, uid, uid)
	if err != nil {
		return "", "", err
	}
	if err := sb.Reown(v, uid, uid); err != nil {
		return "", "", err
	}
	if held := v.Usage(); v.Disk.Bytes > 0 && !k.apps.dataInUse(path) {
		want := held.Bytes + k.dataFree(ctx, d, held.Bytes)
		const slack = 8 << 20
		if diff := v.Disk.Bytes - want; diff <= -slack || diff >= slack {
			if err := v.Resize(context.WithoutCancel(ctx), want); err != nil {
				k.logger().Error("size data folder", "project", d.ProjectID, "err", err)
			}
		}
	}
	// Recorded from its first start: a node taking the app over knows
	// there is a folder to bring back (snapshots.restoreLatest).
	k.measureData(ctx, d.ProjectID, gantry.DataFolderName(d))
	return path, v.Workspace, nil
}

// dataFree is how much d's data folder may grow beyond held, the bytes
// it holds now: what the account has left (its last measure of held
// already counted), less what its running apps may still write.
func (k *storage) dataFree(ctx context.Context, d *gantry.Deployment, held int64) int64 {
	free := int64(DefaultDataDisk)
	if u, err := k.Store.StorageUsage(ctx, d.UserID); err == nil {
		free = min(free, max(u.Budget-u.Used-k.reservedBy(d.UserID, d.ID), build.MinAppDisk))
	}
	return free
}

// measureData records what projectID's data folder name holds now.
func (k *storage) measureData(ctx context.Context, projectID, name string) {
	u, ok := sandbox.MountedUsage(k.dataPath(projectID, name))
	if !ok {
		return // not made yet, or not mounted
	}
	if err := k.Store.AppData().Measured(context.WithoutCancel(ctx), projectID, name, u.Bytes); err != nil {
		k.logger().Error("measure data folder", "project", projectID, "err", err)
	}
}

// removeData deletes projectID's data folder name, or all its folders
// when name is "" (the project is deleted).
func (k *storage) removeData(ctx context.Context, projectID, name string) {
	dir := filepath.Join(k.DataDir, "appdata", projectID)
	names := []string{name}
	if name == "" {
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			k.logger().Error("remove data folders", "project", projectID, "err", err)
		}
		names = nil
		for _, e := range entries {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
	}
	for _, n := range names {
		if err := sandbox.RemoveVolume(filepath.Join(dir, n)); err != nil {
			k.logger().Error("remove data folder", "project", projectID, "folder", n, "err", err)
			continue
		}
		if err := k.Store.AppData().Forget(context.WithoutCancel(ctx), projectID, n); err != nil {
			k.logger().Error("forget data folder", "project", projectID, "folder", n, "err", err)
		}
	}
	if name == "" {
		_ = os.Remove(dir)
	}
	snapshots{k}.remove(projectID, name)
}
