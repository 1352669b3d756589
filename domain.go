package gantry

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Custom domain statuses. A domain waits for its DNS records
// (DomainWaitingDNS) until the background check finds them (DomainVerified);
// only then is it served, and its certificate is requested at the first TLS
// handshake (DomainCertificateIssued once one is). A check that has found
// nothing for DomainGiveUpAfter, gives up (DomainError, with the reason);
// asking for a check again starts over.
const (
	DomainWaitingDNS        = "waiting_dns"
	DomainVerified          = "verified"
	DomainCertificateIssued = "certificate_issued"
	DomainError             = "error"
)

// Redirects between an apex domain and its www name (Domain.Redirect).
const (
	RedirectNone   = "none"
	RedirectToWWW  = "to-www"  // example.com → www.example.com
	RedirectToApex = "to-apex" // www.example.com → example.com
)

// DomainMaxLen is the longest domain name, in characters (RFC 1035's 253
// of the dotted form); each label holds 1 to 63.
const DomainMaxLen = 253

// DomainChallengeLabel is the label in front of a domain that holds the TXT
// record proving its ownership: _gantry-challenge.example.com.
const DomainChallengeLabel = "_gantry-challenge"

// Domain is a project's custom domain: a name its owner points at the
// platform with DNS records (Records), served as the project's production
// site once verified.
type Domain struct {
	ID        string `json:"_id"`
	ProjectID string `json:"project"`
	UserID    string `json:"user"`
	// Name is lower-case ASCII (an internationalised name in its punycode
	// form), unique across the platform.
	Name string `json:"name"`
	// Apex is true for a registered domain itself (example.com, example.co.uk),
	// which takes A/AAAA records, and false for a name below one
	// (www.example.com), which takes a CNAME.
	Apex bool `json:"apex"`
	// Primary marks the project's main custom domain (at most one).
	Primary bool `json:"primary"`
	// Redirect is RedirectNone, RedirectToWWW (an apex only) or
	// RedirectToApex (a www name only).
	Redirect string `json:"redirect"`
	// Token is the value the TXT record must hold.
	Token  string `json:"verificationToken"`
	Status string `json:"status"`
	// Error is what the last check found missing, and what to fix: set
	// while waiting and in DomainError.
	Error       string     `json:"error"`
	NextCheckAt time.Time  `json:"nextCheckAt"`
	Attempts    int        `json:"attempts"`
	VerifiedAt  *time.Time `json:"verifiedAt"`
	// FailingSince is when the re-check of a served domain first failed
	// (nil while it passes): it stops being served DomainStopServingAfter
	// later unless a check passes meanwhile.
	FailingSince *time.Time `json:"failingSince"`
	CreatedAt    time.Time  `json:"createdAt"`
	// Records are the DNS records to create (filled by the service, not
	// stored).
	Records []DNSRecord `json:"records"`
}

// Serving reports whether the domain is verified (with or without its
// certificate): only then does the platform serve it.
func (d *Domain) Serving() bool {
	return d.Status == DomainVerified || d.Status == DomainCertificateIssued
}

// DNSRecord is one record the owner creates at their DNS provider.
type DNSRecord struct {
	Type  string `json:"type"` // CNAME, A, AAAA or TXT
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DomainRoute is how the platform routes one custom domain: to the
// project subdomain whose production site it shows once verified (Serve),
// or as a redirect to another name (RedirectTo).
type DomainRoute struct {
	Name string
	// Subdomain is the project's subdomain on the live domain.
	Subdomain string
	// Serve is true for a verified domain (Domain.Serving); requests for
	// any other name get the edge's 404 page.
	Serve bool
	// Redirect is the domain's setting (RedirectNone…); RedirectTo is the
	// host a request is redirected to (308), "" to serve the site.
	Redirect, RedirectTo string
	// Live is true when the project has a live production deployment.
	Live bool
	// UserID is the domain's owner (whose budget its certificates spend).
	UserID string
}

// DomainStore persists custom domains. Methods taking a userID are scoped
// to that owner: another user's project or domain is ENOTFOUND.
type DomainStore interface {
	// CreateDomain inserts d (filling ID and CreatedAt) for the owner's
	// project when the project has fewer than max domains (else
	// ErrDomainLimit for plan), the project's first one becoming primary.
	// A name the owner added already is ECONFLICT; other accounts' claims
	// of it are no obstacle (the DNS records decide which is served).
	CreateDomain(ctx context.Context, d *Domain, max int, plan string) error
	ListDomains(ctx context.Context, userID, projectID string) ([]*Domain, error)
	FindDomain(ctx context.Context, userID, projectID, id string) (*Domain, error)
	DeleteDomain(ctx context.Context, userID, projectID, id string) error
	// SetPrimaryDomain makes id the project's primary domain, and no other.
	SetPrimaryDomain(ctx context.Context, userID, projectID, id string) error
	SetDomainRedirect(ctx context.Context, userID, projectID, id, redirect string) error
	// SaveDomainCheck writes a check's outcome (Status, Error, NextCheckAt,
	// Attempts, VerifiedAt, FailingSince) to domain d.ID; a domain deleted
	// meanwhile is ENOTFOUND. When d is served, another claim of its name
	// that was served becomes DomainError with the reason displaced, and
	// is returned.
	SaveDomainCheck(ctx context.Context, d *Domain, displaced string) ([]*Domain, error)
	// ExpireDomainClaims deletes and returns the domains never verified
	// that were added before before.
	ExpireDomainClaims(ctx context.Context, before time.Time) ([]*Domain, error)
	// SetDomainStatus moves the domain called name from status from to
	// status to; a domain in another status is left as it is.
	SetDomainStatus(ctx context.Context, name, from, to string) error
	// ClaimDueDomains returns up to limit domains waiting for DNS or
	// served whose next check is at or before now and that no other
	// checker holds, the earliest first, and holds them for a while, so
	// that with several replicas each check runs once.
	ClaimDueDomains(ctx context.Context, now time.Time, limit int) ([]*Domain, error)
	// DomainRoutes returns every domain with its project's subdomain,
	// whether it is served and whether the project has a live deployment;
	// RedirectTo is left to the caller.
	DomainRoutes(ctx context.Context) ([]DomainRoute, error)
	// DomainRoute is DomainRoutes' route of the domain called name alone;
	// ENOTFOUND when there is none.
	DomainRoute(ctx context.Context, name string) (DomainRoute, error)
}

// PlanMaxDomains is how many custom domains one project may have on plan:
// 1 on Free, 3 on Basic, 10 on Pro, 50 on Enterprise.
func PlanMaxDomains(plan string) int {
	switch plan {
	case PlanBasic:
		return 3
	case PlanPro:
		return 10
	case PlanEnterprise:
		return 50
	}
	return 1
}

// ErrDomainLimit is the EFORBIDDEN answer to one custom domain more than a
// project on plan may have.
func ErrDomainLimit(plan string) error {
	n := PlanMaxDomains(plan)
	noun := "custom domains"
	if n == 1 {
		noun = "custom domain"
	}
	return Errorf(EFORBIDDEN, "Your %s plan allows %d %s per project. Upgrade to add more.", PlanName(plan), n, noun)
}

// ValidateRedirect checks a domain's redirect option.
func ValidateRedirect(s string) error {
	switch s {
	case RedirectNone, RedirectToWWW, RedirectToApex:
		return nil
	}
	return Errorf(EINVALID, "Redirect must be one of none, to-www, to-apex")
}

// domainIDNA maps a name for lookup (lower case, width folding) and checks
// it by the rules of IDNA 2008 (UTS 46, non-transitional) with the strict
// host name rules: letters, digits and hyphens only.
var domainIDNA = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.BidiRule(),
	idna.StrictDomainName(true), idna.ValidateLabels(true), idna.VerifyDNSLength(true))

// NormalizeDomain checks the domain name a user adds and returns it in the
// form the platform stores and matches: lower case, no trailing dot, an
// internationalised name in punycode ("bücher.example" →
// "xn--bcher-kva.example"). It refuses (EINVALID, "Domain …"):
//
//   - an empty name, more than DomainMaxLen characters, control or
//     invisible characters (TextRule);
//   - a URL ("https://…", a path, a port): the name alone is wanted;
//   - an IP address, and a wildcard ("*.example.com");
//   - labels that are not 1–63 letters, digits or hyphens (not at either
//     end), or fewer than two labels;
//   - any name in platform (the live domain, the public host) or under one;
//   - a public suffix itself (co.uk, github.io), under which anyone
//     registers names of their own;
//   - a special-use name that public DNS never answers (.test, .local,
//     .localhost, .invalid, .onion, .internal, .alt, and .arpa, which
//     holds in-addr.arpa and home.arpa): it could never be verified.
func NormalizeDomain(s string, platform ...string) (string, error) {
	s = strings.TrimSpace(s)
	if err := (TextRule{Field: "Domain", Max: DomainMaxLen, Required: true}).Check(s); err != nil {
		return "", err
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@ ") {
		return "", Errorf(EINVALID, "Enter the domain name alone, such as www.example.com (no https:// and no path)")
	}
	host := strings.TrimSuffix(s, ".")
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return "", Errorf(EINVALID, "Domain must be a name, not an IP address")
	}
	if strings.Contains(host, "*") {
		return "", Errorf(EINVALID, "Wildcard domains are not supported: add each name (such as www.example.com) on its own")
	}
	if strings.Contains(host, ":") {
		return "", Errorf(EINVALID, "Enter the domain name without a port")
	}
	name, err := domainIDNA.ToASCII(host)
	if err != nil || !domainShape(name) {
		return "", Errorf(EINVALID, "Domain %s is not a valid name: each part must be 1 to 63 letters, digits or hyphens, "+
			"not starting or ending with a hyphen", Quote(s))
	}
	if utf8.RuneCountInString(name) > DomainMaxLen {
		return "", Errorf(EINVALID, "Domain cannot exceed %d characters", DomainMaxLen)
	}
	if !strings.Contains(name, ".") {
		return "", Errorf(EINVALID, "Domain needs at least two parts, such as example.com")
	}
	last := name[strings.LastIndexByte(name, '.')+1:]
	if strings.Trim(last, "0123456789") == "" {
		return "", Errorf(EINVALID, "Domain must be a name, not an IP address")
	}
	for _, p := range platform {
		p = strings.TrimSuffix(strings.ToLower(p), ".")
		if p != "" && (name == p || strings.HasSuffix(name, "."+p)) {
			return "", Errorf(EINVALID, "%s and its subdomains belong to the platform: add a domain of your own", p)
		}
	}
	if ps, _ := publicsuffix.PublicSuffix(name); ps == name {
		return "", Errorf(EINVALID, "%s is a public suffix, under which anyone can register a name: "+
			"add a domain of your own, such as example.%s", name, name)
	}
	for _, tld := range specialUseDomains {
		if name == tld || strings.HasSuffix(name, "."+tld) {
			return "", Errorf(EINVALID, "Names under .%s are never answered by public DNS, so they cannot be verified: "+
				"add a domain registered in public DNS", tld)
		}
	}
	return name, nil
}

// specialUseDomains are the top-level names (RFC 6761, 6762, 7686, 9476,
// ICANN's .internal) that public DNS does not resolve, or resolves only
// for infrastructure (.arpa).
var specialUseDomains = []string{"test", "local", "localhost", "invalid", "onion", "internal", "alt", "arpa"}

// domainShape reports whether name is dot-separated labels of 1 to 63
// ASCII letters, digits and hyphens, no label starting or ending with a
// hyphen.
func domainShape(name string) bool {
	if name == "" {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// IsApexDomain reports whether name (normalised) is a registered domain
// itself — one label above its public suffix, as example.com or
// example.co.uk — rather than a name below one.
func IsApexDomain(name string) bool {
	apex, err := publicsuffix.EffectiveTLDPlusOne(name)
	return err == nil && apex == name
}

// WWWPair returns the name a redirect of d's kind points at: www.<name> for
// an apex, the apex for www.<apex>, and "" for any other name.
func WWWPair(name string, apex bool) string {
	if apex {
		return "www." + name
	}
	if rest, ok := strings.CutPrefix(name, "www."); ok && IsApexDomain(rest) {
		return rest
	}
	return ""
}

// DomainFailingNotification warns the owner of a served domain that its
// re-check failed (problem) and when it stops being served unless fixed.
func DomainFailingNotification(d *Domain, problem string, until time.Time) *Notification {
	return newNotification(d.UserID, NotifyWarning, "Custom domain check failing",
		fmt.Sprintf("The DNS records of %s no longer point to this project: %s. It is served until %s; fix its records by then or it stops.",
			d.Name, problem, until.UTC().Format("Jan 2, 15:04 UTC")), projectPath(d.ProjectID))
}

// DomainStoppedNotification says d is no longer served (reason).
func DomainStoppedNotification(d *Domain, reason string) *Notification {
	return newNotification(d.UserID, NotifyError, "Custom domain no longer served",
		fmt.Sprintf("%s is no longer served: %s", d.Name, reason), projectPath(d.ProjectID))
}

// DomainClaimExpiredNotification says d was removed after DomainClaimTTL
// without being verified.
func DomainClaimExpiredNotification(d *Domain, ttl time.Duration) *Notification {
	return newNotification(d.UserID, NotifyInfo, "Custom domain removed",
		fmt.Sprintf("%s was removed: its DNS records were not verified within %d days. Add it again once they are in place.",
			d.Name, int(ttl.Hours()/24)), projectPath(d.ProjectID))
}
