package api

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/auth"
)

// requestPart is what every request goes through: who is signed in
// (requireUser, requireSession), which host and client it comes from
// (isLiveHost, isPublicHost, clientIP, previewLabel), the access log and
// panic recovery. Server embeds it.
type requestPart struct{ s *Server }

// userHandlerFunc is a handler for signed-in users: requireUser passes it
// the account the bearer token belongs to.
type userHandlerFunc func(w http.ResponseWriter, r *http.Request, u *gantry.User)

// sessionHandlerFunc is a handler that needs the session itself (signing
// out, changing the password): requireSession passes it.
type sessionHandlerFunc func(w http.ResponseWriter, r *http.Request, sess *auth.Session)

// requireUser wraps h so that it runs only with a valid bearer token of a
// live session of an existing, active account. Otherwise it answers 401
// (no, bad or expired token, an ended session, or a deleted account) or 403
// (a deactivated account).
func (rp requestPart) requireUser(h userHandlerFunc) http.HandlerFunc {
	s := rp.s
	return s.requireSession(func(w http.ResponseWriter, r *http.Request, sess *auth.Session) {
		h(w, r, sess.User)
	})
}

// requireSession is requireUser for handlers that need the session.
func (rp requestPart) requireSession(h sessionHandlerFunc) http.HandlerFunc {
	s := rp.s
	return func(w http.ResponseWriter, r *http.Request) {
		sess, err := s.currentSession(r)
		if err == nil && sess == nil {
			err = gantry.Errorf(gantry.EUNAUTHORIZED, auth.MsgSignIn)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		h(w, r, sess)
	}
}

// currentUser returns the account of the request's bearer token, nil and
// no error when the request carries no Authorization header (for public
// endpoints that answer differently to signed-in users), or the reason a
// token was refused. It asks the database each time, so a caller that
// calls it again (a long-lived stream) learns at once that the session
// was ended.
func (rp requestPart) currentUser(r *http.Request) (*gantry.User, error) {
	s := rp.s
	sess, err := s.currentSession(r)
	if sess == nil || err != nil {
		return nil, err
	}
	return sess.User, nil
}

// currentSession is currentUser with the session: the one place a request's
// bearer token is checked (auth.Service.Session).
func (rp requestPart) currentSession(r *http.Request) (*auth.Session, error) {
	s := rp.s
	header := r.Header.Get("Authorization")
	if header == "" {
		return nil, nil
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return nil, gantry.Errorf(gantry.EUNAUTHORIZED, auth.MsgSignIn)
	}
	// A database that takes the connection but never answers (cut off,
	// frozen) would hold every signed-in call for as long as it lasts.
	ctx, cancel := context.WithTimeout(r.Context(), SessionTimeout)
	defer cancel()
	sess, err := s.Accounts.Session(ctx, strings.TrimSpace(token))
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && r.Context().Err() == nil {
		return nil, databaseAway(err)
	}
	return sess, err
}

// SessionTimeout bounds the check of a request's bearer token, one
// indexed query: past it the database is taken as unreachable (503
// MsgDatabaseAway).
const SessionTimeout = 10 * time.Second

// responseWriter records the status and size of an answer for the request
// log. It keeps http.Flusher and, through Unwrap, http.ResponseController
// working for streaming handlers.
type responseWriter struct {
	http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
}

func (w *responseWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// ReadFrom lets io.Copy hand files to the connection's ReadFrom, which
// uses sendfile(2): without it every file the edge serves would be copied
// through user space.
func (w *responseWriter) ReadFrom(r io.Reader) (int64, error) {
	w.wroteHeader = true
	var n int64
	var err error
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(w.ResponseWriter, r)
	}
	w.bytes += n
	return n, err
}

// Flush sends buffered data to the client.
func (w *responseWriter) Flush() {
	w.wroteHeader = true
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack hands the connection to the handler. Here that is the edge
// tunnelling a WebSocket (or another upgrade) whose 101 answer it writes on
// the bare connection, so the request line logs 101, not the 200 nobody
// sent. http.ResponseController finds this method before Unwrap.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && !w.wroteHeader {
		w.status, w.wroteHeader = http.StatusSwitchingProtocols, true
	}
	return c, brw, err
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequest writes the one log line of a request: method, host, path,
// status, duration, bytes and client IP, at level INFO (ERROR for a 5xx
// answer). It runs on every request, live sites' included, so it is kept
// cheap: nothing is built when the logger would drop the line, and the
// record goes straight to the handler, without the caller's program
// counter that slog.Logger's methods capture (so a handler with AddSource
// shows no source for these lines).
func (rp requestPart) logRequest(r *http.Request, w *responseWriter, start time.Time) {
	s := rp.s
	if !s.Logger.Handler().Enabled(r.Context(), logLevel(w.status)) {
		return
	}
	s.writeLogLine(r.Context(), r.Method, r.Host, logPath(r), w.status, time.Since(start), w.bytes, s.clientIP(r))
}

// hookSegment is what precedes a deploy hook token in a path, matched
// without regard to case or to the path's /api prefix, so that a token
// sent to a misspelt or unclean path (which the mux redirects or answers
// 404) is found too.
const hookSegment = "/hooks/deploy/"

// hookToken splits a request path that carries a deploy hook token (a
// credential) around it: the cleaned path up to the token, the token, and
// what follows it. ok is false for a path without one.
func hookToken(p string) (before, token, after string, ok bool) {
	c := path.Clean("/" + p)
	for i := 0; i+len(hookSegment) <= len(c); i++ {
		if !strings.EqualFold(c[i:i+len(hookSegment)], hookSegment) {
			continue
		}
		rest := c[i+len(hookSegment):]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			token, after = rest[:j], rest[j:]
		} else {
			token = rest
		}
		return c[:i+len(hookSegment)], token, after, token != ""
	}
	return "", "", "", false
}

// minRedactedToken is the shortest deploy hook token redact replaces in
// free text (real ones have 43 characters): a shorter one was never a
// credential, and replacing it would garble the text.
const minRedactedToken = 16

// logPath is r's path as every log line names it: a deploy hook's token is
// replaced by [token].
func logPath(r *http.Request) string {
	if before, _, after, ok := hookToken(r.URL.Path); ok {
		return before + "[token]" + after
	}
	return r.URL.Path
}

// redact returns text (an error, a panic's value) with the deploy hook
// token of r's path replaced by [token], for the log lines that describe
// a request (logPath is its path). Every line the server logs about a
// request goes through these two.
func redact(r *http.Request, text string) string {
	if _, token, _, ok := hookToken(r.URL.Path); ok && len(token) >= minRedactedToken {
		return strings.ReplaceAll(text, token, "[token]")
	}
	return text
}

func (rp requestPart) writeLogLine(ctx context.Context, method, host, path string, status int, d time.Duration, bytes int64, ip string) {
	s := rp.s
	writeRequestLine(ctx, s.Logger.Handler(), method, host, path, status, d, bytes, ip)
}

// logLevel is a request line's level: ERROR for a 5xx answer, else INFO.
func logLevel(status int) slog.Level {
	if status >= 500 {
		return slog.LevelError
	}
	return slog.LevelInfo
}

// WriteRequestLine writes the log line of a request answered outside
// ServeHTTP (by the edge's event loops) to h, in the same form as
// ServeHTTP's.
func WriteRequestLine(h slog.Handler, method, host, path string, status int, d time.Duration, bytes int64, ip string) {
	if h == nil {
		return
	}
	writeRequestLine(context.Background(), h, method, host, path, status, d, bytes, ip)
}

func writeRequestLine(ctx context.Context, h slog.Handler, method, host, path string, status int, d time.Duration, bytes int64, ip string) {
	level := logLevel(status)
	if !h.Enabled(ctx, level) {
		return
	}
	now := time.Now()
	if th, ok := h.(*textHandler); ok && th.writeRequestLine(now, level, method, host, path, status, d, bytes, ip) {
		return
	}
	rec := slog.NewRecord(now, level, "request", 0)
	rec.AddAttrs(
		slog.String("method", method),
		slog.String("host", host),
		slog.String("path", path),
		slog.Int("status", status),
		slog.Duration("duration", d),
		slog.Int64("bytes", bytes),
		slog.String("ip", ip),
	)
	_ = h.Handle(ctx, rec)
}

// recoverPanic turns a handler's panic into a logged 500 answer. The
// http.ErrAbortHandler sentinel is passed on.
func (rp requestPart) recoverPanic(w *responseWriter, r *http.Request) {
	s := rp.s
	v := recover()
	if v == nil {
		return
	}
	if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
		panic(v)
	}
	s.Logger.ErrorContext(r.Context(), "panic", "method", r.Method, "path", logPath(r),
		"panic", redact(r, fmt.Sprint(v)), "stack", redact(r, string(debug.Stack())))
	if !w.wroteHeader {
		writeEnvelope(w, http.StatusInternalServerError, envelope{Message: "Internal error."})
	}
	w.status = http.StatusInternalServerError
}
