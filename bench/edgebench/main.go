// Command edgebench compares Gantry's edge with nginx serving the same
// published site, in the same run, with wrk: requests per second, p99
// latency and CPU time per request for a small HTML page and a 200 KB
// asset, and the ratios.
//
//	go run ./bench/edgebench [-d 5s] [-c 64] [-t 2] [-rounds 3] [-log=true] [-floor=true] [-files page,asset] [-cpuprofile FILE]
//
// Beside the table it prints, per request, how the work was batched: the
// loops' rounds of events and blocking epoll_waits (edge.Loop.Stats) and
// the context switches of Gantry's process and of nginx's workers — where
// the 200 KB asset's CPU per request goes apart from sendfile itself (see
// the README's Benchmarks).
//
// The servers listen on loopback and are loaded in turn (never at the same
// time), round after round with the order swapped each round, so that a
// machine shared with other work disturbs them alike; the figures are the
// medians over the rounds. CPU per request (the server's user+system time
// during a run divided by the requests wrk completed) is the steadiest
// figure on a busy machine: wrk runs on the same cores, and the req/s of
// each server depend on how much CPU the rest leaves it.
//
// Gantry serves as `gantry serve` does: the edge's event loops on the
// listener answer these requests themselves (see edge.Loop), with the
// top-level handler and the edge behind them, on an http.Server with
// serve's settings, for what they hand over. "gantry-off" is the same
// with GANTRY_EDGE_LOOPS=off (that http.Server alone), in a process of
// its own (load.StartGantryOff). With -floor (the default) a
// bare net/http handler on the same settings serves the same two files
// too, as plainly as net/http allows, in a process of its own: the floor
// of a Go server without the loops.
//
// The comparison is fair on logging: by default Gantry and nginx both
// write one access log line per request, unbuffered, to a file in the
// benchmark's temporary folder (Gantry with the slog text handler `gantry
// serve` uses, nginx with its combined format); with -log=false neither
// logs (nginx access_log off, Gantry's handler disabled). nginx runs with
// the settings of Debian's nginx.conf that matter here (sendfile,
// tcp_nopush, worker_processes auto) and keepalive_requests raised so that
// wrk's connections stay open for both.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/bench/internal/load"
	"github.com/gantryhq/gantry/internal/edge"
)

func main() {
	load.ServeChild() // when this is StartGantryOff's process
	duration := flag.Duration("d", 5*time.Second, "duration of each wrk run")
	conns := flag.Int("c", 64, "wrk connections")
	threads := flag.Int("t", 2, "wrk threads")
	rounds := flag.Int("rounds", 3, "runs of each server per file; the medians are reported")
	logging := flag.Bool("log", true, "both servers write one access log line per request (false: neither does)")
	cpuprofile := flag.String("cpuprofile", "", "write CPU profiles of the Gantry side under load to this file + .html and .js")
	only := flag.String("only", "", "load only these servers (comma-separated): gantry, gantry-off, nginx, net/http")
	floor := flag.Bool("floor", true, "load a bare net/http handler too (the same bytes, no routing, no log, on the same http.Server settings): the floor of a Go server here")
	serve := flag.Bool("serve", false, "start both servers, print their URLs and wait (for strace, perf or a manual wrk)")
	floorServe := flag.String("floor-serve", "", "(internal) serve this site folder with the bare net/http handler on -floor-addr: the floor's own process")
	floorAddr := flag.String("floor-addr", "", "(internal) the address for -floor-serve")
	files := flag.String("files", "page,asset", "the files to load (comma-separated): page (the 400 B HTML page), asset (the 200 KB asset)")
	flag.Parse()
	if *floorServe != "" {
		fln, err := net.Listen("tcp", *floorAddr)
		load.Must(err)
		log.Fatal(load.HTTPServer(bareHandler(*floorServe)).Serve(fln))
	}
	load.NeedTools("wrk", "nginx")

	dir := load.TempDir("gantry-edgebench-")
	defer load.RunExit()
	site := load.WriteSite(dir)

	// Gantry as `gantry serve` runs it (load.StartGantry).
	gantryLog := filepath.Join(dir, "gantry-access.log")
	gantryOffLog := filepath.Join(dir, "gantry-off-access.log")
	nginxLog := filepath.Join(dir, "nginx-access.log")
	gantryLogFile, gantryOffLogFile, nginxLogFile := "", "", ""
	if *logging {
		gantryLogFile, gantryOffLogFile, nginxLogFile = gantryLog, gantryOffLog, nginxLog
	}
	benchSite := edge.Site{DeploymentID: "bench", Dir: site, Status: gantry.DeploymentLive}
	gantryAddr := load.StartGantry(benchSite, gantryLogFile)
	gantryOffAddr, gantryOffPid := load.StartGantryOff(benchSite, gantryOffLogFile)

	// nginx on the same folder.
	nport := load.FreePort()
	conf := load.NginxConf(dir, fmt.Sprintf(`  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  %[1]s
  sendfile on; tcp_nopush on; keepalive_requests 100000;
  server { listen 127.0.0.1:%[2]d; root %[3]s; index index.html; etag on; }
`, load.NginxAccessLog(nginxLogFile), nport, site))
	nginxPid := load.StartNginx(dir, conf, nport)

	servers := []*server{
		{name: "gantry", url: "http://" + gantryAddr, host: "bench.localhost", cpu: load.SelfCPU},
		{name: "gantry-off", url: "http://" + gantryOffAddr, host: "bench.localhost", cpu: func() time.Duration { return load.TreeCPU(gantryOffPid) }},
		{name: "nginx", url: fmt.Sprintf("http://127.0.0.1:%d", nport), cpu: func() time.Duration { return load.TreeCPU(nginxPid) }},
	}
	if *floor {
		// In a process of its own: sharing Gantry's runtime, its garbage
		// and goroutines disturbed Gantry's next run (the HTML page's p99
		// 2-6 ms instead of 0.8 ms).
		addr := fmt.Sprintf("127.0.0.1:%d", load.FreePort())
		self, err := os.Executable()
		load.Must(err)
		fl := exec.Command(self, "-floor-serve", site, "-floor-addr", addr)
		fl.Stderr = os.Stderr
		fl.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		load.Must(fl.Start())
		load.AtExit(func() { _ = fl.Process.Kill(); _, _ = fl.Process.Wait() })
		load.WaitPort(addr)
		servers = append(servers, &server{name: "net/http", url: "http://" + addr, cpu: func() time.Duration { return load.TreeCPU(fl.Process.Pid) }})
	}
	if *serve {
		fmt.Printf("gantry:     %s/ (Host: bench.localhost), pid %d\ngantry-off: %s/ (Host: bench.localhost), pid %d\nnginx:      %s/, master pid %d\nsite:       %s\nstop with Ctrl-C\n",
			servers[0].url, os.Getpid(), servers[1].url, gantryOffPid, servers[2].url, nginxPid, site)
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		<-ctx.Done()
		return
	}
	if *only != "" {
		names := strings.Split(*only, ",")
		servers = slices.DeleteFunc(servers, func(s *server) bool { return !slices.Contains(names, s.name) })
	}
	fmt.Printf("wrk -t%d -c%d -d%s, %d rounds; Gantry (%d event loops, GOMAXPROCS %d; gantry-off: GANTRY_EDGE_LOOPS=off, net/http alone) vs nginx %s (%d workers) on the same folder; %d CPUs\n",
		*threads, *conns, *duration, *rounds, edge.ReserveLoopProcs(), runtime.GOMAXPROCS(0), load.NginxVersion(), runtime.NumCPU(), runtime.NumCPU())
	if *logging {
		fmt.Println("access logs: Gantry (both ways) and nginx write one line per request to a file")
	} else {
		fmt.Println("access logs: off for all")
	}
	fmt.Println()

	type row struct {
		path  string
		res   map[string]load.Result
		batch map[string][]batching // gantry's and nginx's runs
	}
	var rows []row
	for _, path := range filePaths(*files) {
		runs := map[string][]load.Result{}
		batches := map[string][]batching{}
		load.InTurn(*rounds, servers, func(round int, s *server) {
			stop := func() {}
			if s.name == "gantry" && *cpuprofile != "" && round == 0 {
				kind := "html"
				if path != "/" {
					kind = "js"
				}
				stop = load.StartProfile(*cpuprofile + "." + kind)
			}
			b0 := measureBatching(s.name, nginxPid)
			r := s.load(*threads, *conns, *duration, path)
			if b := measureBatching(s.name, nginxPid); b != nil {
				batches[s.name] = append(batches[s.name], b.since(b0, r.Requests))
			}
			stop()
			runs[s.name] = append(runs[s.name], r)
		})
		rw := row{path: path, res: map[string]load.Result{}, batch: batches}
		for name, rs := range runs {
			rw.res[name] = load.Median(rs)
		}
		rows = append(rows, rw)
	}

	fmt.Printf("%-24s %-10s %10s %10s %12s\n", "file", "server", "req/s", "p99", "CPU µs/req")
	for _, rw := range rows {
		for _, s := range servers {
			r := rw.res[s.name]
			fmt.Printf("%-24s %-10s %10.0f %10s %12.1f\n", rw.path, s.name, r.RPS, r.P99.Round(10*time.Microsecond), r.CPUPerReq)
		}
	}
	fmt.Println("\nper request (medians of the rounds): the loops' rounds of events and blocking epoll_waits, and the server's context switches")
	for _, rw := range rows {
		printBatching(rw.path, rw.batch)
	}
	if _, withNginx := rows[0].res["nginx"]; withNginx {
		for _, g := range []struct{ name, title string }{{"gantry", "Gantry / nginx"}, {"gantry-off", "Gantry, loops off / nginx"}} {
			if _, ok := rows[0].res[g.name]; !ok {
				continue
			}
			fmt.Printf("\n%-26s %12s %14s %16s\n", g.title, "req/s ratio", "p99 ratio", "CPU/req ratio")
			for _, rw := range rows {
				r, n := rw.res[g.name], rw.res["nginx"]
				fmt.Printf("%-26s %11.2fx %13.2fx %15.2fx\n", rw.path, r.RPS/n.RPS, float64(r.P99)/float64(n.P99), r.CPUPerReq/n.CPUPerReq)
			}
		}
		fmt.Println("\nreq/s ratio > 1: Gantry served more; p99 and CPU/req ratios < 1: Gantry was faster or cheaper.")
	}
	if *logging {
		fmt.Printf("access log lines written: gantry %d, gantry-off %d, nginx %d\n", load.CountLines(gantryLog), load.CountLines(gantryOffLog), load.CountLines(nginxLog))
	}
}

// bareHandler serves the benchmark's two files as plainly as net/http
// allows: the page from memory, the asset with sendfile, with a
// Content-Type and nothing else (no Host routing, no log, no validators).
// Gantry cannot be cheaper than this on the same http.Server.
func bareHandler(site string) http.Handler {
	page, err := os.ReadFile(filepath.Join(site, "index.html"))
	load.Must(err)
	html := []string{"text/html; charset=utf-8"}
	js := []string{"text/javascript; charset=utf-8"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Header()["Content-Type"] = html
			_, _ = w.Write(page)
			return
		}
		f, err := os.Open(filepath.Join(site, filepath.FromSlash(r.URL.Path)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header()["Content-Type"] = js
		w.Header()["Content-Length"] = []string{strconv.FormatInt(fi.Size(), 10)}
		_, _ = io.CopyN(w, f, fi.Size())
	})
}

// server is one of the servers under test.
type server struct {
	name, url, host string
	cpu             func() time.Duration // CPU time used so far
}

// load runs wrk against path and measures the server's CPU time meanwhile.
func (s *server) load(threads, conns int, d time.Duration, path string) load.Result {
	before := s.cpu()
	r := load.Wrk(threads, conns, d, s.url+path, s.host)
	if r.Requests > 0 {
		r.CPUPerReq = float64(s.cpu()-before) / float64(time.Microsecond) / float64(r.Requests)
	}
	return r
}

// filePaths returns the paths -files names.
func filePaths(files string) []string {
	var paths []string
	for _, f := range strings.Split(files, ",") {
		switch f {
		case "page":
			paths = append(paths, "/")
		case "asset":
			paths = append(paths, load.AssetPath)
		default:
			load.Fatalf("-files: %q is neither page nor asset", f)
		}
	}
	return paths
}

// printBatching prints gantry's and nginx's batching for path.
func printBatching(path string, batch map[string][]batching) {
	for _, name := range []string{"gantry", "nginx"} {
		if bs := batch[name]; len(bs) > 0 {
			fmt.Printf("%-24s %-10s %s\n", path, name, medianBatching(bs))
		}
	}
}

// batching is how a server's work was batched over a run, per request:
// the loops' rounds of events and blocking waits (Gantry's loops only),
// and the server's context switches (its threads', or nginx's workers').
type batching struct {
	loops                   bool // rounds and waits counted
	rounds, waits, switches float64
}

// measureBatching returns the counts so far for gantry or nginx (nil for
// the other servers).
func measureBatching(name string, nginxPid int) *batching {
	switch name {
	case "gantry":
		st := load.GantryLoop.Stats()
		return &batching{loops: true, rounds: float64(st.Rounds), waits: float64(st.Waits), switches: float64(contextSwitches(os.Getpid()))}
	case "nginx":
		var n int64
		kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", nginxPid, nginxPid))
		for _, k := range strings.Fields(string(kids)) {
			pid, _ := strconv.Atoi(k)
			n += contextSwitches(pid)
		}
		return &batching{switches: float64(n)}
	}
	return nil
}

// since returns the counts from b0 to b per request.
func (b *batching) since(b0 *batching, requests int64) batching {
	n := float64(max(requests, 1))
	return batching{loops: b.loops, rounds: (b.rounds - b0.rounds) / n, waits: (b.waits - b0.waits) / n, switches: (b.switches - b0.switches) / n}
}

func medianBatching(bs []batching) string {
	med := func(f func(batching) float64) float64 {
		v := make([]float64, len(bs))
		for i, b := range bs {
			v[i] = f(b)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	sw := fmt.Sprintf("context switches %.3f", med(func(b batching) float64 { return b.switches }))
	if !bs[0].loops {
		return sw
	}
	return fmt.Sprintf("rounds %.3f, blocking waits %.3f, %s", med(func(b batching) float64 { return b.rounds }), med(func(b batching) float64 { return b.waits }), sw)
}

// contextSwitches is the voluntary and involuntary context switches of
// pid's threads so far.
func contextSwitches(pid int) int64 {
	var n int64
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				c, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += c
			}
		}
	}
	return n
}
