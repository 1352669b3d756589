package gantry_test

import (
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
)

func TestNormalizeDomain(t *testing.T) {
	t.Parallel()
	platform := []string{"gantry.example", "app.gantry-host.example"}
	long := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".com"
	for _, tc := range []struct {
		name, in, want, wantErr string
	}{
		{"plain", "www.example.com", "www.example.com", ""},
		{"case and spaces and dot", "  WWW.Example.COM. ", "www.example.com", ""},
		{"apex", "example.co.uk", "example.co.uk", ""},
		{"unicode to punycode", "Bücher.example", "xn--bcher-kva.example", ""},
		{"punycode kept", "xn--bcher-kva.example", "xn--bcher-kva.example", ""},
		{"digits and hyphens", "my-app2.example.org", "my-app2.example.org", ""},
		{"empty", "  ", "", "Domain is required"},
		{"IPv4", "192.0.2.1", "", "Domain must be a name, not an IP address"},
		{"IPv6", "2001:db8::1", "", "Domain must be a name, not an IP address"},
		{"IPv6 bracketed", "[2001:db8::1]", "", "Domain must be a name, not an IP address"},
		{"numeric top label", "1.2.3.400", "", "Domain must be a name, not an IP address"},
		{"wildcard", "*.example.com", "", "Wildcard domains are not supported: add each name (such as www.example.com) on its own"},
		{"URL", "https://example.com/", "", "Enter the domain name alone, such as www.example.com (no https:// and no path)"},
		{"path", "example.com/blog", "", "Enter the domain name alone, such as www.example.com (no https:// and no path)"},
		{"port", "example.com:8080", "", "Enter the domain name without a port"},
		{"one label", "localhost", "", "Domain needs at least two parts, such as example.com"},
		{"underscore", "my_app.example.com", "", `Domain "my_app.example.com" is not a valid name: each part must be 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen`},
		{"leading hyphen", "-app.example.com", "", `Domain "-app.example.com" is not a valid name: each part must be 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen`},
		{"empty label", "app..example.com", "", `Domain "app..example.com" is not a valid name: each part must be 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen`},
		{"label too long", strings.Repeat("a", 64) + ".com", "", `Domain "` + strings.Repeat("a", 64) + `.com" is not a valid name: each part must be 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen`},
		{"too long", long + "x", "", "Domain cannot exceed 253 characters"},
		{"control character", "exa\x00mple.com", "", "Domain cannot contain control or invisible characters (found U+0000)"},
		{"public suffix", "co.uk", "", "co.uk is a public suffix, under which anyone can register a name: add a domain of your own, such as example.co.uk"},
		{"private public suffix", "GitHub.io", "", "github.io is a public suffix, under which anyone can register a name: add a domain of your own, such as example.github.io"},
		{"a name under a public suffix", "ada.github.io", "ada.github.io", ""},
		{".test", "www.shop.test", "", "Names under .test are never answered by public DNS, so they cannot be verified: add a domain registered in public DNS"},
		{".local", "printer.local", "", "Names under .local are never answered by public DNS, so they cannot be verified: add a domain registered in public DNS"},
		{".onion", "abcdefghijklmnop.onion", "", "Names under .onion are never answered by public DNS, so they cannot be verified: add a domain registered in public DNS"},
		{"in-addr.arpa", "1.2.0.192.in-addr.arpa", "", "Names under .arpa are never answered by public DNS, so they cannot be verified: add a domain registered in public DNS"},
		{".localhost", "blog.localhost", "", "Names under .localhost are never answered by public DNS, so they cannot be verified: add a domain registered in public DNS"},
		{"live domain", "gantry.example", "", "gantry.example and its subdomains belong to the platform: add a domain of your own"},
		{"under the live domain", "Blog.Gantry.Example", "", "gantry.example and its subdomains belong to the platform: add a domain of your own"},
		{"public host", "app.gantry-host.example", "", "app.gantry-host.example and its subdomains belong to the platform: add a domain of your own"},
		{"a sibling of the live domain is fine", "notgantry.example", "notgantry.example", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := gantry.NormalizeDomain(tc.in, platform...)
			if tc.wantErr != "" {
				if err == nil || gantry.ErrorMessage(err) != tc.wantErr || gantry.ErrorCode(err) != gantry.EINVALID {
					t.Fatalf("got %q, %v; want error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if got, err := gantry.NormalizeDomain(long, platform...); err != nil || len(got) != 253 {
		t.Errorf("a 253-character name: got %d characters, %v", len(got), err)
	}
}

func TestIsApexDomain(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"example.com": true, "example.co.uk": true, "www.example.com": false, "blog.example.co.uk": false,
	} {
		if got := gantry.IsApexDomain(name); got != want {
			t.Errorf("IsApexDomain(%q) = %v, want %v", name, got, want)
		}
	}
	if got := gantry.WWWPair("example.com", true); got != "www.example.com" {
		t.Errorf("got %q", got)
	}
	if got := gantry.WWWPair("www.example.com", false); got != "example.com" {
		t.Errorf("got %q", got)
	}
	if got := gantry.WWWPair("blog.example.com", false); got != "" {
		t.Errorf("got %q", got)
	}
}

func TestErrDomainLimit(t *testing.T) {
	t.Parallel()
	if got := gantry.ErrorMessage(gantry.ErrDomainLimit(gantry.PlanFree)); got != "Your Free plan allows 1 custom domain per project. Upgrade to add more." {
		t.Errorf("got %q", got)
	}
	if got := gantry.ErrorMessage(gantry.ErrDomainLimit(gantry.PlanPro)); got != "Your Pro plan allows 10 custom domains per project. Upgrade to add more." {
		t.Errorf("got %q", got)
	}
}
