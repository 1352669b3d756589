// Package sitecache shares deployments' files between replicas through
// the object store (issue 26, point 4): Remote uploads a site's files, or
// the workspace a server app runs from, before its go-live, restores
// them elsewhere (Fill) and deletes them with the deployment, and Cache
// is the edges' read-through copy of the sites they serve but did not
// build.
//
// Files are stored as they are kept on disk (internal/blobs): each
// distinct file once per account, named by its SHA-256, and a manifest
// per deployment, written last (it is the commit point):
//
//	blobs/<account>/<blob>        a file's bytes (<blob>: hex SHA-256, then x when executable, w when the account's)
//	sites/<deployment>.json       a site's manifest: account, paths, blobs, modes, sizes
//	apps/<deployment>.json        a server app's workspace's manifest, the same way
//
// A redeploy uploads only the files that changed, and every blob is
// checked against its SHA-256 on the way up (by the store) and on the way
// down (Fill).
package sitecache

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"golang.org/x/sync/errgroup"

	"github.com/gantryhq/gantry/internal/blobs"
	"github.com/gantryhq/gantry/internal/objstore"
)

// Manifest is a site's manifest in the object store.
type Manifest struct {
	Deployment string        `json:"deployment"`
	Account    string        `json:"account"`
	Files      []blobs.Entry `json:"files"`
}

// blobName is what a manifest may name as a blob: a SHA-256 and the
// local store's suffixes. Anything else is refused, so a manifest cannot
// steer a key or a path.
var blobName = regexp.MustCompile(`^[0-9a-f]{64}[xw]{0,2}$`)

// BlobKey is where account's blob is kept.
func BlobKey(account, blob string) string { return "blobs/" + account + "/" + blob }

// Kind is what a manifest describes: a published site, or the workspace
// a server app runs from. Both name blobs of the same account stores.
type Kind string

const (
	Site Kind = "sites"
	App  Kind = "apps"
)

// Key is where deployment id's manifest of kind k is kept.
func (k Kind) Key(id string) string { return string(k) + "/" + id + ".json" }

// ManifestKey is where deployment id's site manifest is kept.
func ManifestKey(id string) string { return Site.Key(id) }

// Remote keeps sites and app workspaces in an object store.
type Remote struct {
	Store objstore.Store
	// Transfers is how many files are sent or got at once (default 8).
	Transfers int
}

// ErrNoManifest is Publish's answer for a site not stored by content (no
// manifest in the local blob store), which cannot be shared.
var ErrNoManifest = errors.New("the site's files have no manifest (deployments stored as plain copies cannot be shared through the object store)")

// Publish uploads the files of deployment id of kind k, linked into dir
// from account's local blob store local (a site's published folder, an
// app's sandbox.FilesDir): every blob the store does not have
// yet, checked against its SHA-256, then the manifest. A file kept as a
// private copy (no blob) is uploaded under its own SHA-256. Nothing is
// live until the manifest is written, and a failed Publish leaves only
// blobs that the next one reuses.
func (r *Remote) Publish(ctx context.Context, k Kind, local *blobs.Store, account, id, dir string) error {
	m, err := local.ReadManifest(id)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNoManifest
	} else if err != nil {
		return err
	}
	out := Manifest{Deployment: id, Account: account, Files: make([]blobs.Entry, len(m.Files))}
	paths := map[string]string{} // blob → file to upload
	for i, e := range m.Files {
		if e.Mode.IsRegular() && e.Blob == "" && e.Size > 0 {
			p := filepath.Join(dir, filepath.FromSlash(e.Path))
			sum, err := fileSHA256(p)
			if err != nil {
				return err
			}
			e.Blob = sum
			paths[sum] = p
		} else if e.Blob != "" {
			paths[e.Blob] = local.Path(e.Blob)
		}
		out.Files[i] = e
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(cmp.Or(r.Transfers, 8))
	for blob, p := range paths {
		g.Go(func() error { return r.putBlob(gctx, BlobKey(account, blob), blob[:64], p) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	body, err := json.Marshal(out)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	return r.Store.Put(ctx, k.Key(id), bytes.NewReader(body), hex.EncodeToString(sum[:]))
}

// putBlob uploads the file at p under key unless the store has it.
func (r *Remote) putBlob(ctx context.Context, key, sum, p string) error {
	if ok, err := r.Store.Has(ctx, key); err != nil || ok {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return r.Store.Put(ctx, key, f, sum)
}

// Remove deletes deployment id's files of kind k from the store: its blobs that
// unused keeps (those no deployment of the account links to any more),
// then its manifest. A site the store never had is no error.
func (r *Remote) Remove(ctx context.Context, k Kind, id string, unused func(account string, blobs []string) ([]string, error)) error {
	m, err := r.manifest(ctx, k, id)
	if errors.Is(err, objstore.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	seen := map[string]bool{}
	var names []string
	for _, e := range m.Files {
		if e.Blob != "" && !seen[e.Blob] {
			seen[e.Blob] = true
			names = append(names, e.Blob)
		}
	}
	gone, err := unused(m.Account, names)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(gone)+1)
	for _, b := range gone {
		keys = append(keys, BlobKey(m.Account, b))
	}
	if err := r.Store.Delete(ctx, keys...); err != nil {
		return err
	}
	return r.Store.Delete(ctx, k.Key(id))
}

// manifest reads and checks deployment id's manifest.
func (r *Remote) manifest(ctx context.Context, k Kind, id string) (*Manifest, error) {
	var buf bytes.Buffer
	if _, err := r.Store.Get(ctx, k.Key(id), "", &buf); err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		return nil, fmt.Errorf("manifest of %s: %w", id, err)
	}
	if m.Deployment != id || !accountName.MatchString(m.Account) {
		return nil, fmt.Errorf("manifest of %s: %w", id, objstore.ErrCorrupt)
	}
	for _, e := range m.Files {
		if !filepath.IsLocal(filepath.FromSlash(e.Path)) || e.Blob != "" && !blobName.MatchString(e.Blob) {
			return nil, fmt.Errorf("manifest of %s: bad entry %q: %w", id, e.Path, objstore.ErrCorrupt)
		}
	}
	return &m, nil
}

// accountName is what an account id may be in a key.
var accountName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Has reports whether deployment id's files of kind k are in the store.
func (r *Remote) Has(ctx context.Context, k Kind, id string) (bool, error) {
	return r.Store.Has(ctx, k.Key(id))
}
