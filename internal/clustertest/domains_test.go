package clustertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/domains/dnstest"
)

// TestOneDomainCheckPerInterval (B11): a custom domain waiting for its
// DNS records is checked by one replica at a time. The DNS server answers
// slowly (3 s a query, so a check takes 6 s: longer than each replica's
// 5 s look for due checks); in the first 15 s after the domain is added,
// before its retry is due (30 s), its TXT record is asked for once. Each
// replica checked it before checks were claimed.
func TestOneDomainCheckPerInterval(t *testing.T) {
	dns := dnstest.NewServer(t)
	dns.SetDelay(3 * time.Second)
	c := newCluster(t, map[string]string{"GANTRY_DNS_RESOLVER": dns.Addr})
	a, b := c.start("a"), c.start("b")
	token := register(t, a, "dora")
	url := c.git.Repo(t, "dora/site", "main", "site", map[string]string{"index.html": "<h1>hi</h1>"})
	p := createProject(t, b, token, url, "site", "")

	const name = "www.example.com"
	if code := a.call(t, "POST", "/api/projects/"+p.ID+"/domains", token, fmt.Sprintf(`{"name":%q}`, name), nil); code != 201 {
		t.Fatalf("add domain: %d", code)
	}
	time.Sleep(15 * time.Second)
	if n := dns.Queries("_gantry-challenge."+name, "TXT"); n != 1 {
		t.Fatalf("the domain's TXT record was asked for %d times in its first interval by two replicas, want once", n)
	}
}
