package build

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/gantryhq/gantry/internal/blobs"
)

// MinCompressSize and MaxCompressSize bound the files given precompressed
// variants.
const (
	MinCompressSize = 1024
	MaxCompressSize = 32 << 20
)

// MaxSiteFiles is the most files one site may publish (Cloudflare Pages
// allows 20,000 on its free plan). Each file is a blob, a link and an
// inode of the platform's disk, and a build that writes 150,000 scripts
// would otherwise make the platform create them all on its behalf, its
// journal's work slowing every other site (bench/hostile): the build
// fails before publishing instead, saying so.
const MaxSiteFiles = 20_000

// countSiteFiles counts the files publishTree would publish from src
// (folders, .git and, at the repository's root, node_modules left out),
// stopping once it passed max.
func countSiteFiles(src string, isRepoRoot bool, max int) int {
	n := 0
	errStop := errors.New("stop")
	_ = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != src && (d.Name() == ".git" || isRepoRoot && filepath.Dir(p) == src && d.Name() == "node_modules") {
				return fs.SkipDir
			}
			return nil
		}
		if n++; n > max {
			return errStop
		}
		return nil
	})
	return n
}

// compressible lists the extensions that get .gz and .br variants.
var compressible = map[string]bool{
	".html": true, ".htm": true, ".css": true, ".js": true, ".mjs": true, ".cjs": true,
	".json": true, ".svg": true, ".txt": true, ".xml": true, ".map": true, ".wasm": true,
	".webmanifest": true, ".ico": true, ".ttf": true, ".otf": true,
}

// published describes a publish.
type published struct {
	dir   string
	files int
	size  int64
	// compressible files found, and those given variants (or found not
	// to shrink); fewer when MaxCompressTotal was reached.
	compressible, compressed int
}

// publish publishes the output folder src as sitesDir/id (publishTree),
// its files stored by content in the blob store blobDir unless it is "",
// in the helper process (helper.go): copying and compressing a tenant's
// files is the platform's work on their behalf, done in the idle
// scheduling classes on one core. Its warnings (skipped files) are given
// to warn; when it fails or ctx ends, what it left is removed.
func publish(ctx context.Context, src, sitesDir, blobDir, id string, isRepoRoot bool, warn func(string)) (*published, error) {
	res, err := runHelperJob(ctx, helperJob{Op: "publish", Src: src, SitesDir: sitesDir, BlobDir: blobDir, ID: id, RepoRoot: isRepoRoot,
		MaxBytes: compressBounds.total, BestBytes: compressBounds.best})
	for _, w := range res.Warnings {
		warn(w)
	}
	if err != nil {
		// A helper killed halfway left its temporary folders.
		for _, pattern := range []string{".publish-" + id + "-*", ".old-" + id + "-*"} {
			left, _ := filepath.Glob(filepath.Join(sitesDir, pattern))
			for _, l := range left {
				os.RemoveAll(l)
			}
		}
		if blobDir != "" {
			_ = (&blobs.Store{Dir: blobDir}).RemoveManifest(id) // its blobs: garbage for the next sweep
		}
		return nil, err
	}
	return &published{dir: res.Dir, files: res.Files, size: res.Size, compressible: res.Compressible, compressed: res.Done}, nil
}

// publishTree copies the output folder src into a fresh folder inside
// sitesDir, adds precompressed variants, and renames it into place as
// sitesDir/id, replacing any earlier publish of id. Nothing is visible at
// sitesDir/id until everything is written.
//
// What is copied: folders and regular files, read through an os.Root so no
// path can leave src. A symlink is copied as the file it points to when
// that file is inside src; symlinks leaving src, symlinks to folders and
// special files are skipped with a warning. Folders named .git are never
// published, nor node_modules at the top when src is the repository root.
// Files get mode 0644, folders 0755. Text assets (compressible extensions)
// of MinCompressSize to MaxCompressSize bytes get .gz and .br siblings when
// those are smaller, unless the output already has a file of that name,
// within the bounds b (compressAssets; compressTime).
//
// With a blob store (blobDir, see internal/blobs) every file, variants
// included, is a hard link to its blob (mode 0444), and the manifest of
// id is written before the folder is renamed into place: a file the
// account already stores is not stored again.
func publishTree(src, sitesDir, blobDir, id string, isRepoRoot bool, b bounds, warn func(string)) (*published, error) {
	if err := os.MkdirAll(sitesDir, 0o700); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(sitesDir, ".publish-"+id+"-")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(src)
	if err != nil {
		return nil, err
	}
	defer root.Close()

	var store *blobs.Session
	var manifest []blobs.Entry
	if blobDir != "" {
		if store, err = (&blobs.Store{Dir: blobDir}).Begin(); err != nil {
			return nil, err
		}
		defer store.Close()
	}

	pub := &published{}
	names := make(map[string]bool) // every published path, to avoid clobbering with variants
	var toCompress []helperAsset
	err = fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || isRepoRoot && rel == "node_modules") {
			return fs.SkipDir
		}
		dst := filepath.Join(tmp, filepath.FromSlash(rel))
		switch t := d.Type(); {
		case t.IsDir():
			return os.Mkdir(dst, 0o755)
		case t.IsRegular():
		case t&fs.ModeSymlink != 0:
			fi, err := root.Stat(rel) // follows the link, only inside src
			if errors.Is(err, fs.ErrNotExist) {
				warn(fmt.Sprintf("Skipped symlink '%s': its target does not exist", rel))
				return nil
			}
			if err != nil {
				warn(fmt.Sprintf("Skipped symlink '%s': it points outside the output directory", rel))
				return nil
			}
			if !fi.Mode().IsRegular() {
				warn(fmt.Sprintf("Skipped symlink '%s': only links to files are published", rel))
				return nil
			}
		default:
			warn(fmt.Sprintf("Skipped '%s': not a regular file", rel))
			return nil
		}
		n, err := copyFile(root, rel, dst, store, &manifest)
		if err != nil {
			return err
		}
		if n < 0 {
			warn(fmt.Sprintf("Skipped '%s': not a regular file", rel))
			return nil
		}
		pub.files++
		pub.size += n
		names[rel] = true
		if n >= MinCompressSize && n <= MaxCompressSize && compressible[strings.ToLower(path.Ext(rel))] {
			toCompress = append(toCompress, helperAsset{Rel: rel, Size: n})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	pub.compressible = len(toCompress)
	for i := range toCompress {
		toCompress[i].GZ, toCompress[i].BR = !names[toCompress[i].Rel+".gz"], !names[toCompress[i].Rel+".br"]
	}
	if pub.compressed, err = compressAssets(tmp, toCompress, time.Now().Add(compressTime), b); err != nil {
		return nil, err
	}
	if store != nil {
		if manifest, err = adoptVariants(store, tmp, toCompress, manifest); err != nil {
			return nil, err
		}
		if err := store.WriteManifest(id, manifest); err != nil {
			return nil, err
		}
	}

	final := filepath.Join(sitesDir, id)
	if _, err := os.Lstat(final); err == nil {
		old, err := os.MkdirTemp(sitesDir, ".old-"+id+"-")
		if err != nil {
			return nil, err
		}
		if err := os.Rename(final, filepath.Join(old, "site")); err != nil {
			return nil, err
		}
		defer os.RemoveAll(old)
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, err
	}
	ok = true
	pub.dir = final
	return pub, nil
}

// adoptVariants puts the .gz and .br variants compressAssets wrote for as
// under dir into store, and adds them to manifest.
func adoptVariants(store *blobs.Session, dir string, as []helperAsset, manifest []blobs.Entry) ([]blobs.Entry, error) {
	for _, a := range as {
		for _, v := range []struct {
			ext  string
			made bool
		}{{".gz", a.GZ}, {".br", a.BR}} {
			if !v.made {
				continue // the output's own file of that name: already in
			}
			p := filepath.Join(dir, filepath.FromSlash(a.Rel+v.ext))
			e, err := store.Adopt(p, false)
			if errors.Is(err, fs.ErrNotExist) {
				continue // not smaller, or not reached
			}
			if err != nil {
				return nil, err
			}
			e.Path = a.Rel + v.ext
			manifest = append(manifest, e)
		}
	}
	return manifest, nil
}

// copyFile copies root's rel to dst and returns its size, or -1 when rel
// turned out not to be a regular file once opened. With store, dst is a
// link to the file's blob, and its entry is added to manifest.
func copyFile(root *os.Root, rel, dst string, store *blobs.Session, manifest *[]blobs.Entry) (int64, error) {
	in, err := root.Open(rel)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return -1, nil
	}
	if store != nil {
		e, err := store.Copy(in, dst, false)
		if err != nil {
			return 0, err
		}
		e.Path = filepath.ToSlash(rel)
		*manifest = append(*manifest, e)
		return e.Size, nil
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// compressTime bounds the precompression of one deployment: the helper
// runs in the idle class, and on a busy machine the files it has not
// reached by then are served uncompressed rather than holding the
// deployment back.
const compressTime = time.Minute

// brotliQuality trades size for publish time: quality 11 is about 9%
// smaller than 9 but 10–40 times slower (≈ 60 ms for 16 KiB here), so it
// is kept for small files (and bestQualityTotal bytes of them).
func brotliQuality(size int) int {
	switch {
	case size <= 24<<10:
		return brotli.BestCompression
	case size <= 512<<10:
		return 9
	}
	return 6
}

// compressFile writes p.gz (gzip level 9) and p.br (brotli at quality
// q), each kept only when smaller than p.
func compressFile(p string, gz, br bool, q int) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if gz {
		if err := writeCompressed(p+".gz", len(data), func(w io.Writer) (io.WriteCloser, error) {
			return gzip.NewWriterLevel(w, gzip.BestCompression)
		}, data); err != nil {
			return err
		}
	}
	if br {
		if err := writeCompressed(p+".br", len(data), func(w io.Writer) (io.WriteCloser, error) {
			return brotli.NewWriterLevel(w, q), nil
		}, data); err != nil {
			return err
		}
	}
	return nil
}

func writeCompressed(dst string, size int, newWriter func(io.Writer) (io.WriteCloser, error), data []byte) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	zw, err := newWriter(f)
	if err == nil {
		_, err = zw.Write(data)
		if cerr := zw.Close(); err == nil {
			err = cerr
		}
	}
	var n int64
	if err == nil {
		n, err = f.Seek(0, io.SeekCurrent)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Join(err, os.Remove(dst))
	}
	if n >= int64(size) {
		return os.Remove(dst)
	}
	return nil
}
