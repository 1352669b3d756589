package load

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
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

// StartGantry serves site at bench.localhost on a loopback port as `gantry
// serve` does: the real top-level handler with the edge as live handler,
// behind the edge's event loops, which take the listener and hand what
// they do not answer to an http.Server with serve's settings. With a
// logFile, every request writes one slog text line there (the loops'
// batched per round of events); with "" nothing is logged. It returns the
// address it listens on.
func StartGantry(site edge.Site, logFile string) string {
	return startGantry(site, logFile, true, "127.0.0.1:0")
}

// GantryLoop is the event loops StartGantry started, for their Stats.
var GantryLoop *edge.Loop

// childEnv carries, to a benchmark re-executed by StartGantryOff, what to
// serve (JSON of gantryChild).
const childEnv = "GANTRY_BENCH_GANTRY_OFF"

type gantryChild struct {
	Site    edge.Site
	LogFile string
	Addr    string
}

// StartGantryOff serves site as StartGantry does but with the loops off
// (GANTRY_EDGE_LOOPS=off: the http.Server, with the edge's reverse proxy,
// serves the listener alone), in a process of its own — this benchmark
// re-executed, whose main calls ServeChild first — so that net/http's
// garbage and goroutines do not disturb the loops' runs in this process
// (as the floor's did). It returns the address and the process id, for
// TreeCPU; the process ends with the benchmark.
func StartGantryOff(site edge.Site, logFile string) (string, int) {
	addr := fmt.Sprintf("127.0.0.1:%d", FreePort())
	spec, err := json.Marshal(gantryChild{site, logFile, addr})
	Must(err)
	self, err := os.Executable()
	Must(err)
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	Must(cmd.Start())
	AtExit(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	WaitPort(addr)
	return addr, cmd.Process.Pid
}

// ServeChild serves what StartGantryOff asked for, forever, when this
// process is one it started; otherwise it returns at once. Call it first
// in main.
func ServeChild() {
	spec := os.Getenv(childEnv)
	if spec == "" {
		return
	}
	var c gantryChild
	Must(json.Unmarshal([]byte(spec), &c))
	startGantry(c.Site, c.LogFile, false, c.Addr)
	select {}
}

// startGantry serves site on addr, behind the loops or (loops false) with
// the http.Server alone.
func startGantry(site edge.Site, logFile string, loops bool, addr string) string {
	table := edge.NewTable()
	table.Set("bench", site)
	srv := api.NewServer()
	srv.PublicHost, srv.LiveDomain = "localhost", "localhost"
	live := edge.New("localhost", table, "http://localhost")
	srv.LiveHandler = live
	var logOut io.Writer // the loops' log lines (nil: none)
	if logFile != "" {
		f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		Must(err)
		h := api.NewTextHandler(f, nil)
		AtExit(func() { api.FlushLog(h); f.Close() })
		srv.Logger = slog.New(h)
		logOut = api.RequestLogWriter(h, f) // as gantry serve does
	} else {
		srv.Logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 1}))
	}
	ln, err := net.Listen("tcp", addr)
	Must(err)
	addr = ln.Addr().String()
	hs := HTTPServer(srv)
	if !loops {
		go hs.Serve(ln)
		return addr
	}
	loop, err := live.NewLoop(ln, edge.LoopOptions{
		IsLive:            srv.IsLiveHost,
		ClientIP:          srv.ClientIP,
		Log:               api.WriteRequestLine,
		NewLogHandler:     func(w io.Writer) slog.Handler { return api.NewTextHandler(w, nil) },
		LogOutput:         logOut,
		ReadHeaderTimeout: hs.ReadHeaderTimeout,
		IdleTimeout:       hs.IdleTimeout,
		MaxHeaderBytes:    hs.MaxHeaderBytes,
		Loops:             edge.ReserveLoopProcs(),
	})
	Must(err)
	GantryLoop = loop
	loop.Serve()
	go hs.Serve(loop.Listener())
	return addr
}

// StartNginx writes conf as dir/nginx.conf and starts nginx with it (the
// conf listens on port, on loopback), waits until it listens, and stops it
// at RunExit with SIGTERM, which takes its workers down too (a SIGKILL
// would leave them running without their master). It returns the
// master's pid.
func StartNginx(dir, conf string, port int) int {
	Must(os.MkdirAll(filepath.Join(dir, "tmp"), 0o755))
	Must(os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644))
	nginx := exec.Command("nginx", "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log"))
	nginx.Stderr = os.Stderr
	nginx.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} // nginx ends with the benchmark
	Must(nginx.Start())
	AtExit(func() { _ = nginx.Process.Signal(syscall.SIGTERM); _, _ = nginx.Process.Wait() })
	WaitPort(fmt.Sprintf("127.0.0.1:%d", port))
	return nginx.Process.Pid
}
