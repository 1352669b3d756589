package acmedns_test

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/gantryhq/gantry/internal/acmedns"
)

// fakeRoute53 speaks the part of Route 53's REST-XML API the adapter uses:
// hosted zones by name, record sets listed and changed (whole sets, as
// Route 53 does: a CREATE of an existing set fails, a DELETE must match).
type fakeRoute53 struct {
	mu   sync.Mutex
	sets map[string][]string // name → quoted values
	ttl  map[string]int64
}

type r53Change struct {
	Changes []struct {
		Action            string `xml:"Action"`
		ResourceRecordSet struct {
			Name   string   `xml:"Name"`
			Type   string   `xml:"Type"`
			TTL    int64    `xml:"TTL"`
			Values []string `xml:"ResourceRecords>ResourceRecord>Value"`
		} `xml:"ResourceRecordSet"`
	} `xml:"ChangeBatch>Changes>Change"`
}

const r53NS = "https://route53.amazonaws.com/doc/2013-04-01/"

func (f *fakeRoute53) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !strings.Contains(r.Header.Get("Authorization"), "Credential=AKIDTEST/") {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `<ErrorResponse xmlns="%s"><Error><Type>Sender</Type><Code>InvalidClientTokenId</Code><Message>bad key</Message></Error></ErrorResponse>`, r53NS)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/2013-04-01/hostedzonesbyname":
		fmt.Fprintf(w, `<?xml version="1.0"?><ListHostedZonesByNameResponse xmlns="%s"><HostedZones>`+
			`<HostedZone><Id>/hostedzone/ZPRIVATE</Id><Name>apps.example.com.</Name><CallerReference>a</CallerReference><Config><PrivateZone>true</PrivateZone></Config></HostedZone>`+
			`<HostedZone><Id>/hostedzone/Z1</Id><Name>apps.example.com.</Name><CallerReference>b</CallerReference><Config><PrivateZone>false</PrivateZone></Config></HostedZone>`+
			`</HostedZones><IsTruncated>false</IsTruncated><MaxItems>100</MaxItems></ListHostedZonesByNameResponse>`, r53NS)
	case r.Method == http.MethodGet && r.URL.Path == "/2013-04-01/hostedzone/Z1/rrset":
		name := r.URL.Query().Get("name")
		fmt.Fprintf(w, `<?xml version="1.0"?><ListResourceRecordSetsResponse xmlns="%s"><ResourceRecordSets>`, r53NS)
		if vs := f.sets[name]; len(vs) > 0 {
			fmt.Fprintf(w, `<ResourceRecordSet><Name>%s</Name><Type>TXT</Type><TTL>%d</TTL><ResourceRecords>`, name, f.ttl[name])
			for _, v := range vs {
				fmt.Fprintf(w, `<ResourceRecord><Value>%s</Value></ResourceRecord>`, xmlEscape(v))
			}
			fmt.Fprint(w, `</ResourceRecords></ResourceRecordSet>`)
		}
		fmt.Fprint(w, `</ResourceRecordSets><IsTruncated>false</IsTruncated><MaxItems>1</MaxItems></ListResourceRecordSetsResponse>`)
	case r.Method == http.MethodPost && strings.TrimSuffix(r.URL.Path, "/") == "/2013-04-01/hostedzone/Z1/rrset":
		var req r53Change
		if err := xml.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		for _, c := range req.Changes {
			s := c.ResourceRecordSet
			switch c.Action {
			case "UPSERT":
				f.sets[s.Name], f.ttl[s.Name] = s.Values, s.TTL
			case "DELETE":
				if !slices.Equal(f.sets[s.Name], s.Values) {
					w.WriteHeader(http.StatusBadRequest)
					fmt.Fprintf(w, `<ErrorResponse xmlns="%s"><Error><Type>Sender</Type><Code>InvalidChangeBatch</Code><Message>values do not match</Message></Error></ErrorResponse>`, r53NS)
					return
				}
				delete(f.sets, s.Name)
			default:
				w.WriteHeader(http.StatusBadRequest)
				return
			}
		}
		fmt.Fprintf(w, `<?xml version="1.0"?><ChangeResourceRecordSetsResponse xmlns="%s"><ChangeInfo><Id>/change/C1</Id><Status>PENDING</Status><SubmittedAt>2026-01-01T00:00:00Z</SubmittedAt></ChangeInfo></ChangeResourceRecordSetsResponse>`, r53NS)
	default:
		http.NotFound(w, r)
	}
}

func xmlEscape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

func awsConfig(key string) aws.Config {
	return aws.Config{Region: "us-east-1", Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: key, SecretAccessKey: "secret"}, nil
	})}
}

func TestRoute53(t *testing.T) {
	f := &fakeRoute53{sets: map[string][]string{}, ttl: map[string]int64{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := &acmedns.Route53{Config: awsConfig("AKIDTEST"), Endpoint: srv.URL}
	ctx := context.Background()
	const name = "_acme-challenge.apps.example.com."

	// The wildcard's and the bare domain's values share one record set.
	for _, v := range []string{"one", "two"} {
		if _, err := p.AppendRecords(ctx, "apps.example.com.", challenge(v)); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.sets[name]; !slices.Equal(got, []string{`"one"`, `"two"`}) {
		t.Errorf("after two appends: got %v, want both values quoted", got)
	}
	if _, err := p.DeleteRecords(ctx, "apps.example.com.", challenge("one")); err != nil {
		t.Fatal(err)
	}
	if got := f.sets[name]; !slices.Equal(got, []string{`"two"`}) {
		t.Errorf("after a delete: got %v, want [\"two\"]", got)
	}
	if _, err := p.DeleteRecords(ctx, "apps.example.com.", challenge("two")); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.sets[name]; ok {
		t.Errorf("after deleting the last value: the set is still there: %v", f.sets[name])
	}

	bad := &acmedns.Route53{Config: awsConfig("AKIDWRONG"), Endpoint: srv.URL, HostedZoneID: "Z1"}
	if _, err := bad.AppendRecords(ctx, "apps.example.com.", challenge("x")); err == nil {
		t.Error("wrong credentials: got no error")
	}
}
