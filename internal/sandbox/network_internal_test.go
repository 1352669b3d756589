package sandbox

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	upstream := write("upstream", "nameserver 10.0.0.2\nnameserver fe80::1%eth0\n")
	v6loop := write("v6loop", "nameserver ::1\n")
	empty := write("empty", "search example.org\n")
	missing := filepath.Join(dir, "missing")

	for _, tc := range []struct {
		name    string
		files   []string
		want    string
		wantErr string
	}{
		{"LAN nameserver", []string{lan, upstream}, lan, ""},
		{"systemd-resolved stub", []string{stub, upstream}, upstream, ""},
		{"stub without upstream file", []string{stub, missing}, "", "names only loopback nameservers (127.0.0.53)"},
		{"IPv6 loopback", []string{v6loop}, "", "names only loopback nameservers (::1)"},
		{"no nameserver", []string{empty, missing}, "", "names no nameserver"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolvConf(tc.files...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v; want an error saying %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
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
	got := netScript("/usr/sbin/ip", []netip.Addr{
		netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("fe80::1%eth0"), netip.MustParseAddr("198.51.100.7"),
	})
	want := `'/usr/sbin/ip' -4 -batch - <<'EOF' || { echo "sandbox: cannot shut the host's addresses out of the network" >&2; exit 125; }
rule add to 192.0.2.2 prohibit
rule add to 198.51.100.7 prohibit
rule add to 169.254.169.254 ipproto tcp dport 80 prohibit
EOF
'/usr/sbin/ip' -6 -batch - <<'EOF' || { echo "sandbox: cannot shut the host's addresses out of the network" >&2; exit 125; }
rule add to fe80::1 prohibit
rule add to fd00:ec2::254 ipproto tcp dport 80 prohibit
EOF
exec 3<&- 5<&- 6<&- 7<&- 8<&- 9<&-; exec "$@"`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
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
