package sandbox_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
)

// A lab is two network namespaces the test makes: "inside", where the
// sandbox runs as if it were the host, and "outside", the rest of the
// network, joined by a veth pair (inside 10.200.0.2/24 and fd99::2/64,
// routing everything through outside's 10.200.0.1 and fd99::1). Outside
// owns, on its loopback interface, the addresses a sandboxed command tries to
// reach. No packet leaves the two namespaces.
type lab struct {
	in, out string // namespace names
}

// ipCmd runs iproute2's ip with args and fails the test on error.
func ipCmd(tb testing.TB, args ...string) {
	tb.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// newLab makes the two namespaces, removed when tb's test ends, with
// targets as outside's own addresses.
func newLab(tb testing.TB, targets []netip.Addr) *lab {
	tb.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		tb.Fatal("ip (iproute2) is not installed: run make deps")
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	l := &lab{in: "gantry-in-" + id, out: "gantry-out-" + id}
	for _, ns := range []string{l.in, l.out} {
		ipCmd(tb, "netns", "add", ns)
		tb.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", ns).Run() })
		ipCmd(tb, "-n", ns, "link", "set", "lo", "up")
	}
	ipCmd(tb, "-n", l.in, "link", "add", "vin", "type", "veth", "peer", "name", "vout", "netns", l.out)
	ipCmd(tb, "-n", l.in, "addr", "add", "10.200.0.2/24", "dev", "vin")
	ipCmd(tb, "-n", l.in, "addr", "add", "fd99::2/64", "dev", "vin", "nodad")
	ipCmd(tb, "-n", l.in, "link", "set", "vin", "up")
	ipCmd(tb, "-n", l.in, "route", "add", "default", "via", "10.200.0.1")
	ipCmd(tb, "-n", l.in, "-6", "route", "add", "default", "via", "fd99::1")
	ipCmd(tb, "-n", l.out, "addr", "add", "10.200.0.1/24", "dev", "vout")
	ipCmd(tb, "-n", l.out, "addr", "add", "fd99::1/64", "dev", "vout", "nodad")
	ipCmd(tb, "-n", l.out, "link", "set", "vout", "up")
	for _, a := range targets {
		args := []string{"-n", l.out, "addr", "add", netip.PrefixFrom(a, a.BitLen()).String(), "dev", "lo"}
		if a.Is6() {
			args = append(args, "nodad")
		}
		ipCmd(tb, args...)
	}
	return l
}

// inNetns runs f on an OS thread switched into the namespace ns, and
// returns f's error. Processes f starts begin in ns. The thread is never
// unlocked, so the runtime discards it when f returns.
func inNetns(ns string, f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		fd, err := unix.Open(filepath.Join("/run/netns", ns), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- err
			return
		}
		err = unix.Setns(fd, unix.CLONE_NEWNET)
		unix.Close(fd)
		if err != nil {
			done <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		done <- f()
	}()
	return <-done
}

// labListener answers every TCP connection with "MARK <addr>" and counts
// them.
type labListener struct {
	addr     netip.AddrPort
	accepted atomic.Int32
}

// listenIn opens TCP listeners in namespace ns, closed when tb's test ends.
func listenIn(tb testing.TB, ns string, addrs ...netip.AddrPort) map[netip.AddrPort]*labListener {
	tb.Helper()
	out := map[netip.AddrPort]*labListener{}
	err := inNetns(ns, func() error {
		for _, ap := range addrs {
			ln, err := net.Listen("tcp", ap.String())
			if err != nil {
				return err
			}
			tb.Cleanup(func() { ln.Close() })
			l := &labListener{addr: ap}
			out[ap] = l
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					l.accepted.Add(1)
					_, _ = io.WriteString(c, "MARK "+ap.String()+"\n")
					c.Close()
				}
			}()
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// serveDNS answers DNS queries over UDP on addr in namespace ns: the A
// record of name is a, everything else has no answer.
func serveDNS(tb testing.TB, ns string, addr netip.AddrPort, name string, a netip.Addr) *atomic.Int32 {
	tb.Helper()
	var queries atomic.Int32
	var pc net.PacketConn
	err := inNetns(ns, func() (err error) {
		pc, err = net.ListenPacket("udp", addr.String())
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			queries.Add(1)
			if resp := dnsAnswer(buf[:n], name, a); resp != nil {
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	return &queries
}

// dnsAnswer returns the response to the query q: one A record for name, no
// answer for anything else; nil when q is not a query it understands.
func dnsAnswer(q []byte, name string, a netip.Addr) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil
	}
	var labels []string
	i := 12
	for i < len(q) && q[i] != 0 {
		n := int(q[i])
		if i+1+n > len(q) {
			return nil
		}
		labels = append(labels, string(q[i+1:i+1+n]))
		i += 1 + n
	}
	if i+5 > len(q) {
		return nil
	}
	question := q[12 : i+5]
	qtype := binary.BigEndian.Uint16(q[i+1:])
	resp := append([]byte{}, q[:2]...)                      // id
	resp = append(resp, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0) // response, recursion available; 1 question
	resp = append(resp, question...)
	if qtype == 1 && strings.EqualFold(strings.Join(labels, "."), name) {
		resp[7] = 1 // one answer
		ip := a.As4()
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
		resp = append(resp, ip[:]...)
	}
	return resp
}

// labDialScript dials each bash /dev/tcp target ("host/port") and prints
// "reached TARGET: <what it read>" or "refused TARGET: <the error>"; then
// it resolves $NAME and prints what getent says.
const labDialScript = `for t in "$@"; do
  if out=$(timeout 5 bash -c 'exec 3<>/dev/tcp/'"$t"' && head -c 64 <&3' 2>&1); then echo "reached $t: $out"; else echo "refused $t: $out"; fi
done
getent ahostsv4 "$NAME" | head -n 1 | sed 's/^/resolved /'; true`

// TestIsolatedNetworkReachesPublicOnly runs sandboxed commands on a
// machine ("inside") whose network leads to addresses of every kind
// ("outside"): the public one, the nameserver's port 53 and the
// allow-listed ones answer; a private machine, a container, the metadata
// services (on ports other than 80 too), a unique local IPv6 address and
// the nameserver's other ports are refused by the kernel (EACCES) and
// never see a connection.
func TestIsolatedNetworkReachesPublicOnly(t *testing.T) {
	var (
		public    = netip.MustParseAddr("11.0.0.1")        // a public-looking address
		private   = netip.MustParseAddr("10.1.2.3")        // another machine of the operator's network
		container = netip.MustParseAddr("172.17.0.2")      // a database in a Docker container
		alibaba   = netip.MustParseAddr("100.100.100.200") // Alibaba Cloud's metadata, inside an allowed prefix
		cloud     = netip.MustParseAddr("169.254.169.254") // most clouds' metadata
		tencent   = netip.MustParseAddr("169.254.0.23")    // Tencent Cloud's metadata
		ula       = netip.MustParseAddr("fd00::10")        // unique local IPv6
		ns        = netip.MustParseAddr("10.53.0.53")      // the nameserver
		mirror    = netip.MustParseAddr("10.77.0.5")       // allowed by the operator (Config.AllowNets)
		campus    = netip.MustParseAddr("100.70.0.1")      // allowed by the operator, in 100.64.0.0/10
		gitHost   = netip.MustParseAddr("10.88.0.5")       // allowed for one run (Command.Allow)
	)
	l := newLab(t, []netip.Addr{public, private, container, alibaba, cloud, tencent, ula, ns, mirror, campus, gitHost})
	ap := func(a netip.Addr, port uint16) netip.AddrPort { return netip.AddrPortFrom(a, port) }
	refused := []netip.AddrPort{
		ap(private, 8080), ap(container, 5432), ap(alibaba, 8080), ap(cloud, 8080), ap(cloud, 80),
		ap(tencent, 8080), ap(ula, 8080), ap(ns, 8080),
	}
	reached := []netip.AddrPort{ap(public, 8080), ap(ns, 53), ap(mirror, 8080), ap(campus, 8080)}
	perRun := ap(gitHost, 8080)
	all := append(append(append([]netip.AddrPort{}, refused...), reached...), perRun)
	lns := listenIn(t, l.out, all...)
	queries := serveDNS(t, l.out, ap(ns, 53), "public.gantry.test", public)

	// The control: without the sandbox, inside reaches every listener.
	err := inNetns(l.in, func() error {
		for _, a := range all {
			c, err := net.DialTimeout("tcp", a.String(), 5*time.Second)
			if err != nil {
				return fmt.Errorf("the lab is broken: inside does not reach %s: %w", a, err)
			}
			c.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, ln := range lns {
		ln.accepted.Store(0)
	}

	data := platformDir(t)
	resolv := filepath.Join(data, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver "+ns.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sandbox.SetResolvConfs(t, resolv)
	s := sandboxtest.Require(t, sandbox.Config{AllowNets: []netip.Prefix{
		netip.MustParsePrefix("10.77.0.0/16"), netip.MustParsePrefix("100.64.0.0/10"),
	}})
	ws := workspace(t, s, data, "a")
	target := func(a netip.AddrPort) string { return fmt.Sprintf("%s/%d", a.Addr(), a.Port()) }
	runIn := func(t *testing.T, allow []netip.Prefix, targets []netip.AddrPort) *capture {
		t.Helper()
		args := []string{"bash", "-c", labDialScript, "dial"}
		for _, a := range targets {
			args = append(args, target(a))
		}
		args = append(args, "public.gantry.test/8080")
		c := &capture{}
		err := inNetns(l.in, func() error {
			_, err := s.Run(context.Background(), sandbox.Command{
				Args:   args,
				Dir:    ws,
				Env:    []string{"NAME=public.gantry.test"},
				Allow:  allow,
				Limits: sandbox.Limits{Timeout: 2 * time.Minute},
				Output: c.fn,
			})
			return err
		})
		if err != nil {
			t.Fatalf("run: %v\n%s", err, c)
		}
		return c
	}

	t.Run("with a per-run allow list", func(t *testing.T) {
		c := runIn(t, []netip.Prefix{netip.PrefixFrom(gitHost, 32)}, all)
		for _, a := range refused {
			if want := "stdout: refused " + target(a) + ": bash: connect: Permission denied"; !strings.Contains(c.String(), want) {
				t.Errorf("missing %q", want)
			}
			if n := lns[a].accepted.Load(); n > 0 {
				t.Errorf("%s accepted %d connections from the sandbox", a, n)
			}
		}
		for _, a := range append(reached, perRun) {
			if want := "stdout: reached " + target(a) + ": MARK " + a.String(); !c.has(want) {
				t.Errorf("missing %q", want)
			}
		}
		if want := "stdout: reached public.gantry.test/8080: MARK " + ap(public, 8080).String(); !c.has(want) {
			t.Errorf("missing %q", want)
		}
		if !strings.Contains(c.String(), "stdout: resolved "+public.String()+" ") {
			t.Errorf("the sandbox did not resolve public.gantry.test through the nameserver")
		}
		if queries.Load() == 0 {
			t.Errorf("the nameserver got no query")
		}
		if t.Failed() {
			t.Logf("output:\n%s", c)
		}
	})
	t.Run("without", func(t *testing.T) {
		lns[perRun].accepted.Store(0)
		c := runIn(t, nil, []netip.AddrPort{perRun, ap(mirror, 8080)})
		if want := "stdout: refused " + target(perRun) + ": bash: connect: Permission denied"; !strings.Contains(c.String(), want) {
			t.Errorf("missing %q in\n%s", want, c)
		}
		if n := lns[perRun].accepted.Load(); n > 0 {
			t.Errorf("%s accepted %d connections from a run not allowed to reach it", perRun, n)
		}
		if want := "stdout: reached " + target(ap(mirror, 8080)) + ": MARK " + ap(mirror, 8080).String(); !c.has(want) {
			t.Errorf("missing %q in\n%s", want, c)
		}
	})
}
