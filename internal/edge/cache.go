package edge

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strconv"
	"sync"
	"time"
)

// Memory cache limits: files up to maxCachedFile bytes (and their
// precompressed variants) are kept in memory, up to cacheGeneration bytes
// per generation (so at most twice that in all).
const (
	maxCachedFile   = 128 << 10
	cacheGeneration = 64 << 20
)

// fileCache keeps small published files in memory with their response
// headers ready, so that serving them costs no system call but the write.
//
// Published files never change in place: each deployment has its own
// folder, and Table opens a new os.Root whenever a site is set. Entries are
// keyed by that os.Root and the file's name, so they never go stale; those
// of replaced sites simply age out. Eviction is by generation: when the
// current map is full it becomes the previous one (looked up and promoted
// from) and the one before is dropped.
type fileCache struct {
	mu       sync.RWMutex
	cur, old map[cacheKey]*cachedFile
	curBytes int64
}

type cacheKey struct {
	root *siteRoot
	name string
}

// cachedFile is one file and its precompressed variants.
type cachedFile struct {
	plain        representation
	br, gz       *representation // nil when there is none
	contentType  []string
	cacheControl []string
	vary         bool // variants may exist: Vary: Accept-Encoding
}

// representation is one encoding of a file with its header values.
type representation struct {
	data         []byte
	modTime      time.Time
	etag         []string
	length       []string
	lastModified []string
	encoding     []string // Content-Encoding; nil for the identity
}

func newFileCache() *fileCache {
	return &fileCache{cur: make(map[cacheKey]*cachedFile)}
}

func (c *fileCache) get(root *siteRoot, name string) *cachedFile {
	k := cacheKey{root, name}
	c.mu.RLock()
	cf := c.cur[k]
	var old *cachedFile
	if cf == nil && c.old != nil {
		old = c.old[k]
	}
	c.mu.RUnlock()
	if old != nil {
		c.put(root, name, old)
		return old
	}
	return cf
}

func (c *fileCache) put(root *siteRoot, name string, cf *cachedFile) {
	n := cf.bytes()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.curBytes+n > cacheGeneration {
		c.old, c.cur, c.curBytes = c.cur, make(map[cacheKey]*cachedFile), 0
	}
	if _, ok := c.cur[cacheKey{root, name}]; !ok {
		c.curBytes += n
	}
	c.cur[cacheKey{root, name}] = cf
}

func (cf *cachedFile) bytes() int64 {
	n := int64(len(cf.plain.data))
	for _, r := range []*representation{cf.br, cf.gz} {
		if r != nil {
			n += int64(len(r.data))
		}
	}
	return n + 256
}

// loadCached reads f (the regular file name of root, described by fi) and
// its precompressed variants into a cachedFile.
func loadCached(root *siteRoot, name string, f *os.File, fi fs.FileInfo) (*cachedFile, error) {
	plain, err := readRep(f, fi, "")
	if err != nil {
		return nil, err
	}
	ext := path.Ext(name)
	cf := &cachedFile{plain: *plain, contentType: contentType(ext), cacheControl: cacheControl(name, ext)}
	if cf.contentType == nil {
		cf.contentType = []string{http.DetectContentType(plain.data)}
	}
	if compressible(ext) && fi.Size() >= minCompressSize {
		cf.vary = true
		for _, v := range variants {
			vf, vfi, err := open(root, name+v.suffix)
			if err != nil {
				continue
			}
			if vfi.Mode().IsRegular() && vfi.Size() <= maxCachedFile {
				if r, err := readRep(vf, vfi, v.token); err == nil {
					r.encoding = v.header
					if v.token == "br" {
						cf.br = r
					} else {
						cf.gz = r
					}
				}
			}
			vf.Close()
		}
	}
	return cf, nil
}

func readRep(f *os.File, fi fs.FileInfo, enc string) (*representation, error) {
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return &representation{
		data:         data,
		modTime:      fi.ModTime(),
		etag:         []string{etag(fi, enc)},
		length:       []string{strconv.FormatInt(fi.Size(), 10)},
		lastModified: []string{fi.ModTime().UTC().Format(http.TimeFormat)},
	}, nil
}

// conditionalHeaders are the request headers that need http.ServeContent.
var conditionalHeaders = []string{"Range", "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"}

// serveCached sends a cached file: directly for a plain GET or HEAD, with
// http.ServeContent for conditional and Range requests.
func serveCached(w http.ResponseWriter, r *http.Request, cf *cachedFile) {
	h := w.Header()
	h["Content-Type"] = cf.contentType
	h["Cache-Control"] = cf.cacheControl
	rep := &cf.plain
	_, ranged := r.Header["Range"]
	if cf.vary {
		h["Vary"] = varyAcceptEncoding
		if !ranged && (cf.br != nil || cf.gz != nil) {
			ae := r.Header.Get("Accept-Encoding")
			if cf.br != nil && accepts(ae, "br") {
				rep = cf.br
			} else if cf.gz != nil && accepts(ae, "gzip") {
				rep = cf.gz
			}
		}
	}
	if rep.encoding != nil {
		h["Content-Encoding"] = rep.encoding
	}
	h["Etag"] = rep.etag
	if isConditional(r) {
		if rep.encoding != nil {
			h["Content-Length"] = rep.length // ServeContent leaves it out when encoded
		}
		http.ServeContent(w, r, "", rep.modTime, bytes.NewReader(rep.data))
		return
	}
	h["Last-Modified"] = rep.lastModified
	h["Content-Length"] = rep.length
	h["Accept-Ranges"] = acceptRanges
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(rep.data)
	}
}

var acceptRanges = []string{"bytes"}
