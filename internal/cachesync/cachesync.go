// Package cachesync keeps projects' build caches in the object store
// (issue 26, point 4), so a build on any replica restores what the
// project's last build on another one saved. A cache target's folder
// (data/caches/<project>/<target>/: one tar per entry and manifest.json,
// see internal/build) is stored file by file, each file named by its
// SHA-256, and a pointer listing them, written last:
//
//	caches/<project>/<target>/<sha256>   a file's bytes
//	caches/<project>/<target>.json       the pointer: name, SHA-256 and size of each file
//
// A save uploads only the files that changed (node_modules' tar stays the
// same while the lockfile does), and a restore downloads a target only
// when its pointer differs from the one this replica last pushed or
// pulled (kept in the folder as .object), checking every file against its
// SHA-256. The local folders stay the caches' working copies, bounded as
// before (the cache keeper); a failed pull leaves them as they are.
package cachesync

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/gantryhq/gantry/internal/objstore"
)

// Marker is the file in a target's folder holding the pointer the folder
// was last pushed or pulled as.
const Marker = ".object"

// Sync keeps build caches in Store.
type Sync struct {
	Store objstore.Store
}

type pointer struct {
	Files []file `json:"files"`
}

type file struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// fileName is what a pointer may name: a plain file name of the folder.
var fileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// projectID is what a project id may be in a key.
var projectID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func checkProject(project string) error {
	if !projectID.MatchString(project) {
		return fmt.Errorf("build cache: %q is not a project id", project)
	}
	return nil
}

func pointerKey(project, target string) string { return "caches/" + project + "/" + target + ".json" }
func fileKey(project, target, sum string) string {
	return "caches/" + project + "/" + target + "/" + sum
}

// Push uploads the folder dir, project's cache target filepath.Base(dir):
// the files the store lacks, then the pointer; then it deletes the files
// only the previous pointer named. Unchanged since the last push or pull,
// it sends nothing but the checks.
func (s *Sync) Push(ctx context.Context, project, dir string) error {
	if err := checkProject(project); err != nil {
		return err
	}
	target := filepath.Base(dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var p pointer
	for _, e := range ents {
		if !e.Type().IsRegular() || e.Name() == Marker || !fileName.MatchString(e.Name()) {
			continue
		}
		sum, n, err := hashFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		p.Files = append(p.Files, file{Name: e.Name(), SHA256: sum, Size: n})
	}
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	old, _ := os.ReadFile(filepath.Join(dir, Marker))
	if bytes.Equal(old, body) {
		return nil
	}
	for _, f := range p.Files {
		key := fileKey(project, target, f.SHA256)
		if ok, err := s.Store.Has(ctx, key); err != nil {
			return err
		} else if ok {
			continue
		}
		if err := s.putFile(ctx, key, filepath.Join(dir, f.Name), f.SHA256); err != nil {
			return err
		}
	}
	if err := s.Store.Put(ctx, pointerKey(project, target), bytes.NewReader(body), sumOf(body)); err != nil {
		return err
	}
	var prev pointer
	if json.Unmarshal(old, &prev) == nil {
		var gone []string
		for _, f := range prev.Files {
			if sha256Hex.MatchString(f.SHA256) && !slices.ContainsFunc(p.Files, func(g file) bool { return g.SHA256 == f.SHA256 }) {
				gone = append(gone, fileKey(project, target, f.SHA256))
			}
		}
		if err := s.Store.Delete(ctx, gone...); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, Marker), body, 0o600)
}

func (s *Sync) putFile(ctx context.Context, key, path, sum string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return s.Store.Put(ctx, key, f, sum)
}

// Pull makes the folder dir hold project's cache target filepath.Base(dir)
// as the store has it, and reports whether it downloaded anything. A
// target the store does not have leaves dir as it is; a folder already
// at the store's pointer is not touched. The new folder is built aside,
// every file checked against its SHA-256, and swapped in whole.
func (s *Sync) Pull(ctx context.Context, project, dir string) (bool, error) {
	if err := checkProject(project); err != nil {
		return false, err
	}
	target := filepath.Base(dir)
	var buf bytes.Buffer
	if _, err := s.Store.Get(ctx, pointerKey(project, target), "", &buf); errors.Is(err, objstore.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	body := buf.Bytes()
	if old, err := os.ReadFile(filepath.Join(dir, Marker)); err == nil && bytes.Equal(old, body) {
		return false, nil
	}
	var p pointer
	if err := json.Unmarshal(body, &p); err != nil {
		return false, fmt.Errorf("build cache pointer %s: %w", pointerKey(project, target), err)
	}
	for _, f := range p.Files {
		if !fileName.MatchString(f.Name) || f.Name == Marker || !sha256Hex.MatchString(f.SHA256) {
			return false, fmt.Errorf("build cache pointer %s: bad entry %q: %w", pointerKey(project, target), f.Name, objstore.ErrCorrupt)
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return false, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".pull-"+target+"-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	for _, f := range p.Files {
		if err := s.getFile(ctx, fileKey(project, target, f.SHA256), filepath.Join(tmp, f.Name), f.SHA256); err != nil {
			return false, err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, Marker), body, 0o600); err != nil {
		return false, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, err
	}
	return true, os.Rename(tmp, dir)
}

func (s *Sync) getFile(ctx context.Context, key, path, sum string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = s.Store.Get(ctx, key, sum, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Drop deletes every cache of project from the store.
func (s *Sync) Drop(ctx context.Context, project string) error {
	if err := checkProject(project); err != nil {
		return err
	}
	keys, err := s.Store.List(ctx, "caches/"+project+"/")
	if err != nil {
		return err
	}
	return s.Store.Delete(ctx, keys...)
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
