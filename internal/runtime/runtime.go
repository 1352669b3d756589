// Package runtime supervises deployed server apps (Node, Python and other
// HTTP servers) on this machine.
//
// An app runs its start command with sh -c in its deployment's built
// workspace, under the sandbox (bubblewrap as an unprivileged user, its own
// cgroup with memory and process limits, no view of the platform's data or
// of other apps' files), with PORT and HOST set and the project's
// environment variables. It is reached on one loopback address of the host
// (App.Addr), which the edge proxies to.
//
// Start returns once the app answers HTTP on its port (any status counts):
// an app that exits first fails at once with its exit code and last output
// lines, one that never answers fails after Supervisor.StartTimeout. Once
// running, an app that exits is started again after a backoff (1 s, 2 s,
// 4 s … up to BackoffMax); after CrashLimit crashes within CrashWindow the
// supervisor gives up and reports it through Events.Failed. Stop ends the
// app's whole process tree: SIGTERM first, SIGKILL after StopGrace.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// Defaults of a Supervisor.
const (
	DefaultMemory       = 512 << 20 // bytes
	DefaultPids         = 256
	DefaultStartTimeout = 60 * time.Second
	DefaultStopGrace    = 10 * time.Second
	DefaultBackoffMin   = time.Second
	DefaultBackoffMax   = time.Minute
	DefaultCrashLimit   = 5
	DefaultCrashWindow  = 10 * time.Minute
)

// tailLines is how many of an app's last output lines a failure reports.
const tailLines = 10

// Events receives what happens to one app. Its methods are called from the
// supervisor's goroutines, one at a time per app, and must not block for
// long: the app's output waits while they run.
type Events interface {
	// Output is one line the app printed, without its line ending.
	Output(stream sandbox.Stream, line string)
	// Log is a line of the supervisor's about the app: a crash and its
	// restart, the app answering again. Level is gantry.LevelInfo,
	// LevelWarning or LevelError.
	Log(level, message string)
	// Failed says the supervisor gave up after crashes crashes within the
	// crash window; the app is not running any more. reason describes the
	// last crash ("exited with code 1").
	Failed(crashes int, reason string)
}

// Spec describes one app.
type Spec struct {
	// Name identifies the app in the platform's own log (the deployment id).
	Name string
	// Volume is the sandbox.Volume the app's build left (its workspace is
	// the app's /workspace, its tmp folder the app's /tmp, both bounded by
	// the volume's size); it is mounted again if it is not (after a
	// reboot). When it is empty, Dir is used instead.
	Volume string
	// Dir is the built workspace the app runs from (mounted read-write at
	// /workspace in the sandbox) when there is no Volume; it must be
	// prepared for the sandbox (sandbox.PrepareWorkspace).
	Dir string
	// Tmp is the folder mounted at /tmp when there is no Volume; empty: a
	// private tmpfs.
	Tmp string
	// Data is the app's persistent data folder, mounted at /data and named
	// by DATA_DIR (sandbox.Command.Data); empty: none.
	Data string
	// UID and GID are the account's own sandbox ids (zero: the sandbox's
	// default).
	UID, GID uint32
	// Command is the start command, run with sh -c, e.g. "npm start".
	Command string
	// Env holds the app's own "KEY=VALUE" variables. PORT and HOST are set
	// by the supervisor and cannot be overridden; NODE_ENV=production and
	// PYTHONUNBUFFERED=1 are set unless Env sets them.
	Env []string
	// Host is the Host header of the readiness check (the app's public
	// host, e.g. "shop.localhost:8080"); default: the app's address.
	Host string
	// Events receives the app's output and the supervisor's reports; nil
	// drops them.
	Events Events
}

// Supervisor starts and watches apps. Set its fields before the first New;
// zero fields take the defaults above. It is safe for concurrent use.
type Supervisor struct {
	// Sandbox runs the apps; required.
	Sandbox *sandbox.Sandbox
	// Memory is each app's memory limit in bytes (default 512 MiB).
	Memory int64
	// Pids is each app's limit on processes and threads (default 256).
	Pids int64
	// CPUs is each app's CPU quota, in CPUs (default 1: sandbox.Limits.CPUs).
	// An app also runs in the idle CPU class (or, on kernels without it,
	// weighs a tenth of a platform process: sandbox.Limits.CPUWeight), so
	// the edge and the API keep answering whatever it does.
	CPUs float64
	// StartTimeout bounds how long an app may take to answer HTTP after it
	// starts (default 60 s).
	StartTimeout time.Duration
	// StopGrace is how long Stop waits after SIGTERM before it SIGKILLs
	// what is left (default 10 s).
	StopGrace time.Duration
	// BackoffMin and BackoffMax bound the wait before a crashed app is
	// started again; it doubles with each crash in the window (defaults
	// 1 s and 1 min).
	BackoffMin, BackoffMax time.Duration
	// CrashLimit crashes within CrashWindow make the supervisor give up
	// (defaults 5 and 10 min).
	CrashLimit  int
	CrashWindow time.Duration
	// Logger receives the platform's own log lines; default slog.Default().
	Logger *slog.Logger

	mu    sync.Mutex
	ports map[int]bool
	apps  map[*App]bool
}

func (s *Supervisor) memory() int64 { return orDefault(s.Memory, DefaultMemory) }
func (s *Supervisor) pids() int64   { return orDefault(s.Pids, DefaultPids) }
func (s *Supervisor) startTimeout() time.Duration {
	return orDefault(s.StartTimeout, DefaultStartTimeout)
}
func (s *Supervisor) stopGrace() time.Duration   { return orDefault(s.StopGrace, DefaultStopGrace) }
func (s *Supervisor) backoffMin() time.Duration  { return orDefault(s.BackoffMin, DefaultBackoffMin) }
func (s *Supervisor) backoffMax() time.Duration  { return orDefault(s.BackoffMax, DefaultBackoffMax) }
func (s *Supervisor) crashLimit() int            { return orDefault(s.CrashLimit, DefaultCrashLimit) }
func (s *Supervisor) crashWindow() time.Duration { return orDefault(s.CrashWindow, DefaultCrashWindow) }

func (s *Supervisor) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func orDefault[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// New reserves a loopback port for the app described by spec and returns
// it, not started: call Start, and Stop when done (also after a failed
// Start it is harmless).
func (s *Supervisor) New(spec Spec) (*App, error) {
	if s.Sandbox == nil {
		return nil, errors.New("runtime: no sandbox")
	}
	if strings.TrimSpace(spec.Command) == "" {
		return nil, errors.New("runtime: no start command")
	}
	if spec.Volume != "" {
		v, err := s.Sandbox.AttachVolume(spec.Volume)
		if err != nil {
			return nil, fmt.Errorf("runtime: %w", err)
		}
		if err := s.Sandbox.Reown(v, spec.UID, spec.GID); err != nil {
			return nil, fmt.Errorf("runtime: %w", err)
		}
		// A workspace stored by content is an overlay of its files.
		if err := s.Sandbox.MountFiles(v, spec.UID, spec.GID); err != nil {
			return nil, fmt.Errorf("runtime: %w", err)
		}
		spec.Dir, spec.Tmp = v.Workspace, v.Tmp
	}
	if spec.Dir == "" {
		return nil, errors.New("runtime: no workspace")
	}
	port, err := s.reservePort()
	if err != nil {
		return nil, err
	}
	inner, err := appPort(s.Sandbox, port)
	if err != nil {
		s.release(&App{port: port})
		return nil, err
	}
	a := &App{sup: s, spec: spec, port: port, appPort: inner, stopc: make(chan struct{}), done: make(chan struct{})}
	s.mu.Lock()
	if s.apps == nil {
		s.apps = make(map[*App]bool)
	}
	s.apps[a] = true
	s.mu.Unlock()
	return a, nil
}

// Close stops every app the supervisor still runs, in parallel, each with
// its grace period. Their deployments are left as they are: the platform is
// shutting down, and they start again with it.
func (s *Supervisor) Close() error {
	s.mu.Lock()
	apps := make([]*App, 0, len(s.apps))
	for a := range s.apps {
		apps = append(apps, a)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, a := range apps {
		wg.Add(1)
		go func() { defer wg.Done(); a.Stop() }()
	}
	wg.Wait()
	return nil
}

// reservePort finds a free loopback port that no other app holds.
func (s *Supervisor) reservePort() (int, error) {
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("runtime: reserve a port: %w", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		s.mu.Lock()
		if s.ports == nil {
			s.ports = make(map[int]bool)
		}
		if !s.ports[port] {
			s.ports[port] = true
			s.mu.Unlock()
			return port, nil
		}
		s.mu.Unlock()
	}
	return 0, errors.New("runtime: no free loopback port")
}

func (s *Supervisor) release(a *App) {
	s.mu.Lock()
	delete(s.ports, a.port)
	delete(s.apps, a)
	s.mu.Unlock()
}

// StartError says why an app did not start. Message is the log line for the
// app's owner; Output holds the app's last lines of output, oldest first.
type StartError struct {
	Message string
	Output  []string
	Err     error // the underlying error, may be nil
}

func (e *StartError) Error() string { return e.Message }

// Unwrap returns the underlying error.
func (e *StartError) Unwrap() error { return e.Err }

// ErrStopped is returned by Start when Stop was called before the app was
// ready.
var ErrStopped = errors.New("runtime: the app was stopped")

// App is one supervised app.
type App struct {
	sup     *Supervisor
	spec    Spec
	port    int // the host loopback port the edge connects to
	appPort int // PORT inside the app's sandbox

	mu       sync.Mutex
	cur      *process // the running process, nil between crashes
	started  bool
	stopping bool
	stopc    chan struct{} // closed by Stop
	done     chan struct{} // closed once nothing runs and nothing will
	crashes  []time.Time
	tail     []string // the last tailLines lines of output
}

// Addr returns the loopback address the app answers on ("127.0.0.1:PORT").
func (a *App) Addr() string { return "127.0.0.1:" + strconv.Itoa(a.port) }

// Port returns the PORT the app was told to listen on.
func (a *App) Port() int { return a.appPort }

// Done is closed once the app has stopped for good: after Stop, a failed
// Start, or the supervisor giving up after repeated crashes.
func (a *App) Done() <-chan struct{} { return a.done }

// process is one run of the app's command.
type process struct {
	kill   context.CancelFunc // SIGKILLs the whole tree
	term   chan struct{}      // closed to ask the app to stop (SIGTERM)
	exited chan struct{}      // closed when the run is over
	res    sandbox.Result
	err    error
	start  time.Time
}

// Start runs the app and waits until it answers HTTP on its port, or fails
// with a *StartError: it exited first (its exit code and last output), or
// it did not answer within StartTimeout. Cancelling ctx or calling Stop
// kills it and returns ctx's error or ErrStopped. Once Start has
// succeeded the app is supervised until Stop: crashes restart it.
func (a *App) Start(ctx context.Context) error {
	a.mu.Lock()
	if a.started || a.stopping {
		a.mu.Unlock()
		return ErrStopped
	}
	a.started = true
	a.mu.Unlock()
	p := a.launch()
	if p == nil {
		a.finish()
		return ErrStopped
	}
	if err := a.waitReady(ctx, p); err != nil {
		p.kill()
		<-p.exited
		a.finish()
		return err
	}
	go a.supervise(p)
	return nil
}

// Stop stops the app for good: SIGTERM to its processes, SIGKILL to the
// whole tree after the grace period, and waits until nothing is left. It
// may be called more than once and at any time.
func (a *App) Stop() {
	a.mu.Lock()
	if !a.stopping {
		a.stopping = true
		close(a.stopc)
	}
	p, started := a.cur, a.started
	a.started = true // a Start after Stop does nothing
	a.mu.Unlock()
	if !started {
		a.finish()
		return
	}
	if p != nil {
		a.terminate(p)
	}
	<-a.done
}

// finish releases the app's port and closes done, once.
func (a *App) finish() {
	a.mu.Lock()
	select {
	case <-a.done:
		a.mu.Unlock()
		return
	default:
	}
	close(a.done)
	a.mu.Unlock()
	a.sup.release(a)
}

// terminate asks p to stop and kills it after the grace period.
func (a *App) terminate(p *process) {
	select {
	case <-p.exited:
		return
	default:
	}
	close(p.term)
	t := time.NewTimer(a.sup.stopGrace())
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		p.kill()
		<-p.exited
	}
}

// launch starts one run of the command, or returns nil when the app is
// being stopped.
func (a *App) launch() *process {
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{kill: cancel, term: make(chan struct{}), exited: make(chan struct{}), start: time.Now()}
	a.mu.Lock()
	if a.stopping {
		a.mu.Unlock()
		cancel()
		return nil
	}
	a.cur = p
	a.mu.Unlock()
	cmd := sandbox.Command{
		Args: []string{"sh", "-c", a.spec.Command},
		Dir:  a.spec.Dir,
		Tmp:  a.spec.Tmp,
		Data: a.spec.Data,
		UID:  a.spec.UID,
		GID:  a.spec.GID,
		Env:  a.env(),
		Limits: sandbox.Limits{
			Timeout:     -1, // apps run until stopped
			Memory:      a.sup.memory(),
			Pids:        a.sup.pids(),
			CPUs:        a.sup.CPUs, // zero: the sandbox's default
			OutputLines: -1,         // the deployment's log keeps a bounded number
			Nice:        -1,         // apps serve requests: no lowered priority
		},
		Output: a.output,
	}
	a.sandboxCommand(&cmd, p)
	go func() {
		defer cancel()
		defer close(p.exited)
		p.res, p.err = a.sup.Sandbox.Run(ctx, cmd)
	}()
	return p
}

// env is the app's environment: defaults, the spec's variables, then PORT
// and HOST.
func (a *App) env() []string {
	env := []string{"NODE_ENV=production", "PYTHONUNBUFFERED=1"}
	for _, kv := range a.spec.Env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PORT" || k == "HOST" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PORT="+strconv.Itoa(a.appPort), "HOST=0.0.0.0")
}

// output keeps the last lines for failure reports and passes each line on.
func (a *App) output(stream sandbox.Stream, line string) {
	a.mu.Lock()
	if len(a.tail) == tailLines {
		copy(a.tail, a.tail[1:])
		a.tail = a.tail[:tailLines-1]
	}
	a.tail = append(a.tail, line)
	a.mu.Unlock()
	if a.spec.Events != nil {
		a.spec.Events.Output(stream, line)
	}
}

func (a *App) lastOutput() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.tail...)
}

func (a *App) log(level, msg string) {
	if a.spec.Events != nil {
		a.spec.Events.Log(level, msg)
	}
}

// waitReady polls the app with HTTP requests until one is answered, p
// exits, the start timeout passes, ctx is cancelled or Stop is called. The
// polls start 10 ms apart and slow down to 100 ms: a small app answers
// within a few hundred milliseconds, and a request waiting for a sleeping
// app to wake should not wait a whole poll more.
func (a *App) waitReady(ctx context.Context, p *process) error {
	timeout := a.sup.startTimeout()
	deadline := time.Now().Add(timeout)
	every := 10 * time.Millisecond
	tick := time.NewTimer(every)
	defer tick.Stop()
	for {
		if a.probe(ctx, deadline) {
			return nil
		}
		select {
		case <-p.exited:
			return a.exitError(p, true)
		case <-ctx.Done():
			return ctx.Err()
		case <-a.stopc:
			return ErrStopped
		case <-tick.C:
			every = min(every*3/2, 100*time.Millisecond)
			tick.Reset(every)
		}
		if !time.Now().Before(deadline) {
			return &StartError{
				Message: fmt.Sprintf("App did not answer on port %d within %ds: make sure it listens on the PORT environment variable",
					a.appPort, int((timeout+time.Second-1)/time.Second)),
				Output: a.lastOutput(),
			}
		}
	}
}

// probeClient makes one request per connection, never through a proxy.
var probeClient = &http.Client{
	Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true, DisableCompression: true},
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// probe reports whether the app answers an HTTP request, whatever the status.
func (a *App) probe(ctx context.Context, deadline time.Time) bool {
	d := 5 * time.Second
	if left := time.Until(deadline); left < d {
		d = left
	}
	if d <= 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+a.Addr()+"/", nil)
	if err != nil {
		return false
	}
	if a.spec.Host != "" {
		req.Host = a.spec.Host
	}
	req.Header.Set("User-Agent", "Gantry-HealthCheck/1")
	resp, err := probeClient.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return true
}

// exitError describes how p ended, for a start-up failure (startup true)
// or a crash.
func (a *App) exitError(p *process, startup bool) *StartError {
	return &StartError{Message: describeExit(p, startup, a.appPort, a.sup.memory(), a.sup.pids()), Output: a.lastOutput(), Err: p.err}
}

func describeExit(p *process, startup bool, port int, memory, pids int64) string {
	var (
		me *sandbox.MemoryError
		pe *sandbox.PidsError
		ee *sandbox.ExitError
		se *sandbox.SetupError
	)
	when := ""
	if startup {
		when = " during start-up"
	}
	switch {
	case p.err == nil && startup:
		return fmt.Sprintf("App exited with code 0 before answering on port %d: its start command must keep a server running", port)
	case p.err == nil:
		return "App exited with code 0"
	case errors.As(p.err, &me):
		return fmt.Sprintf("App ran out of memory%s (limit %s)", when, sandbox.FormatBytes(memory))
	case errors.As(p.err, &pe):
		return fmt.Sprintf("App reached the limit of %d processes%s", pids, when)
	case errors.As(p.err, &se):
		return "App could not be started: the platform could not set up its sandbox (its network did not start); this is the platform's fault, not your app's, and starting it again is safe"
	case errors.As(p.err, &ee) && ee.Code == 127:
		return fmt.Sprintf("App exited with code 127%s (command not found)", when)
	case errors.As(p.err, &ee) && ee.Code > 128:
		return fmt.Sprintf("App exited with code %d%s (killed by signal %d)", ee.Code, when, ee.Code-128)
	case errors.As(p.err, &ee):
		return fmt.Sprintf("App exited with code %d%s", ee.Code, when)
	}
	return "App could not be run: " + p.err.Error()
}

// supervise waits for the running app to exit and starts it again after a
// backoff, until Stop or too many crashes.
func (a *App) supervise(p *process) {
	defer a.finish()
	for {
		<-p.exited
		a.mu.Lock()
		a.cur = nil
		stopping := a.stopping
		a.mu.Unlock()
		if stopping {
			return
		}
		reason := describeExit(p, false, a.appPort, a.sup.memory(), a.sup.pids())
		n := a.crashed()
		if n >= a.sup.crashLimit() {
			a.log(gantry.LevelError, fmt.Sprintf("%s; it crashed %d times within %s, so it was stopped", reason, n, formatWindow(a.sup.crashWindow())))
			a.sup.logger().Warn("app crash loop", "app", a.spec.Name, "crashes", n, "reason", reason)
			if a.spec.Events != nil {
				a.spec.Events.Failed(n, strings.TrimPrefix(reason, "App "))
			}
			return
		}
		delay := a.backoff(n)
		a.log(gantry.LevelError, fmt.Sprintf("%s; restarting in %s (crash %d of %d allowed within %s)",
			reason, delay, n, a.sup.crashLimit()-1, formatWindow(a.sup.crashWindow())))
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-a.stopc:
			t.Stop()
			return
		}
		if p = a.launch(); p == nil {
			return
		}
		go func(p *process) {
			if a.waitReady(context.Background(), p) == nil {
				a.log(gantry.LevelInfo, fmt.Sprintf("App restarted and answering on port %d", a.appPort))
			}
		}(p)
	}
}

// crashed records a crash and returns how many happened within the window.
func (a *App) crashed() int {
	now := time.Now()
	cut := now.Add(-a.sup.crashWindow())
	a.mu.Lock()
	defer a.mu.Unlock()
	kept := a.crashes[:0]
	for _, t := range a.crashes {
		if t.After(cut) {
			kept = append(kept, t)
		}
	}
	a.crashes = append(kept, now)
	return len(a.crashes)
}

// backoff is the wait before the restart that follows the n-th crash of the
// window: BackoffMin doubled n-1 times, at most BackoffMax.
func (a *App) backoff(n int) time.Duration {
	d := a.sup.backoffMin()
	for i := 1; i < n && d < a.sup.backoffMax(); i++ {
		d *= 2
	}
	return min(d, a.sup.backoffMax())
}

func formatWindow(d time.Duration) string {
	if d%time.Minute == 0 {
		m := int(d / time.Minute)
		if m == 1 {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", m)
	}
	return d.String()
}
