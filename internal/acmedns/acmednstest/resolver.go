package acmednstest

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// TSIG key of the DNS server DNSServer starts, for an RFC 2136 provider.
const (
	TSIGKeyName = "gantry-test."
	TSIGSecret  = "Z2FudHJ5LXRlc3QtdHNpZy1zZWNyZXQtMDEyMzQ1Njc=" // base64
)

// DNSServer starts a DNS server on loopback (UDP and TCP, one port) in
// front of challtestsrv, and returns its address. It is what certmagic's
// DNS-01 zone lookups and propagation checks ask (challtestsrv answers no
// SOA queries: this server declares each of zones a zone, and no other
// name), and an RFC 2136 server: updates signed with TSIGKeyName and
// TSIGSecret that add or remove TXT records are applied to challtestsrv, so
// `gantry serve` with GANTRY_DNS_PROVIDER=rfc2136 gets its wildcard from
// pebble. Every other query is passed to challtestsrv.
func (ca *CA) DNSServer(t testing.TB, zones ...string) string {
	t.Helper()
	// UDP and TCP on one port: taken with FreePort (below the ephemeral
	// range, free in both), not from a UDP bind(0) whose port's TCP side
	// an outgoing connection may hold ("address already in use").
	var pc net.PacketConn
	var ln net.Listener
	for try := 0; ; try++ {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
		var err error
		if pc, err = net.ListenPacket("udp", addr); err == nil {
			if ln, err = net.Listen("tcp", addr); err == nil {
				break
			}
			pc.Close()
		}
		if try == 9 {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	values := map[string][]string{} // TXT values written through updates
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		switch {
		case r.Opcode == dns.OpcodeUpdate:
			if r.IsTsig() == nil || w.TsigStatus() != nil {
				m.Rcode = dns.RcodeNotAuth
				break
			}
			mu.Lock()
			for _, rr := range r.Ns {
				txt, ok := rr.(*dns.TXT)
				if !ok {
					continue
				}
				name, v := strings.ToLower(txt.Hdr.Name), strings.Join(txt.Txt, "")
				var err error
				switch rr.Header().Class {
				case dns.ClassINET:
					values[name] = append(values[name], v)
					err = ca.SetTXT(context.Background(), name, v)
				case dns.ClassNONE:
					var keep []string
					for _, x := range values[name] {
						if x != v {
							keep = append(keep, x)
						}
					}
					values[name] = keep
					err = ca.ClearTXT(context.Background(), name)
					for _, x := range keep {
						if err == nil {
							err = ca.SetTXT(context.Background(), name, x)
						}
					}
				}
				if err != nil {
					m.Rcode = dns.RcodeServerFailure
				}
			}
			mu.Unlock()
			m.SetTsig(TSIGKeyName, dns.HmacSHA256, 300, int64(r.IsTsig().TimeSigned))
		case len(r.Question) == 1 && r.Question[0].Qtype == dns.TypeSOA:
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
		default:
			in, err := dns.Exchange(r, ca.DNSAddr)
			if err != nil {
				m.Rcode = dns.RcodeServerFailure
				break
			}
			m = in
		}
		w.WriteMsg(m)
	})
	secrets := map[string]string{TSIGKeyName: TSIGSecret}
	accept := func(dns.Header) dns.MsgAcceptAction { return dns.MsgAccept } // updates too
	udp := &dns.Server{PacketConn: pc, Handler: handler, TsigSecret: secrets, MsgAcceptFunc: accept}
	tcp := &dns.Server{Listener: ln, Handler: handler, TsigSecret: secrets, MsgAcceptFunc: accept}
	go udp.ActivateAndServe()
	go tcp.ActivateAndServe()
	t.Cleanup(func() { udp.Shutdown(); tcp.Shutdown() })
	return pc.LocalAddr().String()
}
