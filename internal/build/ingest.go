package build

import (
	"context"
	"os"
	"path/filepath"

	"github.com/gantryhq/gantry/internal/blobs"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// StoreWorkspace stores the workspace of a built server app's volume (at
// volume) by content, in the helper process (helper.go): its files go
// into the account's blob store blobDir, owned by uid and gid, its tree
// is made again of links to them in sandbox.FilesDir(volume), deployment
// id's manifest is written, and the workspace folder in the volume is
// emptied. The app then runs from an overlay of those files
// (sandbox.MountFiles), and a later deployment whose files did not change
// stores nothing again. Nothing is done when the files are there already.
func StoreWorkspace(ctx context.Context, volume, blobDir, id string, uid, gid uint32) error {
	if _, err := os.Lstat(sandbox.FilesDir(volume)); err == nil {
		return nil
	}
	_, err := runHelperJob(ctx, helperJob{Op: "ingest", Src: filepath.Join(volume, "workspace"), Base: sandbox.FilesDir(volume),
		BlobDir: blobDir, ID: id, UID: uid, GID: gid})
	return err
}

// storeWorkspace is StoreWorkspace's work in the helper: the files of
// src linked into dst through a temporary folder beside it, the manifest
// written before dst is renamed into place, and src emptied last. A
// helper killed between two steps leaves blobs no manifest names (swept
// later) or a manifest whose deployment fails and is removed; src keeps
// the files until dst holds them.
func storeWorkspace(src, dst, blobDir, id string, uid, gid uint32) error {
	tmp := dst + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	w, err := (&blobs.Store{Dir: blobDir}).Begin()
	if err != nil {
		return err
	}
	defer w.Close()
	es, err := w.Ingest(src, tmp, blobs.Owner{UID: int(uid), GID: int(gid)})
	if err == nil {
		err = w.WriteManifest(id, es)
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	root, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer root.Close()
	left, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range left {
		if err := root.RemoveAll(e.Name()); err != nil {
			return err
		}
	}
	return nil
}
