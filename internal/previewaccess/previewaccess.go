// Package previewaccess keeps previews of private repositories to their
// owner (issue 24, point 20). A preview whose project has a private
// repository, unless the owner opened its previews, is served only to a
// browser holding a signed cookie for that preview's host; the platform
// hands that cookie over to the project's owner:
//
//  1. the edge sends a visitor without it to the platform's
//     /preview-access?host=…&to=… page (SignInURL);
//  2. the web app there, signed in, asks POST /api/previews/access; the
//     API checks that the preview is the user's (Ticket) and answers the
//     preview's /.gantry/preview-access?ticket=… address, a ticket valid
//     for one minute and that host only;
//  3. the edge there trades the ticket for the cookie (Redeem) and sends
//     the browser on to the page it asked for; later requests carry the
//     cookie (Check), which the edge takes out before the app sees them.
//
// Labels are read from the store (PreviewLabels): which are open, which
// are guarded. A label the service does not know yet is guarded (fail
// closed); when the edge already serves a site under it, its route is in
// the store (a route reaches the edge only after its transaction), so the
// edge asks Reload, which reads the store again (at most once a second
// per label): a new preview of a public repository is open at once.
package previewaccess

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/auth"
	"github.com/gantryhq/gantry/internal/secret"
)

// Store is what the service needs of the database (internal/store).
type Store interface {
	PreviewLabels(ctx context.Context) ([]gantry.PreviewRoute, error)
	PreviewOwner(ctx context.Context, label string) (string, error)
	PreviewAccess(ctx context.Context, userID, projectID string) (gantry.PreviewAccess, error)
	SetPreviewsOpen(ctx context.Context, userID, projectID string, open bool) (gantry.PreviewAccess, error)
}

// TicketTTL is how long a hand-off ticket may be traded for the cookie.
const TicketTTL = time.Minute

// CookieTTL is how long the preview cookie lets its browser in.
const CookieTTL = 12 * time.Hour

// Path is the path of a guarded preview's host where the edge trades a
// ticket for the cookie.
const Path = "/.gantry/preview-access"

// reloadEvery bounds how often one unknown label reads the store again.
const reloadEvery = time.Second

// Service decides who may see previews. Create it with New.
type Service struct {
	Store Store
	// PublicURL is the platform's address (no trailing slash), where
	// SignInURL sends visitors.
	PublicURL string
	// LiveURL is the address of a live-domain label (the config's
	// LiveURL), where tickets are traded.
	LiveURL func(label string) string
	Logger  *slog.Logger
	// Now returns the current time; tests replace it.
	Now func() time.Time
	// Changed, when set, hears of every change of a project's preview
	// setting committed here: cmd/gantry notifies other replicas, which
	// Refresh.
	Changed func(ctx context.Context)

	key      []byte
	labels   atomic.Pointer[map[string]bool] // label → open
	mu       sync.Mutex                      // one refresh at a time
	reloaded map[string]time.Time            // label → its last Reload's refresh (under mu)

	// Redeemed holds the tickets traded already, each for TicketTTL (New
	// makes it; cmd/gantry shares it between replicas on PostgreSQL).
	Redeemed *auth.Limiter
}

// New returns a service signing with a key derived from the platform
// secret key.
func New(secretKey string, st Store, publicURL string, liveURL func(string) string, logger *slog.Logger) (*Service, error) {
	key, err := secret.DeriveKey(secretKey, secret.PreviewAccess, 32)
	if err != nil {
		return nil, err
	}
	s := &Service{Store: st, PublicURL: strings.TrimSuffix(publicURL, "/"), LiveURL: liveURL, Logger: logger,
		Now: time.Now, key: key, Redeemed: auth.NewLimiter(1, TicketTTL)}
	s.Redeemed.Now = func() time.Time { return s.Now() }
	return s, nil
}

// Refresh reads the preview labels from the store.
func (s *Service) Refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshLocked(ctx)
}

func (s *Service) refreshLocked(ctx context.Context) error {
	routes, err := s.Store.PreviewLabels(ctx)
	if err != nil {
		return err
	}
	m := make(map[string]bool, len(routes))
	for _, r := range routes {
		m[r.Label] = r.Open
	}
	s.labels.Store(&m)
	return nil
}

// Open reports whether anyone may see preview label, and whether the
// service knows the label at all (it never reads the store).
func (s *Service) Open(label string) (open, known bool) {
	if m := s.labels.Load(); m != nil {
		open, known = (*m)[label]
	}
	return open, known
}

// Reload reads the store again for a label Open does not know but the edge
// serves, and reports whether it is open: at most once a second per label
// (more often, it answers false: guarded).
func (s *Service) Reload(label string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if open, known := s.Open(label); known {
		return open // read meanwhile
	}
	now := s.Now()
	if now.Sub(s.reloaded[label]) < reloadEvery {
		return false
	}
	if s.reloaded == nil || len(s.reloaded) > 1000 {
		s.reloaded = map[string]time.Time{}
	}
	s.reloaded[label] = now
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.refreshLocked(ctx); err != nil {
		s.logger().Warn("preview access: reading the preview labels failed", "err", err)
		return false
	}
	open, _ := s.Open(label)
	return open
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// SignInURL is where the edge sends a visitor of a guarded preview
// without its cookie: the platform's hand-off page, told the preview's
// host and the page asked for.
func (s *Service) SignInURL(host, requestURI string) string {
	return s.PublicURL + "/preview-access?" + url.Values{"host": {host}, "to": {requestURI}}.Encode()
}

// Ticket checks that the preview on host (<label>.<live-domain>, a port
// allowed) belongs to userID and returns the address on that host that
// trades a one-minute ticket for the cookie and then shows to (a path of
// the preview; "/" when it is not one). Another user's preview, or none,
// is ENOTFOUND.
func (s *Service) Ticket(ctx context.Context, userID, label, to string) (string, error) {
	owner, err := s.Store.PreviewOwner(ctx, label)
	if err != nil {
		return "", err
	}
	if owner != userID {
		return "", gantry.Errorf(gantry.ENOTFOUND, "Preview not found")
	}
	q := url.Values{"ticket": {s.sign("ticket", label, s.Now().Add(TicketTTL))}, "to": {gantry.LocalPath(to)}}
	return s.LiveURL(label) + Path + "?" + q.Encode(), nil
}

// Redeem trades a ticket for label's cookie value; false when the ticket
// is not label's, altered or expired.
//
// A ticket is traded once: a second trade of it (a copied link, a
// ticket read from a log or a browser's history) is refused, so a
// ticket that leaks after its owner used it lets nobody in. Traded
// tickets are remembered until they expire (Redeemed).
func (s *Service) Redeem(label, ticket string) (string, bool) {
	if !s.verify("ticket", label, ticket) {
		return "", false
	}
	if !s.Redeemed.Take(ticket) {
		return "", false
	}
	return s.sign("cookie", label, s.Now().Add(CookieTTL)), true
}

// Check reports whether a cookie value lets its browser see label.
func (s *Service) Check(label, cookie string) bool { return s.verify("cookie", label, cookie) }

// AccessOf and SetOpen read and change a project's preview setting, and
// apply a change at once.
func (s *Service) AccessOf(ctx context.Context, userID, projectID string) (gantry.PreviewAccess, error) {
	return s.Store.PreviewAccess(ctx, userID, projectID)
}

// SetOpen opens or closes userID's project's previews.
func (s *Service) SetOpen(ctx context.Context, userID, projectID string, open bool) (gantry.PreviewAccess, error) {
	a, err := s.Store.SetPreviewsOpen(ctx, userID, projectID, open)
	if err != nil {
		return a, err
	}
	if err := s.Refresh(ctx); err != nil {
		s.logger().Warn("preview access: reading the preview labels failed", "err", err)
	}
	if s.Changed != nil {
		s.Changed(context.WithoutCancel(ctx))
	}
	return a, nil
}

// sign returns kind's value for label until exp: exp (8 bytes) and the
// HMAC-SHA256 of kind, label and exp, base64url.
func (s *Service) sign(kind, label string, exp time.Time) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(exp.Unix()))
	return base64.RawURLEncoding.EncodeToString(append(b[:], s.mac(kind, label, b[:])...))
}

func (s *Service) verify(kind, label, value string) bool {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) != 8+sha256.Size {
		return false
	}
	if !hmac.Equal(raw[8:], s.mac(kind, label, raw[:8])) {
		return false
	}
	return s.Now().Unix() <= int64(binary.BigEndian.Uint64(raw[:8]))
}

func (s *Service) mac(kind, label string, exp []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(kind + "\x00" + label + "\x00"))
	m.Write(exp)
	return m.Sum(nil)
}
