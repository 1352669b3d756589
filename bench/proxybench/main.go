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
// Gantry runs as `gantry serve` runs it: the edge's event loops on the
// listener (which proxy these requests themselves, see edge.Loop), the
// top-level handler and the edge's ReverseProxy behind them on an
// http.Server for what the loops hand over, one log line per request;
// "gantry-off" is the same with GANTRY_EDGE_LOOPS=off (that http.Server
// and the edge's ReverseProxy alone), in a process of its own
// (load.StartGantryOff). nginx keeps
// idle connections to the app (upstream keepalive), as the edge does, and
// sets the same X-Forwarded-* headers. By default both write one access log
// line per request to a file (-log=false: neither does).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/bench/internal/load"
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
	load.ServeChild() // when this is StartGantryOff's process
	duration := flag.Duration("d", 5*time.Second, "duration of each wrk run")
	conns := flag.Int("c", 64, "wrk connections")
	threads := flag.Int("t", 2, "wrk threads")
	rounds := flag.Int("rounds", 3, "runs of each target; the medians are reported")
	logging := flag.Bool("log", true, "both proxies write one access log line per request (false: neither does)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the Gantry side under load to this file")
	flag.Parse()
	load.NeedTools("wrk", "nginx", "node")
	dir, err := os.MkdirTemp("", "gantry-proxybench-")
	load.Must(err)
	defer os.RemoveAll(dir)

	// The app.
	load.Must(os.WriteFile(filepath.Join(dir, "app.js"), []byte(appJS), 0o644))
	appPort := load.FreePort()
	app := exec.Command("node", filepath.Join(dir, "app.js"))
	app.Env = append(os.Environ(), "PORT="+strconv.Itoa(appPort))
	app.Stderr = os.Stderr
	load.Must(app.Start())
	defer app.Process.Kill()
	appAddr := fmt.Sprintf("127.0.0.1:%d", appPort)
	load.WaitPort(appAddr)

	// Gantry as `gantry serve` runs it (load.StartGantry).
	gantryLog := filepath.Join(dir, "gantry-access.log")
	gantryOffLog := filepath.Join(dir, "gantry-off-access.log")
	nginxLog := filepath.Join(dir, "nginx-access.log")
	gantryLogFile, gantryOffLogFile, nginxLogFile := "", "", ""
	if *logging {
		gantryLogFile, gantryOffLogFile, nginxLogFile = gantryLog, gantryOffLog, nginxLog
	}
	benchSite := edge.Site{DeploymentID: "bench", Status: gantry.DeploymentLive, ProxyTarget: appAddr}
	gantryAddr := load.StartGantry(benchSite, gantryLogFile)
	gantryOffAddr, gantryOffPid := load.StartGantryOff(benchSite, gantryOffLogFile)
	defer load.RunExit()

	// nginx proxying the same app.
	nport := load.FreePort()
	conf := load.NginxConf(dir, fmt.Sprintf(`  %[1]s
  keepalive_requests 100000;
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
`, load.NginxAccessLog(nginxLogFile), nport, appAddr))
	nginxPid := load.StartNginx(dir, conf, nport)

	targets := []*target{
		{name: "direct", url: "http://" + appAddr + "/", cpu: func() time.Duration { return load.TreeCPU(app.Process.Pid) }},
		{name: "gantry", url: "http://" + gantryAddr + "/", host: "bench.localhost", cpu: load.SelfCPU},
		{name: "gantry-off", url: "http://" + gantryOffAddr + "/", host: "bench.localhost", cpu: func() time.Duration { return load.TreeCPU(gantryOffPid) }},
		{name: "nginx", url: fmt.Sprintf("http://127.0.0.1:%d/", nport), host: "bench.localhost",
			cpu: func() time.Duration { return load.TreeCPU(nginxPid) }},
	}
	fmt.Printf("wrk -t%d -c%d -d%s, %d rounds; a Node %s app directly, through Gantry (%d event loops, GOMAXPROCS %d; gantry-off: GANTRY_EDGE_LOOPS=off) and through nginx %s; %d CPUs\n",
		*threads, *conns, *duration, *rounds, nodeVersion(), edge.ReserveLoopProcs(), runtime.GOMAXPROCS(0), load.NginxVersion(), runtime.NumCPU())
	if *logging {
		fmt.Println("access logs: every proxy writes one line per request to a file")
	} else {
		fmt.Println("access logs: off for every proxy")
	}
	fmt.Println()
	for _, t := range targets { // warm up: connections, JIT
		load.Wrk(*threads, *conns, time.Second, t.url, t.host)
	}
	runs := map[string][]load.Result{}
	load.InTurn(*rounds, targets, func(round int, t *target) {
		stop := func() {}
		if t.name == "gantry" && *cpuprofile != "" && round == 0 {
			stop = load.StartProfile(*cpuprofile)
		}
		r := t.load(*threads, *conns, *duration)
		stop()
		runs[t.name] = append(runs[t.name], r)
	})
	res := map[string]load.Result{}
	fmt.Printf("%-10s %10s %10s %14s\n", "path", "req/s", "p99", "CPU µs/req")
	for _, t := range targets {
		res[t.name] = load.Median(runs[t.name])
		r := res[t.name]
		what := "(the app's)"
		if t.name != "direct" {
			what = "(the proxy's)"
		}
		fmt.Printf("%-10s %10.0f %10s %14.1f %s\n", t.name, r.RPS, r.P99.Round(10*time.Microsecond), r.CPUPerReq, what)
	}
	g, o, n, d := res["gantry"], res["gantry-off"], res["nginx"], res["direct"]
	fmt.Printf("\n%-26s %12s %12s %14s\n", "", "req/s ratio", "p99 ratio", "CPU/req ratio")
	fmt.Printf("%-26s %11.2fx %11.2fx %13.2fx\n", "Gantry / nginx", g.RPS/n.RPS, float64(g.P99)/float64(n.P99), g.CPUPerReq/n.CPUPerReq)
	fmt.Printf("%-26s %11.2fx %11.2fx %13.2fx\n", "Gantry, loops off / nginx", o.RPS/n.RPS, float64(o.P99)/float64(n.P99), o.CPUPerReq/n.CPUPerReq)
	fmt.Printf("%-26s %11.2fx %11.2fx\n", "Gantry / direct", g.RPS/d.RPS, float64(g.P99)/float64(d.P99))
	fmt.Printf("%-26s %11.2fx %11.2fx\n", "nginx / direct", n.RPS/d.RPS, float64(n.P99)/float64(d.P99))
	fmt.Println("\nreq/s ratio ≥ 0.90 meets the target (the edge within 10% of nginx); p99 and CPU/req ratios < 1: faster or cheaper.")
	if *logging {
		fmt.Printf("access log lines written: gantry %d, gantry-off %d, nginx %d\n", load.CountLines(gantryLog), load.CountLines(gantryOffLog), load.CountLines(nginxLog))
	}
}

// target is one way to the app.
type target struct {
	name, url, host string
	cpu             func() time.Duration // CPU time used so far by what is measured
}

// load runs wrk against the target and measures its CPU time meanwhile.
func (t *target) load(threads, conns int, d time.Duration) load.Result {
	before := t.cpu()
	r := load.Wrk(threads, conns, d, t.url, t.host)
	if r.Requests > 0 {
		r.CPUPerReq = float64(t.cpu()-before) / float64(time.Microsecond) / float64(r.Requests)
	}
	return r
}

func nodeVersion() string {
	out, _ := exec.Command("node", "--version").Output()
	return strings.TrimSpace(string(out))
}
