// Command proxybench measures the cost of reaching a server app through
// Gantry's edge: requests per second, p99 latency and the proxy's CPU time
// per request for one tiny Node app reached directly, through the Gantry
// edge and through nginx proxying the same app, in the same run, with wrk,
// and the ratios.
//
//	go run ./bench/proxybench [-d 5s] [-c 64] [-t 2] [-rounds 3] [-log=true]
//
// Everything listens on loopback. The app is started directly with node
// (outside the sandbox), so the rows differ only by what stands in front
// of it. The three are loaded in turn (never at the same time), round after
// round with the order reversed every other round, so that a machine
// shared with other work disturbs them alike; the figures are the medians
// over the rounds. CPU per request (the proxy's user+system time during a
// run divided by the requests wrk completed) is the steadiest figure on a
// busy machine: wrk and the app run on the same cores, and the req/s of
// each proxy depends on how much CPU they leave it.
//
// Gantry runs its whole request path: the top-level handler (Host routing,
// panic recovery, one log line per request) and the edge's reverse proxy,
// behind an http.Server set up as `gantry serve` sets it up. nginx keeps
// idle connections to the app (upstream keepalive), as the edge does, and
// sets the same X-Forwarded-* headers. By default both write one access log
// line per request to a file (-log=false: neither does).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/edge"
)

// appJS is the app: a small JSON answer, as an API endpoint gives.
const appJS = `const http = require('http')
const body = JSON.stringify({ ok: true, message: 'hello from a student API', items: [1, 2, 3] })
http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) })
  res.end(body)
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'))
`

func main() {
	duration := flag.Duration("d", 5*time.Second, "duration of each wrk run")
	conns := flag.Int("c", 64, "wrk connections")
	threads := flag.Int("t", 2, "wrk threads")
	rounds := flag.Int("rounds", 3, "runs of each target; the medians are reported")
	logging := flag.Bool("log", true, "both proxies write one access log line per request (false: neither does)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the Gantry side under load to this file")
	flag.Parse()
	for _, tool := range []string{"wrk", "nginx", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			log.Fatalf("%s is not installed: run `make deps-bench` (apt-get install nginx wrk)", tool)
		}
	}
	dir, err := os.MkdirTemp("", "gantry-proxybench-")
	must(err)
	defer os.RemoveAll(dir)

	// The app.
	must(os.WriteFile(filepath.Join(dir, "app.js"), []byte(appJS), 0o644))
	appPort := freePort()
	app := exec.Command("node", filepath.Join(dir, "app.js"))
	app.Env = append(os.Environ(), "PORT="+strconv.Itoa(appPort))
	app.Stderr = os.Stderr
	must(app.Start())
	defer app.Process.Kill()
	appAddr := fmt.Sprintf("127.0.0.1:%d", appPort)
	waitPort(appAddr)

	// Gantry: the real top-level handler with the edge as live handler.
	gantryLog := filepath.Join(dir, "gantry-access.log")
	nginxLog := filepath.Join(dir, "nginx-access.log")
	table := edge.NewTable()
	table.Set("bench", edge.Site{DeploymentID: "bench", Status: gantry.DeploymentLive, ProxyTarget: appAddr})
	srv := api.NewServer()
	srv.PublicHost, srv.LiveDomain = "localhost", "localhost"
	srv.LiveHandler = edge.New("localhost", table, "http://localhost")
	if *logging {
		f, err := os.OpenFile(gantryLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		must(err)
		defer f.Close()
		srv.Logger = slog.New(slog.NewTextHandler(f, nil))
	} else {
		srv.Logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 1}))
	}
	gln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	go (&http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: 64 << 10}).Serve(gln)

	// nginx proxying the same app.
	nport := freePort()
	accessLog := "access_log off;"
	if *logging {
		accessLog = "access_log " + nginxLog + " combined;"
	}
	conf := fmt.Sprintf(`worker_processes auto;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
daemon off;
events { worker_connections 4096; }
http {
  %[4]s
  keepalive_requests 100000;
  client_body_temp_path %[1]s/tmp; proxy_temp_path %[1]s/tmp; fastcgi_temp_path %[1]s/tmp; uwsgi_temp_path %[1]s/tmp; scgi_temp_path %[1]s/tmp;
  upstream app { server %[3]s; keepalive 256; }
  server {
    listen 127.0.0.1:%[2]d;
    location / {
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $host;
    }
  }
}
`, dir, nport, appAddr, accessLog)
	must(os.MkdirAll(filepath.Join(dir, "tmp"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644))
	nginx := exec.Command("nginx", "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log"))
	nginx.Stderr = os.Stderr
	must(nginx.Start())
	defer nginx.Process.Kill()
	waitPort(fmt.Sprintf("127.0.0.1:%d", nport))

	targets := []*target{
		{name: "direct", url: "http://" + appAddr + "/", cpu: func() time.Duration { return treeCPU(app.Process.Pid) }},
		{name: "gantry", url: "http://" + gln.Addr().String() + "/", host: "bench.localhost", cpu: selfCPU},
		{name: "nginx", url: fmt.Sprintf("http://127.0.0.1:%d/", nport), host: "bench.localhost",
			cpu: func() time.Duration { return treeCPU(nginx.Process.Pid) }},
	}
	fmt.Printf("wrk -t%d -c%d -d%s, %d rounds; a Node %s app directly, through Gantry (GOMAXPROCS %d) and through nginx %s; %d CPUs\n",
		*threads, *conns, *duration, *rounds, nodeVersion(), runtime.GOMAXPROCS(0), nginxVersion(), runtime.NumCPU())
	if *logging {
		fmt.Println("access logs: both proxies write one line per request to a file")
	} else {
		fmt.Println("access logs: off for both proxies")
	}
	fmt.Println()
	for _, t := range targets { // warm up: connections, JIT
		runWrk(*threads, *conns, time.Second, t.url, t.host)
	}
	runs := map[string][]result{}
	for round := range *rounds {
		order := slices.Clone(targets)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, t := range order {
			stop := func() {}
			if t.name == "gantry" && *cpuprofile != "" && round == 0 {
				stop = startProfile(*cpuprofile)
			}
			r := t.load(*threads, *conns, *duration)
			stop()
			runs[t.name] = append(runs[t.name], r)
		}
	}
	res := map[string]result{}
	fmt.Printf("%-8s %10s %10s %14s\n", "path", "req/s", "p99", "CPU µs/req")
	for _, t := range targets {
		res[t.name] = median(runs[t.name])
		r := res[t.name]
		what := "(the app's)"
		if t.name != "direct" {
			what = "(the proxy's)"
		}
		fmt.Printf("%-8s %10.0f %10s %14.1f %s\n", t.name, r.rps, r.p99.Round(10*time.Microsecond), r.cpuPerReq, what)
	}
	g, n, d := res["gantry"], res["nginx"], res["direct"]
	fmt.Printf("\n%-16s %12s %12s %14s\n", "", "req/s ratio", "p99 ratio", "CPU/req ratio")
	fmt.Printf("%-16s %11.2fx %11.2fx %13.2fx\n", "Gantry / nginx", g.rps/n.rps, float64(g.p99)/float64(n.p99), g.cpuPerReq/n.cpuPerReq)
	fmt.Printf("%-16s %11.2fx %11.2fx\n", "Gantry / direct", g.rps/d.rps, float64(g.p99)/float64(d.p99))
	fmt.Printf("%-16s %11.2fx %11.2fx\n", "nginx / direct", n.rps/d.rps, float64(n.p99)/float64(d.p99))
	fmt.Println("\nreq/s ratio ≥ 0.90 meets the target (the edge within 10% of nginx); p99 and CPU/req ratios < 1: faster or cheaper.")
	if *logging {
		fmt.Printf("access log lines written: gantry %d, nginx %d\n", countLines(gantryLog), countLines(nginxLog))
	}
}

// target is one way to the app.
type target struct {
	name, url, host string
	cpu             func() time.Duration // CPU time used so far by what is measured
}

// load runs wrk against the target and measures its CPU time meanwhile.
func (t *target) load(threads, conns int, d time.Duration) result {
	before := t.cpu()
	r := runWrk(threads, conns, d, t.url, t.host)
	if r.requests > 0 {
		r.cpuPerReq = float64(t.cpu()-before) / float64(time.Microsecond) / float64(r.requests)
	}
	return r
}

type result struct {
	rps       float64
	p99       time.Duration
	requests  int64
	cpuPerReq float64 // µs
}

// median returns the median of each figure over rs, separately.
func median(rs []result) result {
	mid := func(v []float64) float64 {
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	var rps, p99, cpu []float64
	for _, r := range rs {
		rps = append(rps, r.rps)
		p99 = append(p99, float64(r.p99))
		cpu = append(cpu, r.cpuPerReq)
	}
	return result{rps: mid(rps), p99: time.Duration(mid(p99)), cpuPerReq: mid(cpu)}
}

var (
	rpsRe   = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	p99Re   = regexp.MustCompile(`\s99%\s+([\d.]+)(us|ms|s)`)
	countRe = regexp.MustCompile(`(\d+) requests in`)
)

func runWrk(threads, conns int, d time.Duration, url, host string) result {
	args := []string{"-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns), "-d", d.String(), "--latency"}
	if host != "" {
		args = append(args, "-H", "Host: "+host)
	}
	out, err := exec.Command("wrk", append(args, url)...).CombinedOutput()
	if err != nil {
		log.Fatalf("wrk %s: %v\n%s", url, err, out)
	}
	if strings.Contains(string(out), "Non-2xx") {
		log.Fatalf("wrk %s: errors in the answers:\n%s", url, out)
	}
	var r result
	if m := rpsRe.FindSubmatch(out); m != nil {
		r.rps, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if m := p99Re.FindSubmatch(out); m != nil {
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[string(m[2])]
		r.p99 = time.Duration(v * float64(unit))
	}
	if m := countRe.FindSubmatch(out); m != nil {
		r.requests, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if r.rps == 0 {
		log.Fatalf("wrk %s: no result:\n%s", url, out)
	}
	return r
}

// selfCPU is this process's user+system time (the Gantry server's; wrk,
// node and nginx run in child processes, not counted).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// treeCPU is the user+system time of process pid and its children (nginx's
// master and workers), from /proc in clock ticks of 10 ms.
func treeCPU(pid int) time.Duration {
	var total time.Duration
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])) // after the command name
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		if p != pid && ppid != pid {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(ut+st) * 10 * time.Millisecond
	}
	return total
}

func startProfile(file string) func() {
	f, err := os.Create(file)
	must(err)
	must(pprof.StartCPUProfile(f))
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

func countLines(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte{'\n'})
}

func nginxVersion() string {
	out, _ := exec.Command("nginx", "-v").CombinedOutput()
	return strings.TrimSpace(strings.TrimPrefix(string(out), "nginx version: "))
}

func nodeVersion() string {
	out, _ := exec.Command("node", "--version").Output()
	return strings.TrimSpace(string(out))
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitPort(addr string) {
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log.Fatalf("nothing listens on %s", addr)
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
