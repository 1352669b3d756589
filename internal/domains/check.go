package domains

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/miekg/dns"
)

// dnsPart asks DNS what a domain points at: its CNAME, its addresses,
// from the configured resolver.
type dnsPart struct{ s *Service }

func (s *Service) dns() dnsPart { return dnsPart{s} }

// RefreshEvery is how often Run reloads the routes even without a change
// of its own.
const RefreshEvery = 30 * time.Second

// dnsTimeout bounds one DNS exchange.
const dnsTimeout = 5 * time.Second

// Run checks the domains waiting for DNS whose check is due, every
// CheckEvery and at once after a domain is added, until ctx is done.
func (s *Service) Run(ctx context.Context) {
	s.init()
	t := time.NewTicker(s.CheckEvery)
	defer t.Stop()
	lastRefresh := s.Now()
	for {
		s.CheckDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
		// Domains also go with their project when it is deleted: reload
		// the routes now and then, and remove the claims that expired.
		if now := s.Now(); now.Sub(lastRefresh) >= RefreshEvery {
			lastRefresh = now
			s.ExpireClaims(ctx)
			s.refreshAfter(ctx)
		}
	}
}

// ExpireClaims removes the domains never verified that were added more
// than ClaimExpiresAfter ago, telling their owners.
func (s *Service) ExpireClaims(ctx context.Context) {
	s.init()
	gone, err := s.Store.ExpireDomainClaims(ctx, s.Now().Add(-ClaimExpiresAfter))
	if err != nil {
		if ctx.Err() == nil {
			s.Logger.Error("expire custom domain claims", "err", err)
		}
		return
	}
	for _, d := range gone {
		s.Logger.Info("custom domain claim expired", "domain", d.Name, "user", d.UserID)
		s.notify(ctx, gantry.DomainClaimExpiredNotification(d, ClaimExpiresAfter))
	}
	if len(gone) > 0 {
		s.changed(ctx)
	}
}

func (s *Service) notify(ctx context.Context, n *gantry.Notification) {
	if s.Notify != nil {
		s.Notify.Notify(ctx, n)
	}
}

// CheckDue checks every domain whose check is due now (waiting for DNS,
// or served and due for its re-check) and saves each outcome.
func (s *Service) CheckDue(ctx context.Context) {
	s.init()
	due, err := s.Store.ClaimDueDomains(ctx, s.Now(), 20)
	if err != nil {
		if ctx.Err() == nil {
			s.Logger.Error("list custom domains to check", "err", err)
		}
		return
	}
	for _, d := range due {
		if ctx.Err() != nil {
			return
		}
		p, err := s.Store.FindProject(ctx, d.UserID, d.ProjectID)
		if err != nil {
			continue // deleted meanwhile
		}
		if err := s.checkAndSave(ctx, d, p.Subdomain); err != nil && gantry.ErrorCode(err) != gantry.ENOTFOUND {
			s.Logger.Error("check custom domain", "domain", d.Name, "err", err)
		}
	}
}

// Backoff returns the wait after the attempts-th failed check: FirstRetry,
// doubling, at most MaxRetry.
func Backoff(attempts int) time.Duration {
	d := FirstRetry
	for i := 1; i < attempts && d < MaxRetry; i++ {
		d *= 2
	}
	return min(d, MaxRetry)
}

// checked returns how long checks have been going on after attempts failed
// ones (the sum of their backoffs).
func checked(attempts int) time.Duration {
	var total time.Duration
	for i := 1; i < attempts; i++ {
		total += Backoff(i)
	}
	return total
}

// checkAndSave checks d's records and saves the outcome. A domain not
// served becomes verified (taking the name over from another account's
// claim that was served: the DNS records prove who holds it now), or
// waits with the next check after Backoff, or is DomainError with the
// reason once checks have gone on for GiveUpAfter. A served domain passes
// its re-check (the next in RecheckEvery) or fails it: served still, the
// next check in RecheckFailingEvery, until StopServingAfter after the
// first failure it is DomainError. A domain that became or stopped being
// served reloads the routes.
func (s *Service) checkAndSave(ctx context.Context, d *gantry.Domain, sub string) error {
	wasServing := d.Serving()
	problem := s.Check(ctx, d, sub)
	now := s.Now().UTC()
	var warn, stopped bool
	switch {
	case wasServing && problem == "":
		d.Attempts, d.Error, d.FailingSince, d.NextCheckAt = 0, "", nil, now.Add(RecheckEvery)
	case wasServing:
		d.Attempts++
		if d.FailingSince == nil {
			d.FailingSince, warn = &now, true
		}
		until := d.FailingSince.Add(StopServingAfter)
		if !now.Before(until) {
			d.Status, d.FailingSince, d.NextCheckAt, stopped = gantry.DomainError, nil, now, true
			d.Error = fmt.Sprintf("%s. Its DNS records have not pointed to this project for %d days, so it is no longer "+
				"served: fix them and check again", problem, int(StopServingAfter.Hours()/24))
		} else {
			d.NextCheckAt = now.Add(RecheckFailingEvery)
			d.Error = fmt.Sprintf("%s. It is still served until %s: fix the records by then or it stops",
				problem, until.Format("Jan 2, 15:04 UTC"))
		}
	case problem == "":
		d.Attempts++
		d.Status, d.VerifiedAt, d.Error, d.FailingSince, d.NextCheckAt = gantry.DomainVerified, &now, "", nil, now.Add(RecheckEvery)
	case checked(d.Attempts+1) >= GiveUpAfter:
		d.Attempts++
		d.Status, d.Error, d.NextCheckAt = gantry.DomainError, problem, now
	default:
		d.Attempts++
		d.Status, d.Error, d.NextCheckAt = gantry.DomainWaitingDNS, problem, now.Add(Backoff(d.Attempts))
	}
	displaced := fmt.Sprintf("Another account proved with its DNS records (the TXT record %s.%s) that %s is theirs now, "+
		"so it is no longer served here. If that is wrong, point the records to this project again and check again",
		gantry.DomainChallengeLabel, d.Name, d.Name)
	others, err := s.Store.SaveDomainCheck(ctx, d, displaced)
	if err != nil {
		return err
	}
	for _, o := range others {
		s.Logger.Info("custom domain taken over by another account's DNS records", "domain", o.Name, "from", o.UserID, "to", d.UserID)
		s.notify(ctx, gantry.DomainStoppedNotification(o, displaced))
	}
	switch {
	case warn:
		s.notify(ctx, gantry.DomainFailingNotification(d, problem, d.FailingSince.Add(StopServingAfter)))
	case stopped:
		s.Logger.Info("custom domain no longer served: its re-checks failed", "domain", d.Name, "err", problem)
		s.notify(ctx, gantry.DomainStoppedNotification(d, d.Error))
	}
	if wasServing != d.Serving() || len(others) > 0 {
		s.changed(ctx)
	}
	return nil
}

// Check asks the DNS server for d's records and returns what is wrong with
// them, "" when they are right: the TXT record _gantry-challenge.<name>
// holds d.Token, and the name is a CNAME of <sub>.<live domain> (an apex:
// its A and AAAA records are the platform's addresses, at least one).
func (s *Service) Check(ctx context.Context, d *gantry.Domain, sub string) string {
	var problems []string
	txtName := gantry.DomainChallengeLabel + "." + d.Name
	rrs, err := s.dns().query(ctx, txtName, dns.TypeTXT)
	if err != nil {
		return err.Error()
	}
	var values []string
	for _, rr := range rrs {
		if t, ok := rr.(*dns.TXT); ok {
			values = append(values, strings.Join(t.Txt, ""))
		}
	}
	switch {
	case len(values) == 0:
		problems = append(problems, fmt.Sprintf("The TXT record %s was not found: create it with the value %s", txtName, d.Token))
	case !slices.Contains(values, d.Token):
		problems = append(problems, fmt.Sprintf("The TXT record %s holds %s, not %s", txtName, gantry.Quote(values[0]), d.Token))
	}
	if d.Apex {
		problems = append(problems, s.dns().checkAddresses(ctx, d.Name)...)
	} else if p := s.dns().checkCNAME(ctx, d.Name, s.target(sub)); p != "" {
		problems = append(problems, p)
	}
	return strings.Join(problems, ". ")
}

// checkCNAME reports what is wrong with name's CNAME record.
func (dp dnsPart) checkCNAME(ctx context.Context, name, want string) string {
	rrs, err := dp.query(ctx, name, dns.TypeCNAME)
	if err != nil {
		return err.Error()
	}
	for _, rr := range rrs {
		if c, ok := rr.(*dns.CNAME); ok && strings.EqualFold(rr.Header().Name, dns.Fqdn(name)) {
			got := strings.TrimSuffix(strings.ToLower(c.Target), ".")
			if got == want {
				return ""
			}
			return fmt.Sprintf("%s points to %s, not %s", name, got, want)
		}
	}
	return fmt.Sprintf("No CNAME record was found for %s: create one pointing to %s", name, want)
}

// checkAddresses reports what is wrong with an apex's A and AAAA records.
func (dp dnsPart) checkAddresses(ctx context.Context, name string) []string {
	s := dp.s
	var problems []string
	matched := false
	for _, fam := range []struct {
		kind  string
		qtype uint16
		want  []netip.Addr
	}{{"A", dns.TypeA, s.IPv4}, {"AAAA", dns.TypeAAAA, s.IPv6}} {
		rrs, err := dp.query(ctx, name, fam.qtype)
		if err != nil {
			return []string{err.Error()}
		}
		var got []string
		var wrong []string
		for _, rr := range rrs {
			var ip net.IP
			switch r := rr.(type) {
			case *dns.A:
				ip = r.A
			case *dns.AAAA:
				ip = r.AAAA
			default:
				continue
			}
			a, _ := netip.AddrFromSlice(ip)
			a = a.Unmap()
			got = append(got, a.String())
			if slices.Contains(fam.want, a) {
				matched = true
			} else {
				wrong = append(wrong, a.String())
			}
		}
		if len(wrong) > 0 {
			if len(fam.want) == 0 {
				problems = append(problems, fmt.Sprintf("%s has the %s record %s, which is not this platform's: remove it",
					name, fam.kind, strings.Join(wrong, ", ")))
			} else {
				problems = append(problems, fmt.Sprintf("%s points to %s, not %s (%s record)",
					name, strings.Join(wrong, ", "), joinAddrs(fam.want), fam.kind))
			}
		}
	}
	if !matched && len(problems) == 0 {
		var want []string
		if len(s.IPv4) > 0 {
			want = append(want, "an A record to "+joinAddrs(s.IPv4))
		}
		if len(s.IPv6) > 0 {
			want = append(want, "an AAAA record to "+joinAddrs(s.IPv6))
		}
		problems = append(problems, fmt.Sprintf("No address record was found for %s: create %s", name, strings.Join(want, " and ")))
	}
	return problems
}

func joinAddrs(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// query asks the DNS server for name's records of qtype (over UDP, again
// over TCP when the answer was truncated) and returns the answer section.
// A name that does not exist is no records, not an error.
func (dp dnsPart) query(ctx context.Context, name string, qtype uint16) ([]dns.RR, error) {
	s := dp.s
	server, err := dp.server()
	if err != nil {
		return nil, err
	}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = true
	ctx, cancel := context.WithTimeout(ctx, dnsTimeout)
	defer cancel()
	c := &dns.Client{Timeout: dnsTimeout}
	in, _, err := c.ExchangeContext(ctx, m, server)
	if err == nil && in.Truncated {
		c.Net = "tcp"
		in, _, err = c.ExchangeContext(ctx, m, server)
	}
	if err != nil {
		s.Logger.Warn("DNS query failed", "server", server, "name", name, "err", err)
		return nil, fmt.Errorf("The DNS lookup of %s failed; it will be tried again", name)
	}
	switch in.Rcode {
	case dns.RcodeSuccess, dns.RcodeNameError:
		return in.Answer, nil
	}
	return nil, fmt.Errorf("The DNS lookup of %s failed (%s); it will be tried again", name, dns.RcodeToString[in.Rcode])
}

// server returns the DNS server to ask: Resolver, or the first nameserver
// of /etc/resolv.conf.
func (dp dnsPart) server() (string, error) {
	s := dp.s
	if s.Resolver != "" {
		return s.Resolver, nil
	}
	cc, err := dns.ClientConfigFromFile("/etc/resolv.conf")
	if err != nil || len(cc.Servers) == 0 {
		return "", fmt.Errorf("No DNS server is configured on the platform; it will be tried again")
	}
	return net.JoinHostPort(cc.Servers[0], cc.Port), nil
}
