package load

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/edge"
)

// HTTPServer returns an http.Server for h with the settings of `gantry
// serve` (timeouts, header limit, the edge's ConnContext).
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ConnContext:       edge.ConnContext,
	}
}

// ServeGantry serves srv (whose LiveHandler is live) on ln as `gantry
// serve` does: the edge's event loops take the listener and hand what they
// do not answer to an http.Server with serve's settings. The loops write
// their log lines (slog text) to logOut, or none when it is nil.
func ServeGantry(srv *api.Server, live *edge.Edge, ln net.Listener, logOut io.Writer) {
	hs := HTTPServer(srv)
	loop, err := live.NewLoop(ln, edge.LoopOptions{
		IsLive:            srv.IsLiveHost,
		Log:               api.WriteRequestLine,
		NewLogHandler:     func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) },
		LogOutput:         logOut,
		ReadHeaderTimeout: hs.ReadHeaderTimeout,
		IdleTimeout:       hs.IdleTimeout,
		MaxHeaderBytes:    hs.MaxHeaderBytes,
	})
	Must(err)
	loop.Serve()
	go hs.Serve(loop.Listener())
}
