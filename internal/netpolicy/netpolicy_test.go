package netpolicy

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRestricted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ip   string
		want bool
	}{
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"10.0.0.1", true},
		{"10.255.255.53", true},
		{"100.64.0.1", true},
		{"100.100.100.200", true}, // Alibaba metadata
		{"100.127.255.255", true},
		{"127.0.0.1", true},
		{"127.1.2.3", true},
		{"169.254.0.23", true}, // Tencent metadata
		{"169.254.169.254", true},
		{"172.16.5.4", true},
		{"172.17.0.2", true}, // Docker's bridge
		{"172.31.255.255", true},
		{"192.0.0.8", true},
		{"192.0.2.1", true},
		{"192.88.99.1", true},
		{"192.168.1.1", true},
		{"198.18.0.1", true},
		{"198.19.255.255", true},
		{"198.51.100.7", true},
		{"203.0.113.9", true},
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"240.0.0.1", true},
		{"255.255.255.255", true},
		{"::", true},
		{"::1", true},
		{"::a00:1", true}, // IPv4-compatible 10.0.0.1
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.1.1.1", true},
		{"::ffff:0:a00:1", true},       // IPv4-translated
		{"64:ff9b::a9fe:a9fe", true},   // NAT64 of 169.254.169.254
		{"64:ff9b::a00:1", true},       // NAT64 of 10.0.0.1
		{"64:ff9b:1::1", true},         // local-use NAT64
		{"100::1", true},               // discard
		{"100:0:0:1::1", true},         // dummy
		{"2001::1", true},              // Teredo
		{"2001:1ff::1", true},          // end of the IETF block
		{"2001:db8::1", true},          // documentation
		{"2002:7f00:1::1", true},       // 6to4 of 127.0.0.1
		{"2002:c0a8:101::1", true},     // 6to4 of 192.168.1.1
		{"3fff:fff::1", true},          // documentation
		{"5f00::1", true},              // SRv6
		{"fc00::1", true},              // unique local
		{"fd00::10", true},             // unique local
		{"fd00:ec2::254", true},        // AWS metadata
		{"fe80::1", true},              // link-local
		{"fec0::1", true},              // site-local
		{"ff02::1", true},              // multicast
		{"8.8.8.8", false},             // public
		{"11.0.0.1", false},            // public
		{"140.82.121.3", false},        // github.com
		{"172.32.0.1", false},          // just past 172.16/12
		{"100.128.0.1", false},         // just past 100.64/10
		{"192.0.1.1", false},           // just before 192.0.2/24
		{"198.20.0.1", false},          // just past 198.18/15
		{"223.255.255.255", false},     // just before multicast
		{"::ffff:8.8.8.8", false},      // mapped public
		{"64:ff9b::808:808", false},    // NAT64 of 8.8.8.8
		{"2002:808:808::1", false},     // 6to4 of 8.8.8.8
		{"2001:200::1", false},         // just past 2001::/23
		{"2606:50c0:8000::153", false}, // public
		{"2a00:1450:4001::1", false},   // public
	} {
		if got := Restricted(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("Restricted(%s) = %v, want %v", tc.ip, got, tc.want)
		}
	}
	if !Restricted(netip.Addr{}) {
		t.Error("Restricted(zero Addr) = false, want true")
	}
}

// TestPrefixesMatchRestricted checks that the kernel's view (the prefix
// list) and Restricted agree on the borders of every prefix.
func TestPrefixesMatchRestricted(t *testing.T) {
	t.Parallel()
	ps := Prefixes()
	for _, p := range ps {
		if p != p.Masked() {
			t.Errorf("prefix %s has bits beyond its length", p)
		}
		first := p.Addr()
		if !Restricted(first) {
			t.Errorf("Restricted(%s) = false, but it starts %s", first, p)
		}
	}
	ps[0] = netip.MustParsePrefix("8.8.8.0/24")
	if Restricted(netip.MustParseAddr("8.8.8.8")) {
		t.Error("changing the slice Prefixes returned changed the list")
	}
	for _, want := range []string{"64:ff9b::a00:0/104", "2002:a00::/24", "64:ff9b::a9fe:0/112", "2002:c0a8::/32"} {
		found := false
		for _, p := range Prefixes() {
			found = found || p.String() == want
		}
		if !found {
			t.Errorf("Prefixes lacks %s", want)
		}
	}
}

func TestMetadataRestricted(t *testing.T) {
	t.Parallel()
	for _, a := range Metadata() {
		if !Restricted(a) {
			t.Errorf("metadata address %s is not restricted", a)
		}
	}
	if got := len(Metadata()); got < 7 {
		t.Errorf("got %d metadata addresses, want at least 7", got)
	}
}

func TestParsePrefixes(t *testing.T) {
	t.Parallel()
	got, err := ParsePrefixes(" 10.20.0.5, 10.30.0.0/16,,fd12:3456::/48 , ::ffff:192.168.4.0/120, ::ffff:10.9.9.9")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{
		netip.MustParsePrefix("10.20.0.5/32"),
		netip.MustParsePrefix("10.30.0.0/16"),
		netip.MustParsePrefix("fd12:3456::/48"),
		netip.MustParsePrefix("192.168.4.0/24"),
		netip.MustParsePrefix("10.9.9.9/32"),
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got, err := ParsePrefixes("  "); err != nil || len(got) != 0 {
		t.Errorf("blank: got %v, %v; want nothing", got, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"mirror.campus.edu", `"mirror.campus.edu" is not an IP address or CIDR prefix`},
		{"10.0.0.0/33", `"10.0.0.0/33" is not an IP address or CIDR prefix`},
		{"10.20.0.5/16", "did you mean 10.20.0.0/16?"},
		{"fe80::1%eth0", "leave out %eth0"},
	} {
		if _, err := ParsePrefixes("10.1.1.1," + tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePrefixes(%q): got %v, want an error saying %q", tc.in, err, tc.want)
		}
	}
}
