// Package netpolicy says which network destinations Gantry keeps user code
// and user-supplied URLs away from: one list of address ranges, shared by
// the git URL checker (internal/githost), which refuses to contact them on
// a user's behalf, and the sandbox (internal/sandbox), whose kernel rules
// refuse connections to them from builds and apps.
//
// The list (Prefixes) holds every range of IPv4 and IPv6 that is not the
// public internet: loopback, private, shared (CGNAT), link-local, unique
// local, multicast, reserved, benchmarking and documentation ranges, the
// IETF's protocol assignments, and the IPv6 forms that carry an IPv4
// address of those ranges (NAT64 64:ff9b::/96 and 6to4 2002::/16 of each
// restricted IPv4 range; IPv4-mapped ::ffff:0:0/96 addresses are judged by
// the IPv4 address they carry). The addresses of the cloud metadata
// services, which hand out the machine's credentials, lie inside it
// (Metadata).
package netpolicy

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Restricted reports whether ip lies in a range of Prefixes, after
// unmapping an IPv4-mapped IPv6 address. The invalid (zero) Addr is
// restricted too.
func Restricted(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() {
		return true
	}
	for _, p := range prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Prefixes returns the restricted ranges, IPv4 first, in a new slice: the
// list of base ranges, then the NAT64 and 6to4 forms of every restricted
// IPv4 range (64:ff9b::a00:0/104 for 10.0.0.0/8). Their union is exactly
// what Restricted refuses, so kernel rules made from it refuse the same.
func Prefixes() []netip.Prefix {
	return append([]netip.Prefix(nil), prefixes...)
}

// HostAddrs lists the machine's own addresses outside loopback, read from
// its interfaces at each call (addresses come and go with DHCP, VPNs and
// containers). A connection to any of them reaches the machine's own
// services as surely as one to 127.0.0.1, whether the address is private
// (Restricted refuses it anyway) or public (a VPS's one address): the
// sandbox shuts them out of isolated networks, and the git URL checker
// refuses to contact them, so that neither a build nor a repository URL
// can map the machine's open ports.
func HostAddrs() ([]netip.Addr, error) {
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("host addresses: %w", err)
	}
	var out []netip.Addr
	for _, ia := range ifaddrs {
		ipn, ok := ia.(*net.IPNet)
		if !ok {
			continue
		}
		a, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		if a = a.Unmap(); a.IsLoopback() || a.IsUnspecified() {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// Metadata returns the addresses of the known cloud metadata services:
// 169.254.169.254 (AWS, Google Cloud, Azure, Oracle, DigitalOcean,
// OpenStack and most others), 169.254.170.2 (AWS ECS task credentials),
// 169.254.170.23 and fd00:ec2::23 (AWS EKS Pod Identity), fd00:ec2::254
// (AWS over IPv6), 100.100.100.200 (Alibaba Cloud) and 169.254.0.23
// (Tencent Cloud). All lie in restricted ranges; the sandbox keeps them
// shut even when an allow-list prefix encloses them.
func Metadata() []netip.Addr {
	return append([]netip.Addr(nil), metadata...)
}

// ParsePrefixes parses a comma-separated list of IP addresses and CIDR
// prefixes ("10.20.0.5, 10.30.0.0/16, fd12::/48"), the syntax of
// GANTRY_SANDBOX_ALLOW. An address stands for itself alone (/32 or /128);
// IPv4-mapped IPv6 forms are turned into IPv4; blank entries are skipped.
// A prefix with bits set beyond its length (10.20.0.5/16) is an error, as
// is a zone.
func ParsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		p, err := parsePrefix(e)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func parsePrefix(e string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(e); err == nil {
		if a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q: an address with a zone cannot be allowed; leave out %%%s", e, a.Zone())
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(e)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR prefix (e.g. 10.20.0.5 or 10.20.0.0/16)", e)
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("%q has bits set beyond its length: did you mean %s?", e, p.Masked())
	}
	if a := p.Addr(); a.Is4In6() { // then Bits() >= 96: shorter ones failed the mask check
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p, nil
}

// restricted4 are the IPv4 ranges that are not the public internet (IANA's
// IPv4 special-purpose address registry, RFC 6890, and the multicast and
// reserved blocks).
var restricted4 = []string{
	"0.0.0.0/8",       // "this network", 0.0.0.0 included
	"10.0.0.0/8",      // private (RFC 1918)
	"100.64.0.0/10",   // shared address space (CGNAT); Alibaba Cloud's metadata at 100.100.100.200
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local; most clouds' metadata at 169.254.169.254, Tencent's at 169.254.0.23
	"172.16.0.0/12",   // private (RFC 1918); Docker's default bridges
	"192.0.0.0/24",    // IETF protocol assignments (DS-Lite, NAT64 discovery)
	"192.0.2.0/24",    // documentation (TEST-NET-1)
	"192.88.99.0/24",  // 6to4 relay anycast (deprecated)
	"192.168.0.0/16",  // private (RFC 1918)
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation (TEST-NET-2)
	"203.0.113.0/24",  // documentation (TEST-NET-3)
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, and the broadcast address 255.255.255.255
}

// restricted6 are the IPv6 ranges that are not the public internet (IANA's
// IPv6 special-purpose address registry, and the multicast block). NAT64's
// 64:ff9b::/96 and 6to4's 2002::/16 are not here whole: they reach the
// public IPv4 internet too, and Prefixes adds their restricted parts.
var restricted6 = []string{
	"::/96",           // unspecified (::), loopback (::1), deprecated IPv4-compatible
	"::ffff:0:0/96",   // IPv4-mapped: Restricted judges the IPv4 address, the kernel routes it as IPv4
	"::ffff:0:0:0/96", // IPv4-translated (SIIT)
	"64:ff9b:1::/48",  // local-use NAT64
	"100::/64",        // discard-only
	"100:0:0:1::/64",  // dummy prefix
	"2001::/23",       // IETF protocol assignments: Teredo, ORCHID, benchmarking and others
	"2001:db8::/32",   // documentation
	"3fff::/20",       // documentation
	"5f00::/16",       // SRv6 segment identifiers
	"fc00::/7",        // unique local; AWS's metadata at fd00:ec2::254
	"fe80::/10",       // link-local
	"fec0::/10",       // site-local (deprecated)
	"ff00::/8",        // multicast
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")

	prefixes = buildPrefixes()

	metadata = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"),
		netip.MustParseAddr("169.254.170.2"),
		netip.MustParseAddr("169.254.170.23"),
		netip.MustParseAddr("169.254.0.23"),
		netip.MustParseAddr("100.100.100.200"),
		netip.MustParseAddr("fd00:ec2::254"),
		netip.MustParseAddr("fd00:ec2::23"),
	}
)

// buildPrefixes parses the base lists and adds the NAT64 and 6to4 forms of
// every IPv4 range.
func buildPrefixes() []netip.Prefix {
	var v4, v6 []netip.Prefix
	for _, s := range restricted4 {
		v4 = append(v4, netip.MustParsePrefix(s))
	}
	for _, s := range restricted6 {
		v6 = append(v6, netip.MustParsePrefix(s))
	}
	for _, p := range v4 {
		v6 = append(v6, embed(nat64, p, 12), embed(sixToFour, p, 2))
	}
	return append(v4, v6...)
}

// embed returns the part of the IPv6 prefix outer whose addresses carry,
// from byte at on, an IPv4 address of p.
func embed(outer, p netip.Prefix, at int) netip.Prefix {
	b := outer.Addr().As16()
	v4 := p.Addr().As4()
	copy(b[at:], v4[:])
	bits := at*8 + p.Bits()
	return netip.PrefixFrom(netip.AddrFrom16(b), bits)
}
