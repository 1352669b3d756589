// Command sleepbench measures sleeping apps (issue 15) on a real `gantry
// serve` (bin/gantry), each figure beside its reference in the same run:
//
//   - wake: a small node HTTP server (dependency-free, the stand-in for a
//     small Express app: no package download at build time) deployed as a
//     server app with GANTRY_APP_IDLE=1s; N times, once the app sleeps, one
//     request is sent and timed from its first byte to the whole answer
//     (the edge holds it while the app starts in its sandbox). Reported:
//     p50 and p99 of the wakes, beside the app's own start time measured
//     directly (node server.js run outside Gantry until it answers: the
//     floor). Targets: p50 ≤ 500 ms, p99 ≤ 1.5 s.
//
//   - density: a bystander's static site is loaded with wrk (its
//     baseline); then -apps of those small apps are deployed by tenants
//     signed up through the API, kept awake by requests until all are
//     live (memory with every app awake), then all but -awake of them are
//     left alone until they sleep. Reported: the gantry process's memory
//     (RSS), the machine's used memory (MemTotal − MemAvailable) before the
//     apps, with all awake and with all but -awake asleep, and the
//     bystander's p99 while the -awake apps keep getting requests, against
//     its baseline. Target: p99 ≤ 1.5× the baseline.
//
//     go run ./bench/sleepbench [-gantry bin/gantry] [-wakes 30] [-apps 200] [-awake 10] [-d 8s] [-only wake|density]
//
// It must run as root (the sandbox needs it), with wrk, git and node
// installed; `make bench` builds bin/gantry and installs wrk first.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gantryhq/gantry/bench/internal/load"
)

// server is the small app: a node HTTP server on PORT.
const server = `require('http').createServer((q, s) => { s.setHeader('Content-Type', 'text/plain'); s.end('hello from a small app\n') }).listen(Number(process.env.PORT))` + "\n"

const page = `<!doctype html><html><head><meta charset="utf-8"><title>Bystander</title></head>
<body><main><h1>Still here</h1><p>A student's portfolio among sleeping neighbours.</p></main></body></html>
`

func main() {
	bin := flag.String("gantry", "bin/gantry", "the gantry binary to run")
	wakes := flag.Int("wakes", 30, "wakes measured")
	apps := flag.Int("apps", 200, "apps deployed for the density measurement")
	awake := flag.Int("awake", 10, "apps kept awake during the density measurement")
	duration := flag.Duration("d", 8*time.Second, "duration of each wrk load")
	only := flag.String("only", "", "wake or density: run only that part")
	flag.Parse()
	defer load.RunExit()
	if os.Geteuid() != 0 {
		load.Fatalf("sleepbench: run as root: the sandbox needs it")
	}
	if w := load.Quiet(); w != "" {
		fmt.Fprintf(os.Stderr, "sleepbench: warning: %s\n", w)
	}
	for _, tool := range []string{"wrk", "git", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			load.Fatalf("sleepbench: %s is not installed (make bench installs wrk)", tool)
		}
	}
	abs, err := filepath.Abs(*bin)
	load.Must(err)
	if _, err := os.Stat(abs); err != nil {
		load.Fatalf("sleepbench: %s not found: run `make build` first", abs)
	}
	tmp, err := os.MkdirTemp("", "gantry-sleepbench-")
	load.Must(err)
	load.AtExit(func() { os.RemoveAll(tmp) })
	load.Must(os.Chmod(tmp, 0o755))
	git := startGit(filepath.Join(tmp, "git"))
	// index.html lets detection accept the repository; the start command
	// makes it a server app.
	appURL := git.repo("students/small-app", map[string]string{"server.js": server, "index.html": "<h1>small app</h1>"})
	siteURL := git.repo("bystander/site", map[string]string{"index.html": page})

	if *only == "" || *only == "wake" {
		benchWake(abs, filepath.Join(tmp, "wake"), appURL, *wakes)
	}
	if *only == "" || *only == "density" {
		benchDensity(abs, filepath.Join(tmp, "density"), appURL, siteURL, *apps, *awake, *duration)
	}
}

// benchWake measures N wakes of one small app and its own start time.
func benchWake(bin, dir, appURL string, n int) {
	fmt.Printf("wake: %d wakes of a small node app (GANTRY_APP_IDLE=1s)\n", n)
	floor := ownStart(appURL, n)
	g := startGantry(bin, dir, "1s")
	t := g.signUp("waker", "203.0.113.1")
	p := t.createProject("small-app", appURL, map[string]string{"startCommand": "node server.js"})
	id := t.deploy(p.id)
	t.waitLive(id)
	host := p.subdomain + ".localhost"
	var took []time.Duration
	for i := 0; i < n; i++ {
		t.waitSleeping(id, true)
		time.Sleep(500 * time.Millisecond) // the app's processes finish ending
		d, body := g.timedGet(host)
		if body != "hello from a small app\n" {
			load.Fatalf("wake %d: got %q", i, body)
		}
		took = append(took, d)
	}
	slices.Sort(took)
	fmt.Printf("\n| small node app | p50 | p99 | max | n |\n|---|---|---|---|---|\n")
	fmt.Printf("| wake through Gantry (request's first byte to the answer) | %s | %s | %s | %d |\n", ms(pct(took, 50)), ms(pct(took, 99)), ms(took[len(took)-1]), n)
	fmt.Printf("| the app's own start (node server.js until it answers, no sandbox) | %s | %s | %s | %d |\n", ms(pct(floor, 50)), ms(pct(floor, 99)), ms(floor[len(floor)-1]), len(floor))
	verdict := "met"
	if pct(took, 50) > 500*time.Millisecond || pct(took, 99) > 1500*time.Millisecond {
		verdict = "not met"
	}
	fmt.Printf("target p50 ≤ 500 ms, p99 ≤ 1.5 s: %s\n\n", verdict)
	g.stop()
}

// ownStart runs the app's server directly n times and times each start
// until it answers HTTP: the floor of a wake.
func ownStart(appURL string, n int) []time.Duration {
	work, err := os.MkdirTemp("", "gantry-sleepbench-own-")
	load.Must(err)
	defer os.RemoveAll(work)
	load.Must(os.WriteFile(filepath.Join(work, "server.js"), []byte(server), 0o644))
	var out []time.Duration
	for i := 0; i < n; i++ {
		port := load.FreePort()
		cmd := exec.Command("node", "server.js")
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
		start := time.Now()
		load.Must(cmd.Start())
		for {
			if res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port)); err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				break
			}
			if time.Since(start) > 30*time.Second {
				load.Fatalf("node server.js did not answer within 30 s")
			}
			time.Sleep(2 * time.Millisecond)
		}
		out = append(out, time.Since(start))
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	slices.Sort(out)
	return out
}

// benchDensity deploys apps small apps beside a bystander's static site.
func benchDensity(bin, dir, appURL, siteURL string, apps, awake int, d time.Duration) {
	fmt.Printf("density: %d small node apps, %d kept awake, bystander loaded 3 × %s (medians; wrk 2 threads, 16 connections)\n", apps, awake, d)
	g := startGantry(bin, dir, "20s")
	by := g.signUp("bystander", "203.0.113.2")
	site := by.createProject("portfolio", siteURL, map[string]string{"outputDirectory": "."})
	by.waitLive(by.deploy(site.id))
	siteHost := fmt.Sprintf("%s.localhost:%d", site.subdomain, g.port)
	url := fmt.Sprintf("http://127.0.0.1:%d/", g.port)
	load.Wrk(2, 16, time.Second, url, siteHost) // warm up
	time.Sleep(time.Second)
	memBefore, rssBefore := usedMemory(), g.rss()
	// Three loads each, their medians: one load on a shared machine is noise.
	wrk3 := func() load.Result {
		return load.Median([]load.Result{load.Wrk(2, 16, d, url, siteHost), load.Wrk(2, 16, d, url, siteHost), load.Wrk(2, 16, d, url, siteHost)})
	}
	base := wrk3()
	fmt.Printf("baseline: %.0f req/s, p99 %s; gantry RSS %s, machine used %s\n", base.RPS, ms(base.P99), mib(rssBefore), mib(memBefore))

	// Deploy: three apps per tenant (the free plan's project limit).
	start := time.Now()
	type app struct {
		t  *tenant
		id string
		p  project
	}
	var all []app
	var tenants []*tenant
	for i := 0; len(all) < apps; i++ {
		t := g.signUp(fmt.Sprintf("student%d", i), fmt.Sprintf("198.18.%d.%d", i/250, i%250+1))
		tenants = append(tenants, t)
		for j := 0; j < 3 && len(all) < apps; j++ {
			p := t.createProject(fmt.Sprintf("app-%d-%d", i, j), appURL, map[string]string{"startCommand": "node server.js"})
			all = append(all, app{t: t, id: t.deploy(p.id), p: p})
		}
	}
	// Keep every live app awake until all are live.
	stopPing := make(chan struct{})
	pinging := sync.WaitGroup{}
	ping := func(list []app, every time.Duration) {
		pinging.Add(1)
		go func() {
			defer pinging.Done()
			c := &http.Client{Timeout: 30 * time.Second}
			for {
				// 16 at a time: a round over every app stays well inside the idle time.
				sem := make(chan struct{}, 16)
				var round sync.WaitGroup
				for _, a := range list {
					sem <- struct{}{}
					round.Add(1)
					go func() {
						defer func() { <-sem; round.Done() }()
						req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", g.port), nil)
						req.Host = a.p.subdomain + ".localhost"
						if res, err := c.Do(req); err == nil {
							io.Copy(io.Discard, res.Body)
							res.Body.Close()
						}
					}()
				}
				round.Wait()
				select {
				case <-stopPing:
					return
				case <-time.After(every):
				}
			}
		}()
	}
	ping(all, 3*time.Second)
	var live []app
	for _, a := range all {
		if a.t.waitLiveFor(a.id, 30*time.Minute) {
			live = append(live, a)
		}
	}
	fmt.Printf("%d apps live %s after the first deploy (%d failed to deploy)\n", len(live), time.Since(start).Round(time.Second), len(all)-len(live))
	all = live
	time.Sleep(5 * time.Second)
	memAwake, rssAwake := usedMemory(), g.rss()
	asleep := 0
	for _, a := range all {
		var d struct{ Deployment deployment }
		a.t.g.call("GET", "/api/deployments/"+a.id, a.t.token, a.t.ip, nil, 200, &d)
		if d.Deployment.Sleeping {
			asleep++
		}
	}
	close(stopPing)
	pinging.Wait()

	// All but awake fall asleep; awake of them keep getting requests.
	stopPing = make(chan struct{})
	ping(all[:awake], time.Second)
	for _, a := range all[awake:] {
		a.t.waitSleepingFor(a.id, 5*time.Minute)
	}
	time.Sleep(5 * time.Second)
	memAsleep, rssAsleep := usedMemory(), g.rss()
	under := wrk3()
	close(stopPing)
	pinging.Wait()
	after := wrk3()

	fmt.Printf("\n| | gantry RSS | machine memory used | bystander req/s | bystander p99 |\n|---|---|---|---|---|\n")
	fmt.Printf("| before the apps | %s | %s | %.0f | %s |\n", mib(rssBefore), mib(memBefore), base.RPS, ms(base.P99))
	fmt.Printf("| %d apps, %d awake (all pinged every 3 s) | %s | %s | | |\n", len(all), len(all)-asleep, mib(rssAwake), mib(memAwake))
	fmt.Printf("| %d apps, %d awake (pinged every second) | %s | %s | %.0f | %s |\n", len(all), awake, mib(rssAsleep), mib(memAsleep), under.RPS, ms(under.P99))
	fmt.Printf("| same, pings stopped | | | %.0f | %s |\n", after.RPS, ms(after.P99))
	ratio := float64(under.P99) / float64(base.P99)
	verdict := "met"
	if ratio > 1.5 {
		verdict = "not met"
	}
	fmt.Printf("bystander p99 %.2f× its baseline (target ≤ 1.5×): %s (%s against %s)\n", ratio, verdict, under.P99, base.P99)
	_ = tenants
	g.stop()
}

func pct(v []time.Duration, p int) time.Duration {
	i := (len(v)*p + 99) / 100
	return v[min(max(i-1, 0), len(v)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// usedMemory is the machine's MemTotal − MemAvailable, in bytes.
func usedMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	load.Must(err)
	defer f.Close()
	var total, avail int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(fs[1], 10, 64)
		switch fs[0] {
		case "MemTotal:":
			total = v << 10
		case "MemAvailable:":
			avail = v << 10
		}
	}
	return total - avail
}

// gitServer serves bare repositories over smart HTTP on loopback.
type gitServer struct{ root, base string }

func startGit(root string) *gitServer {
	load.Must(os.MkdirAll(root, 0o755))
	execPath, err := exec.Command("git", "--exec-path").Output()
	load.Must(err)
	h := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	load.Must(err)
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	load.AtExit(func() { srv.Close() })
	return &gitServer{root: root, base: "http://" + ln.Addr().String()}
}

func (s *gitServer) repo(fullName string, files map[string]string) string {
	work, err := os.MkdirTemp("", "gantry-sleepbench-repo-")
	load.Must(err)
	defer os.RemoveAll(work)
	for name, content := range files {
		load.Must(os.WriteFile(filepath.Join(work, name), []byte(content), 0o644))
	}
	bare := filepath.Join(s.root, fullName+".git")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=Bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "app"},
		{"init", "-q", "--bare", "-b", "main", bare},
		{"push", "-q", bare, "HEAD:refs/heads/main"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			load.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return s.base + "/" + fullName + ".git"
}

// gantry is a running `gantry serve`.
type gantry struct {
	cmd  *exec.Cmd
	port int
	base string
	log  string
	done chan struct{}
}

// startGantry runs bin serve with apps sleeping after idle, trusting
// X-Forwarded-For (so that the benchmark's tenants sign up from addresses
// of their own), and waits until it answers.
func startGantry(bin, dir, idle string) *gantry {
	load.Must(os.MkdirAll(dir, 0o755))
	port := load.FreePort()
	g := &gantry{port: port, base: fmt.Sprintf("http://127.0.0.1:%d", port), log: filepath.Join(dir, "gantry.log"), done: make(chan struct{})}
	logFile, err := os.Create(g.log)
	load.Must(err)
	g.cmd = exec.Command(bin, "serve")
	g.cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"GANTRY_ADDR=" + fmt.Sprintf("127.0.0.1:%d", port),
		"GANTRY_PUBLIC_URL=" + fmt.Sprintf("http://localhost:%d", port),
		"GANTRY_DATA_DIR=" + filepath.Join(dir, "data"),
		"GANTRY_PASSWORD_COST=1",
		"GANTRY_GIT_ALLOW_HOSTS=127.0.0.1",
		"GANTRY_TRUST_PROXY=true",
		"GANTRY_BUILD_CONCURRENCY=2",
		"GANTRY_APP_IDLE=" + idle,
		"GANTRY_LOG_LEVEL=warn",
	}
	g.cmd.Stdout, g.cmd.Stderr = logFile, logFile
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	load.Must(g.cmd.Start())
	go func() { _ = g.cmd.Wait(); logFile.Close(); unmountUnder(dir); close(g.done) }()
	load.AtExit(g.stop)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if res, err := http.Get(g.base + "/api/health"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return g
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(g.log)
			load.Fatalf("gantry did not answer within 30 s:\n%s", out)
		}
	}
}

// stop ends gantry (and its apps); it may be called more than once.
func (g *gantry) stop() {
	select {
	case <-g.done:
		return
	default:
	}
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(60 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

// rss is the gantry process's resident memory, in bytes.
func (g *gantry) rss() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.cmd.Process.Pid))
	load.Must(err)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			v, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return v << 10
		}
	}
	return 0
}

// timedGet fetches / of host on a fresh connection and times it from the
// request's first byte to the end of the answer.
func (g *gantry) timedGet(host string) (time.Duration, string) {
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", g.port))
	load.Must(err)
	defer c.Close()
	start := time.Now()
	_, err = fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host)
	load.Must(err)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	load.Must(err)
	body, err := io.ReadAll(res.Body)
	load.Must(err)
	took := time.Since(start)
	if res.StatusCode != 200 {
		load.Fatalf("GET %s: %d %s", host, res.StatusCode, body)
	}
	return took, string(body)
}

// call sends a JSON API request from address ip and decodes the answer's
// data into out; it ends the benchmark when the status is not want.
func (g *gantry) call(method, path, token, ip string, body any, want int, out any) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		load.Must(err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.base+path, rd)
	load.Must(err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", ip)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	load.Must(err)
	defer res.Body.Close()
	var env struct {
		Data    json.RawMessage
		Message string
	}
	_ = json.NewDecoder(res.Body).Decode(&env)
	if res.StatusCode != want {
		load.Fatalf("%s %s: got %d (%s), want %d", method, path, res.StatusCode, env.Message, want)
	}
	if out != nil {
		load.Must(json.Unmarshal(env.Data, out))
	}
}

type tenant struct {
	g         *gantry
	token, ip string
}

type project struct{ id, subdomain string }

func (g *gantry) signUp(name, ip string) *tenant {
	var auth struct{ Token string }
	g.call("POST", "/api/auth/register", "", ip, map[string]string{
		"username": name, "email": name + "@example.com", "password": "secret123", "fullName": name,
	}, 201, &auth)
	return &tenant{g: g, token: auth.Token, ip: ip}
}

func (t *tenant) createProject(name, repo string, cfg map[string]string) project {
	var p struct {
		Project struct {
			ID        string `json:"_id"`
			Subdomain string
		}
	}
	t.g.call("POST", "/api/projects/public", t.token, t.ip, map[string]any{
		"repository": map[string]string{"url": repo}, "name": name, "buildConfig": cfg,
	}, 201, &p)
	return project{id: p.Project.ID, subdomain: p.Project.Subdomain}
}

func (t *tenant) deploy(projectID string) string {
	var d struct {
		Deployment struct {
			ID string `json:"_id"`
		}
	}
	t.g.call("POST", "/api/deployments", t.token, t.ip, map[string]string{"projectId": projectID}, 201, &d)
	return d.Deployment.ID
}

type deployment struct {
	Status   string
	Error    string
	Sleeping bool
}

// wait polls deployment id until done says so; a failed deployment ends
// the benchmark unless tolerate, which reports it (false).
func (t *tenant) wait(id, what string, limit time.Duration, tolerate bool, done func(deployment) bool) bool {
	var d struct{ Deployment deployment }
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		t.g.call("GET", "/api/deployments/"+id, t.token, t.ip, nil, 200, &d)
		if done(d.Deployment) {
			return true
		}
		if d.Deployment.Status == "failed" {
			break
		}
	}
	if tolerate && d.Deployment.Status == "failed" {
		fmt.Printf("deployment %s failed: %s\n", id, d.Deployment.Error)
		return false
	}
	out, _ := os.ReadFile(t.g.log)
	load.Fatalf("deployment %s: not %s: %s %s\n%s", id, what, d.Deployment.Status, d.Deployment.Error, out)
	return false
}

func (t *tenant) waitLive(id string) {
	t.wait(id, "live", 2*time.Minute, false, func(d deployment) bool { return d.Status == "live" })
}

// waitLiveFor waits until deployment id is live, and reports false when it
// failed instead.
func (t *tenant) waitLiveFor(id string, limit time.Duration) bool {
	return t.wait(id, "live", limit, true, func(d deployment) bool { return d.Status == "live" })
}

func (t *tenant) waitSleeping(id string, _ bool) { t.waitSleepingFor(id, time.Minute) }

func (t *tenant) waitSleepingFor(id string, limit time.Duration) {
	t.wait(id, "sleeping", limit, false, func(d deployment) bool { return d.Status == "live" && d.Sleeping })
}

// unmountUnder detaches every mount under dir: the app workspaces (loop
// devices, freed with their mounts) that gantry serve leaves mounted when
// it stops, since a restart starts those apps again.
func unmountUnder(dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			_ = syscall.Unmount(f[4], syscall.MNT_DETACH)
		}
	}
}
