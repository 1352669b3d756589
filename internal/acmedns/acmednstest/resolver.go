package acmednstest

import (
	"net"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// Resolver starts a DNS server on loopback for certmagic's DNS-01 zone
// lookups and propagation checks: challtestsrv answers no SOA queries
// (NOTIMP), so this one answers them itself, declaring each of zones a zone
// (and no other name), and passes every other query to challtestsrv. It
// returns its address.
func (ca *CA) Resolver(t testing.TB, zones ...string) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		if len(r.Question) == 1 && r.Question[0].Qtype == dns.TypeSOA {
			m := new(dns.Msg)
			m.SetReply(r)
			m.Authoritative = true
			name := strings.ToLower(r.Question[0].Name)
			for _, z := range zones {
				if name == dns.Fqdn(strings.ToLower(z)) {
					m.Answer = append(m.Answer, &dns.SOA{
						Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 0},
						Ns:  "ns." + name, Mbox: "hostmaster." + name, Serial: 1, Refresh: 60, Retry: 60, Expire: 60, Minttl: 0,
					})
				}
			}
			w.WriteMsg(m)
			return
		}
		in, err := dns.Exchange(r, ca.DNSAddr)
		if err != nil {
			m := new(dns.Msg)
			m.SetRcode(r, dns.RcodeServerFailure)
			w.WriteMsg(m)
			return
		}
		w.WriteMsg(in)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}
