package build

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// Build caches. A build's caches live in Job.CacheDir (the platform's
// data/caches/<project id>/<target>/, see deploy.Service.CacheDirs),
// outside every sandbox: one gzip'd tar per entry of the table below, plus
// manifest.json, all root's and private (0700 folder, 0600 files). Before
// the install they are unpacked into the build's volume as the account's
// sandbox user (from Job.CacheFallback, read only, when the target has
// none yet); after a successful build what the build left in those places
// is packed again into Job.CacheDir. A cache is a project's target's, so
// never another account's, and what a preview leaves never reaches
// production.
//
// Why gzip'd tars: the volume is a filesystem of its own, so a restore
// copies whatever the format (hard links cannot cross into it). Reading
// one sequential file and creating the entries is faster than walking a
// stored tree file by file, and gzip at its fastest level makes a
// node_modules about three times smaller — it counts in the account's
// storage budget — while unpacking at several hundred MB/s, well above
// what creating the files costs. (zstd would unpack faster still, but no
// zstd library is among the module's dependencies.)

// CacheEntry is one kind of cache: a folder the build leaves in its
// workspace or /tmp that the next build of the project can reuse.
type CacheEntry struct {
	Name string // shown in the log and names the stored file
	// Tmp puts Path under the run's /tmp, else under the workspace.
	Tmp  bool
	Path string // relative, slash-separated
	// Lockfiles, when set, key the entry: it is restored only when the
	// first of them that exists has the contents it had when it was saved
	// (node_modules is only valid for the lockfile it was installed from).
	Lockfiles []string
	// Env points the tool at Path (set for install and build): a
	// variable whose %s is the run's /tmp as it sees it.
	Env string
	// Store marks a Node package manager's store: not needed when
	// node_modules is restored (the install has nothing to fetch), so it
	// is then neither restored nor saved again (the stored one is kept).
	Store bool
	// Skip lists folders inside Path that are not cache (npm's own logs).
	Skip []string
}

// CacheEntries is the table of build caches, in the spirit of the
// detectors table: package managers' stores (kept across lockfile
// changes) and node_modules (only for an unchanged lockfile; Vite's own
// cache, node_modules/.vite, and others kept inside it, come with it),
// then the frameworks' own caches.
var CacheEntries = []CacheEntry{
	{Name: ".npm", Tmp: true, Path: ".npm", Store: true, Skip: []string{"_logs"}}, // npm_config_cache, set by the sandbox
	{Name: ".yarn-cache", Tmp: true, Path: ".yarn-cache", Env: "YARN_CACHE_FOLDER=%s/.yarn-cache", Store: true},
	// pnpm's store is $XDG_DATA_HOME/pnpm/store (npm warns about an
	// npm_config_store_dir it does not know).
	{Name: ".pnpm-store", Tmp: true, Path: ".local/share/pnpm", Env: "XDG_DATA_HOME=%s/.local/share", Store: true},
	{Name: "pip", Tmp: true, Path: ".cache/pip", Env: "PIP_CACHE_DIR=%s/.cache/pip"},
	// Keyed by the lockfile, or by package.json for a project without one
	// (the install then keeps what still satisfies its ranges).
	{Name: "node_modules", Path: "node_modules", Lockfiles: []string{"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "npm-shrinkwrap.json", "bun.lockb", "package.json"}},
	{Name: ".next/cache", Path: ".next/cache"},       // Next.js
	{Name: ".angular/cache", Path: ".angular/cache"}, // Angular CLI
	{Name: ".parcel-cache", Path: ".parcel-cache"},   // Parcel
}

// cacheManifest is manifest.json: what each stored entry holds.
type cacheManifest struct {
	Entries map[string]cacheRecord `json:"entries"`
}

type cacheRecord struct {
	Key     string    `json:"key,omitempty"` // lockfile hash for keyed entries
	Size    int64     `json:"size"`          // bytes unpacked
	Stored  int64     `json:"stored"`        // bytes of the tar.gz
	SavedAt time.Time `json:"savedAt"`
	Print   string    `json:"print,omitempty"`  // files, bytes and newest change of what was packed
	Format  string    `json:"format,omitempty"` // formatTar, or "" for gzip
}

// cacheFile names an entry's stored file: a tar, uncompressed (see
// cacheCompressor).
func cacheFile(dir, name string) string {
	return filepath.Join(dir, strings.NewReplacer("/", "_", ".", "").Replace(name)+".tar")
}

// gzipCacheFile names an entry's stored file as older versions wrote it,
// a gzip'd tar: still restored (unpackCache tells them apart by their
// first bytes), replaced by a plain one when the entry is saved again.
func gzipCacheFile(dir, name string) string {
	return cacheFile(dir, name) + ".gz"
}

// recordFile is the stored file of rec, the entry name's record.
func recordFile(dir, name string, rec cacheRecord) string {
	if rec.Format == formatTar {
		return cacheFile(dir, name)
	}
	return gzipCacheFile(dir, name)
}

// formatTar marks a record whose file is a plain tar (none: gzip'd, by
// an older version).
const formatTar = "tar"

func readManifest(dir string) cacheManifest {
	var m cacheManifest
	if b, err := os.ReadFile(filepath.Join(dir, "manifest.json")); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	if m.Entries == nil {
		m.Entries = map[string]cacheRecord{}
	}
	return m
}

// CacheSize returns the bytes the caches in dir take: its stored files,
// also those of the folders in it (a project's targets).
func CacheSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// lockKey hashes the first lockfile of e that exists in ws, as
// "<file>:<sha-256>" ("" if none).
func lockKey(ws string, e CacheEntry) string {
	root, err := os.OpenRoot(ws)
	if err != nil {
		return ""
	}
	defer root.Close()
	for _, name := range e.Lockfiles {
		f, err := root.Open(name)
		if err != nil {
			continue
		}
		h := sha256.New()
		io.WriteString(h, name+"\x00")
		_, err = io.Copy(h, io.LimitReader(f, 256<<20))
		f.Close()
		if err != nil {
			return ""
		}
		return name + ":" + hex.EncodeToString(h.Sum(nil))
	}
	return ""
}

// keyFile names the file the keyed entry name was keyed on
// ("package-lock.json", or "package.json" without a lockfile).
func (r *run) keyFile(name string) string {
	file, _, _ := strings.Cut(r.keys[name], ":")
	return file
}

// nodeIdentity names the Node.js builds run (the first node on the
// sandbox's PATH) by its size and modification time: it changes when the
// platform's Node is upgraded. "" when there is none.
var nodeIdentity = sync.OnceValue(func() string {
	for _, dir := range strings.Split(sandbox.Path, ":") {
		if fi, err := os.Stat(filepath.Join(dir, "node")); err == nil && fi.Mode().IsRegular() {
			return fmt.Sprintf("node:%d:%d", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return ""
})

// hasInstallScripts reports whether the package.json at the root of ws
// defines install-time scripts (preinstall, install, postinstall,
// prepare, …), which npm install runs, so it is not skipped; an
// unreadable package.json counts as having some (npm says what is wrong).
func hasInstallScripts(ws string) bool {
	var pkg struct {
		Scripts map[string]any `json:"scripts"`
	}
	if err := readPackage(ws, &pkg); errors.Is(err, fs.ErrNotExist) {
		return false
	} else if err != nil {
		return true
	}
	for _, name := range []string{"preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare", "dependencies"} {
		if _, ok := pkg.Scripts[name]; ok {
			return true
		}
	}
	return false
}

// cacheRoot returns the folder of the volume an entry lives under.
func (r *run) cacheRoot(e CacheEntry) string {
	if r.held {
		return r.heldRoot(e)
	}
	if e.Tmp {
		return r.vol.Tmp
	}
	return r.vol.Workspace
}

// sandboxTmp is the run's /tmp as its commands see it.
func (r *run) sandboxTmp() string {
	if r.p.Sandbox.Mode() == sandbox.ModeNone {
		return r.vol.Tmp
	}
	return "/tmp"
}

// cacheEnv points the tools at the cache folders.
func (r *run) cacheEnv() []string {
	var env []string
	for _, e := range CacheEntries {
		if e.Env != "" && e.Tmp {
			env = append(env, fmt.Sprintf(e.Env, r.sandboxTmp()))
		}
	}
	return env
}

// restoreCache unpacks the project's caches into the volume and logs what
// it restored; it reports whether node_modules was.
func (r *run) restoreCache() (nodeModules bool) {
	defer r.phases.since("restore", time.Now())
	dir := r.job.CacheDir
	if dir == "" {
		return false
	}
	// Keys are taken from the repository as cloned: the install may write
	// a lockfile (npm install without one does), which must not change them.
	for _, e := range CacheEntries {
		if len(e.Lockfiles) > 0 {
			r.keys[e.Name] = lockKey(r.vol.Workspace, e)
			if k := r.keys[e.Name]; k != "" && e.Name == "node_modules" {
				// Native modules are built for one Node: a new one
				// (the platform upgraded) installs afresh.
				r.keys[e.Name] = k + "+" + nodeIdentity()
			}
		}
	}
	if r.job.CacheUse != nil {
		defer r.job.CacheUse(r.bctx)()
	}
	m := readManifest(dir)
	from := "" // said in the log line when the caches are another target's
	if len(m.Entries) == 0 && r.job.CacheFallback != "" {
		if fm := readManifest(r.job.CacheFallback); len(fm.Entries) > 0 {
			m, dir, from = fm, r.job.CacheFallback, " from production"
		}
	}
	if len(m.Entries) == 0 {
		if ago := r.job.CacheEvictedAgo; ago > 0 {
			r.log.step(gantry.LevelInfo, "Build cache was removed "+daysAgo(ago)+" to free space; this build saves a new one")
		} else {
			r.log.step(gantry.LevelInfo, "No build cache yet: this build saves one for the next")
		}
		return false
	}
	if r.job.NoCache {
		r.log.step(gantry.LevelInfo, "Build cache skipped (deploy without cache): this build saves a new one")
		return false
	}
	start := time.Now()
	// With node_modules coming back, the install fetches nothing: the
	// package managers' stores stay where they are.
	// (Keyed by package.json alone, npm still asks for the packages'
	// metadata, which its cache answers: then it is restored.)
	// When the install is skipped (see run.skippable) nothing asks: the
	// stores are not needed either.
	modules := false
	for _, e := range CacheEntries {
		if rec, ok := m.Entries[e.Name]; ok && e.Name == "node_modules" && r.keys[e.Name] != "" && r.keys[e.Name] == rec.Key &&
			(r.skippable || !strings.HasPrefix(rec.Key, "package.json:")) {
			modules = true
		}
	}
	var done, skipped []string
	for _, e := range CacheEntries {
		rec, ok := m.Entries[e.Name]
		if !ok {
			continue
		}
		if e.Store && modules {
			r.kept[e.Name] = true
			continue
		}
		note := ""
		if len(e.Lockfiles) > 0 {
			if k := r.keys[e.Name]; k == "" || k != rec.Key {
				what := "lockfile changed"
				if file, _, _ := strings.Cut(k, ":"); file == "package.json" {
					what = "package.json changed"
				}
				skipped = append(skipped, e.Name+" ("+what+")")
				continue
			}
			note = ", lockfile unchanged"
			if file, _, _ := strings.Cut(rec.Key, ":"); file == "package.json" {
				note = ", package.json unchanged, no lockfile"
			}
		}
		uid, gid := r.job.UID, r.job.GID
		if uid == 0 {
			uid = r.p.Sandbox.UID()
		}
		if gid == 0 {
			gid = r.p.Sandbox.GID()
		}
		if err := r.unpack(e, recordFile(dir, e.Name, rec), uid, gid); err != nil {
			r.log.step(gantry.LevelWarning, fmt.Sprintf("Build cache: %s could not be restored (%v); building without it", e.Name, cacheErr(err)))
			continue
		}
		if e.Name == "node_modules" {
			nodeModules = true
		}
		r.restored[e.Name] = true
		done = append(done, fmt.Sprintf("%s (%s%s)", e.Name, formatSize(rec.Size), note))
	}
	if len(done) > 0 {
		line := fmt.Sprintf("Restored build cache%s: %s in %s", from, strings.Join(done, ", "), roundDuration(time.Since(start)))
		var kept []string
		for _, e := range CacheEntries {
			if r.kept[e.Name] {
				kept = append(kept, e.Name)
			}
		}
		if len(kept) > 0 {
			line += " (" + strings.Join(kept, ", ") + " not needed with node_modules)"
		}
		r.log.step(gantry.LevelInfo, line)
	}
	if len(skipped) > 0 {
		r.log.step(gantry.LevelInfo, "Build cache not restored: "+strings.Join(skipped, ", "))
	}
	return nodeModules
}

// daysAgo says how long ago, in whole days, ago was.
func daysAgo(ago time.Duration) string {
	switch n := int(ago / (24 * time.Hour)); n {
	case 0:
		return "less than a day ago"
	case 1:
		return "1 day ago"
	default:
		return fmt.Sprintf("%d days ago", n)
	}
}

// cacheErr keeps the platform's paths out of a user-facing line.
func cacheErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// MaxCachePacked bounds the bytes a build's saved caches hold unpacked
// (an entry that would pass it is not saved): packing runs outside the
// build's cgroup (in the helper, see helper.go), and an account's caches
// are bounded (2 GiB stored by default, deploy's cacheKeeper) anyway.
const MaxCachePacked = 2 << 30

// errCacheTooLarge: an entry passed what packCache was allowed to read.
var errCacheTooLarge = errors.New("cache too large")

// packTime bounds the packing (and the unpacking) of one cache entry: the
// helper runs in the idle class, and on a busy machine an entry not done
// by then is not saved (restored) rather than holding the deployment
// back.
const packTime = 2 * time.Minute

// pack packs the entry e into file in the helper process (see helper.go),
// reading at most limit bytes of its files.
func (r *run) pack(e CacheEntry, file string, limit int64) (size, stored int64, err error) {
	ctx, cancel := context.WithTimeout(r.ctx, packTime)
	defer cancel()
	res, err := runHelperJob(ctx, helperJob{Op: "pack", Base: r.cacheRoot(e), Rel: e.Path, Skip: e.Skip, File: file, Limit: limit})
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		// Killed halfway: its temporary file stays behind.
		tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".tmp-*"))
		for _, t := range tmps {
			os.Remove(t)
		}
		return 0, 0, fmt.Errorf("packing it took longer than %s", packTime)
	case err != nil:
		return 0, 0, err
	case res.NotExist:
		return 0, 0, fs.ErrNotExist
	case res.TooLarge:
		return 0, 0, errCacheTooLarge
	}
	return res.Size, res.Stored, nil
}

// unpack unpacks the entry e from file into the volume, owned by
// uid:gid, in the helper process (see helper.go); what an unpacking cut
// short left is removed.
func (r *run) unpack(e CacheEntry, file string, uid, gid uint32) error {
	ctx, cancel := context.WithTimeout(r.bctx, packTime)
	defer cancel()
	_, err := runHelperJob(ctx, helperJob{Op: "unpack", File: file, Base: r.cacheRoot(e), Rel: e.Path, UID: uid, GID: gid})
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("unpacking it took longer than %s", packTime)
	}
	// Killed halfway, the helper did not clean up after itself.
	if root, rerr := os.OpenRoot(r.cacheRoot(e)); rerr == nil {
		root.RemoveAll(e.Path)
		root.Close()
	}
	return err
}

// saveCache packs the cache folders the build left, replacing the
// target's caches, and logs what it saved. The packing runs in the helper
// process, in the idle classes (see helper.go).
func (r *run) saveCache() {
	defer r.phases.since("save", time.Now())
	dir := r.job.CacheDir
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		r.log.step(gantry.LevelWarning, "Build cache not saved: its folder could not be made")
		return
	}
	start := time.Now()
	old := readManifest(dir)
	m := cacheManifest{Entries: map[string]cacheRecord{}}
	var done []string
	var total, packed int64
	for _, e := range savingOrder() {
		if _, modules := m.Entries["node_modules"]; modules && e.Store {
			// node_modules is kept for this lockfile: its package
			// manager's store, which would only rebuild it, is not.
			continue
		}
		rec := cacheRecord{SavedAt: time.Now().UTC(), Format: formatTar}
		if len(e.Lockfiles) > 0 {
			if rec.Key = r.keys[e.Name]; rec.Key == "" {
				continue // no lockfile: nothing to key node_modules on
			}
			if prev, ok := old.Entries[e.Name]; ok && prev.Key == rec.Key && !r.job.NoCache && r.restored[e.Name] {
				// Restored from this very key: unchanged unless the install
				// changed it, which it does not for an unchanged lockfile.
				m.Entries[e.Name] = prev
				total += prev.Stored
				continue
			}
		}
		print := fingerprint(r.cacheRoot(e), e.Path, e.Skip)
		if prev, ok := old.Entries[e.Name]; ok && print != "" && prev.Print == print && r.restored[e.Name] && fileExists(recordFile(dir, e.Name, prev)) {
			// Restored and untouched (npm's cache after an install that
			// fetched nothing): no need to pack it again.
			m.Entries[e.Name] = prev
			total += prev.Stored
			continue
		}
		rec.Print = print
		size, stored, err := r.pack(e, cacheFile(dir, e.Name), MaxCachePacked-packed)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if errors.Is(err, errCacheTooLarge) {
			r.log.step(gantry.LevelWarning, fmt.Sprintf("Build cache: %s not saved (the caches a build saves hold at most %s)", e.Name, sandbox.FormatBytes(MaxCachePacked)))
			continue
		}
		if err != nil {
			r.log.step(gantry.LevelWarning, fmt.Sprintf("Build cache: %s could not be saved (%s)", e.Name, cacheErr(err)))
			continue
		}
		rec.Size, rec.Stored = size, stored
		packed += size
		m.Entries[e.Name] = rec
		total += stored
		done = append(done, fmt.Sprintf("%s (%s)", e.Name, formatSize(size)))
	}
	// Entries this build did not leave are dropped, and gzip'd files
	// packed again as plain tars.
	for name := range old.Entries {
		if rec, ok := m.Entries[name]; !ok {
			os.Remove(cacheFile(dir, name))
			os.Remove(gzipCacheFile(dir, name))
		} else if rec.Format == formatTar {
			os.Remove(gzipCacheFile(dir, name))
		}
	}
	b, _ := json.Marshal(m)
	if err := writeAtomic(filepath.Join(dir, "manifest.json"), func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		r.log.step(gantry.LevelWarning, "Build cache not saved: "+cacheErr(err))
		return
	}
	if len(done) > 0 {
		r.log.step(gantry.LevelInfo, fmt.Sprintf("Saved build cache: %s in %s (%s stored)", strings.Join(done, ", "), roundDuration(time.Since(start)), formatSize(total)))
	} else if len(m.Entries) > 0 {
		r.log.step(gantry.LevelInfo, fmt.Sprintf("Build cache unchanged (%s stored)", formatSize(total)))
	}
}

// savingOrder is CacheEntries, the package managers' stores last: they
// are saved only when node_modules is not.
func savingOrder() []CacheEntry {
	out := slices.Clone(CacheEntries)
	slices.SortStableFunc(out, func(a, b CacheEntry) int {
		switch {
		case a.Store == b.Store:
			return 0
		case a.Store:
			return 1
		}
		return -1
	})
	return out
}

// writeAtomic writes path through a temporary file renamed into place.
func writeAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// packCache writes the folder base/rel as a gzip'd tar to file and returns
// the bytes it holds and the bytes stored. Symlinks are stored as links,
// never followed; other special files are left out. fs.ErrNotExist when
// the folder is not there (or is no folder); errCacheTooLarge, and
// nothing written, when its files hold more than limit bytes.
func packCache(base, rel string, skip []string, file string, limit int64) (size, stored int64, err error) {
	root, err := os.OpenRoot(base)
	if err != nil {
		return 0, 0, err
	}
	defer root.Close()
	fi, err := root.Lstat(rel)
	if err != nil || !fi.IsDir() {
		return 0, 0, fs.ErrNotExist
	}
	err = writeAtomic(file, func(w io.Writer) error {
		zw, err := cacheCompressor(w)
		if err != nil {
			return err
		}
		defer zw.Close()
		tw := tar.NewWriter(zw)
		werr := fs.WalkDir(root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			name := strings.TrimPrefix(strings.TrimPrefix(p, rel), "/")
			if name == "" {
				name = "."
			}
			if d.IsDir() && slices.Contains(skip, name) {
				return fs.SkipDir
			}
			h := &tar.Header{Name: name, Mode: int64(fi.Mode().Perm()), ModTime: fi.ModTime(), Format: tar.FormatPAX}
			switch {
			case d.IsDir():
				h.Typeflag, h.Name = tar.TypeDir, name+"/"
			case d.Type()&fs.ModeSymlink != 0:
				target, err := root.Readlink(p)
				if err != nil {
					return err
				}
				h.Typeflag, h.Linkname = tar.TypeSymlink, target
			case d.Type().IsRegular():
				h.Typeflag, h.Size = tar.TypeReg, fi.Size()
				if size+h.Size > limit {
					return errCacheTooLarge
				}
			default:
				return nil
			}
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			if h.Typeflag != tar.TypeReg {
				return nil
			}
			f, err := root.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			n, err := io.Copy(tw, io.LimitReader(f, h.Size))
			size += n
			if err == nil && n < h.Size {
				err = io.ErrUnexpectedEOF
			}
			return err
		})
		if werr != nil {
			return werr
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return zw.Close()
	})
	if err != nil {
		return 0, 0, err
	}
	if fi, err := os.Stat(file); err == nil {
		stored = fi.Size()
	}
	return size, stored, nil
}

// cacheCompressor compresses what packCache writes: not at all. Measured
// on a Next.js app's node_modules (docs/architecture.md, "Build caches";
// TestMeasureCacheFormats), a plain tar on the local disk restores
// several times faster than gzip or zstd at any level, because restoring
// runs in the idle CPU class, where the CPU that decompressing takes is
// what a busy machine lacks; it costs about four times the disk, which
// the caches' own bounds (not the account's budget) hold. zstd'd and
// gzip'd files still restore (decompressor).
var cacheCompressor = func(w io.Writer) (io.WriteCloser, error) { return nopWriteCloser{w}, nil }

// nopWriteCloser is a plain tar's "compressor".
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// decompressor reads a zstd'd stream, or a gzip'd one (older versions'
// caches), told apart by their first bytes.
func decompressor(br *bufio.Reader) (io.ReadCloser, error) {
	magic, err := br.Peek(4)
	if err != nil {
		return nil, err
	}
	switch {
	case magic[0] == 0x1f && magic[1] == 0x8b:
		return gzip.NewReader(br)
	case string(magic) != "\x28\xb5\x2f\xfd":
		return io.NopCloser(br), nil // a plain tar
	}
	zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	return zr.IOReadCloser(), nil
}

// unpackCache unpacks file into base/rel, replacing what is there, every
// entry owned by uid:gid. It works through an os.Root at base: nothing the
// repository put there (a symlink named node_modules, say) can send a
// write outside it.
func unpackCache(file, base, rel string, uid, gid uint32) (err error) {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := decompressor(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return err
	}
	defer zr.Close()
	root, err := os.OpenRoot(base)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.RemoveAll(rel); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			root.RemoveAll(rel)
		}
	}()
	// The folders leading to rel, the user's.
	parts := strings.Split(rel, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		if err := root.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if fi, err := root.Lstat(p); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s is not a folder", p)
		}
		if err := root.Lchown(p, int(uid), int(gid)); err != nil {
			return err
		}
	}
	tr := tar.NewReader(zr)
	buf := make([]byte, 256<<10)
	type dirTime struct {
		p string
		t time.Time
	}
	var dirs []dirTime
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if name == "." && h.Typeflag == tar.TypeDir {
			dirs = append(dirs, dirTime{rel, h.ModTime})
			continue
		}
		if !fs.ValidPath(name) {
			return fmt.Errorf("bad entry %q", h.Name)
		}
		p := rel + "/" + name
		mode := fs.FileMode(h.Mode) & 0o777
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.Mkdir(p, mode|0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			dirs = append(dirs, dirTime{p, h.ModTime})
		case tar.TypeSymlink:
			if err := root.Symlink(h.Linkname, p); err != nil {
				return err
			}
		case tar.TypeReg:
			w, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			if err != nil {
				return err
			}
			_, err = io.CopyBuffer(w, io.LimitReader(tr, h.Size), buf)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			_ = root.Chtimes(p, h.ModTime, h.ModTime)
		default:
			continue
		}
		if err := root.Lchown(p, int(uid), int(gid)); err != nil {
			return err
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = root.Chtimes(dirs[i].p, dirs[i].t, dirs[i].t)
	}
	return nil
}

// dropTmpCaches removes the package managers' caches from the run's /tmp
// once they are saved: a server app keeps its volume, and needs none of
// them to run (the npm cache alone is often larger than the app).
func (r *run) dropTmpCaches() {
	if r.job.CacheDir == "" {
		return
	}
	if r.held {
		r.moveTmpCaches() // kept for the deferred save
		return
	}
	root, err := os.OpenRoot(r.vol.Tmp)
	if err != nil {
		return
	}
	defer root.Close()
	for _, e := range CacheEntries {
		if e.Tmp {
			_ = root.RemoveAll(e.Path)
		}
	}
}

// fingerprint sums up the folder base/rel — how many files and links, how
// many bytes, the newest modification — so that an untouched cache is not
// packed again; "" when it cannot be read.
func fingerprint(base, rel string, skip []string) string {
	root, err := os.OpenRoot(base)
	if err != nil {
		return ""
	}
	defer root.Close()
	var n, size, newest int64
	err = fs.WalkDir(root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if slices.Contains(skip, strings.TrimPrefix(strings.TrimPrefix(p, rel), "/")) {
				return fs.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		n++
		size += fi.Size()
		newest = max(newest, fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d", n, size, newest)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
