// Package load holds what Gantry's load benchmarks (the commands under
// bench/) share: a wrk run and the figures read from its output (Result,
// Wrk), their medians over rounds (Median), servers loaded in turn round
// after round (InTurn), the CPU time of this process and of a process tree
// (SelfCPU, TreeCPU), CPU profiles (StartProfile), Gantry's edge served in
// this process or another (StartGantry, StartGantryOff), nginx (StartNginx,
// NginxConf, NginxAccessLog, NginxVersion), the published site the static
// benchmarks serve (WriteSite), small helpers for tools, folders, access
// logs, ports and errors (NeedTools, TempDir, CountLines, FreePort,
// WaitPort, Must), and clean-ups that run when a benchmark ends, also when
// it fails (AtExit, RunExit, Fatalf). A real `gantry serve` driven through
// its API is bench/internal/platform's.
package load

import (
	"bytes"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Result is what one load of a server gives, or the medians of several.
type Result struct {
	RPS       float64       // requests per second
	P99       time.Duration // 99th percentile latency
	Requests  int64         // requests wrk completed
	CPUPerReq float64       // µs of the measured process's CPU time per request; set by the caller
}

// Median returns the median of each figure over rs, separately. Requests
// is left at zero.
func Median(rs []Result) Result {
	mid := func(v []float64) float64 {
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	var rps, p99, cpu []float64
	for _, r := range rs {
		rps = append(rps, r.RPS)
		p99 = append(p99, float64(r.P99))
		cpu = append(cpu, r.CPUPerReq)
	}
	return Result{RPS: mid(rps), P99: time.Duration(mid(p99)), CPUPerReq: mid(cpu)}
}

var (
	rpsRe   = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	p99Re   = regexp.MustCompile(`\s99%\s+([\d.]+)(us|ms|s)`)
	countRe = regexp.MustCompile(`(\d+) requests in`)
)

// Wrk runs wrk with threads threads and conns connections for d against
// url, with the header Host: host unless host is empty, and returns the
// requests per second, the p99 latency and the number of requests it
// reports (CPUPerReq is left to the caller). It ends the program with
// Fatalf when wrk fails, when some answers are not 2xx or 3xx, or when it
// gives no result.
func Wrk(threads, conns int, d time.Duration, url, host string) Result {
	var headers []string
	if host != "" {
		headers = append(headers, "Host: "+host)
	}
	return WrkHeaders(threads, conns, d, url, headers...)
}

// WrkHeaders is Wrk with any request headers ("Name: value"), e.g.
// "Connection: close" for a new connection (and TLS handshake) per request.
func WrkHeaders(threads, conns int, d time.Duration, url string, headers ...string) Result {
	args := []string{"-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns), "-d", d.String(), "--latency"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	out, err := exec.Command("wrk", append(args, url)...).CombinedOutput()
	if err != nil {
		Fatalf("wrk %s: %v\n%s", url, err, out)
	}
	if strings.Contains(string(out), "Non-2xx") {
		Fatalf("wrk %s: errors in the answers:\n%s", url, out)
	}
	var r Result
	if m := rpsRe.FindSubmatch(out); m != nil {
		r.RPS, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if m := p99Re.FindSubmatch(out); m != nil {
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[string(m[2])]
		r.P99 = time.Duration(v * float64(unit))
	}
	if m := countRe.FindSubmatch(out); m != nil {
		r.Requests, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if r.RPS == 0 {
		Fatalf("wrk %s: no result:\n%s", url, out)
	}
	return r
}

// SelfCPU is this process's user+system time: that of the Go servers the
// benchmark runs itself (Gantry's edge, a bare net/http handler). wrk,
// nginx and node run in child processes and are not counted.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TreeCPU is the user+system time of process pid and its children (nginx's
// master and workers, say), from /proc in clock ticks of 10 ms.
func TreeCPU(pid int) time.Duration {
	var ticks int64
	for _, p := range processes() {
		if p.pid == pid || p.ppid == pid {
			ticks += p.utime + p.stime
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// process is what /proc/PID/stat says of a process, times in clock ticks.
type process struct {
	pid, ppid                    int
	name                         string
	utime, stime, cutime, cstime int64 // cutime, cstime: of its children that ended
}

// processes reads /proc/*/stat.
func processes() []process {
	var ps []process
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(string(b[end+1:])) // the fields after the command name
		if len(f) < 15 {
			continue
		}
		p := process{pid: pid, name: string(b[open+1 : end])}
		p.ppid, _ = strconv.Atoi(f[1])
		for i, v := range []*int64{&p.utime, &p.stime, &p.cutime, &p.cstime} {
			*v, _ = strconv.ParseInt(f[11+i], 10, 64)
		}
		ps = append(ps, p)
	}
	return ps
}

// StartProfile starts a CPU profile of this process into file and returns
// its stop.
func StartProfile(file string) func() {
	f, err := os.Create(file)
	Must(err)
	Must(pprof.StartCPUProfile(f))
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// CountLines is the number of lines (newlines) in file, read in pieces so
// that a large access log is never held whole; 0 if it cannot be opened.
func CountLines(file string) int {
	f, err := os.Open(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	buf := make([]byte, 64<<10)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err != nil { // io.EOF at the end
			return n
		}
	}
}

// NginxVersion is what `nginx -v` says, as "nginx/1.22.1".
func NginxVersion() string {
	out, _ := exec.Command("nginx", "-v").CombinedOutput()
	return strings.TrimSpace(strings.TrimPrefix(string(out), "nginx version: "))
}

// FreePort is a TCP port on 127.0.0.1 that nothing listens on, just now.
func FreePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Must(err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// WaitPort waits up to about 5 s for something to accept connections on
// addr, and ends the program with Fatalf if nothing does.
func WaitPort(addr string) {
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	Fatalf("nothing listens on %s", addr)
}

// Must ends the program with Fatalf if err is not nil.
func Must(err error) {
	if err != nil {
		Fatalf("%v", err)
	}
}

// exits are the clean-ups run when the benchmark ends, last first, also
// when it fails.
var exits []func()

// AtExit adds f to the clean-ups that RunExit and Fatalf run.
func AtExit(f func()) { exits = append(exits, f) }

// RunExit runs the clean-ups added with AtExit, last first, once.
func RunExit() {
	for i := len(exits) - 1; i >= 0; i-- {
		exits[i]()
	}
	exits = nil
}

// Fatalf runs the clean-ups (stopping nginx, removing the temporary
// folder) and exits with the message, as log.Fatalf does.
func Fatalf(format string, args ...any) {
	RunExit()
	log.Fatalf(format, args...)
}

// Quiet measures the machine over one second before a latency benchmark
// and returns a warning when it is not quiet: more than a tenth of a CPU
// busy, with the processes that used more than a twentieth (this process
// and its children left out), else "". A forgotten polling loop in another
// shell turned a bystander's p99 from 0.3 ms into 3 ms in every load of a
// run, quiet or not.
func Quiet() string {
	total := func() (busy, all int64) {
		b, _ := os.ReadFile("/proc/stat")
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		for i, v := range f[1:] {
			n, _ := strconv.ParseInt(v, 10, 64)
			all += n
			if i != 3 && i != 4 { // idle, iowait
				busy += n
			}
		}
		return busy, all
	}
	b0, _ := total()
	procs := busyProcs()
	b1, _ := total()
	if b1-b0 <= 10 { // clock ticks of 10 ms, in the second busyProcs waits
		return ""
	}
	return fmt.Sprintf("the machine is not quiet: %d%% of a CPU was busy in the second before the run (%s)", b1-b0, strings.Join(procs, ", "))
}

// busyProcs lists the processes that used more than a twentieth of a CPU
// over the next second, busiest first ("pgrep 11%").
func busyProcs() []string {
	cpu := func(p process) int64 { return p.utime + p.stime + p.cutime + p.cstime } // with a loop's ended pgreps
	before := make(map[int]int64)
	for _, p := range processes() {
		before[p.pid] = cpu(p)
	}
	time.Sleep(time.Second)
	self := os.Getpid()
	byName := map[string]int64{} // short-lived processes (ps, a loop's sleeps) add up under their name
	for _, p := range processes() {
		if p.pid != self && p.ppid != self {
			byName[p.name] += cpu(p) - before[p.pid]
		}
	}
	type use struct {
		name  string
		ticks int64
	}
	var busy []use
	for name, ticks := range byName {
		if ticks > 5 { // of 100 a second
			busy = append(busy, use{name, ticks})
		}
	}
	slices.SortFunc(busy, func(x, y use) int { return int(y.ticks - x.ticks) })
	var out []string
	for _, u := range busy {
		out = append(out, fmt.Sprintf("%s %d%%", u.name, u.ticks))
	}
	return out
}
