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
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gantryhq/gantry/bench/internal/load"
	"github.com/gantryhq/gantry/bench/internal/platform"
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
	tmp := load.TempDir("gantry-sleepbench-")
	git := platform.StartGit(filepath.Join(tmp, "git"))
	// index.html lets detection accept the repository; the start command
	// makes it a server app.
	appURL := git.Repo("students/small-app", map[string]string{"server.js": server, "index.html": "<h1>small app</h1>"})
	siteURL := git.Repo("bystander/site", map[string]string{"index.html": page})

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
	t := g.SignUp("waker", "203.0.113.1")
	p := t.CreateProject("small-app", appURL, map[string]string{"startCommand": "node server.js"})
	id := t.Deploy(p.ID)
	t.WaitLive(id)
	host := p.Subdomain + ".localhost"
	var took []time.Duration
	for i := 0; i < n; i++ {
		t.WaitSleepingFor(id, time.Minute)
		time.Sleep(500 * time.Millisecond) // the app's processes finish ending
		d, body := timedGet(g.Port(), host)
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
	g.Stop()
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
	by := g.SignUp("bystander", "203.0.113.2")
	site := by.CreateProject("portfolio", siteURL, map[string]string{"outputDirectory": "."})
	by.WaitLive(by.Deploy(site.ID))
	siteHost := fmt.Sprintf("%s.localhost:%d", site.Subdomain, g.Port())
	url := fmt.Sprintf("http://127.0.0.1:%d/", g.Port())
	load.Wrk(2, 16, time.Second, url, siteHost) // warm up
	time.Sleep(time.Second)
	memBefore, rssBefore := usedMemory(), rss(g.PID())
	// Three loads each, their medians: one load on a shared machine is noise.
	wrk3 := func() load.Result {
		return load.Median([]load.Result{load.Wrk(2, 16, d, url, siteHost), load.Wrk(2, 16, d, url, siteHost), load.Wrk(2, 16, d, url, siteHost)})
	}
	base := wrk3()
	fmt.Printf("baseline: %.0f req/s, p99 %s; gantry RSS %s, machine used %s\n", base.RPS, p99ms(base.P99), mib(rssBefore), mib(memBefore))

	// Deploy: three apps per tenant (the free plan's project limit).
	start := time.Now()
	type app struct {
		t  *platform.Tenant
		id string
		p  platform.Project
	}
	var all []app
	var tenants []*platform.Tenant
	for i := 0; len(all) < apps; i++ {
		t := g.SignUp(fmt.Sprintf("student%d", i), fmt.Sprintf("198.18.%d.%d", i/250, i%250+1))
		tenants = append(tenants, t)
		for j := 0; j < 3 && len(all) < apps; j++ {
			p := t.CreateProject(fmt.Sprintf("app-%d-%d", i, j), appURL, map[string]string{"startCommand": "node server.js"})
			all = append(all, app{t: t, id: t.Deploy(p.ID), p: p})
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
						req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", g.Port()), nil)
						req.Host = a.p.Subdomain + ".localhost"
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
		if a.t.WaitLiveFor(a.id, 30*time.Minute) {
			live = append(live, a)
		}
	}
	fmt.Printf("%d apps live %s after the first deploy (%d failed to deploy)\n", len(live), time.Since(start).Round(time.Second), len(all)-len(live))
	all = live
	time.Sleep(5 * time.Second)
	memAwake, rssAwake := usedMemory(), rss(g.PID())
	asleep := 0
	for _, a := range all {
		if a.t.Deployment(a.id).Sleeping {
			asleep++
		}
	}
	close(stopPing)
	pinging.Wait()

	// All but awake fall asleep; awake of them keep getting requests.
	stopPing = make(chan struct{})
	ping(all[:awake], time.Second)
	for _, a := range all[awake:] {
		a.t.WaitSleepingFor(a.id, 5*time.Minute)
	}
	time.Sleep(5 * time.Second)
	memAsleep, rssAsleep := usedMemory(), rss(g.PID())
	under := wrk3()
	close(stopPing)
	pinging.Wait()
	after := wrk3()

	fmt.Printf("\n| | gantry RSS | machine memory used | bystander req/s | bystander p99 |\n|---|---|---|---|---|\n")
	fmt.Printf("| before the apps | %s | %s | %.0f | %s |\n", mib(rssBefore), mib(memBefore), base.RPS, p99ms(base.P99))
	fmt.Printf("| %d apps, %d awake (all pinged every 3 s) | %s | %s | | |\n", len(all), len(all)-asleep, mib(rssAwake), mib(memAwake))
	fmt.Printf("| %d apps, %d awake (pinged every second) | %s | %s | %.0f | %s |\n", len(all), awake, mib(rssAsleep), mib(memAsleep), under.RPS, p99ms(under.P99))
	fmt.Printf("| same, pings stopped | | | %.0f | %s |\n", after.RPS, p99ms(after.P99))
	ratio := float64(under.P99) / float64(base.P99)
	verdict := "met"
	if ratio > 1.5 {
		verdict = "not met"
	}
	fmt.Printf("bystander p99 %.2f× its baseline (target ≤ 1.5×): %s (%s against %s)\n", ratio, verdict, under.P99, base.P99)
	_ = tenants
	g.Stop()
}

func pct(v []time.Duration, p int) time.Duration {
	i := (len(v)*p + 99) / 100
	return v[min(max(i-1, 0), len(v)-1)]
}

// p99ms is a bystander's p99 in milliseconds, to the hundredth.
func p99ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
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

// startGantry runs bin serve with its data folder and log under dir, apps
// sleeping after idle, trusting X-Forwarded-For (so that the benchmark's
// tenants sign up from addresses of their own), two builds at a time and
// a log of warnings only, which a failed wait prints.
func startGantry(bin, dir, idle string) *platform.Gantry {
	return platform.Start(bin, dir, platform.Options{
		Env: []string{
			"GANTRY_TRUST_PROXY=true",
			"GANTRY_BUILD_CONCURRENCY=2",
			"GANTRY_APP_IDLE=" + idle,
			"GANTRY_LOG_LEVEL=warn",
		},
		LogOnFailure: true,
	})
}

// rss is the resident memory of process pid (gantry's), in bytes.
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	load.Must(err)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			v, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return v << 10
		}
	}
	return 0
}

// timedGet fetches / of host from gantry on port, on a fresh connection,
// and times it from the request's first byte to the end of the answer.
func timedGet(port int, host string) (time.Duration, string) {
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
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
