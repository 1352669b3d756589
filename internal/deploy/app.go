package deploy

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/runtime"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// apps is the deploy service's apps capability: it runs the server apps
// of live deployments from their workspaces, stops and drains them, puts
// idle ones to sleep and wakes them.
type apps struct {
	*core
	*AppsConfig
	release *release // a crashed app fails; a woken one is routed
	storage *storage // volumes are measured as apps stop
	mu      sync.Mutex
	runs    map[string]*appRun // server apps running, by deployment id
	appWG   sync.WaitGroup     // apps being restored or drained in the background
	// appLocks serialise each app's sleep and wake (sleep.go).
	appLocks map[string]*sync.Mutex
	hinted   map[string]bool // deployments a wake hint is waking
	// wakeGate holds the failed wakes in a row and the slots of wakes
	// under way (wake.go), made once (wakeOnce).
	wakeGate *wakeGate
	wakeOnce sync.Once
	place    *placer // each app's home node among replicas (placement.go)
}

// Defaults of the service's server apps.
const (
	DefaultDrainTimeout    = 10 * time.Second
	DefaultRuntimeLogLimit = 2000
)

// Drainer is implemented by Sites that can tell when no request is being
// proxied to an app address any more (edge.Table).
type Drainer interface {
	Drain(ctx context.Context, addr string)
}

// appRun is a server app the service runs for one deployment.
type appRun struct {
	id      string // its deployment
	userID  string // its owner
	project string // its project
	data    string // its data folder's name (gantry.DataFolderName), "" without one
	app     *runtime.App
	logs    *appLog
	started time.Time // when it answered (s.mu): its idle time counts from here until a request comes
	preview bool      // a preview's app: it sleeps after PreviewIdle
	// answered is set (s.mu) once the app answered: one still starting is
	// never idle, however long its start takes.
	answered bool
}

// IsApp reports whether d is a server app: it has a start command, and the
// runtime runs it from its workspace rather than the edge serving files.
func IsApp(d *gantry.Deployment) bool { return d.IsApp() }

func (s *AppsConfig) drainTimeout() time.Duration {
	if s.DrainTimeout > 0 {
		return s.DrainTimeout
	}
	return DefaultDrainTimeout
}

func (s *AppsConfig) runtimeLogLimit() int {
	if s.RuntimeLogLimit > 0 {
		return s.RuntimeLogLimit
	}
	return DefaultRuntimeLogLimit
}

// startApp starts d's app from its workspace with the project's current
// environment variables, registered as d's app (replacing and stopping one
// registered before), and waits until it answers HTTP. route, when not
// nil, is called once the app is registered, before it starts (the
// platform's restart routes the subdomain at once, so visitors see
// "starting" rather than "no app"). The error's message is what the owner
// reads; the app's last output lines are logged before it returns.
func (s *apps) startApp(ctx context.Context, d *gantry.Deployment, route func()) (*appRun, error) {
	if s.Apps == nil {
		return nil, gantry.Errorf(gantry.EUNAVAILABLE, "This Gantry does not run server apps: set an output directory to publish the site statically")
	}
	uid, err := s.sandboxUID(ctx, d.UserID)
	if err != nil {
		return nil, err
	}
	spec := runtime.Spec{Name: d.ID, Volume: s.WorkDir(d.ID), UID: uid, GID: uid}
	if _, err := os.Stat(spec.Volume + ".img"); err != nil {
		// No volume: built in mode none, or by a version before volumes.
		spec.Volume, spec.Dir = "", s.WorkDir(d.ID)
		if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
			return nil, gantry.Errorf(gantry.EINVALID, "The built app of this deployment is gone: deploy the project again")
		}
	}
	release := func() {}
	if spec.Volume != "" {
		// Sized and registered under the account's lock: the next of the
		// account's apps to start counts this one's writable space as
		// taken (sizeAppVolume).
		l := s.appLock("account " + d.UserID)
		l.Lock()
		var once sync.Once
		release = func() { once.Do(l.Unlock) }
		defer release()
		s.storage.sizeAppVolume(ctx, d, spec.Volume)
	}
	data := ""
	if s.Apps.Sandbox != nil {
		if s.place.on() {
			// Among replicas the folder may have been made on another node.
			snapshots{s.storage}.restoreLatest(ctx, d, uid)
		}
		if _, spec.Data, err = s.storage.openData(ctx, d, uid); err != nil {
			s.logger().Error("open data folder", "deployment", d.ID, "err", err)
			return nil, gantry.Errorf(gantry.EUNAVAILABLE, "The app's data folder (%s) could not be opened on this server: deploy again in a minute", gantry.DataMount)
		}
		data = gantry.DataFolderName(d)
	}
	vars, secrets, err := s.buildEnv(ctx, d.ProjectID, targetOf(d), d.Metadata.Fork)
	if err != nil {
		return nil, err
	}
	env := make([]string, 0, len(vars))
	for _, v := range vars {
		env = append(env, v.Key+"="+v.Value)
	}
	host := ""
	if u, err := url.Parse(d.URL); err == nil {
		host = u.Host
	}
	lg := s.newAppLog(d.ID, secrets)
	ev := &appEvents{s: s, id: d.ID, logs: lg}
	spec.Command, spec.Env, spec.Host, spec.Events = d.BuildInfo.StartCommand, env, host, ev
	app, err := s.Apps.New(spec)
	if err != nil {
		lg.close()
		return nil, fmt.Errorf("start app: %w", err)
	}
	run := &appRun{id: d.ID, userID: d.UserID, project: d.ProjectID, data: data, app: app, logs: lg,
		started: time.Now(), preview: d.IsPreview()}
	go func() { <-app.Done(); lg.close() }()
	old := s.swapApp(d.ID, run)
	release()
	if old != nil {
		s.stopRun(old, false)
	}
	if route != nil {
		route()
	}
	s.log(ctx, d.ID, gantry.LevelInfo, gantry.LogDeployment, fmt.Sprintf("Starting the app: %s (PORT=%d)", d.BuildInfo.StartCommand, app.Port()))
	start := time.Now()
	if err := app.Start(ctx); err != nil {
		s.takeApp(d.ID, run)
		app.Stop()
		lg.close() // its output is stored before the lines below
		var se *runtime.StartError
		if !errors.As(err, &se) {
			return nil, err
		}
		var out []string
		var seqs []int64
		if len(se.Output) > 0 {
			s.log(ctx, d.ID, gantry.LevelError, gantry.LogDeployment, "Last output of the app:")
			for _, l := range se.Output {
				l = redact(l, secrets)
				out = append(out, l)
				seqs = append(seqs, s.logSeq(ctx, d.ID, gantry.LevelError, gantry.LogDeployment, "  "+l))
			}
		}
		// Why it failed, from its last lines: recorded, and logged.
		if diag := startDiagnosis(se, out, seqs); diag != nil {
			s.saveDiagnosis(ctx, d, diag)
			s.log(ctx, d.ID, gantry.LevelError, gantry.LogDeployment, "Why it failed: "+diag.Title+". "+diag.Detail)
		}
		return nil, gantry.Errorf(gantry.EINVALID, "%s", redact(se.Message, secrets))
	}
	s.log(ctx, d.ID, gantry.LevelInfo, gantry.LogDeployment, fmt.Sprintf("App answered on port %d after %s", app.Port(), roundStartup(time.Since(start))))
	s.mu.Lock()
	run.started = time.Now() // its idle time counts from its first answer
	run.answered = true
	s.mu.Unlock()
	if err := s.Store.SetSleeping(context.WithoutCancel(ctx), d.ID, false); err != nil && gantry.ErrorCode(err) != gantry.ENOTFOUND {
		s.logger().Error("set awake", "deployment", d.ID, "err", err)
	}
	return run, nil
}

func roundStartup(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// swapApp registers run as id's app and returns the one it replaces.
func (s *apps) swapApp(id string, run *appRun) *appRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs == nil {
		s.runs = make(map[string]*appRun)
	}
	old := s.runs[id]
	s.runs[id] = run
	return old
}

// appRun returns id's registered app, or nil.
func (s *apps) appRun(id string) *appRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id]
}

// takeApp unregisters id's app and returns it; with want set, only when it
// is that one.
func (s *apps) takeApp(id string, want *appRun) *appRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	run := s.runs[id]
	if run == nil || want != nil && run != want {
		return nil
	}
	delete(s.runs, id)
	return run
}

// stopOwnApp stops run, id's app, unless another run replaced it: a
// go-live that lost its race ends only the app it started.
func (s *apps) stopOwnApp(id string, run *appRun) {
	if s.takeApp(id, run) != nil {
		s.stopRun(run, false)
	}
}

// stopApp stops id's app if it runs. With drain, requests the edge is
// still proxying to it may finish first (at most DrainTimeout): the app
// was just replaced by a newer one.
func (s *apps) stopApp(id string, drain bool) {
	if run := s.takeApp(id, nil); run != nil {
		s.stopRun(run, drain)
	}
}

func (s *apps) stopRun(run *appRun, drain bool) {
	if d, ok := s.Sites.(Drainer); ok && drain {
		ctx, cancel := context.WithTimeout(context.Background(), s.drainTimeout())
		d.Drain(ctx, run.app.Addr())
		cancel()
	}
	run.app.Stop()
	run.logs.close()
	s.storage.measureApp(context.Background(), run.id) // what it wrote counts from now on
	if run.data != "" {
		s.storage.measureData(context.Background(), run.project, run.data)
	}
}

// stopAppLater drains and stops id's app in the background; Close waits
// for it.
func (s *apps) stopAppLater(id string) {
	run := s.takeApp(id, nil)
	if run == nil {
		return
	}
	s.appWG.Add(1)
	go func() {
		defer s.appWG.Done()
		s.stopRun(run, true)
		s.log(context.Background(), id, gantry.LevelInfo, gantry.LogDeployment, "App stopped: a newer deployment serves the subdomain")
	}()
}

// closeApps stops every app for the platform's shutdown, leaving their
// deployments live: the next Open starts them again.
func (s *apps) closeApps() {
	s.appWG.Wait()
	s.mu.Lock()
	runs := make([]*appRun, 0, len(s.runs))
	for id, run := range s.runs {
		runs = append(runs, run)
		delete(s.runs, id)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, run := range runs {
		wg.Add(1)
		go func() { defer wg.Done(); s.stopRun(run, false) }()
	}
	wg.Wait()
}

// restoreApp starts a live app again after a platform restart, without
// rebuilding, and routes r, its project's route as start-up read it, as
// soon as the app is registered: its subdomain answers "not responding"
// until the app does. An app that no longer starts ends failed (unless a
// stop or delete came first). One that starts while a stop or delete
// commits is ended: the process follows the store.
func (s *apps) restoreApp(d *gantry.Deployment, r *gantry.Route) {
	defer s.appWG.Done()
	ctx := context.Background()
	s.log(ctx, d.ID, gantry.LevelInfo, gantry.LogDeployment, "Platform restarted: starting the app again")
	run, err := s.startApp(ctx, d, func() { s.release.route(r) })
	if err == nil {
		// A stop that committed before the app was registered found no
		// app to end; one that commits after this read finds it.
		cur, ferr := s.Store.FindDeployment(ctx, "", d.ID)
		if gantry.ErrorCode(ferr) == gantry.ENOTFOUND || ferr == nil && cur.Status != gantry.DeploymentLive {
			s.stopOwnApp(d.ID, run)
		}
		return
	}
	s.release.fail(ctx, d, failure{from: []string{gantry.DeploymentLive},
		reason: "The app did not start again after the platform restarted: " + gantry.ErrorMessage(err)})
}

// appCrashLoop ends a live app the runtime gave up on after repeated
// crashes: the deployment fails with the reason (unless a stop or delete
// came first), its subdomain answers the "stopped" page, and the owner is
// notified.
func (s *apps) appCrashLoop(id string, run *appRun, crashes int, reason string) {
	ctx := context.Background()
	s.takeApp(id, run)
	d, err := s.Store.FindDeployment(ctx, "", id)
	if err != nil {
		return
	}
	msg := fmt.Sprintf("App stopped after crashing %d times in a row (%s): check its runtime logs, then restart it or deploy a fix", crashes, reason)
	if !s.release.fail(ctx, d, failure{reason: msg, from: []string{gantry.DeploymentLive}, logged: true,
		notice: gantry.AppCrashedNotification(d, crashes, reason)}) {
		return
	}
	run.logs.add(gantry.LevelError, gantry.LogDeployment, msg)
}

// appEvents passes an app's output and the runtime's reports to the
// deployment's log.
type appEvents struct {
	s    *apps
	id   string
	logs *appLog
}

// errorLine matches output lines that report an error: "Error: …",
// "TypeError", "Exception", "Traceback", "FATAL", "npm ERR!", a stack
// frame "    at f (file.js:1:2)".
var errorLine = regexp.MustCompile(`(?i)(error|exception)\b|\b(fatal|panic|traceback|uncaught|unhandled|critical)\b|\bERR!|^\s+at .+:\d+:\d+\)?$`)

// Output stores a line the app printed: stdout at level info, stderr at
// warning, or error when the line reads like one.
func (e *appEvents) Output(stream sandbox.Stream, line string) {
	level := gantry.LevelInfo
	if stream == sandbox.Stderr {
		level = gantry.LevelWarning
		if errorLine.MatchString(line) {
			level = gantry.LevelError
		}
	}
	e.logs.add(level, gantry.LogRuntime, line)
}

// Log stores a line of the runtime's about the app (crashes, restarts).
func (e *appEvents) Log(level, msg string) { e.logs.add(level, gantry.LogRuntime, msg) }

// Failed ends the deployment after a crash loop.
func (e *appEvents) Failed(crashes int, reason string) {
	e.s.mu.Lock()
	run := e.s.runs[e.id]
	e.s.mu.Unlock()
	if run == nil || run.logs != e.logs {
		return // already stopped or replaced
	}
	e.s.appCrashLoop(e.id, run, crashes, reason)
}

// appLog stores an app's log entries in order, off the app's output path:
// a full queue drops lines (and says how many), so a chatty app never
// waits for the database. Secrets are redacted from every line, and the
// deployment keeps only its newest RuntimeLogLimit runtime entries.
type appLog struct {
	s       *apps
	id      string
	secrets []string
	ch      chan gantry.LogEntry
	done    chan struct{}

	mu      sync.Mutex
	closed  bool
	dropped int
}

// appLogQueue is how many entries wait to be stored before lines are dropped.
const appLogQueue = 1024

func (s *apps) newAppLog(id string, secrets []string) *appLog {
	l := &appLog{s: s, id: id, secrets: secrets, ch: make(chan gantry.LogEntry, appLogQueue), done: make(chan struct{})}
	go l.run()
	return l
}

// add queues one entry, stamped now; after close it does nothing.
func (l *appLog) add(level, typ, msg string) {
	e := gantry.LogEntry{Timestamp: l.s.now(), Level: level, Type: typ, Message: redact(msg, l.secrets)}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	select {
	case l.ch <- e:
	default:
		l.dropped++
	}
}

// close stores what is queued and stops; it may be called more than once.
func (l *appLog) close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.ch)
	}
	l.mu.Unlock()
	<-l.done
}

func (l *appLog) run() {
	defer close(l.done)
	ctx := context.Background()
	limit := l.s.runtimeLogLimit()
	sinceTrim := 0
	for e := range l.ch {
		l.mu.Lock()
		dropped := l.dropped
		l.dropped = 0
		l.mu.Unlock()
		if dropped > 0 {
			l.s.store(ctx, l.id, gantry.LogEntry{Timestamp: e.Timestamp, Level: gantry.LevelWarning, Type: gantry.LogRuntime,
				Message: fmt.Sprintf("%d lines of output were dropped: the app printed them faster than they could be stored", dropped)})
		}
		l.s.store(ctx, l.id, e)
		if e.Type == gantry.LogRuntime {
			if sinceTrim++; sinceTrim >= 100 {
				sinceTrim = 0
				if _, err := l.s.Store.TrimRuntimeLogs(ctx, l.id, limit); err != nil && gantry.ErrorCode(err) != gantry.ENOTFOUND {
					l.s.logger().Error("trim runtime logs", "deployment", l.id, "err", err)
				}
			}
		}
	}
	if sinceTrim > 0 {
		_, _ = l.s.Store.TrimRuntimeLogs(ctx, l.id, limit)
	}
}

// store appends e to the deployment's log and publishes it to its stream.
func (s *apps) store(ctx context.Context, id string, e gantry.LogEntry) {
	if err := s.Store.AppendLog(ctx, id, &e); err != nil {
		if gantry.ErrorCode(err) != gantry.ENOTFOUND {
			s.logger().Error("append log", "deployment", id, "err", err)
		}
		return
	}
	s.publish(id, e)
}

// appFailure is the message of a deployment whose app did not start: the
// app's own failure as startApp explained it, or the platform's error.
func appFailure(err error) string {
	if gantry.ErrorCode(err) != gantry.EINTERNAL {
		return gantry.ErrorMessage(err)
	}
	return "The app could not be started: " + strings.TrimPrefix(err.Error(), "start app: ")
}

// running returns the ids of the deployments whose apps run here: all of
// them when userID is "", else userID's but except's.
func (s *apps) running(userID, except string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.runs))
	for id, run := range s.runs {
		if userID == "" || run.userID == userID && id != except {
			ids = append(ids, id)
		}
	}
	return ids
}

// dataInUse reports whether a running app has the data folder at path
// (storage.dataPath) open.
func (s *apps) dataInUse(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, run := range s.runs {
		if run.data != "" && s.storage.dataPath(run.project, run.data) == path {
			return true
		}
	}
	return false
}

// dataFolders returns the data folders the running apps have open, as
// project and name pairs.
func (s *apps) dataFolders() [][2]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[[2]string]bool{}
	var out [][2]string
	for _, run := range s.runs {
		if k := [2]string{run.project, run.data}; run.data != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
