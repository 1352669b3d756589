// Package clusterbench measures Gantry's replicas (issue 26, point 9;
// docs/scaling.md) with the real binaries, each figure beside its
// reference in the same run:
//
//   - static requests per second of a site through replica B, which did
//     not build it (B fetched it from the object store into its site
//     cache), against the same site on a single node (one `gantry serve`
//     on SQLite, today's default) and on replica A, which built it. wrk,
//     each server loaded alone, in turn, round after round; medians of the
//     rounds. Target: B ≥ 0.95× the single node.
//
//   - go-live on A → served by B's edge: a new commit of the site is
//     deployed through A, and the time from its go-live commit (its status
//     read from the database every 2 ms) to B's edge answering the new
//     page (asked every 5 ms) is taken, beside the same time for A's own
//     edge. Any answer other than 200 meanwhile is counted (it must be
//     none). Target: B's p50 ≤ 300 ms.
//
// Two replicas (GANTRY_NODE_ID a and b, a peer address each, one secret
// key, the default lease) share a throwaway PostgreSQL and an object
// store: cmd/s3serve on loopback (internal/objstore/s3test). B has no
// builder role, so every build runs on A. Run it as root (the sandbox)
// with wrk and git installed, under scripts/with-postgres:
//
//	scripts/with-postgres go test ./bench/clusterbench -run '^$' -bench Cluster -benchtime 1x \
//	    [-args -d 5s -rounds 3 -golives 20]
//
// `make bench` builds bin/gantry (or set GANTRY_BIN) and runs it so.
package clusterbench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/gantryhq/gantry/bench/internal/load"
	"github.com/gantryhq/gantry/bench/internal/platform"
	"github.com/gantryhq/gantry/internal/gittest"
	"github.com/gantryhq/gantry/internal/objstore/s3test"
)

var (
	duration = flag.Duration("d", 5*time.Second, "duration of each wrk load")
	rounds   = flag.Int("rounds", 3, "rounds of the static loads (medians)")
	golives  = flag.Int("golives", 20, "go-lives timed")
)

// server is one gantry whose edge is loaded.
type server struct {
	name string
	g    *platform.Gantry
	host string // the site's Host header
}

func BenchmarkCluster(b *testing.B) {
	defer load.RunExit()
	dbURL := os.Getenv("GANTRY_TEST_DATABASE_URL")
	if dbURL == "" {
		b.Fatal("clusterbench needs PostgreSQL: run it under scripts/with-postgres (make bench does)")
	}
	if os.Geteuid() != 0 {
		b.Fatal("clusterbench: run as root: the sandbox needs it")
	}
	load.NeedTools("wrk", "git")
	bin := os.Getenv("GANTRY_BIN")
	if bin == "" {
		bin, _ = filepath.Abs("../../bin/gantry")
	}
	if _, err := os.Stat(bin); err != nil {
		b.Fatalf("no gantry binary at %s: run make build (or set GANTRY_BIN)", bin)
	}
	if w := load.Quiet(); w != "" {
		fmt.Printf("clusterbench: warning: %s\n", w)
	}
	tmp := load.TempDir("gantry-clusterbench-")
	s3 := s3test.Start(b)
	git := gittest.NewServer(b)
	files := siteFiles(tmp, "version 0")
	repo := git.Repo(b, "bench/site", "main", "site", files)

	// The reference: one node, today's default (SQLite, local folders).
	single := platform.Start(bin, filepath.Join(tmp, "single"), platform.Options{
		Env: []string{"GANTRY_LOG_LEVEL=warn"}, LogOnFailure: true})
	// The replicas: A builds, B only serves (no builder role).
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	shared := append([]string{"GANTRY_DATABASE_URL=" + dbURL, "GANTRY_SECRET_KEY=" + hex.EncodeToString(key),
		"GANTRY_LOG_LEVEL=warn"}, s3.Env("clusterbench")...)
	replica := func(node string, extra ...string) *platform.Gantry {
		env := append(slices.Clone(shared), "GANTRY_NODE_ID="+node,
			fmt.Sprintf("GANTRY_PEER_ADDR=127.0.0.1:%d", load.FreePort()))
		return platform.Start(bin, filepath.Join(tmp, node), platform.Options{Env: append(env, extra...), LogOnFailure: true})
	}
	a := replica("a")
	rb := replica("b", "GANTRY_ROLES=api,edge,runner")

	solo := single.SignUp("solo", "")
	sp := solo.CreateProject("site", repo, map[string]string{"outputDirectory": "."})
	solo.WaitLive(solo.Deploy(sp.ID))
	ada := a.SignUp("ada", "")
	cp := ada.CreateProject("site", repo, map[string]string{"outputDirectory": "."})
	ada.WaitLive(ada.Deploy(cp.ID))

	servers := []server{
		{"single node (SQLite)", single, sp.Subdomain + ".localhost"},
		{"replica A (built it)", a, cp.Subdomain + ".localhost"},
		{"replica B (object store, site cache)", rb, cp.Subdomain + ".localhost"},
	}
	// B hears of the go-live through the change feed a moment after A's
	// API says live, and fetches the site on its first request.
	for _, s := range servers {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			code, body := get(s.g.Port(), s.host)
			if code == 200 && strings.Contains(body, "version 0") {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s: GET / still answered %d after 30 s: %.200q", s.name, code, body)
			}
		}
	}
	b.ResetTimer()
	static(b, servers)
	goLive(b, git, ada, cp, a, rb, dbURL)
}

// siteFiles is the static benchmarks' site (load.WriteSite: a small page
// and a 200 KB asset) with the page saying version.
func siteFiles(tmp, version string) map[string]string {
	dir := load.WriteSite(filepath.Join(tmp, "site-"+strings.ReplaceAll(version, " ", "-")))
	out := map[string]string{}
	for _, name := range []string{"index.html", strings.TrimPrefix(load.AssetPath, "/")} {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		load.Must(err)
		out[name] = string(data)
	}
	out["index.html"] = strings.Replace(out["index.html"], "<h1>", "<h1>"+version+": ", 1)
	return out
}

// static loads each server's site alone, in turn, and reports the medians
// and B's ratio to the single node.
func static(b *testing.B, servers []server) {
	fmt.Printf("\nstatic files: wrk 2 threads, 64 connections, %s per load, %d rounds (medians)\n\n", *duration, *rounds)
	fmt.Println("| file | server | req/s | p99 | ratio to the single node |\n|---|---|---|---|---|")
	for _, path := range []string{"/", load.AssetPath} {
		got := map[string][]load.Result{}
		for _, s := range servers {
			load.Wrk(2, 64, time.Second, url(s.g.Port(), path), s.host) // warm up
		}
		load.InTurn(*rounds, servers, func(_ int, s server) {
			got[s.name] = append(got[s.name], load.Wrk(2, 64, *duration, url(s.g.Port(), path), s.host))
		})
		ref := load.Median(got[servers[0].name])
		for _, s := range servers {
			m := load.Median(got[s.name])
			ratio := m.RPS / ref.RPS
			fmt.Printf("| `%s` | %s | %.0f | %.2f ms | %.2fx |\n", path, s.name, m.RPS, float64(m.P99)/float64(time.Millisecond), ratio)
			if s.name == servers[2].name {
				verdict := "met"
				if ratio < 0.95 {
					verdict = "not met"
				}
				fmt.Printf("|  | replica B / single node (target ≥ 0.95x): %s | | | |\n", verdict)
				b.ReportMetric(ratio, map[bool]string{true: "B/single-html", false: "B/single-asset"}[path == "/"])
			}
		}
	}
}

// goLive deploys n new commits of the site through A and times, from each
// go-live's commit, when A's and B's edges answer the new page.
func goLive(b *testing.B, git *gittest.Server, ada *platform.Tenant, p platform.Project, a, rb *platform.Gantry, dbURL string) {
	db, err := sql.Open("pgx", dbURL)
	load.Must(err)
	defer db.Close()
	host := p.Subdomain + ".localhost"
	var onA, onB []time.Duration
	var bad atomic.Int64
	for i := 1; i <= *golives; i++ {
		version := fmt.Sprintf("version %d", i)
		git.Repo(b, "bench/site", "main", version, map[string]string{"index.html": siteFiles(b.TempDir(), version)["index.html"]})
		id := ada.Deploy(p.ID)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		live := make(chan time.Time, 1)
		go func() { live <- wentLive(ctx, b, db, id) }()
		seen := func(g *platform.Gantry) chan time.Time {
			ch := make(chan time.Time, 1)
			go func() { ch <- served(ctx, g.Port(), host, version, &bad) }()
			return ch
		}
		chA, chB := seen(a), seen(rb)
		tLive, tA, tB := <-live, <-chA, <-chB
		cancel()
		if tLive.IsZero() || tA.IsZero() || tB.IsZero() {
			b.Fatalf("go-live %d: not live and served on both replicas within 2 minutes (live %v, A %v, B %v)",
				i, !tLive.IsZero(), !tA.IsZero(), !tB.IsZero())
		}
		onA = append(onA, max(tA.Sub(tLive), 0))
		onB = append(onB, max(tB.Sub(tLive), 0))
		ada.WaitLive(id) // its build's last steps end before the next one
	}
	slices.Sort(onA)
	slices.Sort(onB)
	fmt.Printf("\ngo-live through A → the new page served (from the commit of the go-live; %d go-lives)\n\n", len(onB))
	fmt.Println("| edge | p50 | p99 | max |\n|---|---|---|---|")
	fmt.Printf("| replica B (change feed, then a fetch from the object store) | %s | %s | %s |\n", ms(pct(onB, 50)), ms(pct(onB, 99)), ms(onB[len(onB)-1]))
	fmt.Printf("| replica A (the builder's own edge: the reference) | %s | %s | %s |\n", ms(pct(onA, 50)), ms(pct(onA, 99)), ms(onA[len(onA)-1]))
	verdict := "met"
	if pct(onB, 50) > 300*time.Millisecond {
		verdict = "not met"
	}
	fmt.Printf("B's p50 %s (target ≤ 300 ms): %s; answers other than 200 while going live: %d (must be 0)\n\n", ms(pct(onB, 50)), verdict, bad.Load())
	b.ReportMetric(float64(pct(onB, 50))/float64(time.Millisecond), "golive-B-p50-ms")
	if n := bad.Load(); n > 0 {
		b.Errorf("%d answers other than 200 while going live", n)
	}
}

// wentLive reads deployment id's status from the database every 2 ms
// and returns when it turned live (zero when ctx ended first); a failed
// deployment ends the benchmark.
func wentLive(ctx context.Context, b *testing.B, db *sql.DB, id string) time.Time {
	for ctx.Err() == nil {
		var status, errText string
		if err := db.QueryRowContext(ctx, "SELECT status, COALESCE(error, '') FROM deployments WHERE id = $1", id).Scan(&status, &errText); err == nil {
			switch status {
			case "live":
				return time.Now()
			case "failed":
				b.Errorf("deployment %s failed: %s", id, errText)
				return time.Time{}
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Time{}
}

// served asks the edge on port for / of host every 5 ms and returns when
// the answer holds want (zero when ctx ended first); answers other than
// 200 are counted in bad.
func served(ctx context.Context, port int, host, want string, bad *atomic.Int64) time.Time {
	for ctx.Err() == nil {
		code, body := get(port, host)
		if code == 200 && strings.Contains(body, want+":") {
			return time.Now()
		}
		if code != 200 {
			bad.Add(1)
			fmt.Printf("  %s on :%d answered %d while going live\n", host, port, code)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Time{}
}

var client = &http.Client{Timeout: 30 * time.Second}

func get(port int, host string) (int, string) {
	req, _ := http.NewRequest("GET", url(port, "/"), nil)
	req.Host = host
	res, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

func url(port int, path string) string { return fmt.Sprintf("http://127.0.0.1:%d%s", port, path) }

func pct(v []time.Duration, p int) time.Duration {
	i := (len(v)*p + 99) / 100
	return v[min(max(i-1, 0), len(v)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
