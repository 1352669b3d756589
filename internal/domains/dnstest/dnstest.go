// Package dnstest runs a real DNS server on loopback for tests: it answers
// UDP queries from records the test sets, and NXDOMAIN for names it has
// none of.
package dnstest

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Server is an authoritative DNS server on 127.0.0.1 answering from a
// table of records. It is safe for concurrent use.
type Server struct {
	// Addr is the host:port to ask (Service.Resolver, GANTRY_DNS_RESOLVER).
	Addr string

	mu      sync.Mutex
	records map[string][]dns.RR // by lower-case FQDN
	asked   map[string]int      // queries by lower-case FQDN and type ("name TXT")
	delay   time.Duration
	srv     *dns.Server
}

// NewServer starts a server on a free UDP port of 127.0.0.1, stopped when
// the test ends.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{Addr: pc.LocalAddr().String(), records: map[string][]dns.RR{}, asked: map[string]int{}}
	started := make(chan struct{})
	s.srv = &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(s.serve), NotifyStartedFunc: func() { close(started) }}
	go func() { _ = s.srv.ActivateAndServe() }()
	<-started
	tb.Cleanup(func() { _ = s.srv.Shutdown() })
	return s
}

// Set replaces name's records of one type ("TXT", "CNAME", "A", "AAAA")
// with values; no values removes them.
func (s *Server) Set(name, typ string, values ...string) {
	fqdn := dns.Fqdn(strings.ToLower(name))
	qtype := dns.StringToType[typ]
	s.mu.Lock()
	defer s.mu.Unlock()
	var kept []dns.RR
	for _, rr := range s.records[fqdn] {
		if rr.Header().Rrtype != qtype {
			kept = append(kept, rr)
		}
	}
	for _, v := range values {
		hdr := dns.RR_Header{Name: fqdn, Rrtype: qtype, Class: dns.ClassINET, Ttl: 60}
		var rr dns.RR
		switch qtype {
		case dns.TypeTXT:
			rr = &dns.TXT{Hdr: hdr, Txt: []string{v}}
		case dns.TypeCNAME:
			rr = &dns.CNAME{Hdr: hdr, Target: dns.Fqdn(v)}
		case dns.TypeA:
			rr = &dns.A{Hdr: hdr, A: net.ParseIP(v).To4()}
		case dns.TypeAAAA:
			rr = &dns.AAAA{Hdr: hdr, AAAA: net.ParseIP(v)}
		default:
			panic("dnstest: unsupported record type " + typ)
		}
		kept = append(kept, rr)
	}
	s.records[fqdn] = kept
}

// SetDelay makes every later answer wait d: a slow DNS server.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Queries returns how many queries for name's records of one type ("TXT")
// the server was asked.
func (s *Server) Queries(name, typ string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[dns.Fqdn(strings.ToLower(name))+" "+typ]
}

// serve answers one query from the table: the records of the asked type,
// NXDOMAIN when the name has none at all.
func (s *Server) serve(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) == 1 {
		q := req.Question[0]
		s.mu.Lock()
		s.asked[strings.ToLower(q.Name)+" "+dns.TypeToString[q.Qtype]]++
		delay := s.delay
		s.mu.Unlock()
		time.Sleep(delay)
		s.mu.Lock()
		rrs, ok := s.records[strings.ToLower(q.Name)]
		for _, rr := range rrs {
			if rr.Header().Rrtype == q.Qtype {
				m.Answer = append(m.Answer, dns.Copy(rr))
			}
		}
		s.mu.Unlock()
		if !ok || len(rrs) == 0 {
			m.Rcode = dns.RcodeNameError
		}
	}
	_ = w.WriteMsg(m)
}
