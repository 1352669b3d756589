package acmedns

import (
	"context"
	"fmt"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// RFC2136 writes records with RFC 2136 dynamic updates signed with a TSIG
// key (RFC 8945), as BIND, Knot, PowerDNS and many hosted DNS services
// accept them.
type RFC2136 struct {
	Server  string // host:port of the primary server
	KeyName string // TSIG key name
	KeyAlg  string // hmac-sha256 (default), hmac-sha512, hmac-sha1, …
	Secret  string // TSIG secret, base64
	Timeout time.Duration
}

var _ Provider = (*RFC2136)(nil)

// AppendRecords adds the TXT records to zone in one update.
func (p *RFC2136) AppendRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return p.update(ctx, zone, recs, true)
}

// DeleteRecords removes the TXT records (name and value) from zone.
func (p *RFC2136) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return p.update(ctx, zone, recs, false)
}

func (p *RFC2136) update(ctx context.Context, zone string, recs []libdns.Record, add bool) ([]libdns.Record, error) {
	ts, err := txts(zone, recs)
	if err != nil {
		return nil, err
	}
	rrs := make([]dns.RR, len(ts))
	for i, t := range ts {
		rrs[i] = &dns.TXT{Hdr: dns.RR_Header{Name: t.fqdn, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: uint32(t.ttl)},
			Txt: splitTXT(t.value)}
	}
	m := new(dns.Msg)
	m.SetUpdate(fqdn(zone))
	if add {
		m.Insert(rrs)
	} else {
		m.Remove(rrs)
	}
	alg := dns.Fqdn(p.KeyAlg)
	if p.KeyAlg == "" {
		alg = dns.HmacSHA256
	}
	key := dns.Fqdn(p.KeyName)
	m.SetTsig(key, alg, 300, time.Now().Unix())
	timeout := p.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	c := &dns.Client{Net: "tcp", Timeout: timeout, TsigSecret: map[string]string{key: p.Secret}}
	in, _, err := c.ExchangeContext(ctx, m, p.Server)
	if err != nil {
		return nil, fmt.Errorf("rfc2136 update to %s: %w", p.Server, err)
	}
	if in.Rcode != dns.RcodeSuccess {
		return nil, fmt.Errorf("rfc2136 update to %s refused: %s", p.Server, rcodeText(in.Rcode))
	}
	return recs, nil
}

// splitTXT cuts a value into the 255-byte strings a TXT record holds.
func splitTXT(v string) []string {
	var out []string
	for len(v) > 255 {
		out, v = append(out, v[:255]), v[255:]
	}
	return append(out, v)
}

func rcodeText(rcode int) string {
	if s, ok := dns.RcodeToString[rcode]; ok {
		return s
	}
	return fmt.Sprint(rcode)
}
