// Package edge serves deployed sites on <subdomain>.<live-domain>: static
// files from each deployment's published folder, chosen by the Host header,
// or, for server apps (Site.ProxyTarget), a reverse proxy to the app's
// process (see Edge.ConfigureProxy for its limits).
//
// For a live site the edge serves, for GET and HEAD only:
//
//   - the file at the request path; a folder serves its index.html (a path
//     to a folder without the trailing slash is redirected to it, 301);
//     an extension-less path that is not found tries path + ".html";
//   - for single-page apps (Site.SPA), /index.html (status 200) for any
//     other path that is not found and has no extension or is a browser
//     navigation (Accept: text/html, e.g. /users/jane.doe); a missing
//     /app.js stays a 404;
//   - otherwise the site's own /404.html with status 404, or a plain
//     Gantry 404 page.
//
// Responses carry a Content-Type from the file extension, a strong ETag
// (size, modification time and encoding), Last-Modified, and honour
// If-None-Match, If-Modified-Since and Range (via http.ServeContent).
// Precompressed siblings written at publish time (name.br, name.gz) are
// sent when the client accepts them (brotli first), with Content-Encoding
// and Vary: Accept-Encoding; never for Range requests. HTML is sent with
// Cache-Control: no-cache, fingerprinted assets (a hash in the file name,
// e.g. index-BFfRB1bB.js or app.3f9a2c1d.css) with public, max-age=31536000,
// immutable, and everything else with public, max-age=0, must-revalidate.
// Every response has X-Content-Type-Options: nosniff.
//
// What is sanitized: the request path is cleaned as an absolute path
// (Caddy's SanitizedPathJoin), so "..", "%2e%2e" and friends cannot climb
// above the site's root; paths holding a NUL byte or a backslash are
// refused (400); double-encoded sequences are never decoded twice; and
// every file is opened relative to the site's open folder with openat2
// RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS (or os.Root where openat2 is
// missing), so no path component and no symlink can resolve outside it
// (such paths are 404).
// Permission errors are 403, other file-system errors 500.
//
// Sites served from a Table have their folder kept open and their files of
// up to 128 KiB (with their .br and .gz variants) cached in memory with
// their headers, up to 64 MiB per cache generation; published files never
// change in place, and setting a site again starts a fresh cache for it.
// Other files are sent with sendfile(2); on an http.Server with
// ConnContext set, the connection is corked meanwhile (TCP_CORK), so that
// the header and the file leave in full-sized segments.
//
// Unknown subdomains get a Gantry 404 page ("No app lives at … yet"),
// stopped sites a 503 page ("This app is stopped"), and host names that
// are neither a subdomain nor a custom domain a plain 404 page ("No site
// here") that names neither the host nor the platform.
package edge

import (
	"errors"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deadline"
)

// Edge is the http.Handler for requests on the live domain.
type Edge struct {
	domain      string // e.g. "localhost"
	suffix      string // "." + domain
	platformURL string
	resolver    Resolver
	cache       *fileCache
	proxy       proxyState                  // server apps: see proxy.go
	domains     atomic.Pointer[customHosts] // custom domains: see domains.go
	wake        WakeConfig                  // sleeping apps: see sleep.go
	previews    PreviewGuard                // private previews: see previews.go
	fetcher     SiteFetcher                 // sites' files from the object store: see fetch.go
	hop         *forwarder                  // apps homed on other replicas: see forward.go
}

var _ http.Handler = (*Edge)(nil)

// New returns an Edge serving <sub>.domain from the sites r resolves.
// platformURL (e.g. "http://localhost:8080") is linked from the edge's own
// error pages. domain is matched case-insensitively, without a port.
func New(domain string, r Resolver, platformURL string) *Edge {
	domain = strings.TrimSuffix(strings.ToLower(domain), ".")
	return &Edge{domain: domain, suffix: "." + domain, platformURL: platformURL, resolver: r, cache: newFileCache()}
}

// Subdomain returns the single DNS label in front of the live domain in
// host ("app" for "App.localhost:8080"), and false when host is not a
// subdomain of it.
func (e *Edge) Subdomain(host string) (string, bool) {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	host = strings.TrimSuffix(host, ".")
	if len(host) <= len(e.suffix) || !strings.EqualFold(host[len(host)-len(e.suffix):], e.suffix) {
		return "", false
	}
	sub := host[:len(host)-len(e.suffix)]
	if len(sub) > 63 {
		return "", false
	}
	lower := true
	for i := 0; i < len(sub); i++ {
		c := sub[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
		case c >= 'A' && c <= 'Z':
			lower = false
		default:
			return "", false // dots (deeper names), underscores, anything else
		}
	}
	if !lower {
		sub = strings.ToLower(sub)
	}
	return sub, true
}

// ServeHTTP serves one request for a live site (see the package doc). A
// request body, proxied or not, must arrive whole within the proxy's
// UploadTimeout (deadline.Body).
func (e *Edge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 { // a body, or one of unknown length
		e.proxy.once.Do(func() { e.initProxy(ProxyConfig{}) })
		r = deadline.Body(w, r, e.proxy.cfg.UploadTimeout)
	}
	h := w.Header()
	h["X-Content-Type-Options"] = nosniff
	sub, ok := e.Subdomain(r.Host)
	if !ok {
		if sub, ok = e.customDomain(w, r); !ok {
			return
		}
	} else if !e.guardPreview(w, r, sub) {
		return
	}
	var site Site
	var root *siteRoot
	if rl, isTable := e.resolver.(rootLookup); isTable {
		site, root, ok = rl.lookupRoot(sub)
	} else {
		site, ok = e.resolver.Lookup(sub)
	}
	if !ok {
		e.page(w, r, http.StatusNotFound, pageNoApp, sub+e.suffix)
		return
	}
	if site.Status != gantry.DeploymentLive {
		e.page(w, r, http.StatusServiceUnavailable, pageStopped, sub+e.suffix)
		return
	}
	if site.Home != "" {
		e.hop.forward(e, w, r, site, sub)
		return
	}
	if site.App != nil {
		site.App.Touch(time.Now().UnixNano())
		if site.ProxyTarget == "" {
			e.serveAsleep(w, r, site, sub)
			return
		}
	}
	if site.ProxyTarget != "" {
		e.serveProxy(w, r, site.ProxyTarget, sub)
		return
	}
	if site.Dir == "" {
		e.page(w, r, http.StatusBadGateway, pageUnavailable, sub+e.suffix)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h["Allow"] = allowGetHead
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if site.Fetched != nil {
		site.Fetched.Store(time.Now().UnixNano())
		if root == nil && !e.fetchSite(w, r, site, sub) {
			return
		}
	}
	e.serveSite(w, r, site, root, sub)
}

// rootLookup is implemented by resolvers that keep sites' folders open
// (Table).
type rootLookup interface {
	lookupRoot(sub string) (Site, *siteRoot, bool)
}

// serveSite resolves the request path inside the site's folder.
func (e *Edge) serveSite(w http.ResponseWriter, r *http.Request, site Site, root *siteRoot, sub string) {
	p := r.URL.Path
	if strings.IndexByte(p, 0) >= 0 || strings.IndexByte(p, '\\') >= 0 {
		http.Error(w, "400 bad request", http.StatusBadRequest)
		return
	}
	rel := cleanPath(p)

	// The folder is opened here unless the resolver keeps it open; a kept
	// one closed meanwhile (the site was switched) is reopened. Only files
	// under a kept folder are cached in memory.
	var fd found
	var err error
	cacheable := root != nil
	if root != nil {
		fd, err = e.lookup(root, true, firstName(rel, p))
		if errors.Is(err, os.ErrClosed) {
			root, cacheable = nil, false
		}
	}
	if root == nil {
		root, err = openSiteRoot(site.Dir, false)
		if err != nil {
			e.fsError(w, r, err, sub)
			return
		}
		defer root.Close()
		fd, err = e.lookup(root, false, firstName(rel, p))
	}

	if rel == "." || strings.HasSuffix(p, "/") {
		// A folder: its index.html, looked up directly.
		if err == nil && fd.isDir() {
			fd.close()
			err = fs.ErrNotExist
		}
		if err == nil {
			rel = firstName(rel, p)
		}
	} else if err == nil && fd.isDir() {
		fd.close()
		if _, serr := root.Stat(rel + "/index.html"); serr == nil {
			redirectSlash(w, r, rel)
			return
		}
		err = fs.ErrNotExist
	} else if isNotFound(err) && path.Ext(rel) == "" {
		// Clean URLs: /about serves about.html.
		if fd, err = e.lookup(root, cacheable, rel+".html"); err == nil {
			rel += ".html"
		}
	}
	if isNotFound(err) && site.SPA && (path.Ext(rel) == "" || acceptsHTML(r)) {
		if fd, err = e.lookup(root, cacheable, "index.html"); err == nil {
			rel = "index.html"
		}
	}
	if err == nil && fd.isDir() {
		fd.close()
		err = fs.ErrNotExist
	}
	if isNotFound(err) {
		if site.Fetched != nil && e.fetcher != nil && !dirExists(site.Dir) {
			// Evicted from the site cache meanwhile: fetched again.
			if e.fetchSite(w, r, site, sub) {
				e.serveSite(w, r, site, nil, sub)
			}
			return
		}
		e.notFound(w, r, root, sub)
		return
	}
	if err != nil {
		e.fsError(w, r, err, sub)
		return
	}
	if fd.cf != nil {
		serveCached(w, r, fd.cf)
		return
	}
	defer fd.close()
	serveFile(w, r, root, rel, fd.f, fd.fi)
}

// found is a looked-up name: a file cached in memory, or an open file or
// folder.
type found struct {
	cf *cachedFile
	f  *os.File
	fi fs.FileInfo
}

func (fd found) isDir() bool { return fd.f != nil && fd.fi.IsDir() }

func (fd found) close() {
	if fd.f != nil {
		fd.f.Close()
	}
}

// lookup finds name in root: from the memory cache when cacheable, else by
// opening it; a small regular file opened this way is read into the cache.
func (e *Edge) lookup(root *siteRoot, cacheable bool, name string) (found, error) {
	if cacheable {
		if cf := e.cache.get(root, name); cf != nil {
			return found{cf: cf}, nil
		}
	}
	f, fi, err := open(root, name)
	if err != nil {
		return found{}, err
	}
	if cacheable && fi.Mode().IsRegular() && fi.Size() <= maxCachedFile {
		cf, err := loadCached(root, name, f, fi)
		f.Close()
		if err != nil {
			return found{}, err
		}
		e.cache.put(root, name, cf)
		return found{cf: cf}, nil
	}
	return found{f: f, fi: fi}, nil
}

// firstName is the file a request opens first: the index.html of a
// folder path (the root, or a path ending in "/"), else the path itself.
func firstName(rel, p string) string {
	if rel == "." {
		return "index.html"
	}
	if strings.HasSuffix(p, "/") {
		return rel + "/index.html"
	}
	return rel
}

// serveFile sends f (the file rel of root) with ServeContent, or one of
// its precompressed siblings.
func serveFile(w http.ResponseWriter, r *http.Request, root *siteRoot, rel string, f *os.File, fi fs.FileInfo) {
	h := w.Header()
	ext := path.Ext(rel)
	if ct := contentType(ext); ct != nil {
		h["Content-Type"] = ct
	}
	h["Cache-Control"] = cacheControl(rel, ext)

	var body io.ReadSeeker = f
	served, enc := fi, ""
	if compressible(ext) && fi.Size() >= minCompressSize {
		h["Vary"] = varyAcceptEncoding
		if _, ranged := r.Header["Range"]; !ranged {
			ae := r.Header.Get("Accept-Encoding")
			for _, v := range variants {
				if !accepts(ae, v.token) {
					continue
				}
				vf, vfi, err := open(root, rel+v.suffix)
				if err != nil {
					continue
				}
				if vfi.IsDir() {
					vf.Close()
					continue
				}
				defer vf.Close()
				body, served, enc = vf, vfi, v.token
				h["Content-Encoding"] = v.header
				// ServeContent leaves out Content-Length when an encoding
				// is set; the variant's size is the length sent.
				h["Content-Length"] = []string{strconv.FormatInt(vfi.Size(), 10)}
				break
			}
		}
	}
	h["Etag"] = []string{etag(served, enc)}
	if _, typed := h["Content-Type"]; !typed || isConditional(r) {
		// Sniffing the type, validators and ranges: ServeContent's work.
		http.ServeContent(w, r, "", fi.ModTime(), body)
		return
	}
	// A plain GET or HEAD: the whole file, the size known from its stat.
	h["Last-Modified"] = []string{fi.ModTime().UTC().Format(http.TimeFormat)}
	h["Content-Length"] = []string{strconv.FormatInt(served.Size(), 10)}
	h["Accept-Ranges"] = acceptRanges
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	sendFile(w, r, body, served.Size())
}

// sendFile sends the header and then size bytes of body, an open file,
// with sendfile(2) (through the connection's ReadFrom). Where the request's
// TCP connection is known (ConnContext), it is corked meanwhile, so that
// the header and the file leave together in full-sized segments rather
// than a packet for the header and many small ones, as nginx's tcp_nopush
// does.
func sendFile(w http.ResponseWriter, r *http.Request, body io.Reader, size int64) {
	if rc, ok := r.Context().Value(connKey{}).(syscall.RawConn); ok {
		setCork(rc, true)
		defer setCork(rc, false)
		w.WriteHeader(http.StatusOK)
		// The header goes into the corked socket now, so that net/http does
		// not read the file's first 512 bytes through user space to send
		// them along with it.
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	_, _ = io.CopyN(w, body, size)
}

// isConditional reports whether r carries a header that needs
// http.ServeContent: a range or a validator to check.
func isConditional(r *http.Request) bool {
	for _, k := range conditionalHeaders {
		if _, ok := r.Header[k]; ok {
			return true
		}
	}
	return false
}

// notFound sends the site's own 404.html with status 404, or Gantry's.
func (e *Edge) notFound(w http.ResponseWriter, r *http.Request, root *siteRoot, sub string) {
	f, fi, err := open(root, "404.html")
	if err != nil || fi.IsDir() {
		if err == nil {
			f.Close()
		}
		e.page(w, r, http.StatusNotFound, pageNotFound, sub+e.suffix)
		return
	}
	defer f.Close()
	h := w.Header()
	h["Content-Type"] = htmlType
	h["Cache-Control"] = noCache
	h["Content-Length"] = []string{strconv.FormatInt(fi.Size(), 10)}
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		_, _ = io.CopyN(w, f, fi.Size())
	}
}

// fsError maps a file-system error: missing → 404, permission → 403,
// anything else → 500.
func (e *Edge) fsError(w http.ResponseWriter, r *http.Request, err error, sub string) {
	switch {
	case isNotFound(err):
		e.page(w, r, http.StatusNotFound, pageNotFound, sub+e.suffix)
	case errors.Is(err, fs.ErrPermission):
		http.Error(w, "403 forbidden", http.StatusForbidden)
	default:
		http.Error(w, "500 internal server error", http.StatusInternalServerError)
	}
}

// open opens name in root and stats it.
func open(root *siteRoot, name string) (*os.File, fs.FileInfo, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// isNotFound reports whether err means "nothing servable there": missing,
// a file used as a folder, a name too long, or a path or symlink that
// would leave the site's folder (os.Root refuses those).
func isNotFound(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || errors.Is(err, syscall.EXDEV) ||
		errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ENAMETOOLONG) || errors.Is(err, syscall.ELOOP) {
		return true
	}
	// EXDEV is openat2's answer to a path leaving the folder; os.Root has
	// no exported error for it.
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err.Error() == "path escapes from parent"
}

// acceptsHTML reports whether the request is a browser navigation
// (Accept lists text/html), which a single-page app answers with its
// index.html even for a path with a dot in it (/users/jane.doe).
func acceptsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// cleanPath turns a request path into a slash-separated path relative to
// the site's root that cannot climb above it: "." for the root. It is
// Caddy's SanitizedPathJoin without the join: the path is cleaned as if
// absolute, so every ".." stops at the root.
func cleanPath(p string) string {
	if p == "" || p == "/" {
		return "."
	}
	if p[0] != '/' {
		p = "/" + p
	}
	c := path.Clean(p) // no allocation when p is clean already
	if c == "/" {
		return "."
	}
	return c[1:]
}

// redirectSlash redirects a folder requested without its trailing slash.
// The location is built from the cleaned path, so it is always a local
// path (never "//host").
func redirectSlash(w http.ResponseWriter, r *http.Request, rel string) {
	loc := (&url.URL{Path: "/" + rel + "/"}).EscapedPath()
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	w.Header()["Location"] = []string{loc}
	w.WriteHeader(http.StatusMovedPermanently)
}

// etag is a strong validator of one representation: size and modification
// time of the file sent, and its encoding. Published files are never
// changed in place, so these identify the content.
func etag(fi fs.FileInfo, enc string) string {
	return etagOf(fi.Size(), fi.ModTime().UnixNano(), enc)
}

// etagOf is etag from a file's size and modification time.
func etagOf(size, mtime int64, enc string) string {
	var b [64]byte
	s := append(b[:0], '"')
	s = strconv.AppendInt(s, size, 36)
	s = append(s, '-')
	s = strconv.AppendInt(s, mtime, 36)
	if enc != "" {
		s = append(s, '-')
		s = append(s, enc...)
	}
	s = append(s, '"')
	return string(s)
}

// Precompressed variants, in order of preference.
var variants = []struct {
	token, suffix string
	header        []string
}{
	{"br", ".br", []string{"br"}},
	{"gzip", ".gz", []string{"gzip"}},
}

// minCompressSize matches the build's threshold: smaller files have no
// precompressed variants.
const minCompressSize = 1024

// accepts reports whether the Accept-Encoding value ae accepts coding
// (with q > 0, or through "*").
func accepts(ae, coding string) bool {
	star := false
	for ae != "" {
		var item string
		item, ae, _ = strings.Cut(ae, ",")
		name, params, _ := strings.Cut(item, ";")
		name = strings.TrimSpace(name)
		exact := strings.EqualFold(name, coding)
		if exact || name == "*" {
			if qZero(params) {
				if exact {
					return false
				}
				continue
			}
			if exact {
				return true
			}
			star = true
		}
	}
	return star
}

// qZero reports whether params (after the coding's ";") set q=0.
func qZero(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && (k == "q" || k == "Q") {
			v = strings.TrimSpace(v)
			f, err := strconv.ParseFloat(v, 64)
			return err == nil && f == 0
		}
	}
	return false
}

// compressible reports whether files with extension ext may have
// precompressed variants (the build's list).
func compressible(ext string) bool {
	switch ext {
	case ".html", ".htm", ".css", ".js", ".mjs", ".cjs", ".json", ".svg", ".txt", ".xml",
		".map", ".wasm", ".webmanifest", ".ico", ".ttf", ".otf":
		return true
	}
	return false
}

// contentTypes holds the media types of common web files, shared by every
// response (never modified).
var contentTypes = map[string][]string{}

func init() {
	for ext, t := range map[string]string{
		".html": "text/html; charset=utf-8", ".htm": "text/html; charset=utf-8",
		".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
		".mjs": "text/javascript; charset=utf-8", ".cjs": "text/javascript; charset=utf-8",
		".json": "application/json", ".map": "application/json", ".svg": "image/svg+xml",
		".txt": "text/plain; charset=utf-8", ".xml": "application/xml", ".wasm": "application/wasm",
		".webmanifest": "application/manifest+json", ".png": "image/png", ".jpg": "image/jpeg",
		".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp", ".avif": "image/avif",
		".ico": "image/x-icon", ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf",
		".otf": "font/otf", ".pdf": "application/pdf", ".mp4": "video/mp4", ".webm": "video/webm",
		".mp3": "audio/mpeg",
	} {
		contentTypes[ext] = []string{t}
	}
}

// contentType returns the Content-Type header value for ext: the common
// web types from contentTypes, anything else from the mime package, nil
// when unknown (ServeContent then sniffs the content).
func contentType(ext string) []string {
	if ext == "" {
		return nil
	}
	if t, ok := contentTypes[ext]; ok {
		return t
	}
	if t, ok := contentTypes[strings.ToLower(ext)]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return []string{t}
	}
	return nil
}

// cacheControl picks the caching policy of a file.
func cacheControl(rel, ext string) []string {
	switch {
	case ext == ".html" || ext == ".htm":
		return noCache
	case fingerprinted(path.Base(rel)):
		return immutable
	}
	return revalidate
}

// fingerprinted reports whether a file name carries a content hash, as
// bundlers write them: a run of at least 8 characters of [A-Za-z0-9_-],
// after a '.' or '-' (or at the start), ending at a '.', that holds a
// digit and a letter and is either lower-case hex (webpack:
// app.3f9a2c1d.css) or mixed-case base64url (Vite: index-BFfRB1bB.js).
func fingerprinted(name string) bool {
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 {
		return false
	}
	stem := name[:dot]
	// Every '.'-separated segment of the stem, and each tail of it that
	// starts after a '-', is a candidate.
	for seg := range strings.SplitSeq(stem, ".") {
		for i := 0; i < len(seg); i++ {
			if i == 0 || seg[i-1] == '-' {
				if isHash(seg[i:]) {
					return true
				}
			}
		}
	}
	return false
}

func isHash(s string) bool {
	if len(s) < 8 || len(s) > 64 {
		return false
	}
	var digit, lower, upper, nonHex bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z':
			lower = true
			if c > 'f' {
				nonHex = true
			}
		case c >= 'A' && c <= 'Z':
			upper = true
		case c == '_' || c == '-':
			nonHex = true
		default:
			return false
		}
	}
	if !digit || !(lower || upper) {
		return false
	}
	if !upper && !nonHex {
		return true // lower-case hex
	}
	return upper && lower
}

// Header values shared by every response (never modified).
var (
	nosniff            = []string{"nosniff"}
	allowGetHead       = []string{"GET, HEAD"}
	varyAcceptEncoding = []string{"Accept-Encoding"}
	htmlType           = []string{"text/html; charset=utf-8"}
	noCache            = []string{"no-cache"}
	noStore            = []string{"no-store"}
	immutable          = []string{"public, max-age=31536000, immutable"}
	revalidate         = []string{"public, max-age=0, must-revalidate"}
)
