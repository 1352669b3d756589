package deploy

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/blobs"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// Deployments' files are stored by content (internal/blobs): one blob
// store per account under the data folder's blobs/, a manifest per
// deployment, and the deployment's folder made of hard links to its
// blobs. The store's records (Store.Blobs) make an account's storage
// count each blob once: a redeploy of an unchanged commit adds almost
// nothing, and two projects sharing files pay for them once.

// blobStore is userID's blob store.
func blobStore(s *storage, userID string) *blobs.Store {
	return blobs.Open(filepath.Join(s.DataDir, "blobs"), userID)
}

// blobDir is the blob store a build of userID's publishes into: "" (plain
// copies, the layout before blobs) with FlatFiles.
func blobDir(s *storage, userID string) string {
	if s.FlatFiles {
		return ""
	}
	return blobStore(s, userID).Dir
}

// recordBlobs records, when d's files have a manifest, the blobs they
// link to and their size (the blobs' bytes and those of the files kept
// outside blobs: a server app's volume, which holds what it writes), and
// reports whether they had one. A server app's workspace, just built, is
// stored by content first (storeApp).
func recordBlobs(ctx context.Context, s *storage, d *gantry.Deployment) bool {
	vol := s.WorkDir(d.ID)
	if IsApp(d) {
		if !fileExists(vol + ".img") {
			return false // no volume (mode none): a plain workspace
		}
		if err := storeApp(ctx, s, d); err != nil {
			s.logger().Error("store app workspace", "deployment", d.ID, "err", err)
			return false
		}
	}
	st := blobStore(s, d.UserID)
	m, err := st.ReadManifest(d.ID)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.logger().Error("read manifest", "deployment", d.ID, "err", err)
		}
		return false
	}
	refs, size := st.Refs(m)
	rs := make([]gantry.BlobRef, len(refs))
	for i, r := range refs {
		rs[i] = gantry.BlobRef{Hash: r.Hash, Bytes: r.Bytes}
		size += r.Bytes
	}
	if IsApp(d) {
		size += volumeHolds(vol)
	}
	// A deployment that keeps files has a size: only empty files (no
	// block) still count one byte.
	d.FilesSize = max(size, 1)
	if err := s.Store.Blobs().Record(context.WithoutCancel(ctx), d.ID, rs, d.FilesSize); err != nil &&
		gantry.ErrorCode(err) != gantry.ENOTFOUND {
		s.logger().Error("record deployment blobs", "deployment", d.ID, "err", err)
	}
	if st.Pending() {
		sweepBlobs(s, d.UserID) // what a sweep left while this build ran
	}
	return true
}

// forgetBlobs removes d's manifest and blob records, and deletes the
// blobs of d's account that no deployment links to any more.
func forgetBlobs(s *storage, d *gantry.Deployment) {
	st := blobStore(s, d.UserID)
	if err := st.RemoveManifest(d.ID); err != nil {
		s.logger().Error("remove manifest", "deployment", d.ID, "err", err)
	}
	if err := s.Store.Blobs().Forget(context.Background(), d.ID); err != nil {
		s.logger().Error("forget deployment blobs", "deployment", d.ID, "err", err)
	}
	removeRemote(s, d)
	sweepBlobs(s, d.UserID)
}

// sweepBlobs deletes the blobs of userID's store no manifest names. While
// a build of the account is adding files it deletes nothing and marks the
// store: the build sweeps once its files are recorded (recordBlobs).
func sweepBlobs(s *storage, userID string) {
	swept, err := blobStore(s, userID).Sweep()
	switch {
	case errors.Is(err, blobs.ErrBusy):
	case err != nil:
		s.logger().Error("sweep blobs", "user", userID, "err", err)
	case swept.Blobs > 0:
		s.logger().Info("blobs swept", "user", userID, "blobs", swept.Blobs, "bytes", swept.Bytes)
	}
}

// storeApp stores the workspace of d, a server app just built (its
// volume mounted, its app not started yet), by content: its files become
// links to the account's blobs beside the volume, and the app runs from
// an overlay of them (sandbox.MountFiles). The blocks the workspace took
// in the volume are given back. Nothing is done with FlatFiles, for a
// deployment that is not being deployed (an app of an older version runs
// from its plain workspace), or when it is stored already.
func storeApp(ctx context.Context, s *storage, d *gantry.Deployment) error {
	vol := s.WorkDir(d.ID)
	if s.FlatFiles || d.Status != gantry.DeploymentDeploying || fileExists(sandbox.FilesDir(vol)) {
		return nil
	}
	defer addPhase(&d.BuildInfo, "publish", time.Now())
	uid, err := s.sandboxUID(ctx, d.UserID)
	if err != nil {
		return err
	}
	if err := build.StoreWorkspace(ctx, vol, blobDir(s, d.UserID), d.ID, uid, uid); err != nil {
		return err
	}
	if err := sandbox.Trim(vol); err != nil {
		s.logger().Warn("trim app volume", "deployment", d.ID, "err", err)
	}
	return nil
}

// trimSlack is how many bytes more than its filesystem holds a stored
// app's volume image may take on disk (blocks written and freed inside)
// before they are given back (volumeHolds).
const trimSlack = 32 << 20

// volumeHolds is what the volume of a server app stored by content holds
// on top of its blobs: what its filesystem holds (statfs: the files the
// app wrote, what its build left in /tmp), not the filesystem's own
// bookkeeping, which every volume has. Blocks freed inside are given back
// to the disk (fstrim) once they add up to trimSlack, so what the image
// takes stays close to it. A volume not mounted counts its image's
// allocated blocks.
//
// The caches held in the volume for their save after the go-live
// (build.HeldCaches) are left out: they are not the app's and go within
// seconds, and counting them (a Next.js app's pruned dev dependencies:
// 500 MB) made room by pruning rollbacks for space the app never keeps.
func volumeHolds(vol string) int64 {
	img := diskUsage(vol + ".img")
	u, ok := sandbox.MountedUsage(vol)
	if !ok {
		return img
	}
	if img > u.Bytes+trimSlack {
		_ = sandbox.Trim(vol)
	}
	return max(u.Bytes-heldBytes(vol), 0)
}

// heldBytes is what the caches held in the volume vol take of their own:
// the blocks of their files no other folder links (a pruned package, a
// package manager's store moved there); a file the app's tree links too is
// the app's.
func heldBytes(vol string) int64 {
	dir := filepath.Join(vol, build.HeldCaches)
	if _, err := os.Lstat(dir); err != nil {
		return 0
	}
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink == 1 {
			n += st.Blocks * 512
		}
		return nil
	})
	return n
}

// tidyBlobs runs at start-up, before any build: in every account's blob
// store it removes the manifests (and files) of deployments that are gone
// or pruned — a crash between a deletion's commit and its files' removal
// leaves them — and sweeps what crashed publishes left.
func tidyBlobs(ctx context.Context, s *storage) {
	root := filepath.Join(s.DataDir, "blobs")
	users, err := os.ReadDir(root)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.logger().Error("tidy blobs", "err", err)
		}
		return
	}
	for _, u := range users {
		if !u.IsDir() {
			continue
		}
		ms, _ := os.ReadDir(filepath.Join(root, u.Name(), "manifests"))
		for _, m := range ms {
			id, ok := strings.CutSuffix(m.Name(), ".json")
			if !ok {
				continue
			}
			d, err := s.Store.FindDeployment(ctx, "", id)
			switch {
			case gantry.ErrorCode(err) == gantry.ENOTFOUND:
				d = &gantry.Deployment{ID: id, UserID: u.Name()}
			case err != nil || d.PrunedAt == nil:
				continue
			}
			s.logger().Info("blobs: files of a removed deployment", "deployment", id)
			for _, dir := range []string{s.SiteDir(id), s.WorkDir(id)} {
				if err := sandbox.RemoveVolume(dir); err != nil {
					s.logger().Error("remove deployment files", "dir", dir, "err", err)
				}
			}
			if err := blobStore(s, u.Name()).RemoveManifest(id); err != nil {
				s.logger().Error("remove manifest", "deployment", id, "err", err)
			}
		}
		sweepBlobs(s, u.Name())
	}
}
