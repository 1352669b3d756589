package acmedns

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/cloudflare/cloudflare-go"
	"github.com/libdns/libdns"
)

// Cloudflare writes records through Cloudflare's API with an API token
// that has Zone:DNS:Edit on the zone.
type Cloudflare struct {
	APIToken string
	BaseURL  string // API base URL; default Cloudflare's (tests point it at a fake)

	once   sync.Once
	api    *cloudflare.API
	apiErr error
	mu     sync.Mutex
	zones  map[string]string // zone name → id
}

var _ Provider = (*Cloudflare)(nil)

func (p *Cloudflare) client() (*cloudflare.API, error) {
	p.once.Do(func() {
		var opts []cloudflare.Option
		if p.BaseURL != "" {
			opts = append(opts, cloudflare.BaseURL(p.BaseURL))
		}
		p.api, p.apiErr = cloudflare.NewWithAPIToken(p.APIToken, opts...)
	})
	return p.api, p.apiErr
}

func (p *Cloudflare) zoneID(api *cloudflare.API, zone string) (string, error) {
	name := strings.TrimSuffix(zone, ".")
	p.mu.Lock()
	defer p.mu.Unlock()
	if id, ok := p.zones[name]; ok {
		return id, nil
	}
	id, err := api.ZoneIDByName(name)
	if err != nil {
		return "", fmt.Errorf("cloudflare: zone %s: %w", name, err)
	}
	if p.zones == nil {
		p.zones = map[string]string{}
	}
	p.zones[name] = id
	return id, nil
}

// AppendRecords creates the TXT records in zone.
func (p *Cloudflare) AppendRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	ts, err := txts(zone, recs)
	if err != nil {
		return nil, err
	}
	api, err := p.client()
	if err != nil {
		return nil, fmt.Errorf("cloudflare: %w", err)
	}
	id, err := p.zoneID(api, zone)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		_, err := api.CreateDNSRecord(ctx, cloudflare.ZoneIdentifier(id), cloudflare.CreateDNSRecordParams{
			Type: "TXT", Name: strings.TrimSuffix(t.fqdn, "."), Content: t.value, TTL: t.ttl})
		if err != nil {
			return nil, fmt.Errorf("cloudflare: create TXT %s: %w", t.fqdn, err)
		}
	}
	return recs, nil
}

// DeleteRecords deletes the TXT records of zone with the same name and
// value.
func (p *Cloudflare) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	ts, err := txts(zone, recs)
	if err != nil {
		return nil, err
	}
	api, err := p.client()
	if err != nil {
		return nil, fmt.Errorf("cloudflare: %w", err)
	}
	id, err := p.zoneID(api, zone)
	if err != nil {
		return nil, err
	}
	rc := cloudflare.ZoneIdentifier(id)
	for _, t := range ts {
		found, _, err := api.ListDNSRecords(ctx, rc, cloudflare.ListDNSRecordsParams{
			Type: "TXT", Name: strings.TrimSuffix(t.fqdn, "."), Content: t.value})
		if err != nil {
			return nil, fmt.Errorf("cloudflare: list TXT %s: %w", t.fqdn, err)
		}
		for _, r := range found {
			if err := api.DeleteDNSRecord(ctx, rc, r.ID); err != nil {
				return nil, fmt.Errorf("cloudflare: delete TXT %s: %w", t.fqdn, err)
			}
		}
	}
	return recs, nil
}
