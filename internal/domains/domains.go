// Package domains keeps projects' custom domains: adding one answers the
// DNS records its owner must create (a CNAME to the project's subdomain, or
// A/AAAA records to the platform's addresses for an apex, and a TXT record
// holding an ownership token); a background check verifies them with
// backoff against a DNS server (the system's, or Service.Resolver); only
// verified domains are routed to their project's production site;
// AllowCertificate is the decision function of on-demand TLS, refusing
// every name that is not a verified domain; and AllowIssue spends the
// budgets of new certificates (per name, per account and in all).
package domains

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/auth"
)

// Store is what the service needs of the database.
type Store interface {
	gantry.DomainStore
	FindProject(ctx context.Context, userID, id string) (*gantry.Project, error)
}

// Router serves the routes of custom domains (the edge): SetDomains
// replaces them all at once.
type Router interface {
	SetDomains(routes []gantry.DomainRoute)
}

// Verification schedule: the first check follows the domain's creation, then
// every FirstRetry, doubling up to MaxRetry; after GiveUpAfter of checks
// without success the domain is DomainError. A claim never verified is
// removed ClaimExpiresAfter its creation.
const (
	FirstRetry        = 30 * time.Second
	MaxRetry          = time.Hour
	GiveUpAfter       = 72 * time.Hour
	ClaimExpiresAfter = 7 * 24 * time.Hour
)

// Re-checks of served domains: every RecheckEvery while they pass, every
// RecheckFailingEvery once one failed; after StopServingAfter of failing
// checks the domain is DomainError, no longer served nor certified, and
// its owner is told (also at the first failure).
const (
	RecheckEvery        = 24 * time.Hour
	RecheckFailingEvery = 6 * time.Hour
	StopServingAfter    = 72 * time.Hour
)

// Default budgets of AllowIssue: CertsPerName orders of a new certificate
// for one name, CertsPerAccount for all the names of one account and
// CertsTotal for the whole platform per CertWindow. One account's failing
// orders (a CAA record, an A record pointing elsewhere) spend its own
// budget and at most a third of the platform's.
const (
	CertsPerName    = 3
	CertsPerAccount = 10
	CertsTotal      = 30
	CertWindow      = time.Hour
)

// TokenPrefix starts every ownership token: gantry-verify=<32 hex digits>.
const TokenPrefix = "gantry-verify="

// Service keeps custom domains. Set the fields, call Open (which loads the
// routes), then Run in a goroutine for the background checks.
type Service struct {
	Store Store
	// Routes receives the routes after every committed change (nil: none).
	Routes Router
	// Notify tells owners of their domains' re-checks failing, of domains
	// no longer served and of claims expired (nil: nobody).
	Notify gantry.Notifier
	// LiveDomain and PublicHost are the platform's own names: no domain may
	// be one of them or below one.
	LiveDomain, PublicHost string
	// IPv4 and IPv6 are the platform's public addresses, the records an
	// apex domain points at (GANTRY_PUBLIC_IPV4/IPV6). Without either, apex
	// domains cannot be added.
	IPv4, IPv6 []netip.Addr
	// Resolver is the host:port of the DNS server records are checked
	// against; "" asks the first nameserver of /etc/resolv.conf.
	Resolver string
	// CheckEvery is how often Run looks for due checks (default 5 s).
	CheckEvery time.Duration
	// CertNames, CertAccounts and CertAll are AllowIssue's budgets per
	// name, per account and in all (default CertsPerName, CertsPerAccount
	// and CertsTotal per CertWindow).
	CertNames, CertAccounts, CertAll *auth.Limiter
	Logger                           *slog.Logger
	// Changed, when set, hears of every change of domains committed here
	// (added, removed, verified, claims expired, a project deleted):
	// cmd/gantry notifies other replicas, whose routes then Refresh.
	Changed func(ctx context.Context)
	// Now returns the current time (default time.Now).
	Now func() time.Time

	routes  atomic.Pointer[map[string]gantry.DomainRoute]
	refresh sync.Mutex // serialises Refresh
	wake    chan struct{}
	once    sync.Once
}

func (s *Service) init() {
	s.once.Do(func() {
		s.wake = make(chan struct{}, 1)
		if s.Now == nil {
			s.Now = time.Now
		}
		if s.Logger == nil {
			s.Logger = slog.Default()
		}
		if s.CheckEvery <= 0 {
			s.CheckEvery = 5 * time.Second
		}
		if s.CertNames == nil {
			s.CertNames = auth.NewLimiter(CertsPerName, CertWindow)
		}
		if s.CertAccounts == nil {
			s.CertAccounts = auth.NewLimiter(CertsPerAccount, CertWindow)
		}
		if s.CertAll == nil {
			s.CertAll = auth.NewLimiter(CertsTotal, CertWindow)
		}
	})
}

// Open loads the routes of every domain and hands them to Routes.
func (s *Service) Open(ctx context.Context) error {
	s.init()
	return s.Refresh(ctx)
}

// Refresh reloads the routes from the store and hands them to Routes. The
// service calls it after each change it commits; call it when a project's
// production deployment changes, so AllowCertificate sees it at once.
func (s *Service) Refresh(ctx context.Context) error {
	s.init()
	s.refresh.Lock()
	defer s.refresh.Unlock()
	routes, err := s.Store.DomainRoutes(ctx)
	if err != nil {
		return err
	}
	m := make(map[string]gantry.DomainRoute, len(routes))
	for _, r := range routes {
		m[r.Name] = r
	}
	for i, r := range routes {
		// A redirect goes to the paired name only when it is a served domain
		// of the same project; otherwise the site is served as it is.
		var to string
		switch r.Redirect {
		case gantry.RedirectToWWW:
			to = "www." + r.Name
		case gantry.RedirectToApex:
			to = strings.TrimPrefix(r.Name, "www.")
		}
		// A pair redirecting to each other (stored before such pairs were
		// refused) is served as it is rather than as a loop.
		if t, ok := m[to]; ok && t.Serve && t.Subdomain == r.Subdomain && t.Redirect == gantry.RedirectNone {
			routes[i].RedirectTo = to
		}
	}
	for _, r := range routes {
		m[r.Name] = r
	}
	s.routes.Store(&m)
	if s.Routes != nil {
		s.Routes.SetDomains(routes)
	}
	return nil
}

// RefreshAfterChange reloads the routes after a change committed
// elsewhere (a project deleted with its domains), logging a failure.
func (s *Service) RefreshAfterChange(ctx context.Context) { s.changed(ctx) }

// changed reloads the routes after a change was committed here and tells
// other replicas (Changed).
func (s *Service) changed(ctx context.Context) {
	s.refreshAfter(ctx)
	if s.Changed != nil {
		s.Changed(context.WithoutCancel(ctx))
	}
}

// refreshAfter reloads the routes after a change was committed, logging a
// failure (the change stands; the next refresh picks it up).
func (s *Service) refreshAfter(ctx context.Context) {
	if err := s.Refresh(context.WithoutCancel(ctx)); err != nil {
		s.Logger.Error("reload custom domain routes", "err", err)
	}
}

// Domains lists the custom domains of the owner's project, with the
// records each needs.
func (s *Service) Domains(ctx context.Context, userID, projectID string) ([]*gantry.Domain, error) {
	p, err := s.Store.FindProject(ctx, userID, projectID)
	if err != nil {
		return nil, err
	}
	ds, err := s.Store.ListDomains(ctx, userID, projectID)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		d.Records = s.Records(d, p.Subdomain)
	}
	return ds, nil
}

// Domain returns one custom domain of the owner's project with its records.
func (s *Service) Domain(ctx context.Context, userID, projectID, id string) (*gantry.Domain, error) {
	p, err := s.Store.FindProject(ctx, userID, projectID)
	if err != nil {
		return nil, err
	}
	d, err := s.Store.FindDomain(ctx, userID, projectID, id)
	if err != nil {
		return nil, err
	}
	d.Records = s.Records(d, p.Subdomain)
	return d, nil
}

// Add adds name (gantry.NormalizeDomain) to u's project: waiting for DNS,
// with a new ownership token, its first check due at once. The project may
// hold gantry.PlanMaxDomains of u's plan; an apex needs the platform's
// addresses (EUNAVAILABLE without them). Another account's claim of the
// name does not stop it (nor is it mentioned): whichever account's DNS
// records the check finds serves the name.
func (s *Service) Add(ctx context.Context, u *gantry.User, projectID, name string) (*gantry.Domain, error) {
	s.init()
	name, err := gantry.NormalizeDomain(name, s.LiveDomain, s.PublicHost)
	if err != nil {
		return nil, err
	}
	p, err := s.Store.FindProject(ctx, u.ID, projectID)
	if err != nil {
		return nil, err
	}
	apex := gantry.IsApexDomain(name)
	if apex && len(s.IPv4) == 0 && len(s.IPv6) == 0 {
		return nil, gantry.Errorf(gantry.EUNAVAILABLE, "Apex domains such as %s are not available on this platform yet "+
			"(its public address is not configured): add a subdomain such as www.%s", name, name)
	}
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	d := &gantry.Domain{ProjectID: p.ID, UserID: u.ID, Name: name, Apex: apex, Redirect: gantry.RedirectNone,
		Token: token, Status: gantry.DomainWaitingDNS, NextCheckAt: s.Now()}
	if err := s.Store.CreateDomain(ctx, d, gantry.PlanMaxDomains(u.Subscription.Plan), u.Subscription.Plan); err != nil {
		return nil, err
	}
	d.Records = s.Records(d, p.Subdomain)
	s.changed(ctx)
	s.kick()
	return d, nil
}

// Remove deletes a custom domain; the platform stops serving it at once.
func (s *Service) Remove(ctx context.Context, userID, projectID, id string) error {
	if err := s.Store.DeleteDomain(ctx, userID, projectID, id); err != nil {
		return err
	}
	s.changed(ctx)
	return nil
}

// SetPrimary makes a domain its project's primary one.
func (s *Service) SetPrimary(ctx context.Context, userID, projectID, id string) (*gantry.Domain, error) {
	if err := s.Store.SetPrimaryDomain(ctx, userID, projectID, id); err != nil {
		return nil, err
	}
	return s.Domain(ctx, userID, projectID, id)
}

// SetRedirect sets a domain's apex ↔ www redirect: RedirectToWWW for an
// apex, RedirectToApex for www.<apex>, RedirectNone for any. The name it
// redirects to must be a domain of the same project; the redirect applies
// once that name is verified. A redirect to a name that redirects back is
// refused (EINVALID): the pair would loop.
func (s *Service) SetRedirect(ctx context.Context, userID, projectID, id, redirect string) (*gantry.Domain, error) {
	if err := gantry.ValidateRedirect(redirect); err != nil {
		return nil, err
	}
	d, err := s.Domain(ctx, userID, projectID, id)
	if err != nil {
		return nil, err
	}
	if redirect != gantry.RedirectNone {
		target := gantry.WWWPair(d.Name, d.Apex)
		switch {
		case redirect == gantry.RedirectToWWW && !d.Apex:
			return nil, gantry.Errorf(gantry.EINVALID, "Only an apex domain such as example.com can redirect to its www name")
		case redirect == gantry.RedirectToApex && (d.Apex || target == ""):
			return nil, gantry.Errorf(gantry.EINVALID, "Only a www domain such as www.example.com can redirect to its apex")
		}
		ds, err := s.Store.ListDomains(ctx, userID, projectID)
		if err != nil {
			return nil, err
		}
		var pair *gantry.Domain
		for _, o := range ds {
			if o.Name == target {
				pair = o
			}
		}
		if pair == nil {
			return nil, gantry.Errorf(gantry.EINVALID, "Add %s to this project first: %s would redirect to it", target, d.Name)
		}
		// example.com → www.example.com and www.example.com → example.com
		// would send visitors back and forth for ever (a 308 loop).
		if pair.Redirect != gantry.RedirectNone {
			return nil, gantry.Errorf(gantry.EINVALID, "%s already redirects to %s: a redirect back would loop. "+
				"Set the redirect of %s to none first", pair.Name, d.Name, pair.Name)
		}
	}
	if err := s.Store.SetDomainRedirect(ctx, userID, projectID, id, redirect); err != nil {
		return nil, err
	}
	s.changed(ctx)
	return s.Domain(ctx, userID, projectID, id)
}

// Verify checks a domain's records now and saves the outcome: verified, or
// waiting for DNS with what is missing and the backoff started over (also
// for a domain that had given up, or had been verified and no longer
// points here).
func (s *Service) Verify(ctx context.Context, userID, projectID, id string) (*gantry.Domain, error) {
	s.init()
	p, err := s.Store.FindProject(ctx, userID, projectID)
	if err != nil {
		return nil, err
	}
	d, err := s.Store.FindDomain(ctx, userID, projectID, id)
	if err != nil {
		return nil, err
	}
	d.Attempts = 0
	if err := s.checkAndSave(ctx, d, p.Subdomain); err != nil {
		return nil, err
	}
	d.Records = s.Records(d, p.Subdomain)
	return d, nil
}

// Records returns the DNS records d needs: a CNAME to the project's
// subdomain (sub.<live domain>), or for an apex an A record per public IPv4
// and an AAAA record per public IPv6 address; then the TXT record
// _gantry-challenge.<name> holding the token.
func (s *Service) Records(d *gantry.Domain, sub string) []gantry.DNSRecord {
	var out []gantry.DNSRecord
	if d.Apex {
		for _, a := range s.IPv4 {
			out = append(out, gantry.DNSRecord{Type: "A", Name: d.Name, Value: a.String()})
		}
		for _, a := range s.IPv6 {
			out = append(out, gantry.DNSRecord{Type: "AAAA", Name: d.Name, Value: a.String()})
		}
	} else {
		out = append(out, gantry.DNSRecord{Type: "CNAME", Name: d.Name, Value: s.target(sub)})
	}
	return append(out, gantry.DNSRecord{Type: "TXT", Name: gantry.DomainChallengeLabel + "." + d.Name, Value: d.Token})
}

// target is the name a subdomain's CNAME points at: <sub>.<live domain>.
func (s *Service) target(sub string) string { return sub + "." + strings.TrimSuffix(s.LiveDomain, ".") }

// Lookup returns the route of a custom domain (any case, trailing dot
// allowed).
func (s *Service) Lookup(name string) (gantry.DomainRoute, bool) {
	m := s.routes.Load()
	if m == nil {
		return gantry.DomainRoute{}, false
	}
	r, ok := (*m)[strings.TrimSuffix(strings.ToLower(name), ".")]
	return r, ok
}

// AllowCertificate is the decision function of on-demand TLS, asked
// before a stored certificate is loaded, before a renewal and before a new
// order: it answers nil for a verified custom domain (as the store has it
// now, not as the routes were last cached) and an error saying why for
// every other name. It spends no budget: a restart with any number of
// custom domains loads all their certificates, and renewals of verified
// domains always go ahead. New orders are AllowIssue's.
func (s *Service) AllowCertificate(ctx context.Context, name string) error {
	_, err := s.certificateRoute(ctx, name)
	return err
}

// AllowIssue is asked right before a new certificate (not a renewal) is
// ordered for name: a verified domain of a project whose production
// deployment is live, within CertsPerName orders for the name,
// CertsPerAccount for its owner's names and CertsTotal in all per
// CertWindow. Each allowed call counts (failed orders too); a refused one
// spends nothing.
func (s *Service) AllowIssue(ctx context.Context, name string) error {
	r, err := s.certificateRoute(ctx, name)
	if err != nil {
		return err
	}
	if !r.Live {
		return gantry.Errorf(gantry.EFORBIDDEN, "the project of %s has no live deployment", r.Name)
	}
	nameKey, accountKey := "name:"+r.Name, "user:"+r.UserID
	switch {
	case !s.CertNames.Take(nameKey):
		return gantry.Errorf(gantry.ETOOMANY, "too many certificate orders for %s: try again later", r.Name)
	case !s.CertAccounts.Take(accountKey):
		s.CertNames.Return(nameKey)
		return gantry.Errorf(gantry.ETOOMANY, "too many certificate orders for the domains of the owner of %s: try again later", r.Name)
	case !s.CertAll.Take("all"):
		s.CertNames.Return(nameKey)
		s.CertAccounts.Return(accountKey)
		return gantry.Errorf(gantry.ETOOMANY, "too many certificate orders on this platform: %s will get its certificate later", r.Name)
	}
	return nil
}

// certificateRoute returns the route of name when it is a verified custom
// domain: the cached routes refuse unknown names without a database read,
// then the store decides.
func (s *Service) certificateRoute(ctx context.Context, name string) (gantry.DomainRoute, error) {
	s.init()
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	r, ok := s.Lookup(name)
	if !ok {
		return r, gantry.Errorf(gantry.ENOTFOUND, "%s is not a custom domain of this platform", gantry.Quote(name))
	}
	if !r.Serve {
		return r, gantry.Errorf(gantry.EFORBIDDEN, "%s is not verified", name)
	}
	fresh, err := s.Store.DomainRoute(ctx, name)
	if gantry.ErrorCode(err) == gantry.ENOTFOUND {
		return fresh, gantry.Errorf(gantry.ENOTFOUND, "%s is not a custom domain of this platform", name)
	} else if err != nil {
		return fresh, err
	}
	if !fresh.Serve {
		return fresh, gantry.Errorf(gantry.EFORBIDDEN, "%s is not verified", name)
	}
	return fresh, nil
}

// CertificateIssued records that a verified domain got its certificate
// (status DomainCertificateIssued). Call it from the TLS layer when a
// certificate for name is obtained; other names are ignored.
func (s *Service) CertificateIssued(ctx context.Context, name string) error {
	s.init()
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	if r, ok := s.Lookup(name); !ok || !r.Serve {
		return nil
	}
	if err := s.Store.SetDomainStatus(ctx, name, gantry.DomainVerified, gantry.DomainCertificateIssued); err != nil {
		return err
	}
	s.changed(ctx)
	return nil
}

// kick wakes Run for a check now.
func (s *Service) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return TokenPrefix + hex.EncodeToString(b), nil
}
