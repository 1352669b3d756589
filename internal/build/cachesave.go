package build

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/gantryhq/gantry"
)

// Go live first, save the cache after. With Job.DeferCacheSave the build
// does not pack its caches before it returns: Run returns a CacheSave
// that the caller runs once the deployment is live (its cost, several
// seconds for a Next.js app's node_modules, is then no longer between
// the build and the deployment going live). The caches must outlive the
// build until then, as they were when it ended:
//
//   - a static site's are in its build volume, which the caller removes
//     only after the save (the volume is not the app's: nothing changes
//     them meanwhile);
//   - a server app's node_modules is pruned and its volume becomes the
//     app's, so before the prune what the workspace holds of the caches
//     (node_modules, .next/cache, …) is held as hard links (no bytes of
//     their own) in the volume beside the workspace (heldCaches), where
//     neither the app nor the build can see it, and the package
//     managers' stores are moved there from /tmp once the prune is done;
//     the save packs from there and removes the folder. (A hard link is
//     the file itself: an app that rewrote a file of its node_modules in
//     place before the save ends would change the cached copy too; the
//     cache is that project's, which its builds can change anyway.)
//
// Packing runs in the helper process in the idle classes, as before.

// heldCaches is the folder of a server app's volume (beside workspace
// and tmp) holding its caches until they are saved (HeldCaches).
const heldCaches = HeldCaches

// HeldCaches is that folder's name: what it holds is not the app's, and
// goes within seconds of the go-live (the deploy service leaves it out of
// the app's size).
const HeldCaches = "caches.held"

// CacheSave is a build's cache save, deferred (Job.DeferCacheSave).
type CacheSave struct{ r *run }

// Save packs the build's caches into Job.CacheDir, logging to log as the
// build would have, and removes what was held for it. ctx bounds it. It
// returns the bytes the target's caches take afterwards.
func (c *CacheSave) Save(ctx context.Context, log Logger) int64 {
	r := c.r
	r.ctx, r.bctx, r.log, r.phases = ctx, ctx, newLogSink(log, DefaultMaxLogLines), nil
	defer c.Discard()
	r.saveCache()
	return r.cacheSize()
}

// Held reports whether the save holds a server app's caches in its
// volume (the app's volume then frees their blocks when it is done).
func (c *CacheSave) Held() bool { return c.r.held }

// Discard removes what was held for the save (a server app's held
// caches), saving nothing.
func (c *CacheSave) Discard() {
	if c.r.held {
		if root, err := os.OpenRoot(c.r.vol.Path); err == nil {
			_ = root.RemoveAll(heldCaches)
			root.Close()
		}
	}
}

// holdCache is called where the caches are saved when the save is not
// deferred: before a server app's prune, and after a site's publish. A
// deferred save of a server app holds its workspace's caches instead.
func (r *run) holdCache(server bool) {
	switch {
	case !r.job.DeferCacheSave:
		r.saveCache()
	case server && r.job.CacheDir != "":
		if err := r.holdWorkspaceCaches(); err != nil {
			r.log.step(gantry.LevelWarning, "Build cache not saved: it could not be held for saving ("+cacheErr(err)+")")
			r.job.CacheDir = ""
			if root, err := os.OpenRoot(r.vol.Path); err == nil {
				_ = root.RemoveAll(heldCaches)
				root.Close()
			}
			return
		}
		r.held = true
	}
}

// heldRecords are the package managers' records in node_modules that
// they rewrite in place (a prune would change the held copy): copied,
// not linked.
var heldRecords = []string{".package-lock.json", ".modules.yaml", ".pnpm/lock.yaml", ".yarn-integrity", ".yarn-state.yml"}

// holdWorkspaceCaches holds the workspace's cache folders in heldCaches
// as hard links (symlinks as symlinks), through an os.Root at the volume.
func (r *run) holdWorkspaceCaches() error {
	root, err := os.OpenRoot(r.vol.Path)
	if err != nil {
		return err
	}
	defer root.Close()
	_ = root.RemoveAll(heldCaches)
	for _, sub := range []string{heldCaches, heldCaches + "/workspace", heldCaches + "/tmp"} {
		if err := root.Mkdir(sub, 0o700); err != nil {
			return err
		}
	}
	for _, e := range CacheEntries {
		if e.Tmp {
			continue
		}
		src := "workspace/" + e.Path
		if fi, err := root.Lstat(src); err != nil || !fi.IsDir() {
			continue
		}
		dst := heldCaches + "/workspace/" + e.Path
		if err := root.MkdirAll(path.Dir(dst), 0o700); err != nil {
			return err
		}
		err := fs.WalkDir(root.FS(), src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			to := dst + strings.TrimPrefix(p, src)
			switch {
			case d.IsDir():
				fi, err := d.Info()
				if err != nil {
					return err
				}
				return root.Mkdir(to, fi.Mode().Perm()|0o700)
			case d.Type()&fs.ModeSymlink != 0:
				target, err := root.Readlink(p)
				if err != nil {
					return err
				}
				return root.Symlink(target, to)
			case d.Type().IsRegular():
				if e.Name == "node_modules" && isHeldRecord(strings.TrimPrefix(p, src+"/")) {
					return copyInRoot(root, p, to)
				}
				return root.Link(p, to)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func isHeldRecord(rel string) bool {
	for _, r := range heldRecords {
		if rel == r {
			return true
		}
	}
	return false
}

// copyInRoot copies the regular file from to to, inside root.
func copyInRoot(root *os.Root, from, to string) error {
	in, err := root.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := root.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// moveTmpCaches moves the package managers' stores from a held server
// app's /tmp into heldCaches (a rename: the same filesystem).
func (r *run) moveTmpCaches() {
	root, err := os.OpenRoot(r.vol.Path)
	if err != nil {
		return
	}
	defer root.Close()
	for _, e := range CacheEntries {
		if !e.Tmp {
			continue
		}
		src, dst := "tmp/"+e.Path, heldCaches+"/tmp/"+e.Path
		if _, err := root.Lstat(src); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := root.MkdirAll(path.Dir(dst), 0o700); err == nil {
			err = root.Rename(src, dst)
		}
		if err != nil {
			_ = root.RemoveAll(src) // not needed to run: dropped as before
		}
	}
}

// heldRoot is where a held entry's folder is, in place of cacheRoot.
func (r *run) heldRoot(e CacheEntry) string {
	if e.Tmp {
		return filepath.Join(r.vol.Path, heldCaches, "tmp")
	}
	return filepath.Join(r.vol.Path, heldCaches, "workspace")
}
