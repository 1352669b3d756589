// Package acmedns holds Gantry's DNS-01 providers: small adapters from the
// libdns interface certmagic's DNS01Solver calls (AppendRecords,
// DeleteRecords) to RFC 2136 dynamic updates, Cloudflare's API and Route 53.
// Only TXT records are supported: they are all the ACME DNS-01 challenge
// writes.
package acmedns

import (
	"errors"
	"fmt"
	"strings"

	"github.com/libdns/libdns"
)

// Provider is what certmagic's DNS01Solver needs of a DNS provider.
type Provider interface {
	libdns.RecordAppender
	libdns.RecordDeleter
}

// txt is one TXT record to write: its fully qualified name (with the
// trailing dot) and its value, unquoted.
type txt struct {
	fqdn, value string
	ttl         int // seconds
}

// txts checks that every record is a TXT record and returns them with
// absolute names. The default TTL is 60 s (short: the records live
// minutes).
func txts(zone string, recs []libdns.Record) ([]txt, error) {
	out := make([]txt, 0, len(recs))
	for _, r := range recs {
		rr := r.RR()
		if rr.Type != "TXT" {
			return nil, fmt.Errorf("record type %q is not supported (TXT only)", rr.Type)
		}
		ttl := int(rr.TTL.Seconds())
		if ttl < 60 {
			ttl = 60
		}
		out = append(out, txt{fqdn: libdns.AbsoluteName(rr.Name, zone), value: rr.Data, ttl: ttl})
	}
	return out, nil
}

// fqdn returns name with exactly one trailing dot.
func fqdn(name string) string { return strings.TrimSuffix(name, ".") + "." }

// errNoZone is returned when a provider cannot find the zone of a name.
var errNoZone = errors.New("zone not found")
