package sandbox

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantryhq/gantry/internal/netpolicy"
)

func TestResolvConf(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lan := write("lan", "# from DHCP\nsearch example.org\nnameserver 192.168.1.1\n")
	stub := write("stub", "nameserver 127.0.0.53\noptions edns0 trust-ad\n")
	upstream := write("upstream", "nameserver 10.0.0.2\nnameserver fe80::1%eth0\nnameserver ::ffff:10.0.0.3\n")
	mixed := write("mixed", "nameserver 127.0.0.1\nnameserver 10.255.255.53\n")
	v6loop := write("v6loop", "nameserver ::1\n")
	empty := write("empty", "search example.org\n")
	missing := filepath.Join(dir, "missing")

	for _, tc := range []struct {
		name        string
		files       []string
		want        string
		wantServers string
		wantErr     string
	}{
		{"LAN nameserver", []string{lan, upstream}, lan, "[192.168.1.1]", ""},
		{"systemd-resolved stub", []string{stub, upstream}, upstream, "[10.0.0.2 fe80::1 10.0.0.3]", ""},
		{"loopback and private", []string{mixed}, mixed, "[10.255.255.53]", ""},
		{"stub without upstream file", []string{stub, missing}, "", "", "names only loopback nameservers (127.0.0.53)"},
		{"IPv6 loopback", []string{v6loop}, "", "", "names only loopback nameservers (::1)"},
		{"no nameserver", []string{empty, missing}, "", "", "names no nameserver"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, servers, err := resolvConf(tc.files...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v; want an error saying %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if s := fmt.Sprint(servers); s != tc.wantServers {
				t.Errorf("got nameservers %s, want %s", s, tc.wantServers)
			}
		})
	}
}

func TestPastaArgs(t *testing.T) {
	base := []string{"--config-net", "--no-map-gw", "--quiet", "--foreground", "-T", "none", "-U", "none", "-u", "none", "-D", "none"}
	if diff := cmp.Diff(append(base, "-t", "none"), pastaArgs(nil, nil)); diff != "" {
		t.Errorf("no forwards (-want +got):\n%s", diff)
	}
	got := pastaArgs([]Forward{{HostPort: 41000, Port: 3000}, {HostPort: 41001, Port: 9229}}, nil)
	want := append(base, "-t", "127.0.0.1/41000:3000", "-t", "127.0.0.1/41001:9229")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("forwards (-want +got):\n%s", diff)
	}
	got = pastaArgs(nil, []int{8080, 9418})
	want = []string{"--config-net", "--no-map-gw", "--quiet", "--foreground", "-T", "8080,9418", "-U", "none", "-u", "none", "-D", "none", "-t", "none"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("host loopback ports (-want +got):\n%s", diff)
	}
}

func TestNetScript(t *testing.T) {
	p := netPolicy{dns: []netip.Addr{netip.MustParseAddr("10.255.255.53")}}
	got := netScript("/usr/sbin/ip", p)
	want := "'/usr/sbin/ip' -4 -batch - <<'EOF' || { echo \"sandbox: cannot set up the network rules\" >&2; exit 125; }\n" +
		p.rules(false) + "EOF\n" +
		"'/usr/sbin/ip' -6 -batch - <<'EOF' || { echo \"sandbox: cannot set up the network rules\" >&2; exit 125; }\n" +
		p.rules(true) + "EOF\n" +
		`exec 3<&- 5<&- 6<&- 7<&- 8<&- 9<&-; exec "$@"`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestNetRules checks the order the kernel tries the rules in and what
// each lets through.
func TestNetRules(t *testing.T) {
	p := netPolicy{
		dns: []netip.Addr{netip.MustParseAddr("10.255.255.53"), netip.MustParseAddr("fe80::1%eth0")},
		host: []netip.Addr{
			netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("10.20.0.9"), netip.MustParseAddr("10.30.0.1"),
			netip.MustParseAddr("fd00::2"), netip.MustParseAddr("fe80::fc:ff:fe00:1%eth0"),
		},
		allow: []netip.Prefix{
			netip.MustParsePrefix("10.20.0.0/16"),    // encloses a host address: it stays shut
			netip.MustParsePrefix("10.30.0.1/32"),    // names a host address alone: it opens
			netip.MustParsePrefix("100.64.0.0/10"),   // encloses Alibaba's metadata: it stays shut
			netip.MustParsePrefix("169.254.0.23/32"), // names Tencent's metadata alone: it opens
			netip.MustParsePrefix("fd12:3456::/48"),
		},
	}
	v4 := p.rules(false)
	v6 := p.rules(true)
	inOrder := func(rules string, lines ...string) {
		t.Helper()
		at := -1
		for _, l := range lines {
			i := strings.Index(rules, l+"\n")
			if i < 0 {
				t.Errorf("missing %q in\n%s", l, rules)
				return
			}
			if i < at {
				t.Errorf("%q comes too early in\n%s", l, rules)
			}
			at = i
		}
	}
	inOrder(v4,
		"rule add pref 1000 to 10.255.255.53 ipproto udp dport 53 lookup main",
		"rule add pref 1000 to 10.255.255.53 ipproto tcp dport 53 lookup main",
		"rule add pref 1100 to 192.0.2.2 prohibit",
		"rule add pref 1100 to 10.20.0.9 prohibit",
		"rule add pref 1100 to 169.254.169.254 prohibit",
		"rule add pref 1100 to 100.100.100.200 prohibit",
		"rule add pref 1200 to 10.20.0.0/16 lookup main",
		"rule add pref 1200 to 10.30.0.1/32 lookup main",
		"rule add pref 1200 to 100.64.0.0/10 lookup main",
		"rule add pref 1300 to 0.0.0.0/8 prohibit",
		"rule add pref 1300 to 10.0.0.0/8 prohibit",
		"rule add pref 1300 to 240.0.0.0/4 prohibit",
	)
	inOrder(v6,
		"rule add pref 1000 to fe80::1 ipproto udp dport 53 lookup main",
		"rule add pref 1100 to fd00::2 prohibit",
		"rule add pref 1100 to fe80::fc:ff:fe00:1 prohibit",
		"rule add pref 1100 to fd00:ec2::254 prohibit",
		"rule add pref 1200 to fd12:3456::/48 lookup main",
		"rule add pref 1300 to fc00::/7 prohibit",
		"rule add pref 1300 to 64:ff9b::a00:0/104 prohibit",
		"rule add pref 1300 to 2002:a00::/24 prohibit",
	)
	for _, l := range []string{"to 10.30.0.1 prohibit", "to 169.254.0.23 prohibit"} {
		if strings.Contains(v4, l) {
			t.Errorf("%q is there although the allow list names the address alone", l)
		}
	}
	for _, fam := range []struct {
		rules string
		v6    bool
	}{{v4, false}, {v6, true}} {
		for _, l := range strings.Split(strings.TrimSpace(fam.rules), "\n") {
			f := strings.Fields(l)
			if len(f) < 6 || f[4] != "to" {
				t.Fatalf("bad rule %q", l)
			}
			addr, _, _ := strings.Cut(f[5], "/")
			a, err := netip.ParseAddr(addr)
			if err != nil {
				t.Fatalf("rule %q: %v", l, err)
			}
			if a.Is6() != fam.v6 {
				t.Errorf("rule %q is in the wrong family's batch", l)
			}
		}
	}
	if n := strings.Count(v4, "prohibit\n") + strings.Count(v6, "prohibit\n"); n < len(netpolicy.Prefixes()) {
		t.Errorf("got %d prohibit rules, want at least the %d restricted ranges", n, len(netpolicy.Prefixes()))
	}
}

func TestCleanPrefixes(t *testing.T) {
	got, err := cleanPrefixes([]netip.Prefix{netip.MustParsePrefix("10.20.0.5/16"), netip.MustParsePrefix("::ffff:10.1.0.0/112")})
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(got); s != "[10.20.0.0/16 10.1.0.0/16]" {
		t.Errorf("got %s, want [10.20.0.0/16 10.1.0.0/16]", s)
	}
	if _, err := cleanPrefixes([]netip.Prefix{{}}); err == nil {
		t.Error("the zero prefix: got no error")
	}
}

func TestHostAddrsSkipLoopback(t *testing.T) {
	addrs, err := hostAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if a.IsLoopback() || a.IsUnspecified() || a.Zone() != "" && a.Is4() {
			t.Errorf("got %v among the addresses to shut out", a)
		}
	}
}

func TestShellQuote(t *testing.T) {
	if got, want := shellQuote(`/opt/it's/ip`), `'/opt/it'\''s/ip'`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestTunUsable(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "tun")
	if err := os.WriteFile(dev, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dev, 0o600); err != nil {
		t.Fatal(err)
	}
	err := tunUsable(dev, 10001)
	if err == nil || !strings.Contains(err.Error(), "chmod 0666 "+dev) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a 0600 tun device: got %v, want one line naming `chmod 0666 %s`", err, dev)
	}
	if err := os.Chmod(dev, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := tunUsable(dev, 10001); err != nil {
		t.Fatalf("a 0666 tun device: %v", err)
	}
	if err := tunUsable(filepath.Join(dir, "missing"), 10001); err == nil || !strings.Contains(err.Error(), "mknod") {
		t.Fatalf("a missing tun device: got %v, want the mknod command", err)
	}
}

func TestLastMeaningfulLine(t *testing.T) {
	out := "Failed to open tun socket in namespace\nFailed to send 45 bytes to syslog\n"
	if got := lastMeaningfulLine(out); got != "Failed to open tun socket in namespace" {
		t.Fatalf("got %q", got)
	}
}
