// Package blobs stores deployments' files by content: each distinct file
// of an account is one blob, named by the SHA-256 of its bytes, and each
// deployment has a manifest (path → blob, mode, size). A deployment's
// folder (a published site, or the tree a server app's workspace is made
// from) holds hard links to its blobs, so the edge and the runtime read
// real files in a real folder as before, and a file that did not change
// between two deployments, or that two projects share, takes its space
// once.
//
// An account's store is one folder on the data volume (hard links need
// the same filesystem as the deployments' folders):
//
//	objects/ab/cdef…   the blobs (…x: an executable one; …w: the account's
//	                    own, for server apps, see Owner), mode 0444 or 0555
//	manifests/<id>.json the deployments' manifests
//	tmp/                files being written
//	lock                flock(2): shared while a Session adds files,
//	                    exclusive while Sweep deletes
//	sweep-pending       a Sweep found the store busy (Pending)
//
// A blob is deleted when no manifest names it (Sweep, a mark and sweep).
// Sweep takes the lock exclusively, and a Session holds it shared from
// its first blob until it has written its manifest (or given up), so no
// blob a build may link is deleted under it; a process that dies drops
// its lock with it. What a crash leaves — files in tmp, blobs no manifest
// names yet — is garbage the next Sweep removes; a manifest whose
// deployment is gone is removed by whoever removes the deployment.
//
// Blobs are shared between deployments, so nothing may write them. A
// published site's belong to the platform, read-only; a server app's
// belong to the account's sandbox uid (Owner), but are never mounted into
// a sandbox as they are: the app sees them through an overlay, whose
// writes copy the file up into the app's own volume first (see
// sandbox.MountFiles and docs/architecture.md).
package blobs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Store is one account's blob store, the folder Dir.
type Store struct {
	Dir string
}

// Open returns the store of account userID under root (the data folder's
// blobs/).
func Open(root, userID string) *Store {
	return &Store{Dir: filepath.Join(root, userID)}
}

// Entry is one file of a manifest: its path (slash-separated, relative
// to the deployment's folder), the blob holding its bytes ("" for an empty
// file, or for one kept as a private copy when its blob had as many links
// as the filesystem allows), its mode and its size in bytes.
type Entry struct {
	Path string      `json:"path"`
	Blob string      `json:"blob,omitempty"`
	Mode fs.FileMode `json:"mode"`
	Size int64       `json:"size"`
	// Link is a symlink's target (Mode has fs.ModeSymlink); folders have
	// fs.ModeDir. Neither has a blob.
	Link string `json:"link,omitempty"`
}

// Manifest lists a deployment's files.
type Manifest struct {
	Deployment string  `json:"deployment"`
	Files      []Entry `json:"files"`
}

// Ref is one distinct blob a manifest names and the bytes it takes on
// disk (allocated blocks).
type Ref struct {
	Hash  string
	Bytes int64
}

// ErrBusy is Sweep's answer while a Session holds the store: it deletes
// nothing then, and the next Sweep does the work.
var ErrBusy = errors.New("blobs: a build is adding files to the store")

func (s *Store) objects() string   { return filepath.Join(s.Dir, "objects") }
func (s *Store) manifests() string { return filepath.Join(s.Dir, "manifests") }
func (s *Store) tmp() string       { return filepath.Join(s.Dir, "tmp") }
func (s *Store) manifest(id string) string {
	return filepath.Join(s.manifests(), id+".json")
}

// Path is where blob lives.
func (s *Store) Path(blob string) string {
	if len(blob) < 3 {
		return filepath.Join(s.objects(), "_", blob)
	}
	return filepath.Join(s.objects(), blob[:2], blob[2:])
}

// lock opens the store's lock file and takes it (how: unix.LOCK_SH or
// LOCK_EX, with LOCK_NB or not).
func (s *Store) lock(how int) (*os.File, error) {
	for _, d := range []string{s.Dir, s.objects(), s.manifests(), s.tmp()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("blobs: %w", err)
		}
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("blobs: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("blobs: lock: %w", err)
	}
	return f, nil
}

// Session adds files to a store for one deployment. It holds the store's
// lock shared until Close, so no Sweep runs meanwhile.
type Session struct {
	s    *Store
	lock *os.File
	dirs map[string]bool // object folders known to exist
}

// Owner makes a blob the account's own: owned by its sandbox uid and gid,
// writable by it (0644, 0755). A server app's workspace is an overlay
// over links to such blobs (see Ingest): the app may write to any of its
// files as before, and the overlay copies the file up into the app's
// volume first, so the blob itself is never written. Nil: the platform's,
// read-only (0444, 0555), as a published site's.
type Owner struct{ UID, GID int }

// Begin starts adding files to the store, waiting for a running Sweep.
func (s *Store) Begin() (*Session, error) {
	f, err := s.lock(unix.LOCK_SH)
	if err != nil {
		return nil, err
	}
	return &Session{s: s, lock: f}, nil
}

// Close ends the session.
func (w *Session) Close() error {
	if w.lock == nil {
		return nil
	}
	err := w.lock.Close() // drops the lock
	w.lock = nil
	return err
}

// blobMode is the mode of a blob: read-only unless the account owns it,
// executable when exec.
func blobMode(exec bool, o *Owner) fs.FileMode {
	m := fs.FileMode(0o444)
	if o != nil {
		m = 0o644
	}
	if exec {
		m |= 0o111
	}
	return m
}

// name is a blob's name: the hex SHA-256 of its bytes, with an x when it
// is executable and a w when the account owns it (mode and owner are the
// inode's, shared by every link).
func name(sum []byte, exec bool, o *Owner) string {
	n := hex.EncodeToString(sum)
	if exec {
		n += "x"
	}
	if o != nil {
		n += "w"
	}
	return n
}

// Copy reads in (a regular file) into the store and links its blob at
// dst, which must not exist; exec makes it an executable file (mode
// 0555, else 0444).
func (w *Session) Copy(in io.Reader, dst string, exec bool) (Entry, error) {
	return w.copy(in, dst, exec, nil)
}

// wholeFile is the size up to which a file is read whole before anything
// is written: one the store has already is then only linked.
const wholeFile = 1 << 20

func (w *Session) copy(in io.Reader, dst string, exec bool, o *Owner) (Entry, error) {
	e := Entry{Mode: 0o644}
	if exec {
		e.Mode = 0o755
	}
	buf, err := io.ReadAll(io.LimitReader(in, wholeFile+1))
	if err != nil {
		return e, err
	}
	if len(buf) == 0 { // nothing to share: an empty file of its own
		return e, writeNew(dst, e.Mode, o, func(f *os.File) error { return nil })
	}
	if len(buf) <= wholeFile {
		sum := sha256.Sum256(buf)
		e.Blob, e.Size = name(sum[:], exec, o), int64(len(buf))
		if ok, err := w.linkStored(&e, dst, false, o); ok || err != nil {
			return e, err
		}
		if err := writeNew(dst, blobMode(exec, o), o, func(f *os.File) error { _, err := f.Write(buf); return err }); err != nil {
			return e, err
		}
		return e, w.store(&e, dst, o)
	}
	h := sha256.New()
	err = writeNew(dst, blobMode(exec, o), o, func(f *os.File) error {
		h.Write(buf)
		if _, err := f.Write(buf); err != nil {
			return err
		}
		n, err := io.Copy(io.MultiWriter(f, h), in)
		e.Size = int64(len(buf)) + n
		return err
	})
	if err != nil {
		return e, err
	}
	e.Blob = name(h.Sum(nil), exec, o)
	return e, w.store(&e, dst, o)
}

// writeNew creates the file dst (which must not exist) with mode, owned
// by o when it is set, and writes it with write.
func writeNew(dst string, mode fs.FileMode, o *Owner, write func(*os.File) error) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = f.Chmod(mode) // whatever the umask took
	}
	if err == nil && o != nil {
		err = f.Chown(o.UID, o.GID)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}

// Adopt puts the file already written at path (on the store's filesystem)
// into the store: path becomes a link to its blob.
func (w *Session) Adopt(path string, exec bool) (Entry, error) {
	e := Entry{Mode: 0o644}
	if exec {
		e.Mode = 0o755
	}
	f, err := os.Open(path)
	if err != nil {
		return e, err
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	f.Close()
	if err != nil {
		return e, err
	}
	e.Blob, e.Size = name(h.Sum(nil), exec, nil), n
	if n == 0 {
		e.Blob = ""
		return e, nil
	}
	if ok, err := w.linkStored(&e, path, true, nil); ok || err != nil {
		return e, err
	}
	if err := os.Chmod(path, blobMode(exec, nil)); err != nil {
		return e, err
	}
	return e, w.store(&e, path, nil)
}

// objectDir makes sure the folder of blob's object exists (once per
// session).
func (w *Session) objectDir(obj string) error {
	d := filepath.Dir(obj)
	if w.dirs[d] {
		return nil
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		return fmt.Errorf("blobs: %w", err)
	}
	if w.dirs == nil {
		w.dirs = map[string]bool{}
	}
	w.dirs[d] = true
	return nil
}

// linkStored links e's blob at dst when the store has it, and reports
// whether it did. When dst exists (replace), the link replaces it in one
// step. A blob with as many links as the filesystem allows (65,000 on
// ext4) is not linked: dst gets a copy of its own (e.Blob "") unless it
// exists already.
func (w *Session) linkStored(e *Entry, dst string, replace bool, o *Owner) (bool, error) {
	obj := w.s.Path(e.Blob)
	fi, err := os.Lstat(obj)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("blobs: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && o != nil && (int(st.Uid) != o.UID || int(st.Gid) != o.GID) {
		// The account's uid changed since (a sandbox slot given back and
		// taken again): its blobs follow it.
		if err := os.Lchown(obj, o.UID, o.GID); err != nil {
			return false, fmt.Errorf("blobs: %w", err)
		}
	}
	to := dst
	if replace {
		to = dst + ".blob-link"
	}
	err = os.Link(obj, to)
	switch {
	case errors.Is(err, syscall.EMLINK):
		e.Blob = ""
		if replace {
			return true, os.Chmod(dst, e.Mode)
		}
		if err := copyPrivate(obj, dst, e.Mode); err != nil {
			return true, err
		}
		if o != nil {
			return true, os.Lchown(dst, o.UID, o.GID)
		}
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil // swept meanwhile: impossible under the session's lock, but harmless
	case err != nil:
		return true, fmt.Errorf("blobs: %w", err)
	}
	if replace {
		if err := os.Rename(to, dst); err != nil {
			os.Remove(to)
			return true, fmt.Errorf("blobs: %w", err)
		}
	}
	return true, nil
}

// store makes the file dst, just written with its blob's mode and owner,
// e's blob — or, when another session stored the same blob meanwhile,
// a link to that one.
func (w *Session) store(e *Entry, dst string, o *Owner) error {
	obj := w.s.Path(e.Blob)
	if err := w.objectDir(obj); err != nil {
		return err
	}
	err := os.Link(dst, obj)
	if errors.Is(err, fs.ErrExist) {
		_, err = w.linkStored(e, dst, true, o)
	}
	if err != nil {
		return fmt.Errorf("blobs: %w", err)
	}
	return nil
}

// Ingest copies the folder src into the store as the new folder dst:
// folders and symlinks recreated, regular files as links to blobs the
// account owns (o); other files are skipped. src is read through an
// os.Root, so nothing outside it is read. It returns the manifest's
// entries.
func (w *Session) Ingest(src, dst string, o Owner) ([]Entry, error) {
	root, err := os.OpenRoot(src)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var es []Entry
	err = fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		to := filepath.Join(dst, filepath.FromSlash(rel))
		fi, err := d.Info()
		if err != nil {
			return err
		}
		perm := fi.Mode().Perm()
		switch t := d.Type(); {
		case t.IsDir():
			if err := os.Mkdir(to, 0o700); err != nil && !(rel == "." && errors.Is(err, fs.ErrExist)) {
				return err
			}
			if rel == "." {
				return nil // the platform's own, 0700: the overlay gives the app its root
			}
			if err := os.Lchown(to, o.UID, o.GID); err != nil {
				return err
			}
			es = append(es, Entry{Path: rel, Mode: fs.ModeDir | perm})
			return os.Chmod(to, perm)
		case t&fs.ModeSymlink != 0:
			target, err := root.Readlink(rel)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
			es = append(es, Entry{Path: rel, Mode: fs.ModeSymlink | 0o777, Link: target})
			return os.Lchown(to, o.UID, o.GID)
		case t.IsRegular():
			in, err := root.Open(rel)
			if err != nil {
				return err
			}
			defer in.Close()
			e, err := w.copy(in, to, perm&0o111 != 0, &o)
			if err != nil {
				return err
			}
			e.Path = rel
			es = append(es, e)
		}
		return nil // sockets, fifos, devices: nothing to keep
	})
	return es, err
}

// copyPrivate copies src to a new file dst of mode.
func copyPrivate(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteManifest records the files of deployment id (replacing an earlier
// manifest of id), atomically: a reader finds the old one or the new one.
func (w *Session) WriteManifest(id string, files []Entry) error {
	b, err := json.Marshal(Manifest{Deployment: id, Files: files})
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(w.s.tmp(), "manifest-")
	if err != nil {
		return fmt.Errorf("blobs: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), w.s.manifest(id))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("blobs: manifest: %w", err)
	}
	return nil
}

// ReadManifest returns deployment id's manifest; fs.ErrNotExist when it
// has none (a deployment published before blobs, or removed).
func (s *Store) ReadManifest(id string) (*Manifest, error) {
	b, err := os.ReadFile(s.manifest(id))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("blobs: manifest %s: %w", id, err)
	}
	return &m, nil
}

// RemoveManifest forgets deployment id's files: its blobs go at the next
// Sweep when no other manifest names them. Missing is not an error.
func (s *Store) RemoveManifest(id string) error {
	if err := os.Remove(s.manifest(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Refs lists the distinct blobs of m and what each takes on disk, and the
// bytes of its files kept outside blobs (Private: empty files, copies).
func (s *Store) Refs(m *Manifest) (refs []Ref, private int64) {
	seen := map[string]bool{}
	for _, e := range m.Files {
		if e.Blob == "" {
			private += roundBlock(e.Size)
			continue
		}
		if seen[e.Blob] {
			continue
		}
		seen[e.Blob] = true
		n := roundBlock(e.Size)
		if fi, err := os.Lstat(s.Path(e.Blob)); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n = st.Blocks * 512
			}
		}
		refs = append(refs, Ref{Hash: e.Blob, Bytes: n})
	}
	return refs, private
}

// roundBlock is size rounded up to whole 4 KiB blocks.
func roundBlock(size int64) int64 { return (size + 4095) / 4096 * 4096 }

func (s *Store) pending() string { return filepath.Join(s.Dir, "sweep-pending") }

// Pending reports whether a Sweep found the store busy since the last one
// that ran: whoever ends a Session then sweeps.
func (s *Store) Pending() bool {
	_, err := os.Lstat(s.pending())
	return err == nil
}

// Swept is what a Sweep removed.
type Swept struct {
	Blobs int
	Bytes int64
}

// Sweep deletes the blobs no manifest names and what crashed sessions
// left in tmp. While a Session holds the store it deletes nothing and
// returns ErrBusy.
func (s *Store) Sweep() (Swept, error) {
	var out Swept
	if _, err := os.Stat(s.Dir); errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	lock, err := s.lock(unix.LOCK_EX | unix.LOCK_NB)
	if errors.Is(err, ErrBusy) {
		_ = os.WriteFile(s.pending(), nil, 0o600) // for the next Session's end (Pending)
	}
	if err != nil {
		return out, err
	}
	defer lock.Close()
	_ = os.Remove(s.pending())
	live := map[string]bool{}
	ms, err := os.ReadDir(s.manifests())
	if err != nil {
		return out, fmt.Errorf("blobs: %w", err)
	}
	for _, e := range ms {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		m, err := s.ReadManifest(id)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err // an unreadable manifest: delete nothing
		}
		for _, f := range m.Files {
			if f.Blob != "" {
				live[f.Blob] = true
			}
		}
	}
	err = filepath.WalkDir(s.objects(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(s.objects(), p)
		if live[strings.ReplaceAll(rel, string(filepath.Separator), "")] {
			return nil
		}
		var n int64
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n = st.Blocks * 512
			}
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		out.Blobs++
		out.Bytes += n
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("blobs: sweep: %w", err)
	}
	left, _ := os.ReadDir(s.tmp())
	for _, e := range left {
		os.RemoveAll(filepath.Join(s.tmp(), e.Name()))
	}
	return out, nil
}
