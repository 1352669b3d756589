package acmedns

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/libdns/libdns"
)

// Route53 writes records in an Amazon Route 53 hosted zone. Route 53
// replaces whole record sets, so the values of a name (the wildcard and the
// bare domain share _acme-challenge.<domain>) are merged: AppendRecords
// adds a value to the set, DeleteRecords takes it out and removes the set
// when it is empty.
type Route53 struct {
	Config       aws.Config // credentials and region (the standard AWS variables and files)
	HostedZoneID string     // default: the hosted zone named like the zone certmagic finds
	Endpoint     string     // API base URL; default AWS's (tests point it at a fake)

	once   sync.Once
	client *route53.Client
	mu     sync.Mutex // one change of a record set at a time
}

var _ Provider = (*Route53)(nil)

func (p *Route53) api() *route53.Client {
	p.once.Do(func() {
		p.client = route53.NewFromConfig(p.Config, func(o *route53.Options) {
			if p.Endpoint != "" {
				o.BaseEndpoint = aws.String(p.Endpoint)
			}
			if o.Region == "" {
				o.Region = "us-east-1" // Route 53 is global
			}
		})
	})
	return p.client
}

func (p *Route53) zoneID(ctx context.Context, zone string) (string, error) {
	if p.HostedZoneID != "" {
		return p.HostedZoneID, nil
	}
	name := fqdn(zone)
	out, err := p.api().ListHostedZonesByName(ctx, &route53.ListHostedZonesByNameInput{DNSName: aws.String(name)})
	if err != nil {
		return "", fmt.Errorf("route53: find hosted zone %s: %w", name, err)
	}
	for _, z := range out.HostedZones {
		if strings.EqualFold(aws.ToString(z.Name), name) && (z.Config == nil || !z.Config.PrivateZone) {
			return strings.TrimPrefix(aws.ToString(z.Id), "/hostedzone/"), nil
		}
	}
	return "", fmt.Errorf("route53: hosted zone %s: %w (set GANTRY_ROUTE53_HOSTED_ZONE_ID)", name, errNoZone)
}

// AppendRecords adds the TXT values to their record sets.
func (p *Route53) AppendRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return recs, p.change(ctx, zone, recs, true)
}

// DeleteRecords removes the TXT values from their record sets.
func (p *Route53) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return recs, p.change(ctx, zone, recs, false)
}

func (p *Route53) change(ctx context.Context, zone string, recs []libdns.Record, add bool) error {
	ts, err := txts(zone, recs)
	if err != nil {
		return err
	}
	id, err := p.zoneID(ctx, zone)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range ts {
		values, ttl, err := p.values(ctx, id, t.fqdn)
		if err != nil {
			return err
		}
		quoted := strconv.Quote(t.value)
		if add {
			if !slices.Contains(values, quoted) {
				values = append(values, quoted)
			}
			ttl = int64(t.ttl)
		} else {
			i := slices.Index(values, quoted)
			if i < 0 {
				continue
			}
			values = slices.Delete(values, i, i+1)
		}
		set := &types.ResourceRecordSet{Name: aws.String(t.fqdn), Type: types.RRTypeTxt, TTL: aws.Int64(ttl)}
		action := types.ChangeActionUpsert
		if len(values) == 0 { // deleting the last value: DELETE must name it as it is
			action = types.ChangeActionDelete
			values = []string{quoted}
		}
		for _, v := range values {
			set.ResourceRecords = append(set.ResourceRecords, types.ResourceRecord{Value: aws.String(v)})
		}
		_, err = p.api().ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{
			HostedZoneId: aws.String(id),
			ChangeBatch: &types.ChangeBatch{
				Comment: aws.String("Gantry ACME DNS-01 challenge"),
				Changes: []types.Change{{Action: action, ResourceRecordSet: set}},
			},
		})
		if err != nil {
			return fmt.Errorf("route53: change TXT %s: %w", t.fqdn, err)
		}
	}
	return nil
}

// values returns the current (quoted) values and TTL of the TXT set name.
func (p *Route53) values(ctx context.Context, zoneID, name string) ([]string, int64, error) {
	out, err := p.api().ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{
		HostedZoneId:    aws.String(zoneID),
		StartRecordName: aws.String(name),
		StartRecordType: types.RRTypeTxt,
		MaxItems:        aws.Int32(1),
	})
	if err != nil {
		var nf *types.NoSuchHostedZone
		if errors.As(err, &nf) {
			return nil, 0, fmt.Errorf("route53: hosted zone %s: %w", zoneID, errNoZone)
		}
		return nil, 0, fmt.Errorf("route53: read TXT %s: %w", name, err)
	}
	for _, s := range out.ResourceRecordSets {
		if strings.EqualFold(aws.ToString(s.Name), name) && s.Type == types.RRTypeTxt {
			var vs []string
			for _, r := range s.ResourceRecords {
				vs = append(vs, aws.ToString(r.Value))
			}
			return vs, aws.ToInt64(s.TTL), nil
		}
	}
	return nil, 60, nil
}
