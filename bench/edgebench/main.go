// Command edgebench compares Gantry's edge with nginx serving the same
// published site, in the same run, with wrk: requests per second and p99
// latency for a small HTML page and a 200 KB asset, and the ratios.
//
//	go run ./bench/edgebench [-d 10s] [-c 64] [-t 2]
//
// Both servers listen on loopback. Gantry serves through its whole request
// path (host routing, request log, edge); its request log goes to
// /dev/null and nginx's access log is off, so neither pays for disk writes.
package main

import (
	"crypto/rand"
	"encoding/base64"
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
	"strconv"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/edge"
)

func main() {
	duration := flag.Duration("d", 10*time.Second, "duration of each wrk run")
	conns := flag.Int("c", 64, "wrk connections")
	threads := flag.Int("t", 2, "wrk threads")
	flag.Parse()
	for _, tool := range []string{"wrk", "nginx"} {
		if _, err := exec.LookPath(tool); err != nil {
			log.Fatalf("%s is not installed: run `make deps-bench` (apt-get install nginx wrk)", tool)
		}
	}

	dir, err := os.MkdirTemp("", "gantry-edgebench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	site := filepath.Join(dir, "site")
	must(os.MkdirAll(filepath.Join(site, "assets"), 0o755))
	must(os.WriteFile(filepath.Join(site, "index.html"), []byte(`<!doctype html><html><head><meta charset="utf-8"><title>Bench</title></head><body><h1>Hello from a student project</h1><p>`+strings.Repeat("Gantry ", 40)+`</p></body></html>`), 0o644))
	asset := make([]byte, 150*1024)
	rand.Read(asset)
	// 200 KB of base64 text: a realistic bundle size, compressible like JS is not — the
	// benchmark measures serving, not compression.
	must(os.WriteFile(filepath.Join(site, "assets", "app-3f9a2c1d.js"), []byte(base64.StdEncoding.EncodeToString(asset)[:200*1024]), 0o644))

	// Gantry: the real top-level handler with the edge as live handler.
	table := edge.NewTable()
	table.Set("bench", edge.Site{DeploymentID: "bench", Dir: site, Status: gantry.DeploymentLive})
	srv := api.NewServer()
	srv.PublicHost, srv.LiveDomain = "localhost", "localhost"
	srv.LiveHandler = edge.New("localhost", table, "http://localhost")
	srv.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	gln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	go (&http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}).Serve(gln)

	// nginx on the same folder.
	nport := freePort()
	conf := fmt.Sprintf(`worker_processes auto;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
daemon off;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  sendfile on; tcp_nopush on; keepalive_requests 100000;
  client_body_temp_path %[1]s/tmp; proxy_temp_path %[1]s/tmp; fastcgi_temp_path %[1]s/tmp; uwsgi_temp_path %[1]s/tmp; scgi_temp_path %[1]s/tmp;
  server { listen 127.0.0.1:%[2]d; root %[3]s; index index.html; etag on; }
}
`, dir, nport, site)
	must(os.MkdirAll(filepath.Join(dir, "tmp"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644))
	nginx := exec.Command("nginx", "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log"))
	nginx.Stderr = os.Stderr
	must(nginx.Start())
	defer nginx.Process.Kill()
	waitPort(fmt.Sprintf("127.0.0.1:%d", nport))

	gantryURL := "http://" + gln.Addr().String()
	nginxURL := fmt.Sprintf("http://127.0.0.1:%d", nport)
	fmt.Printf("wrk -t%d -c%d -d%s, Gantry edge vs nginx %s on the same folder\n\n", *threads, *conns, *duration, nginxVersion())
	fmt.Printf("%-22s %14s %14s %10s %12s %12s %10s\n", "file", "gantry req/s", "nginx req/s", "ratio", "gantry p99", "nginx p99", "p99 ratio")
	for _, path := range []string{"/", "/assets/app-3f9a2c1d.js"} {
		g := runWrk(*threads, *conns, *duration, gantryURL+path, "bench.localhost")
		n := runWrk(*threads, *conns, *duration, nginxURL+path, "")
		fmt.Printf("%-22s %14.0f %14.0f %9.2fx %12s %12s %9.2fx\n", path, g.rps, n.rps, g.rps/n.rps,
			g.p99.Round(time.Microsecond), n.p99.Round(time.Microsecond), float64(g.p99)/float64(n.p99))
	}
	fmt.Println("\nratio > 1 means Gantry served more requests per second; p99 ratio < 1 means lower tail latency.")
}

type result struct {
	rps float64
	p99 time.Duration
}

var (
	rpsRe = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	p99Re = regexp.MustCompile(`\s99%\s+([\d.]+)(us|ms|s)`)
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
	if r.rps == 0 {
		log.Fatalf("wrk %s: no result:\n%s", url, out)
	}
	return r
}

func nginxVersion() string {
	out, _ := exec.Command("nginx", "-v").CombinedOutput()
	return strings.TrimSpace(strings.TrimPrefix(string(out), "nginx version: "))
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitPort(addr string) {
	for i := 0; i < 100; i++ {
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
