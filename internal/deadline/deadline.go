// Package deadline bounds how long a client may take to send a request
// body on a net/http server, so that a client trickling a byte at a time
// cannot hold a connection (and its handler) for as long as it likes.
//
// net/http's ReadHeaderTimeout covers only the request head, and its
// ReadTimeout covers the head, the body and whatever the handler does
// after, which would cut off long answers (event streams, an app's
// download, a repository lookup). Body instead sets the connection's read
// deadline when the handler starts; net/http lifts it at the body's end,
// when it starts watching the connection for the client leaving.
package deadline

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// ErrSlowBody is the error a body's Read returns once its deadline has
// passed. net/http then closes the connection after the answer.
var ErrSlowBody = errors.New("request body did not arrive in time")

// Body returns r with its body bounded: the whole body must arrive within
// d from now (http.ResponseController.SetReadDeadline). A Read still
// waiting at the deadline fails with ErrSlowBody; a body the handler never
// reads is discarded by net/http within the same deadline, or its
// connection closed. Once the body has been read to its end the handler
// may take as long as it likes.
//
// Requests without a body, a d of zero or less, and writers that cannot
// set deadlines (httptest.ResponseRecorder) get r back as it is.
func Body(w http.ResponseWriter, r *http.Request, d time.Duration) *http.Request {
	if d <= 0 || r.Body == nil || r.Body == http.NoBody {
		return r
	}
	if err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(d)); err != nil {
		return r
	}
	r2 := *r
	r2.Body = body{r.Body}
	return &r2
}

// body reports a read past the deadline as ErrSlowBody, which callers
// tell from other timeouts (an app's, proxying the request).
type body struct{ io.ReadCloser }

func (b body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		err = ErrSlowBody
	}
	return n, err
}
