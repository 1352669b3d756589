package edge

import (
	"html"
	"net/http"
	"strconv"
	"strings"
)

// The edge's own pages.
const (
	pageNoApp            = iota // 404: no site at this subdomain
	pageStopped                 // 503: the site is stopped
	pageNotFound                // 404: nothing at this path of a live site without a 404.html
	pageUnavailable             // 502: the site has nothing to serve
	pageAppDown                 // 502: a server app did not answer (crashed, restarting)
	pageTimeout                 // 504: a server app took too long to answer
	pageTooLarge                // 413: a request body over the proxy's limit
	pageSlowBody                // 408: a request body that did not arrive within the upload timeout
	pageWaking                  // 503: a sleeping app is waking up (a browser that waited; reloads itself)
	pageWakeBusy                // 503: too many requests already wait for a sleeping app to wake
	pageWakeFailed              // 503: a sleeping app did not wake (Retry-After: when it is tried again)
	pageNoSite                  // 404: a host name the platform does not serve (no link, no name)
	pagePrivatePreview          // 401: a private repository's preview, asked without its owner's cookie (not GET)
	pagePreviewLink             // 403: a preview hand-off link that is not valid (any more)
	pageFilesUnavailable        // 503: a site's files are not on this server and could not be fetched (object store down)
	pageHomeUnreachable         // 503: a server app's home replica could not be reached, or the app is moving between replicas
)

// pageText holds each page's title, heading, sentence and link label;
// "{host}" is replaced by the (escaped) host name.
var pageText = [...]struct{ title, heading, body, link string }{
	pageNoApp: {
		"No app here yet", "No app lives at {host} yet",
		"Nothing has been deployed to this address. Deploy a project and it could be yours.",
		"Deploy on Gantry",
	},
	pageStopped: {
		"This app is stopped", "This app is stopped",
		"{host} is not running right now. Its owner can restart it from their Gantry dashboard.",
		"Go to Gantry",
	},
	pageNotFound: {
		"Page not found", "Page not found",
		"There is nothing at this address on {host}.",
		"Go to the home page",
	},
	pageUnavailable: {
		"App unavailable", "This app is not reachable",
		"{host} has nothing to serve right now. Try again in a moment.",
		"Go to Gantry",
	},
	pageAppDown: {
		"App not responding", "This app is not responding",
		"{host} is running on Gantry but did not answer. It may be starting or restarting: try again in a moment.",
		"Go to Gantry",
	},
	pageTimeout: {
		"App timed out", "This app took too long to answer",
		"{host} did not start answering in time. Try again in a moment.",
		"Go to Gantry",
	},
	pageTooLarge: {
		"Request too large", "This request is too large",
		"The upload or request body sent to {host} is larger than Gantry passes on to apps.",
		"Go to Gantry",
	},
	pageSlowBody: {
		"Request timed out", "This request took too long to arrive",
		"The upload or request body sent to {host} did not arrive in time. Check your connection and try again.",
		"Go to Gantry",
	},
	pageWaking: {
		"Waking up…", "Waking up…",
		"{host} was asleep after a quiet spell and is starting now. This page reloads by itself as soon as it can.",
		"Reload now",
	},
	pageHomeUnreachable: {
		"App moving", "This app is moving between servers",
		"{host} runs on another Gantry server that cannot be reached right now. If that server stopped, another one starts the app within a minute: try again in a moment.",
		"Go to Gantry",
	},
	pageWakeBusy: {
		"App waking up", "This app is waking up",
		"{host} was asleep and is starting; too many visitors are already waiting for it. Try again in a few seconds.",
		"Go to Gantry",
	},
	pageWakeFailed: {
		"App not started yet", "This app did not wake up yet",
		"{host} was asleep and did not start this time. It is tried again shortly: reload in a moment.",
		"Go to Gantry",
	},
	pageNoSite: {
		"No site here", "No site here",
		"This server has no site at this address.",
		"",
	},
	pagePrivatePreview: {
		"Private preview", "This preview is private",
		"{host} is a preview of a private repository: only its owner can open it, signed in to Gantry.",
		"Sign in to Gantry",
	},
	pagePreviewLink: {
		"Link expired", "This preview link has expired",
		"The sign-in link for {host} is valid for one minute and for this preview only. Open the preview again to get a new one.",
		"Go to Gantry",
	},
	pageFilesUnavailable: {
		"Temporarily unavailable", "This site is temporarily unavailable",
		"{host} is deployed, but this server could not load its files from storage just now. Try again in a minute.",
		"Go to Gantry",
	},
}

// wakingRefresh is how often the "Waking up…" page reloads itself, in
// seconds.
const wakingRefresh = 2

// pageHTML is the layout of every edge page: self-contained (no external
// requests), calm, readable in light and dark themes.
const pageHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">{head}<title>{title}</title>
<style>
:root{color-scheme:light dark;--bg:#fafafa;--fg:#18181b;--muted:#52525b;--card:#fff;--border:#e4e4e7;--accent:#4f46e5}
@media (prefers-color-scheme:dark){:root{--bg:#09090b;--fg:#fafafa;--muted:#a1a1aa;--card:#18181b;--border:#27272a;--accent:#818cf8}}
*{box-sizing:border-box}body{margin:0;min-height:100vh;display:grid;place-items:center;background:var(--bg);color:var(--fg);
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;padding:24px}
main{max-width:480px;width:100%;background:var(--card);border:1px solid var(--border);border-radius:16px;padding:32px}
.brand{font-weight:600;color:var(--muted);font-size:14px;letter-spacing:.02em}.code{font:600 13px ui-monospace,monospace;color:var(--muted)}
h1{font-size:22px;margin:12px 0 8px;overflow-wrap:anywhere}p{color:var(--muted);margin:0 0 24px}
a{display:inline-block;background:var(--accent);color:#fff;text-decoration:none;padding:8px 16px;border-radius:8px;font-weight:500}
a:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
.dots{display:inline-flex;gap:6px;margin:0 0 20px}.dots i{width:8px;height:8px;border-radius:50%;background:var(--accent);animation:b 1.2s infinite ease-in-out}
.dots i:nth-child(2){animation-delay:.2s}.dots i:nth-child(3){animation-delay:.4s}
@keyframes b{0%,80%,100%{opacity:.25}40%{opacity:1}}@media (prefers-reduced-motion:reduce){.dots i{animation:none}}
</style></head>
<body><main><div class="brand">{brand}<span class="code">{status}</span></div><h1>{heading}</h1><p>{body}</p>{extra}{a}</main></body></html>
`

// page writes one of the edge's own pages with status. host is escaped;
// the pages are never cached.
func (e *Edge) page(w http.ResponseWriter, r *http.Request, status, kind int, host string) {
	t := pageText[kind]
	href := e.platformURL
	head, extra := "", ""
	switch kind {
	case pageNotFound:
		href = "/"
	case pageWaking:
		// Reload the same address: the next try finds the app awake, or
		// waits again.
		href = r.URL.RequestURI()
		head = `<meta http-equiv="refresh" content="` + strconv.Itoa(wakingRefresh) + `">`
		extra = `<div class="dots" role="status" aria-label="Starting"><i></i><i></i><i></i></div><br>`
	}
	if href == "" {
		href = "/"
	}
	host = html.EscapeString(host)
	link, brand, title := "", "▲ Gantry ", t.title+" · Gantry"
	if kind == pageNoSite {
		// A name the platform does not serve is not told whose server this is.
		brand, title = "", t.title
	}
	if t.link != "" {
		link = `<a href="` + html.EscapeString(href) + `">` + t.link + `</a>`
	}
	body := strings.NewReplacer(
		"{head}", head,
		"{extra}", extra,
		"{title}", title,
		"{heading}", strings.ReplaceAll(t.heading, "{host}", host),
		"{body}", strings.ReplaceAll(t.body, "{host}", host),
		"{a}", link,
		"{brand}", brand,
		"{status}", strconv.Itoa(status),
	).Replace(pageHTML)
	h := w.Header()
	h["Content-Type"] = htmlType
	h["Cache-Control"] = noStore
	if kind == pageWaking || kind == pageWakeBusy {
		h["Retry-After"] = []string{strconv.Itoa(wakingRefresh)}
	}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(body))
	}
}
