// Command tlsbench compares Gantry's HTTPS with nginx's on the same
// published site and the same certificate, in the same run: requests per
// second and p99 latency for a small HTML page and a 200 KB asset over
// kept-alive TLS connections with wrk (HTTP/1.1), new TLS connections per
// second (wrk with "Connection: close": one full handshake per request),
// and the same two files over HTTP/2 with h2load (Debian's nghttp2-client;
// ALPN h2, -m streams per connection), and the ratios.
//
//	go run ./bench/tlsbench [-d 5s] [-c 64] [-t 2] [-m 10] [-rounds 3] [-only KEY]
//
// Gantry serves as `gantry serve` does with GANTRY_TLS=files: the real
// top-level handler with the edge as live handler, on an http.Server with
// serve's settings, through crypto/tls with tlsedge's configuration (TLS
// 1.2 and 1.3, HTTP/2 offered). nginx has the same
// protocols, the same ECDSA P-256 certificate, sendfile, http2, and no access log
// (neither logs here: the TLS cost is what is measured; bench/edgebench
// compares them with logs). Session resumption is left as each server
// ships it; wrk opens each connection with a full handshake. The servers
// are loaded in turn, the order swapped each round; the figures are the
// medians over the rounds.
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/bench/internal/load"
	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/tlsedge"
)

const liveDomain = "bench.test"

func main() {
	duration := flag.Duration("d", 5*time.Second, "duration of each wrk run")
	conns := flag.Int("c", 64, "wrk connections")
	threads := flag.Int("t", 2, "wrk threads")
	rounds := flag.Int("rounds", 3, "runs of each server per test; the medians are reported")
	cpuprofile := flag.String("cpuprofile", "", "write CPU profiles of the Gantry side under load to this file + .page, .asset and .handshake")
	only := flag.String("only", "", "run only the tests whose keys contain this (page, asset, handshake, h2-page, h2-asset)")
	streams := flag.Int("m", 10, "h2load's concurrent streams per connection in the HTTP/2 tests")
	flag.Parse()
	load.NeedTools("wrk", "nginx", "h2load")

	dir := load.TempDir("gantry-tlsbench-")
	defer load.RunExit()
	site := load.WriteSite(dir)
	certFile, keyFile := writeCert(dir)

	// Gantry.
	table := edge.NewTable()
	table.Set("bench", edge.Site{DeploymentID: "bench", Dir: site, Status: gantry.DeploymentLive})
	srv := api.NewServer()
	srv.PublicHost, srv.LiveDomain = "gantry."+liveDomain, liveDomain
	srv.LiveHandler = edge.New(liveDomain, table, "https://gantry."+liveDomain)
	srv.Logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 1}))
	mgr, err := tlsedge.New(tlsedge.Config{Mode: tlsedge.ModeFiles, LiveDomain: liveDomain, PublicHost: "gantry." + liveDomain,
		CertFile: certFile, KeyFile: keyFile})
	load.Must(err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	load.Must(err)
	hs := load.HTTPServer(tlsedge.WithHSTS(srv.PublicHost, srv))
	hs.TLSConfig = mgr.TLSConfig()
	hs.ErrorLog = log.New(io.Discard, "", 0)
	go hs.Serve(tls.NewListener(ln, hs.TLSConfig))

	// nginx.
	nport := load.FreePort()
	conf := load.NginxConf(dir, fmt.Sprintf(`  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log off;
  sendfile on; tcp_nopush on; keepalive_requests 100000;
  ssl_protocols TLSv1.2 TLSv1.3;
  server {
    listen 127.0.0.1:%[1]d ssl http2;
    ssl_certificate %[3]s; ssl_certificate_key %[4]s;
    root %[2]s; index index.html; etag on;
  }
`, nport, site, certFile, keyFile))
	nginxPid := load.StartNginx(dir, conf, nport)

	type server struct {
		name, url, host string
		cpu             func() time.Duration
	}
	servers := []server{
		{"gantry", "https://" + ln.Addr().String(), "bench." + liveDomain, load.SelfCPU},
		{"nginx", fmt.Sprintf("https://127.0.0.1:%d", nport), "bench." + liveDomain, func() time.Duration { return load.TreeCPU(nginxPid) }},
	}
	// Both negotiate TLS 1.3 with a client that offers it, as wrk and
	// h2load do, and HTTP/2 when it is offered (ALPN).
	for _, s := range servers {
		c, err := tls.Dial("tcp", strings.TrimPrefix(s.url, "https://"), &tls.Config{ServerName: s.host, InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}})
		load.Must(err)
		if v := c.ConnectionState().Version; v != tls.VersionTLS13 {
			load.Fatalf("%s negotiated %s, want TLS 1.3", s.name, tls.VersionName(v))
		}
		if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
			load.Fatalf("%s negotiated ALPN %q, want h2", s.name, p)
		}
		c.Close()
	}
	fmt.Printf("wrk -t%d -c%d -d%s, %d rounds, over TLS 1.3 (ECDSA P-256 certificate); Gantry (GOMAXPROCS %d) vs %s (%d workers); %d CPUs\n\n",
		*threads, *conns, *duration, *rounds, runtime.GOMAXPROCS(0), load.NginxVersion(), runtime.NumCPU(), runtime.NumCPU())

	type test struct {
		name, key, path string
		headers         []string
		h2              bool // h2load over HTTP/2 instead of wrk
	}
	tests := []test{
		{"/ (keep-alive)", "page", "/", nil, false},
		{"200 KB asset (keep-alive)", "asset", load.AssetPath, nil, false},
		{"new TLS connections", "handshake", "/", []string{"Connection: close"}, false},
		{"/ over h2", "h2-page", "/", nil, true},
		{"200 KB asset over h2", "h2-asset", load.AssetPath, nil, true},
	}
	if *only != "" {
		tests = slices.DeleteFunc(tests, func(tc test) bool { return !strings.Contains(tc.key, *only) })
	}
	type row struct {
		name string
		res  map[string]load.Result
	}
	var rows []row
	for _, tc := range tests {
		runs := map[string][]load.Result{}
		load.InTurn(*rounds, servers, func(round int, s server) {
			stop := func() {}
			if s.name == "gantry" && *cpuprofile != "" && round == 0 {
				stop = load.StartProfile(*cpuprofile + "." + tc.key)
			}
			before := s.cpu()
			var r load.Result
			if tc.h2 {
				r = h2load(*threads, *conns, *streams, *duration, s.url+tc.path, s.host)
			} else {
				r = load.WrkHeaders(*threads, *conns, *duration, s.url+tc.path, append([]string{"Host: " + s.host}, tc.headers...)...)
			}
			if r.Requests > 0 {
				r.CPUPerReq = float64(s.cpu()-before) / float64(time.Microsecond) / float64(r.Requests)
			}
			stop()
			runs[s.name] = append(runs[s.name], r)
		})
		rw := row{name: tc.name, res: map[string]load.Result{}}
		for name, rs := range runs {
			rw.res[name] = load.Median(rs)
		}
		rows = append(rows, rw)
	}

	fmt.Printf("%-28s %-8s %10s %10s %12s\n", "test", "server", "req/s", "p99", "CPU µs/req")
	for _, rw := range rows {
		for _, s := range servers {
			r := rw.res[s.name]
			p99 := "-" // h2load reports none
			if r.P99 > 0 {
				p99 = r.P99.Round(10 * time.Microsecond).String()
			}
			fmt.Printf("%-28s %-8s %10.0f %10s %12.1f\n", rw.name, s.name, r.RPS, p99, r.CPUPerReq)
		}
	}
	fmt.Printf("\n%-28s %12s %12s %14s\n", "Gantry / nginx", "req/s ratio", "p99 ratio", "CPU/req ratio")
	for _, rw := range rows {
		g, n := rw.res["gantry"], rw.res["nginx"]
		p99 := "-"
		if n.P99 > 0 {
			p99 = fmt.Sprintf("%.2fx", float64(g.P99)/float64(n.P99))
		}
		fmt.Printf("%-28s %11.2fx %12s %13.2fx\n", rw.name, g.RPS/n.RPS, p99, g.CPUPerReq/n.CPUPerReq)
	}
	fmt.Println("\nreq/s ratio > 1: Gantry served more; p99 and CPU/req ratios < 1: Gantry was faster or cheaper.")
	fmt.Println("\"new TLS connections\": one request per connection, so its req/s is handshakes per second.")
	fmt.Printf("h2: h2load -t%d -c%d -m%d (no p99: h2load reports none).\n", *threads, *conns, *streams)
}

// h2load runs h2load over HTTP/2 (ALPN h2) with clients connections of
// streams concurrent streams each for d against url, with :authority host,
// and returns its requests per second and the number of requests done. It
// ends the program when h2load fails, gives no result or counts a request
// that failed or an answer of 4xx or 5xx.
func h2load(threads, clients, streams int, d time.Duration, url, host string) load.Result {
	out, err := exec.Command("h2load", "-t", strconv.Itoa(threads), "-c", strconv.Itoa(clients), "-m", strconv.Itoa(streams),
		"-D", strconv.Itoa(int(d.Seconds())), "-H", ":authority: "+host, url).CombinedOutput()
	if err != nil {
		load.Fatalf("h2load %s: %v\n%s", url, err, out)
	}
	var r load.Result
	if m := h2rpsRe.FindSubmatch(out); m != nil {
		r.RPS, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	m := h2reqRe.FindSubmatch(out)
	if m == nil || r.RPS == 0 {
		load.Fatalf("h2load %s: no result:\n%s", url, out)
	}
	r.Requests, _ = strconv.ParseInt(string(m[1]), 10, 64)
	if string(m[2]) != "0" || string(m[3]) != "0" || !bytes.Contains(out, []byte(" 0 4xx, 0 5xx")) {
		load.Fatalf("h2load %s: failed requests or non-2xx answers:\n%s", url, out)
	}
	return r
}

var (
	h2rpsRe = regexp.MustCompile(`finished in [\d.]+m?s, ([\d.]+) req/s`)
	h2reqRe = regexp.MustCompile(`requests: \d+ total, \d+ started, (\d+) done, \d+ succeeded, (\d+) failed, (\d+) errored`)
)

// writeCert writes a self-signed ECDSA P-256 certificate for the live
// domain's wildcard (what ACME would issue) and its key into dir.
func writeCert(dir string) (certFile, keyFile string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	load.Must(err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "*." + liveDomain},
		DNSNames:  []string{"*." + liveDomain, liveDomain},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	load.Must(err)
	kder, err := x509.MarshalECPrivateKey(key)
	load.Must(err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	load.Must(os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	load.Must(os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	return certFile, keyFile
}
