package deploy

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// Downloading and restoring a project's production data folder (issue
// 28, point 2). The folder is written by untrusted code, so the platform
// never follows what it holds: the download reads it through an os.Root
// (no path leaves the folder), stores symbolic links as links and skips
// anything but files, folders and links; a restore is unpacked inside the
// sandbox, as the account's uid, into the folder's own volume, so the
// kernel bounds what it writes and no entry of the archive reaches
// anything else.

// Messages of downloads and restores.
const (
	MsgNoDataFolder    = "This project has no data folder yet: it is made when a server app of the project first starts"
	MsgRestoreRunning  = "Stop the app first: a restore replaces the data folder, and never mixes into a running app's files"
	MsgRestoreNotTarGz = "The file is not a .tar.gz archive: download the data folder to get one in the right format"
)

// DataArchive checks that the owner's project has a production data
// folder and returns the archive's file name and a function writing the
// folder to w as a .tar.gz. A file the app changes while it is written
// may end the archive early: stop the app for a consistent copy.
func (s *Service) DataArchive(ctx context.Context, userID, projectID string) (string, func(w io.Writer) error, error) {
	p, err := s.Store.FindProject(ctx, userID, projectID)
	if err != nil {
		return "", nil, err
	}
	dir, err := s.storage.dataDir(p.ID, gantry.ProductionData)
	if err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("%s-data-%s.tar.gz", gantry.FirstNonBlank(p.Subdomain, "project"), s.now().Format("20060102-150405"))
	return name, func(w io.Writer) error { return writeDataTar(dir, w) }, nil
}

// RestoreData replaces the owner's project's production data folder with
// the .tar.gz archive r — or, when snapshot is set, with that snapshot
// of the folder (ENOTFOUND "Snapshot not found" otherwise) — while its
// app is not running: no production deployment live (awake or asleep),
// queued or building (EINVALID MsgRestoreRunning otherwise). The archive
// is unpacked in the sandbox; one that is not a .tar.gz, or does not fit,
// changes nothing the app could see half-done: the folder is emptied only
// once the archive is stored and read whole.
func (s *Service) RestoreData(ctx context.Context, userID, projectID, snapshot string, r io.Reader) error {
	p, err := s.Store.FindProject(ctx, userID, projectID)
	if err != nil {
		return err
	}
	if snapshot != "" {
		path, err := snapshots{s.storage}.file(ctx, p.ID, gantry.ProductionData, snapshot)
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	// Production live (awake or asleep) or on its way there: its app
	// could open the folder while it is replaced.
	ds, err := s.Store.ListDeployments(ctx, userID, gantry.DeploymentFilter{ProjectID: p.ID, Target: gantry.TargetProduction})
	if err != nil {
		return err
	}
	for _, d := range ds {
		if d.Status == gantry.DeploymentLive || d.InProgress() {
			return gantry.Errorf(gantry.EINVALID, MsgRestoreRunning)
		}
	}
	if s.apps.dataInUse(s.storage.dataPath(p.ID, gantry.ProductionData)) {
		return gantry.Errorf(gantry.EINVALID, MsgRestoreRunning)
	}
	return s.storage.restoreData(ctx, p, r)
}

// DataSnapshots lists the snapshots of the owner's project's production
// data folder, newest first.
func (s *Service) DataSnapshots(ctx context.Context, userID, projectID string) ([]gantry.DataSnapshot, error) {
	p, err := s.Store.FindProject(ctx, userID, projectID)
	if err != nil {
		return nil, err
	}
	return snapshots{s.storage}.list(ctx, p.ID, gantry.ProductionData), nil
}

// dataDir is the host folder of projectID's data folder name, mounted;
// ENOTFOUND MsgNoDataFolder when it was never made.
func (k *storage) dataDir(projectID, name string) (string, error) {
	v, err := k.dataVolume(projectID, name)
	if err != nil {
		return "", err
	}
	return v.Workspace, nil
}

// dataVolume is the volume of projectID's data folder name, mounted;
// ENOTFOUND MsgNoDataFolder when it was never made.
func (k *storage) dataVolume(projectID, name string) (*sandbox.Volume, error) {
	path := k.dataPath(projectID, name)
	if _, err := os.Stat(path + ".img"); err != nil {
		return nil, gantry.Errorf(gantry.ENOTFOUND, MsgNoDataFolder)
	}
	if k.apps.Apps == nil || k.apps.Apps.Sandbox == nil {
		return nil, gantry.Errorf(gantry.EUNAVAILABLE, "This Gantry does not run server apps")
	}
	return k.apps.Apps.Sandbox.AttachVolume(path)
}

// restoreData stores r in the volume's tmp folder, then, in the sandbox
// as the owner's uid, checks it is a whole .tar.gz, empties the folder
// and unpacks it there.
func (k *storage) restoreData(ctx context.Context, p *gantry.Project, r io.Reader) error {
	return k.restoreFolder(ctx, p.UserID, p.ID, gantry.ProductionData, r)
}

// restoreFolder is restoreData for the folder name of userID's project
// projectID.
func (k *storage) restoreFolder(ctx context.Context, userID, projectID, name string, r io.Reader) error {
	v, err := k.dataVolume(projectID, name)
	if err != nil {
		return err
	}
	sb := k.apps.Apps.Sandbox
	uid, err := k.sandboxUID(ctx, userID)
	if err != nil {
		return err
	}
	upload := filepath.Join(v.Tmp, "restore.tar.gz")
	defer os.Remove(upload)
	f, err := os.OpenFile(upload, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("restore data: %w", err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.ENOSPC) {
		return gantry.Errorf(gantry.EINVALID, "The archive is larger than the space the data folder has left")
	} else if err != nil {
		return err // the upload was cut off or refused (the API says why)
	}
	if err := os.Lchown(upload, int(uid), int(uid)); err != nil {
		return fmt.Errorf("restore data: %w", err)
	}
	var out []string
	_, err = sb.Run(ctx, sandbox.Command{
		Args: []string{"sh", "-c", `gzip -t /tmp/restore.tar.gz 2>/dev/null && tar -tzf /tmp/restore.tar.gz >/dev/null 2>&1 || exit 3
find /data -mindepth 1 -delete && tar -xzf /tmp/restore.tar.gz -C /data --no-same-owner --no-same-permissions --delay-directory-restore`},
		Dir: v.Workspace, Tmp: v.Tmp, Data: v.Workspace, UID: uid, GID: uid,
		Limits: sandbox.Limits{Timeout: 10 * time.Minute},
		Output: func(_ sandbox.Stream, line string) {
			if len(out) < 5 {
				out = append(out, line)
			}
		},
	})
	var exit *sandbox.ExitError
	switch {
	case errors.As(err, &exit) && exit.Code == 3:
		return gantry.Errorf(gantry.EINVALID, MsgRestoreNotTarGz)
	case err != nil && !errors.As(err, &exit):
		return fmt.Errorf("restore data: %w", err)
	case err != nil:
		k.logger().Warn("restore data", "project", projectID, "exit", exit.Code, "output", out)
		return gantry.Errorf(gantry.EINVALID, "The archive could not be unpacked whole (the data folder may be full): what it held so far is in the folder; restore again after freeing space")
	}
	k.measureData(ctx, projectID, name)
	return nil
}

// writeDataTar writes the folder dir to w as a .tar.gz, never leaving
// dir: symbolic links are stored as links, files other than regular
// ones, folders and links are left out, and a file is read through a
// descriptor checked to be a regular file (opened without blocking).
func writeDataTar(dir string, w io.Writer) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || name == "." {
			return err
		}
		return addTarEntry(root, tw, name)
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// addTarEntry adds name of root to tw (see writeDataTar).
func addTarEntry(root *os.Root, tw *tar.Writer, name string) error {
	info, err := root.Lstat(name)
	if err != nil {
		return nil // gone meanwhile
	}
	link := ""
	var f *os.File
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		if link, err = root.Readlink(name); err != nil {
			return nil
		}
	case info.IsDir():
	case info.Mode().IsRegular():
		f, err = root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return nil
		}
		defer f.Close()
		if info, err = f.Stat(); err != nil || !info.Mode().IsRegular() {
			return nil
		}
	default:
		return nil // fifos, sockets
	}
	hdr, err := tar.FileInfoHeader(info, link)
	if err != nil {
		return err
	}
	hdr.Name, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = filepath.ToSlash(name), 0, 0, "", ""
	if info.IsDir() {
		hdr.Name += "/"
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if f != nil {
		if _, err := io.CopyN(tw, f, hdr.Size); err != nil {
			return fmt.Errorf("%s changed while it was read: stop the app for a consistent copy: %w", name, err)
		}
	}
	return nil
}
