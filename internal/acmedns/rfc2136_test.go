package acmedns_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"

	"github.com/gantryhq/gantry/internal/acmedns"
)

const tsigSecret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ=" // base64

// fakeUpdateServer is a DNS server on loopback taking RFC 2136 updates
// signed with the TSIG key "gantry." and keeping the TXT records.
type fakeUpdateServer struct {
	mu      sync.Mutex
	records map[string][]string // name → values
	zones   []string            // zone of each update
	addr    string
}

func startUpdateServer(t *testing.T) *fakeUpdateServer {
	t.Helper()
	f := &fakeUpdateServer{records: map[string][]string{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	srv := &dns.Server{Listener: ln, TsigSecret: map[string]string{"gantry.": tsigSecret},
		MsgAcceptFunc: func(dns.Header) dns.MsgAcceptAction { return dns.MsgAccept }, // updates too
		Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
			m := new(dns.Msg)
			m.SetReply(r)
			if r.IsTsig() == nil || w.TsigStatus() != nil {
				m.Rcode = dns.RcodeNotAuth
			} else if r.Opcode != dns.OpcodeUpdate {
				m.Rcode = dns.RcodeRefused
			} else {
				f.mu.Lock()
				f.zones = append(f.zones, r.Question[0].Name)
				for _, rr := range r.Ns {
					txt, ok := rr.(*dns.TXT)
					if !ok {
						continue
					}
					v := strings.Join(txt.Txt, "")
					switch rr.Header().Class {
					case dns.ClassINET:
						f.records[txt.Hdr.Name] = append(f.records[txt.Hdr.Name], v)
					case dns.ClassNONE:
						var keep []string
						for _, x := range f.records[txt.Hdr.Name] {
							if x != v {
								keep = append(keep, x)
							}
						}
						f.records[txt.Hdr.Name] = keep
					}
				}
				f.mu.Unlock()
			}
			m.SetTsig("gantry.", dns.HmacSHA256, 300, time.Now().Unix())
			w.WriteMsg(m)
		})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return f
}

func (f *fakeUpdateServer) values(name string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.records[name]...)
}

func challenge(value string) []libdns.Record {
	return []libdns.Record{libdns.RR{Type: "TXT", Name: "_acme-challenge", Data: value, TTL: time.Minute}}
}

func TestRFC2136(t *testing.T) {
	f := startUpdateServer(t)
	p := &acmedns.RFC2136{Server: f.addr, KeyName: "gantry", KeyAlg: "hmac-sha256", Secret: tsigSecret}
	ctx := context.Background()
	const name = "_acme-challenge.apps.example.com."

	if _, err := p.AppendRecords(ctx, "apps.example.com.", challenge("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendRecords(ctx, "apps.example.com.", challenge("two")); err != nil {
		t.Fatal(err)
	}
	if got := f.values(name); strings.Join(got, ",") != "one,two" {
		t.Errorf("after two appends: got %v, want [one two]", got)
	}
	if _, err := p.DeleteRecords(ctx, "apps.example.com.", challenge("one")); err != nil {
		t.Fatal(err)
	}
	if got := f.values(name); strings.Join(got, ",") != "two" {
		t.Errorf("after a delete: got %v, want [two]", got)
	}
	if f.zones[0] != "apps.example.com." {
		t.Errorf("got update zone %q, want apps.example.com.", f.zones[0])
	}

	// A wrong secret is refused, with the server's answer in the error.
	bad := &acmedns.RFC2136{Server: f.addr, KeyName: "gantry", Secret: "d3Jvbmc="}
	if _, err := bad.AppendRecords(ctx, "apps.example.com.", challenge("x")); err == nil {
		t.Error("wrong TSIG secret: got no error")
	}
	// Only TXT records.
	if _, err := p.AppendRecords(ctx, "apps.example.com.", []libdns.Record{libdns.RR{Type: "A", Name: "x", Data: "1.2.3.4"}}); err == nil {
		t.Error("an A record: got no error, want TXT only")
	}
}
