// Command hostile measures how well a bystander's site keeps being served
// while other tenants attack the machine from their builds and apps: a
// static site served by a real `gantry serve` (bin/gantry) is loaded with
// wrk, quietly and while each attack runs, and each attack's requests per
// second and p99 latency are reported as ratios to the quiet figures
// measured next to it in the same run.
//
//	go run ./bench/hostile [-gantry bin/gantry] [-d 8s] [-c 16] [-t 2] [-rounds 1] [-only NAME]
//
// The attacks go through the product as a tenant would send them
// (bench/internal/platform): each attacker signs up through the API,
// creates a project from a repository on a local git server (git's
// git-http-backend on loopback, allowed with
// GANTRY_GIT_ALLOW_HOSTS=127.0.0.1) with a build or start command that is
// the attack, and deploys it; once the attack runs, wrk loads the
// bystander's site for the duration, and then the project is deleted and
// the next quiet load waits until every process of the attack is gone (its
// cgroups removed). The attacks:
//
//   - fork bomb: a build running `bomb() { bomb | bomb & }; bomb`. The
//     platform ends a build once the kernel has refused it a process at
//     its limit (1024), so the attacker deploys it again each time, for
//     as long as the load runs: the load meets a new bomb every second
//     or so, and the pipeline's own work for each deploy (the clone, the
//     sandbox's start) besides;
//   - 8 spinners: a build running eight busy shell loops;
//   - app, 4 spinners: a live app (node) that also runs four busy loops;
//   - 300 MB of logs: a build printing 300 MB of 100-byte lines, again
//     and again;
//   - 150k small JS files: a build writing 150,000 scripts of 1.2 KB
//     into its output, more than the 20,000 files a site may publish
//     (build.MaxSiteFiles): the platform counts them and fails the build
//     before copying any; deployed again each time it fails, so the load
//     meets the writing of the scripts and the platform's refusal in turn;
//   - memory hog: a live app whose second process allocates past the app's
//     memory limit: the whole app is ended (see the sandbox's oomGuard),
//     counts a crash and is started again after its backoff;
//   - inode flood: a build creating files until its volume has no inode
//     left (200,000), deployed again each time the platform ends it, so
//     that the load meets the floods and the removal of the flooded
//     workspaces alike;
//   - 6 GB into .git: a build writing 1 GB files into x/.git until its
//     volume is full (4 GiB), deployed again likewise. Runs' disk IO is
//     bounded by their cgroup on the volume's devices, and workspaces are
//     removed in the idle I/O class (internal/sandbox).
//
// Besides, "previews beyond the plan" (previews.go) has a Free account ask
// for 18 server apps (3 projects, 5 deploy-hook previews each) and checks
// that no more than its plan's 5 end live and awake.
//
// Targets: under each attack the bystander keeps at least 75% of its quiet
// requests per second and at most twice its quiet p99. Quiet loads come
// before the first attack and after each one; an attack is compared with
// the mean of the two around it, so that a machine shared with other work
// drifting between loads moves both alike. Besides the ratios the table
// shows the CPU time the attack's cgroups were charged during the load and
// that of the gantry process (edge, API, the build's log handling), in
// CPUs: on two cores shared with wrk, gantry's edge loops are the
// bottleneck of the quiet load itself.
//
// It must run as root (the sandbox needs it), with wrk, git and node
// installed; `make bench` builds bin/gantry and installs wrk first.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gantryhq/gantry/bench/internal/load"
	"github.com/gantryhq/gantry/bench/internal/platform"
)

// attack is one hostile tenant's project.
type attack struct {
	name  string
	build string // build command (a build attack), or
	start string // start command (an app attack)
	// ended is what the deployment's error says when the platform ends
	// the attack: the benchmark checks it does, then deploys the attack
	// again each time it has ended, while the load runs.
	ended string
}

// The attacks. Build attacks print "attack started" first, which the
// benchmark waits for in the build log; app attacks wait until live.
var attacks = []attack{
	{name: "fork bomb in a build",
		build: `echo attack started; bomb() { bomb | bomb & }; bomb; while :; do sleep 1; done`,
		ended: "reached the limit of 1,024 processes"},
	{name: "8 CPU spinners in a build",
		build: `echo attack started; for i in 1 2 3 4 5 6 7 8; do (while :; do :; done) & done; wait`},
	{name: "app with 4 CPU spinners",
		start: `for i in 1 2 3 4; do (while :; do :; done) & done; exec node server.js`},
	{name: "build printing 300 MB of logs",
		build: `echo attack started; while :; do yes "` + strings.Repeat("x", 99) + `" | head -c 300000000; done`},
	{name: "build publishing 150k small JS files",
		build: `node scripts.js`,
		ended: "the most a site may publish"},
	{name: "app allocating past its memory limit",
		start: `node server.js & while :; do node hog.js; done`},
	// Disk floods, each ended by the platform at its volume's limit and
	// deployed again: the load meets floods and the removal of the
	// flooded workspaces (in the idle I/O class) in turn.
	{name: "inode flood in a build",
		build: `echo attack started; mkdir f && cd f && seq 1 1000000 | xargs touch 2>/dev/null; exit 1`,
		ended: "the limit"},
	{name: "6 GB written into .git in a build",
		build: `echo attack started; mkdir -p x/.git && for i in 1 2 3 4 5 6; do head -c 1000000000 /dev/zero > x/.git/pack$i 2>/dev/null || exit 1; done; exit 1`,
		ended: "the limit"},
}

// The attackers' repository: a page (so that detection finds a static
// site), an HTTP server, a memory hog and a writer of many scripts.
var attackFiles = map[string]string{
	"index.html": "<h1>attack</h1>",
	"server.js":  `require('http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT))` + "\n",
	"hog.js":     `const a = []; for (;;) a.push(Buffer.alloc(16 << 20, 1))` + "\n",
	// The line the benchmark waits for, then 150,000 scripts of 1.2 KB,
	// which the platform refuses to publish (more than 20,000 files).
	"scripts.js": `const fs = require('fs'); fs.mkdirSync('dist', {recursive: true});
console.log('attack started');
for (let i = 0; i < 150000; i++) {
  let s = 'export const m' + i + ' = [';
  while (s.length < 1200) s += JSON.stringify(Math.random().toString(36)) + ',';
  fs.writeFileSync('dist/m' + i + '.js', s + '];\n');
}
`,
}

// page is the bystander's site: a small HTML page, like edgebench's.
const page = `<!doctype html><html><head><meta charset="utf-8"><title>Bystander</title>
<link rel="stylesheet" href="/style.css"></head><body><main><h1>Still here</h1>
<p>A student's portfolio that should not notice its neighbours.</p></main></body></html>
`

func main() {
	bin := flag.String("gantry", "bin/gantry", "the gantry binary to run")
	duration := flag.Duration("d", 8*time.Second, "duration of each wrk load")
	conns := flag.Int("c", 16, "wrk connections")
	threads := flag.Int("t", 2, "wrk threads")
	rounds := flag.Int("rounds", 1, "times each attack is measured; the table shows the medians of the ratios")
	only := flag.String("only", "", "run only the attacks whose name contains this")
	flag.Parse()
	defer load.RunExit()

	if os.Geteuid() != 0 {
		load.Fatalf("hostile: run as root: the sandbox needs it")
	}
	if w := load.Quiet(); w != "" {
		fmt.Fprintf(os.Stderr, "hostile: warning: %s\n", w)
	}
	for _, tool := range []string{"wrk", "git", "node", *bin} {
		if _, err := exec.LookPath(tool); err != nil && !strings.Contains(tool, "/") {
			load.Fatalf("hostile: %s is not installed (make bench installs wrk)", tool)
		}
	}
	abs, err := filepath.Abs(*bin)
	load.Must(err)
	if _, err := os.Stat(abs); err != nil {
		load.Fatalf("hostile: %s not found: run `make build` first", abs)
	}

	tmp := load.TempDir("gantry-hostile-") // 0755: the sandbox user passes through to the data folder

	git := platform.StartGit(filepath.Join(tmp, "git"))
	siteURL := git.Repo("bystander/site", map[string]string{"index.html": page, "style.css": "body{margin:0 auto;max-width:40em}"})
	attackURL := git.Repo("attacker/attack", attackFiles)

	// gantry's log has a line for every request of the loads: a failed
	// wait does not print it (platform.Options.LogOnFailure).
	g := platform.Start(abs, tmp, platform.Options{StopWait: 30 * time.Second})
	by := g.SignUp("bystander", "")
	site := by.CreateProject("portfolio", siteURL, map[string]string{"outputDirectory": "."})
	by.WaitLive(by.Deploy(site.ID))
	host := fmt.Sprintf("%s.localhost:%d", site.Subdomain, g.Port())
	url := fmt.Sprintf("http://127.0.0.1:%d/", g.Port())
	fmt.Printf("bystander: %s (%d connections, %d threads, %s per load), gantry pid %d\n", host, *conns, *threads, *duration, g.PID())

	var chosen []attack
	for _, a := range attacks {
		if strings.Contains(a.name, *only) {
			chosen = append(chosen, a)
		}
	}
	attackers := make([]*platform.Tenant, len(chosen))
	for i := range chosen {
		attackers[i] = g.SignUp(fmt.Sprintf("attacker%d", i+1), "")
	}

	measure := func() sample {
		g0, a0 := cpu(g.PID()), runsCPU(g.PID())
		t0 := time.Now()
		r := load.Wrk(*threads, *conns, *duration, url, host)
		wall := time.Since(t0)
		g1, a1 := cpu(g.PID()), runsCPU(g.PID())
		return sample{r: r, gantry: cpus(g1-g0, wall), attack: cpus(diff(a0, a1), wall)}
	}
	load.Wrk(*threads, *conns, time.Second, url, host) // warm up
	ratios := make([][]ratio, len(chosen))
	for round := 1; round <= *rounds; round++ {
		before := measure()
		fmt.Printf("round %d  quiet: %.0f req/s, p99 %s\n", round, before.r.RPS, fmtDur(before.r.P99))
		for i, a := range chosen {
			cfg := map[string]string{"outputDirectory": "."}
			if a.build != "" {
				cfg["buildCommand"] = a.build
			} else {
				cfg = map[string]string{"startCommand": a.start}
			}
			t := attackers[i]
			p := t.CreateProject(fmt.Sprintf("attack-%d-%d", i+1, round), attackURL, cfg)
			id := t.Deploy(p.ID)
			var again *redeployer
			switch {
			case a.ended != "":
				t0 := time.Now()
				msg := waitEndedWith(t, id, a.ended)
				fmt.Printf("round %d  %s: ended by the platform within %.1f s of the deploy: %q\n", round, a.name, time.Since(t0).Seconds(), msg)
				again = redeploy(t, p.ID, a.ended)
			case a.build != "":
				t.WaitLog(id, "attack started")
			default:
				t.WaitLive(id)
			}
			time.Sleep(time.Second) // let the attack get going
			under := measure()
			if again != nil {
				n := again.stop()
				fmt.Printf("round %d  %s: deployed %d times during the load, each ended by the platform\n", round, a.name, n)
			}
			t.DeleteProject(p.ID)
			waitRunsGone(g.PID(), 30*time.Second)
			after := measure()
			base := mean(before.r, after.r)
			rt := ratio{rps: under.r.RPS / base.RPS, p99: float64(under.r.P99) / float64(base.P99), attack: under.attack, gantry: under.gantry}
			ratios[i] = append(ratios[i], rt)
			fmt.Printf("round %d  %-38s %.0f req/s, p99 %s (quiet around it: %.0f req/s, p99 %s); attack %.2f CPUs, gantry %.2f CPUs\n",
				round, a.name+":", under.r.RPS, fmtDur(under.r.P99), base.RPS, fmtDur(base.P99), under.attack, under.gantry)
			before = after
		}
	}

	if strings.Contains(previewsCase, *only) {
		previewsBeyondThePlan(g, git, filepath.Join(tmp, "git")) // previews.go
	}

	fmt.Printf("\n| attack | req/s ratio | p99 ratio | attack CPUs | gantry CPUs | target (≥ 0.75, ≤ 2×) |\n|---|---|---|---|---|---|\n")
	for i, a := range chosen {
		if len(ratios[i]) == 0 { // -rounds 0: the table stays empty
			continue
		}
		m := medianRatio(ratios[i])
		met := "met"
		if m.rps < 0.75 || m.p99 > 2 {
			met = "not met"
		}
		fmt.Printf("| %s | %.2f | %.2f | %.2f | %.2f | %s |\n", a.name, m.rps, m.p99, m.attack, m.gantry, met)
	}
}

// redeployer deploys a project again each time its deployment has ended,
// until stop.
type redeployer struct {
	quit chan struct{}
	done chan int // the number of deployments that ended
}

// redeploy starts deploying project id of t again and again; each
// deployment must end with an error saying ended.
func redeploy(t *platform.Tenant, id, ended string) *redeployer {
	r := &redeployer{quit: make(chan struct{}), done: make(chan int, 1)}
	go func() {
		n := 0
		for {
			select {
			case <-r.quit:
				r.done <- n
				return
			default:
			}
			waitEndedWith(t, t.Deploy(id), ended)
			n++
		}
	}()
	return r
}

// waitEndedWith waits until deployment id of t has ended and returns its
// error, which must say ended.
func waitEndedWith(t *platform.Tenant, id, ended string) string {
	d := t.WaitEnded(id)
	if !strings.Contains(d.Error, ended) {
		load.Fatalf("deployment %s ended with %s %q, want an error saying %q", id, d.Status, d.Error, ended)
	}
	return d.Error
}

// stop stops the redeploys once the one in progress has ended, and
// returns how many ended.
func (r *redeployer) stop() int {
	close(r.quit)
	return <-r.done
}

// sample is one wrk load and the CPU spent meanwhile.
type sample struct {
	r      load.Result
	gantry float64 // CPUs used by the gantry process
	attack float64 // CPUs charged to the attack's cgroups
}

// ratio is one attack's load compared with the quiet ones around it.
type ratio struct {
	rps, p99       float64
	attack, gantry float64
}

func mean(a, b load.Result) load.Result {
	return load.Result{RPS: (a.RPS + b.RPS) / 2, P99: (a.P99 + b.P99) / 2}
}

// medianRatio is the median of each figure of rs, separately.
func medianRatio(rs []ratio) ratio {
	pick := func(f func(ratio) float64) float64 {
		var v []load.Result
		for _, r := range rs {
			v = append(v, load.Result{RPS: f(r)})
		}
		return load.Median(v).RPS
	}
	return ratio{
		rps:    pick(func(r ratio) float64 { return r.rps }),
		p99:    pick(func(r ratio) float64 { return r.p99 }),
		attack: pick(func(r ratio) float64 { return r.attack }),
		gantry: pick(func(r ratio) float64 { return r.gantry }),
	}
}

func cpus(d, wall time.Duration) float64 { return float64(d) / float64(wall) }

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// cpu is the gantry process's own user+system time (its threads, not
// the sandboxed runs it starts), from /proc in clock ticks of 10 ms.
func cpu(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// runDirs lists the cgroup folders of the runs of the gantry process pid
// ("gantry-<pid>-…", see internal/sandbox) in every hierarchy under
// /sys/fs/cgroup.
func runDirs(pid int) []string {
	prefix := fmt.Sprintf("gantry-%d-", pid)
	var dirs []string
	_ = filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), prefix) {
			dirs = append(dirs, p)
			return fs.SkipDir
		}
		if strings.Count(p, "/") > 7 {
			return fs.SkipDir
		}
		return nil
	})
	return dirs
}

// runsCPU is the CPU time charged to each of the run cgroups of the
// gantry process pid, by folder: cpuacct.usage on v1, usage_usec of
// cpu.stat on v2.
func runsCPU(pid int) map[string]time.Duration {
	m := make(map[string]time.Duration)
	for _, d := range runDirs(pid) {
		if b, err := os.ReadFile(filepath.Join(d, "cpuacct.usage")); err == nil {
			ns, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			m[d] = time.Duration(ns)
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "cpu.stat"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
				us, _ := strconv.ParseInt(v, 10, 64)
				m[d] = time.Duration(us) * time.Microsecond
			}
		}
	}
	return m
}

// diff is the CPU time the cgroups used between the two readings: all of
// it for a cgroup made in between (an app started again after a crash),
// none for one removed in between (whose figure went with it).
func diff(a, b map[string]time.Duration) time.Duration {
	var d time.Duration
	for k, v := range b {
		d += v - a[k]
	}
	return d
}

// waitRunsGone waits until none of the run cgroups of the gantry process
// pid is left: the deleted project's processes are all gone.
func waitRunsGone(pid int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for len(runDirs(pid)) > 0 {
		if time.Now().After(deadline) {
			load.Fatalf("the attack's cgroups are still there after %s: %v", limit, runDirs(pid))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
