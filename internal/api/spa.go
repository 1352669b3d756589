package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// spaHandler serves the built React app. Every path that is not a file of
// the app gets index.html, so the client-side router can show it; a missing
// file under assets/ is a 404 instead (an old page asking for a hashed file
// that no longer exists must not get HTML). Files under assets/ carry
// content hashes in their names and are cached for a year; everything else
// (index.html first) is revalidated on every use with an ETag. Names
// starting with "." are never served. The GitHub callback page
// (/github-callback), whose address carries a bearer token until the app
// has read it, is answered with Referrer-Policy: no-referrer (no request
// the page makes, to any origin, names that address) and Cache-Control:
// no-store.
type spaHandler struct {
	fsys fs.FS

	mu    sync.Mutex
	files map[string]*spaFile // by name; read once, the FS is immutable
}

// spaFile is one file of the app, held in memory.
type spaFile struct {
	content []byte
	etag    string
}

func newSPAHandler(fsys fs.FS) *spaHandler {
	return &spaHandler{fsys: fsys, files: make(map[string]*spaFile)}
}

func (h *spaHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "index.html"
	}
	f := h.file(name)
	if f == nil {
		if strings.HasPrefix(name, "assets/") {
			http.Error(w, "Not found", http.StatusNotFound)
			return
		}
		name = "index.html"
		if f = h.file(name); f == nil {
			notBuilt(w)
			return
		}
	}
	switch {
	case strings.HasPrefix(name, "assets/"):
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	case strings.EqualFold(path.Clean("/"+r.URL.Path), callbackPage): // the app's routes ignore case
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-store")
	default:
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.Header().Set("ETag", f.etag)
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.content))
}

// file returns the regular file name of the app, or nil when there is none
// (or it is hidden).
func (h *spaHandler) file(name string) *spaFile {
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") {
			return nil
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if f, ok := h.files[name]; ok {
		return f
	}
	f := h.read(name)
	if f != nil {
		h.files[name] = f
	}
	return f
}

func (h *spaHandler) read(name string) *spaFile {
	file, err := h.fsys.Open(name)
	if err != nil {
		return nil
	}
	defer file.Close()
	if info, err := file.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil
	}
	content, err := io.ReadAll(file)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	sum := sha256.Sum256(content)
	return &spaFile{content: content, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

// notBuilt answers when the binary was built before the web app.
func notBuilt(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusServiceUnavailable)
	io.WriteString(w, `<!doctype html><meta charset="utf-8"><title>Gantry</title>`+
		`<p>Gantry's web app is not part of this build. Run <code>make build</code> and start <code>bin/gantry</code> again. The API is up at <code>/api</code>.</p>`)
}

// noDeploymentPage is the placeholder live handler's answer.
var noDeploymentPage = template.Must(template.New("404").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>No deployment here · Gantry</title>
<style>
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; background: #fafafa; color: #18181b; }
  main { max-width: 32rem; padding: 2rem; text-align: center; }
  .mark { font-weight: 700; letter-spacing: .02em; color: #4f46e5; }
  h1 { font-size: 1.5rem; margin: .75rem 0; }
  p { color: #52525b; line-height: 1.5; }
  code { font-family: ui-monospace, monospace; background: #f4f4f5; padding: .1rem .3rem; border-radius: .25rem; }
  @media (prefers-color-scheme: dark) { body { background: #09090b; color: #fafafa; } p { color: #a1a1aa; } code { background: #27272a; } }
</style>
</head>
<body>
<main>
  <div class="mark">Gantry</div>
  <h1>No deployment lives at this address</h1>
  <p>Nothing is deployed on <code>{{.}}</code> right now. If this is your project, deploy it from your Gantry dashboard.</p>
</main>
</body>
</html>
`))

// noDeployment is the live handler until the edge is wired: a 404 page.
func noDeployment(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		noDeploymentPage.Execute(w, hostName(r.Host))
	}
}
