package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/acmedns/acmednstest"
	"github.com/gantryhq/gantry/internal/gittest"
)

// TestServeACMECustomDomain runs `gantry serve` with GANTRY_TLS=acme
// against pebble, with challtestsrv answering DNS both for pebble and for
// the custom domains' verification (GANTRY_DNS_RESOLVER): a static site
// goes live, its custom domain goes Waiting for DNS → Verified once its
// TXT and CNAME records exist, its first HTTPS handshake gets a
// certificate on demand (HTTP-01 on gantry's plain listener), the status
// becomes Certificate issued and the site is served over HTTPS with a
// certificate for exactly that name. A name that is not a verified domain
// is refused at the handshake and no certificate is requested for it;
// plain HTTP on the custom domain redirects to HTTPS. An apex domain of a
// second project (A record to GANTRY_PUBLIC_IPV4) gets its own certificate.
func TestServeACMECustomDomain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pebble")
	}
	git := gittest.NewServer(t)
	site := git.Repo(t, "ada/site", "main", "site", map[string]string{"index.html": "<h1>on my own domain, over HTTPS</h1>"})
	httpPort, httpsPort := acmednstest.FreePort(t), acmednstest.FreePort(t)
	ca := acmednstest.Start(t, acmednstest.Options{HTTPPort: httpPort})
	dnsAddr := ca.DNSServer(t, "apps.test")
	dir := reachableDir(t)
	dataDir := filepath.Join(dir, "data")
	srv := startACMEServe(t, ca, dnsAddr, httpPort, httpsPort, map[string]string{
		"GANTRY_DATA_DIR": dataDir, "GANTRY_PASSWORD_COST": "1", "GANTRY_GIT_ALLOW_HOSTS": "127.0.0.1",
		"GANTRY_DNS_RESOLVER": ca.DNSAddr, "GANTRY_PUBLIC_IPV4": "127.0.0.1",
	})
	logs, client := srv.logs, srv.client
	ctx := context.Background()
	api := fmt.Sprintf("https://gantry.test:%d", httpsPort)
	// call sends one API request over HTTPS (the public host's certificate
	// comes by HTTP-01 in the background: retried until it is there).
	call := func(method, path, token, body string, out any) int {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			req, _ := http.NewRequest(method, api+path, strings.NewReader(body))
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			res, err := client.Do(req)
			if err != nil {
				if time.Now().After(deadline) {
					t.Fatalf("%s %s: %v\n%s", method, path, err, logs.String())
				}
				time.Sleep(200 * time.Millisecond)
				continue
			}
			var env struct{ Data json.RawMessage }
			json.NewDecoder(res.Body).Decode(&env)
			res.Body.Close()
			if out != nil && len(env.Data) > 0 {
				json.Unmarshal(env.Data, out)
			}
			return res.StatusCode
		}
	}

	var auth struct{ Token string }
	if code := call("POST", "/api/auth/register", "", `{"username":"ada","email":"ada@example.com","password":"secret123","fullName":"Ada"}`, &auth); code != 201 {
		t.Fatalf("register: %d", code)
	}
	// deploy creates a project from repo and waits for its deployment to
	// go live.
	deploy := func(repo, name string) (id, sub string) {
		t.Helper()
		var p struct {
			Project struct {
				ID        string `json:"_id"`
				Subdomain string
			}
		}
		if code := call("POST", "/api/projects/public", auth.Token, fmt.Sprintf(`{"repository":{"url":%q},"name":%q}`, repo, name), &p); code != 201 {
			t.Fatalf("create project: %d", code)
		}
		var d struct {
			Deployment struct {
				ID     string `json:"_id"`
				Status string
			}
		}
		if code := call("POST", "/api/deployments", auth.Token, `{"projectId":"`+p.Project.ID+`"}`, &d); code != 201 {
			t.Fatalf("deploy: %d", code)
		}
		for deadline := time.Now().Add(90 * time.Second); d.Deployment.Status != "live"; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) || d.Deployment.Status == "failed" {
				t.Fatalf("deployment: %s\n%s", d.Deployment.Status, logs.String())
			}
			call("GET", "/api/deployments/"+d.Deployment.ID, auth.Token, "", &d)
		}
		return p.Project.ID, p.Project.Subdomain
	}
	var p struct {
		Project struct{ ID, Subdomain string }
	}
	p.Project.ID, p.Project.Subdomain = deploy(site, "site")

	type domain struct {
		ID      string `json:"_id"`
		Token   string `json:"verificationToken"`
		Status  string
		Error   string
		Records []struct{ Type, Name, Value string }
	}
	const name = "www.example.com"
	var added struct{ Domain domain }
	if code := call("POST", "/api/projects/"+p.Project.ID+"/domains", auth.Token, `{"name":"`+name+`"}`, &added); code != 201 || added.Domain.Status != "waiting_dns" {
		t.Fatalf("add domain: %d %+v", code, added.Domain)
	}
	// Waiting for DNS: no certificate for it yet.
	if _, err := client.Get(fmt.Sprintf("https://%s:%d/", name, httpsPort)); err == nil {
		t.Errorf("%s before verification: served over HTTPS, want the handshake refused", name)
	}

	if err := ca.SetTXT(ctx, "_gantry-challenge."+name, added.Domain.Token); err != nil {
		t.Fatal(err)
	}
	if err := ca.SetCNAME(ctx, name, p.Project.Subdomain+".apps.test"); err != nil {
		t.Fatal(err)
	}
	var got struct{ Domain domain }
	if code := call("POST", "/api/projects/"+p.Project.ID+"/domains/"+added.Domain.ID+"/verify", auth.Token, "", &got); code != 200 || got.Domain.Status != "verified" {
		t.Fatalf("verify: %d %+v", code, got.Domain)
	}

	// The first handshake for the name obtains its certificate on demand:
	// at once, though a handshake was refused moments ago (verification
	// makes the TLS layer forget its refusals).
	res, err := client.Get(fmt.Sprintf("https://%s:%d/", name, httpsPort))
	if err != nil {
		t.Fatalf("https://%s right after verification: %v\n%s", name, err, logs.String())
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if leaf := res.TLS.PeerCertificates[0]; len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != name {
		t.Errorf("%s: certificate for %v, want exactly [%s]", name, leaf.DNSNames, name)
	}
	if res.StatusCode != 200 || !strings.Contains(string(body), "on my own domain, over HTTPS") {
		t.Errorf("%s over HTTPS: %d %.300s", name, res.StatusCode, body)
	}
	var list struct{ Domains []domain }
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		call("GET", "/api/projects/"+p.Project.ID+"/domains", auth.Token, "", &list)
		if len(list.Domains) == 1 && list.Domains[0].Status == "certificate_issued" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("domain status: %+v, want certificate_issued\n%s", list.Domains, logs.String())
		}
	}

	// Plain HTTP on the custom domain goes to HTTPS.
	res, err = client.Get(fmt.Sprintf("http://%s:%d/about?x=1", name, httpPort))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if want := fmt.Sprintf("https://%s:%d/about?x=1", name, httpsPort); res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != want {
		t.Errorf("plain HTTP on %s: %d %q, want 308 %q", name, res.StatusCode, res.Header.Get("Location"), want)
	}

	// A name that is no verified domain: refused at the handshake, even
	// with DNS pointing at us, and nothing is asked of the CA for it.
	const stranger = "stranger.example.net"
	if err := ca.SetCNAME(ctx, stranger, p.Project.Subdomain+".apps.test"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Get(fmt.Sprintf("https://%s:%d/", stranger, httpsPort)); err == nil {
		t.Errorf("%s: served over HTTPS, want the handshake refused", stranger)
	}
	filepath.WalkDir(filepath.Join(dataDir, "certs"), func(path string, e fs.DirEntry, err error) error {
		if err == nil && strings.Contains(path, stranger) {
			t.Errorf("certificate storage holds %s", path)
		}
		return nil
	})
	if out := logs.String(); strings.Contains(out, `"msg":"certificate obtained","name":"`+stranger) || !strings.Contains(out, name) {
		t.Errorf("logs: want a certificate for %s and none for %s:\n%s", name, stranger, out)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "certs")); err != nil {
		t.Error(err)
	}

	// An apex domain: an A record to GANTRY_PUBLIC_IPV4 (challtestsrv
	// answers 127.0.0.1 for every name) and the TXT record.
	apexSite := git.Repo(t, "ada/shop", "main", "shop", map[string]string{"index.html": "<h1>the apex shop</h1>"})
	shopID, _ := deploy(apexSite, "shop")
	const apex = "example.org"
	if code := call("POST", "/api/projects/"+shopID+"/domains", auth.Token, `{"name":"`+apex+`"}`, &added); code != 201 {
		t.Fatalf("add %s: %d %+v", apex, code, added.Domain)
	}
	var aRecord bool
	for _, r := range added.Domain.Records {
		aRecord = aRecord || (r.Type == "A" && r.Name == apex && r.Value == "127.0.0.1")
	}
	if !aRecord {
		t.Fatalf("%s: records %+v, want A %s → 127.0.0.1 (GANTRY_PUBLIC_IPV4)", apex, added.Domain.Records, apex)
	}
	if err := ca.SetTXT(ctx, "_gantry-challenge."+apex, added.Domain.Token); err != nil {
		t.Fatal(err)
	}
	if code := call("POST", "/api/projects/"+shopID+"/domains/"+added.Domain.ID+"/verify", auth.Token, "", &got); code != 200 || got.Domain.Status != "verified" {
		t.Fatalf("verify %s: %d %+v", apex, code, got.Domain)
	}
	// The first request waits for the certificate; the site is expected on
	// it, but a CI run once saw the 404 page there (not reproduced since):
	// ask again for a few seconds and print the server's log if it stays.
	var leaf *x509.Certificate
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		res, err = client.Get(fmt.Sprintf("https://%s:%d/", apex, httpsPort))
		if err != nil {
			t.Fatalf("https://%s: %v\n%s", apex, err, logs.String())
		}
		body, _ = io.ReadAll(res.Body)
		res.Body.Close()
		leaf = res.TLS.PeerCertificates[0]
		if res.StatusCode == 200 || time.Now().After(deadline) {
			break
		}
		t.Logf("%s over HTTPS: %d, asking again", apex, res.StatusCode)
	}
	if res.StatusCode != 200 || !strings.Contains(string(body), "the apex shop") || !slices.Equal(leaf.DNSNames, []string{apex}) {
		t.Errorf("%s over HTTPS: %d with a certificate for %v: %.200s\n%s", apex, res.StatusCode, leaf.DNSNames, body, logs.String())
	}

	srv.stop(t)
}
