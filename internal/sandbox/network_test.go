package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
)

// mustNetworkSandbox is mustSandbox for a given network.
func mustNetworkSandbox(tb testing.TB, network string) *sandbox.Sandbox {
	tb.Helper()
	mustSandbox(tb) // skips where bubblewrap cannot run
	s := sandbox.New(sandbox.Config{Network: network})
	if err := s.Available(); err != nil {
		tb.Fatalf("sandbox (network %s) not available: %v", network, err)
	}
	return s
}

// secretListener accepts TCP connections on addr, answers each with a
// marker and counts them.
type secretListener struct {
	ln       net.Listener
	accepted atomic.Int32
}

const hostSecret = "HOST-LOOPBACK-SECRET"

func listenSecret(tb testing.TB, addr string) *secretListener {
	tb.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	l := &secretListener{ln: ln}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			_, _ = io.WriteString(c, hostSecret+"\n")
			c.Close()
		}
	}()
	return l
}

func (l *secretListener) port() int { return l.ln.Addr().(*net.TCPAddr).Port }

// hostTargets returns "host:port" targets (bash /dev/tcp syntax: no
// brackets, a zone after %) for every address of this host: loopback and
// the addresses of every other interface, link-local ones with their
// interface as zone.
func hostTargets(tb testing.TB, port int) []string {
	tb.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, ifc := range ifs {
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			host := ipn.IP.String()
			if ipn.IP.IsLinkLocalUnicast() && ipn.IP.To4() == nil {
				host += "%" + ifc.Name
			}
			out = append(out, host+"/"+strconv.Itoa(port))
		}
	}
	return out
}

// dialScript tries each /dev/tcp target from inside the sandbox and prints
// what it reads, or "refused TARGET".
const dialScript = `for t in "$@"; do
  if out=$(timeout 3 bash -c 'exec 3<>/dev/tcp/'"$t"' && head -c 64 <&3' 2>/dev/null); then echo "reached $t: $out"; else echo "refused $t"; fi
done`

func TestIsolatedNetworkShutsOutHost(t *testing.T) {
	loop := listenSecret(t, "127.0.0.1:0")
	all := listenSecret(t, ":0") // every address of the host, IPv4 and IPv6
	targets := append([]string{"127.0.0.1/" + strconv.Itoa(loop.port())}, hostTargets(t, all.port())...)
	t.Logf("targets: %v", targets)

	for _, tc := range []struct {
		network   string
		wantReach bool
	}{
		{sandbox.NetworkIsolated, false},
		{sandbox.NetworkNone, false},
		{sandbox.NetworkHost, true}, // the control: the client does reach what it may
	} {
		t.Run(tc.network, func(t *testing.T) {
			s := mustNetworkSandbox(t, tc.network)
			ws := workspace(t, s, platformDir(t), "a")
			loop.accepted.Store(0)
			all.accepted.Store(0)
			c := &capture{}
			_, err := s.Run(context.Background(), sandbox.Command{
				Args:   append([]string{"bash", "-c", dialScript, "dial"}, targets...),
				Dir:    ws,
				Output: c.fn,
			})
			if err != nil {
				t.Fatalf("run: %v\n%s", err, c)
			}
			out := c.String()
			reached := loop.accepted.Load() + all.accepted.Load()
			if !tc.wantReach {
				if reached > 0 || strings.Contains(out, hostSecret) {
					t.Fatalf("the sandbox reached the host's services (%d connections accepted):\n%s", reached, out)
				}
				return
			}
			if !c.has(fmt.Sprintf("stdout: reached 127.0.0.1/%d: %s", loop.port(), hostSecret)) {
				t.Fatalf("on the host's network the client did not reach 127.0.0.1:\n%s", out)
			}
		})
	}
}

func TestIsolatedNetworkShutsOutCloudMetadata(t *testing.T) {
	s := mustNetworkSandbox(t, sandbox.NetworkIsolated)
	ws := workspace(t, s, platformDir(t), "a")
	c, _, err := run(t, s, ws, sandbox.Limits{Timeout: time.Minute},
		`for t in 169.254.169.254/80 fd00:ec2::254/80; do timeout 5 bash -c "exec 3<>/dev/tcp/$t" 2>&1 | grep -q 'Permission denied' && echo "denied $t"; done; true`)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, c)
	}
	for _, want := range []string{"stdout: denied 169.254.169.254/80", "stdout: denied fd00:ec2::254/80"} {
		if !c.has(want) {
			t.Errorf("missing %q in\n%s", want, c)
		}
	}
}

// hostCanDial reports whether this machine reaches addr over TCP.
func hostCanDial(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func TestIsolatedNetworkGoesOut(t *testing.T) {
	if testing.Short() {
		t.Skip("reaches the internet")
	}
	// npm's registry, as builds reach it (its name from npm's config).
	// Require allows the registry's addresses where they are restricted,
	// as make does for gantry serve (sandboxtest.RegistryAllow).
	host := sandboxtest.RegistryHost()
	if host == "" || !hostCanDial(host+":443") {
		t.Skipf("this machine does not reach npm's registry %q", host)
	}
	s := sandboxtest.Require(t, sandbox.Config{})
	ws := workspace(t, s, platformDir(t), "a")
	c, _, err := run(t, s, ws, sandbox.Limits{Timeout: time.Minute},
		`getent hosts `+host+` >/dev/null && echo resolved; timeout 10 bash -c 'exec 3<>/dev/tcp/`+host+`/443' && echo connected`)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, c)
	}
	for _, want := range []string{"stdout: resolved", "stdout: connected"} {
		if !c.has(want) {
			t.Errorf("missing %q in\n%s", want, c)
		}
	}
}

// freePort returns a TCP port free on 127.0.0.1 at the time of the call.
func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestForwardReachesApp(t *testing.T) {
	s := mustNetworkSandbox(t, sandbox.NetworkIsolated)
	node, err := exec.LookPath("node")
	if err != nil || !strings.HasPrefix(node, "/usr/") {
		t.Skip("node is not installed under /usr")
	}
	ws := workspace(t, s, platformDir(t), "a")
	hostPort := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	c := &capture{}
	go func() {
		_, err := s.Run(ctx, sandbox.Command{
			Args:    []string{"node", "-e", `require('http').createServer((q,s)=>s.end('ok')).listen(3000)`},
			Dir:     ws,
			Forward: []sandbox.Forward{{HostPort: hostPort, Port: 3000}},
			Output:  c.fn,
		})
		done <- err
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/", hostPort)
	client := &http.Client{Timeout: 2 * time.Second}
	var body string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := client.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if body = string(b); body == "ok" {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the app ended early: %v\n%s", err, c)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if body != "ok" {
		t.Fatalf("got %q from %s, want ok\n%s", body, url, c)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", hostPort), time.Second); err == nil {
		conn.Close()
		t.Errorf("port %d still answers after the run ended", hostPort)
	}
}

func TestForwardTakenPort(t *testing.T) {
	s := mustNetworkSandbox(t, sandbox.NetworkIsolated)
	ws := workspace(t, s, platformDir(t), "a")
	taken := listenSecret(t, "127.0.0.1:0")
	start := time.Now()
	c := &capture{}
	_, err := s.Run(context.Background(), sandbox.Command{
		Args:    []string{"sleep", "30"},
		Dir:     ws,
		Forward: []sandbox.Forward{{HostPort: taken.port(), Port: 3000}},
		Output:  c.fn,
	})
	// pasta fails before the command starts: a set-up failure, tried
	// again a few times (the port may be freed meanwhile), whose message
	// names the port; the command's output gets nothing of it.
	var se *sandbox.SetupError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a SetupError\n%s", err, c)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v, want the run to fail at once", d)
	}
	if !strings.Contains(se.Error(), strconv.Itoa(taken.port())) || c.String() != "" {
		t.Errorf("the error %q does not name the port, or the output is not empty:\n%s", se, c)
	}
}

func TestForwardRefused(t *testing.T) {
	ws := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  sandbox.Config
		fw   sandbox.Forward
		want string
	}{
		{"bad port", sandbox.Config{Mode: sandbox.ModeNone}, sandbox.Forward{HostPort: 0, Port: 3000}, "ports run from 1 to 65535"},
		{"host network, other port", sandbox.Config{Mode: sandbox.ModeNone}, sandbox.Forward{HostPort: 8081, Port: 3000}, "on the host's network"},
		{"no network", sandbox.Config{Network: sandbox.NetworkNone}, sandbox.Forward{HostPort: 8081, Port: 3000}, "has no network"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sandbox.New(tc.cfg)
			_, err := s.Run(context.Background(), sandbox.Command{Args: []string{"true"}, Dir: ws, Forward: []sandbox.Forward{tc.fw}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
	// On the host's network the same port needs nothing done.
	s := sandbox.New(sandbox.Config{Mode: sandbox.ModeNone})
	if _, err := s.Run(context.Background(), sandbox.Command{Args: []string{"true"}, Dir: ws, Forward: []sandbox.Forward{{HostPort: 3000, Port: 3000}}}); err != nil {
		t.Fatalf("same port on the host's network: %v", err)
	}
}

func TestPastaNotInstalled(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		sandboxtest.Unavailable(t, "bubblewrap is not installed")
	}
	err := sandbox.New(sandbox.Config{Pasta: "/nonexistent/pasta"}).Available()
	if !errors.Is(err, sandbox.ErrPastaNotInstalled) {
		t.Fatalf("got %v, want ErrPastaNotInstalled", err)
	}
	if !strings.Contains(err.Error(), "apt-get install passt") {
		t.Errorf("got %q, want the install hint", err)
	}
	if os.Geteuid() != 0 {
		return
	}
	// Without isolation pasta is not needed.
	if err := sandbox.New(sandbox.Config{Pasta: "/nonexistent/pasta", Network: sandbox.NetworkHost}).Available(); err != nil {
		t.Errorf("host network without pasta: %v", err)
	}
}

func TestUnknownNetwork(t *testing.T) {
	err := sandbox.New(sandbox.Config{Network: "bridge"}).Available()
	if err == nil || !strings.Contains(err.Error(), `unknown sandbox network "bridge"`) {
		t.Fatalf("got %v", err)
	}
}

// TestPastaSharesTheRunsCgroup checks that pasta, bubblewrap and the
// command all sit in the run's cgroup, and that stopping the run leaves
// none of them.
func TestPastaSharesTheRunsCgroup(t *testing.T) {
	s := mustNetworkSandbox(t, sandbox.NetworkIsolated)
	ws := workspace(t, s, platformDir(t), "a")
	marker := "sleep 4" + strconv.Itoa(int(time.Now().UnixNano()%100000)) // unique in process lists
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, sandbox.Command{
			Args: []string{"sh", "-c", "echo ready; " + marker},
			Dir:  ws,
			Output: func(_ sandbox.Stream, line string) {
				if line == "ready" {
					close(ready)
				}
			},
		})
		done <- err
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("the run ended early: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // let sh start sleep
	cgroups := map[string][]string{}   // memory cgroup → processes
	var names []string
	for _, p := range processesMatching(t, marker) {
		pid, _, _ := strings.Cut(p, ": ")
		comm, _ := os.ReadFile("/proc/" + pid + "/comm")
		names = append(names, strings.TrimSpace(string(comm)))
		b, err := os.ReadFile("/proc/" + pid + "/cgroup")
		if err != nil {
			continue
		}
		cg := ""
		for _, line := range strings.Split(string(b), "\n") {
			if parts := strings.SplitN(line, ":", 3); len(parts) == 3 && (strings.Contains(parts[1], "memory") || parts[0] == "0") {
				cg = parts[2] // the v1 memory line wins over the v2 one below it
				if strings.Contains(parts[1], "memory") {
					break
				}
			}
		}
		cgroups[cg] = append(cgroups[cg], strings.TrimSpace(string(comm)))
	}
	joined := strings.Join(names, " ")
	if !strings.Contains(joined, "pass") || !strings.Contains(joined, "bwrap") || !strings.Contains(joined, "sleep") {
		t.Fatalf("got processes %v, want pasta, bwrap and sleep", names)
	}
	t.Logf("processes by cgroup: %v", cgroups)
	if len(cgroups) != 1 {
		t.Fatalf("the run's processes are in several cgroups: %v", cgroups)
	}
	for cg := range cgroups {
		if !strings.Contains(cg, "gantry-") {
			t.Errorf("got cgroup %q, want the run's gantry-* cgroup", cg)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if left := processesMatching(t, marker); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

func TestHostLoopbackPortsReachOnlyThosePorts(t *testing.T) {
	s := mustNetworkSandbox(t, sandbox.NetworkIsolated)
	allowed := listenSecret(t, "127.0.0.1:0")
	other := listenSecret(t, "127.0.0.1:0")
	ws := workspace(t, s, platformDir(t), "a")
	c := &capture{}
	targets := []string{"127.0.0.1/" + strconv.Itoa(allowed.port()), "127.0.0.1/" + strconv.Itoa(other.port())}
	_, err := s.Run(context.Background(), sandbox.Command{
		Args:              append([]string{"bash", "-c", dialScript, "dial"}, targets...),
		Dir:               ws,
		Output:            c.fn,
		HostLoopbackPorts: []int{allowed.port()},
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, c)
	}
	if !c.has(fmt.Sprintf("stdout: reached 127.0.0.1/%d: %s", allowed.port(), hostSecret)) || allowed.accepted.Load() == 0 {
		t.Errorf("the allowed host loopback port was not reached:\n%s", c)
	}
	if other.accepted.Load() > 0 || !c.has(fmt.Sprintf("stdout: refused 127.0.0.1/%d", other.port())) {
		t.Errorf("a host loopback port that was not listed was reached:\n%s", c)
	}
}

func TestHostLoopbackPortsRefusedWithoutNetwork(t *testing.T) {
	s := mustNetworkSandbox(t, sandbox.NetworkNone)
	ws := workspace(t, s, platformDir(t), "a")
	_, err := s.Run(context.Background(), sandbox.Command{Args: []string{"true"}, Dir: ws, HostLoopbackPorts: []int{8080}})
	if err == nil || !strings.Contains(err.Error(), "no network") {
		t.Fatalf("err = %v, want a refusal: the command has no network", err)
	}
}

func TestInvalidAllowList(t *testing.T) {
	err := sandbox.New(sandbox.Config{AllowNets: []netip.Prefix{{}}}).Available()
	if err == nil || !strings.Contains(err.Error(), "sandbox allow list: \"invalid Prefix\" is not a valid prefix") {
		t.Fatalf("Available with an invalid Config.AllowNets: got %v, want the allow list named", err)
	}
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "a")
	_, err = s.Run(context.Background(), sandbox.Command{Args: []string{"true"}, Dir: ws, Allow: []netip.Prefix{{}}})
	if err == nil || !strings.Contains(err.Error(), "Command.Allow") {
		t.Fatalf("Run with an invalid Command.Allow: got %v, want Command.Allow named", err)
	}
}
