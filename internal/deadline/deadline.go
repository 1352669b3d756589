// Package deadline bounds how long a client may take to send a request
// body on a net/http server, so that a client trickling a byte at a time
// cannot hold a connection (and its handler) for as long as it likes.
//
// net/http's ReadHeaderTimeout covers only the request head, and its
// ReadTimeout covers the head, the body and whatever the handler does
// after, which would cut off long answers (event streams, an app's
// download, a repository lookup). Body instead sets the connection's read
// deadline when the handler starts and lifts it once the body has been
// read to its end.
package deadline

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// ErrSlowBody is the error a body's Read returns once its deadline has
// passed. net/http then closes the connection after the answer.
var ErrSlowBody = errors.New("request body did not arrive in time")

// Body returns r with its body bounded: the whole body must arrive within
// d from now. It sets the connection's read deadline
// (http.ResponseController.SetReadDeadline) and lifts it as soon as the
// body has been read to its end, so what the handler does after (a long
// answer, a clone) is not cut off, and net/http's watch for the client
// leaving keeps working. A Read still waiting at the deadline fails with
// ErrSlowBody; a body the handler never reads is discarded by net/http
// within the same deadline, or the connection is closed.
//
// Requests without a body, a d of zero or less, and writers that cannot
// set deadlines (httptest.ResponseRecorder) get r back as it is. Call the
// returned function when the handler has returned: after it the deadline
// is left to net/http, which sets its own for the next request.
func Body(w http.ResponseWriter, r *http.Request, d time.Duration) (*http.Request, func()) {
	if d <= 0 || r.Body == nil || r.Body == http.NoBody {
		return r, noop
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
		return r, noop
	}
	b := &body{ReadCloser: r.Body, rc: rc, set: true}
	r2 := *r
	r2.Body = b
	return &r2, b.done
}

func noop() {}

// body lifts the read deadline at its end, unless the handler has
// returned: then the connection may already be reading the next request,
// whose deadline is net/http's.
type body struct {
	io.ReadCloser
	rc  *http.ResponseController
	mu  sync.Mutex
	set bool // the deadline is ours to lift
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.mu.Lock()
		if b.set {
			b.set = false
			_ = b.rc.SetReadDeadline(time.Time{})
		}
		b.mu.Unlock()
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = ErrSlowBody
	}
	return n, err
}

// done ends b's hold on the deadline.
func (b *body) done() {
	b.mu.Lock()
	b.set = false
	b.mu.Unlock()
}
