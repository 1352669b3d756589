package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/domains/dnstest"
	"github.com/gantryhq/gantry/internal/gittest"
)

// TestCustomDomain runs the whole platform (event loops on and off): a
// static site goes live, a custom domain is added, gets the 404 page while
// its DNS records are missing, is verified against a DNS server on loopback
// (GANTRY_DNS_RESOLVER), then serves the site; removal stops it at once.
func TestCustomDomain(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	for _, loops := range []string{"on", "off"} {
		t.Run("GANTRY_EDGE_LOOPS="+loops, func(t *testing.T) { testCustomDomain(t, loops) })
	}
}

func testCustomDomain(t *testing.T, loops string) {
	git := gittest.NewServer(t)
	site := git.Repo(t, "ada/site", "main", "site", map[string]string{"index.html": "<h1>on my own domain</h1>"})
	dns := dnstest.NewServer(t)
	s := startServer(t, map[string]string{
		"GANTRY_DATA_DIR": reachableDir(t), "GANTRY_PASSWORD_COST": "1", "GANTRY_GIT_ALLOW_HOSTS": "127.0.0.1",
		"GANTRY_EDGE_LOOPS": loops, "GANTRY_DNS_RESOLVER": dns.Addr,
	})

	var auth struct{ Token string }
	if code := s.call(t, "POST", "/api/auth/register", "", `{"username":"ada","email":"ada@example.com","password":"secret123","fullName":"Ada"}`, &auth); code != 201 {
		t.Fatalf("register: %d", code)
	}
	var p struct {
		Project struct {
			ID        string `json:"_id"`
			Subdomain string
		}
	}
	if code := s.call(t, "POST", "/api/projects/public", auth.Token, fmt.Sprintf(`{"repository":{"url":%q},"name":"site"}`, site), &p); code != 201 {
		t.Fatalf("create project: %d", code)
	}
	var d struct {
		Deployment struct {
			ID     string `json:"_id"`
			Status string
		}
	}
	if code := s.call(t, "POST", "/api/deployments", auth.Token, `{"projectId":"`+p.Project.ID+`"}`, &d); code != 201 {
		t.Fatalf("deploy: %d", code)
	}
	for deadline := time.Now().Add(60 * time.Second); d.Deployment.Status != "live"; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("deployment: still %s\n%s", d.Deployment.Status, s.logs.String())
		}
		s.call(t, "GET", "/api/deployments/"+d.Deployment.ID, auth.Token, "", &d)
	}

	get := func(host string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", s.base+"/", nil)
		req.Host = host
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, string(body), res.Header.Get("Location")
	}

	type domain struct {
		ID     string `json:"_id"`
		Token  string `json:"verificationToken"`
		Status string
		Error  string
	}
	var added struct{ Domain domain }
	if code := s.call(t, "POST", "/api/projects/"+p.Project.ID+"/domains", auth.Token, `{"name":"www.example.com"}`, &added); code != 201 {
		t.Fatalf("add domain: %d", code)
	}
	if code, body, _ := get("www.example.com"); code != 404 || !strings.Contains(body, "No app lives at www.example.com yet") {
		t.Fatalf("waiting domain: %d %s", code, body)
	}

	// The records appear; "Check now" verifies them without waiting for
	// the background check (due 30 s after the first, failed one).
	dns.Set("_gantry-challenge.www.example.com", "TXT", added.Domain.Token)
	dns.Set("www.example.com", "CNAME", p.Project.Subdomain+".localhost")
	var got struct{ Domain domain }
	if code := s.call(t, "POST", "/api/projects/"+p.Project.ID+"/domains/"+added.Domain.ID+"/verify", auth.Token, "", &got); code != 200 || got.Domain.Status != "verified" {
		t.Fatalf("verify: %d %+v", code, got.Domain)
	}
	if code, body, _ := get("WWW.example.com:8080"); code != 200 || !strings.Contains(body, "on my own domain") {
		t.Fatalf("verified domain: %d %s", code, body)
	}

	if code := s.call(t, "DELETE", "/api/projects/"+p.Project.ID+"/domains/"+added.Domain.ID, auth.Token, "", nil); code != 200 {
		t.Fatalf("remove: %d", code)
	}
	// Removed: the name is no longer the edge's; it reaches the platform.
	if code, body, _ := get("www.example.com"); strings.Contains(body, "on my own domain") || strings.Contains(body, "No app lives at") {
		t.Fatalf("removed domain: %d %s", code, body)
	}
}
