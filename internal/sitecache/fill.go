package sitecache

import (
	"cmp"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"
)

// ManifestTimeout bounds the read of a manifest (a small object): a store
// that accepts connections but does not answer (paused, overloaded) is
// given up on in seconds.
const ManifestTimeout = 8 * time.Second

// Fill writes the files of deployment id of kind k into the empty folder
// dir, as its manifest in the store lists them, and returns their bytes
// (each blob once) and how many entries the manifest has. Every blob is
// checked against its SHA-256 (a mismatch is objstore.ErrCorrupt) and
// every path stays inside dir (os.Root). A site's files are read-only;
// an app's keep their modes (they are ingested into the account's blob
// store next, as a built workspace is). On error dir holds a part.
func (r *Remote) Fill(ctx context.Context, k Kind, id, dir string) (int64, int, error) {
	mctx, cancel := context.WithTimeout(ctx, ManifestTimeout)
	m, err := r.manifest(mctx, k, id)
	cancel()
	if err != nil {
		return 0, 0, err
	}
	mode := func(e fs.FileMode) fs.FileMode { return e.Perm() }
	if k == Site {
		mode = readOnly
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, 0, err
	}
	defer root.Close()
	first := map[string]string{} // blob → the path it is fetched to
	modes := map[string]fs.FileMode{}
	var dups []link
	var n int64
	for _, e := range m.Files {
		p := filepath.FromSlash(e.Path)
		if d := filepath.Dir(p); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return 0, 0, err
			}
		}
		switch {
		case e.Mode.IsDir():
			if err := root.MkdirAll(p, 0o755); err != nil {
				return 0, 0, err
			}
		case e.Mode&fs.ModeSymlink != 0:
			if err := root.Symlink(e.Link, p); err != nil {
				return 0, 0, err
			}
		case e.Blob == "":
			f, err := root.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode(e.Mode))
			if err != nil {
				return 0, 0, err
			}
			f.Close()
		case first[e.Blob] != "":
			dups = append(dups, link{first[e.Blob], p})
		default:
			first[e.Blob] = p
			modes[p] = mode(e.Mode)
			n += e.Size
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(cmp.Or(r.Transfers, 8))
	for blob, p := range first {
		g.Go(func() error {
			f, err := root.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
			if err != nil {
				return err
			}
			_, err = r.Store.Get(gctx, BlobKey(m.Account, blob), blob[:64], f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			return root.Chmod(p, modes[p])
		})
	}
	if err := g.Wait(); err != nil {
		return 0, 0, err
	}
	for _, d := range dups {
		if err := root.Link(d.from, d.to); err != nil {
			return 0, 0, err
		}
	}
	return n, len(m.Files), nil
}
