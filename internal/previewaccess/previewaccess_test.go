package previewaccess

import (
	"context"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
)

type fakeStore struct {
	routes []gantry.PreviewRoute
	reads  int
}

func (f *fakeStore) PreviewLabels(context.Context) ([]gantry.PreviewRoute, error) {
	f.reads++
	return f.routes, nil
}
func (f *fakeStore) PreviewOwner(context.Context, string) (string, error) { return "ada", nil }
func (f *fakeStore) PreviewAccess(context.Context, string, string) (gantry.PreviewAccess, error) {
	return gantry.PreviewAccess{}, nil
}
func (f *fakeStore) SetPreviewsOpen(context.Context, string, string, bool) (gantry.PreviewAccess, error) {
	return gantry.PreviewAccess{}, nil
}

// TestTicketsAndCookies: a ticket is a key for one minute, once, to its
// label only, and is no cookie (nor a cookie a ticket); a cookie for twelve
// hours; an altered one is nothing.
func TestTicketsAndCookies(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s, err := New("a-test-secret-key-that-is-long-enough-0123456789", &fakeStore{}, "https://gantry.test",
		func(l string) string { return "https://" + l + ".apps.test" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Now = func() time.Time { return now }
	ticket := s.sign("ticket", "site--pr-1", now.Add(TicketTTL))
	if s.Check("site--pr-1", ticket) {
		t.Error("a ticket works as a cookie")
	}
	if _, ok := s.Redeem("site--pr-2", ticket); ok {
		t.Error("a ticket works on another label")
	}
	cookie, ok := s.Redeem("site--pr-1", ticket)
	if !ok || !s.Check("site--pr-1", cookie) || s.Check("site--pr-2", cookie) {
		t.Fatalf("redeem: %v", ok)
	}
	if _, ok := s.Redeem("site--pr-1", cookie); ok {
		t.Error("a cookie works as a ticket")
	}
	if _, ok := s.Redeem("site--pr-1", ticket); ok {
		t.Error("a ticket traded once is traded again (a leaked link lets a stranger in)")
	}
	other := s.sign("ticket", "site--pr-1", now.Add(TicketTTL-time.Second))
	if _, ok := s.Redeem("site--pr-1", other); !ok {
		t.Error("a second, fresh ticket of the same preview is refused")
	}
	altered := []byte(cookie)
	altered[len(altered)-1] ^= 1
	if s.Check("site--pr-1", string(altered)) {
		t.Error("an altered cookie works")
	}
	now = now.Add(TicketTTL + time.Second)
	if _, ok := s.Redeem("site--pr-1", ticket); ok {
		t.Error("an expired ticket works")
	}
	now = now.Add(CookieTTL)
	if s.Check("site--pr-1", cookie) {
		t.Error("an expired cookie works")
	}
	if got := gantry.LocalPath("//evil.example/x"); got != "/" {
		t.Errorf("LocalPath(//evil) = %q", got)
	}
}

// TestOpenFailsClosed: Open never reads the store; Reload does, at most
// once a second per label, and a label the store does not know stays
// guarded.
func TestOpenFailsClosed(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	st := &fakeStore{}
	s, err := New("a-test-secret-key-that-is-long-enough-0123456789", st, "https://gantry.test", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Now = func() time.Time { return now }
	if open, known := s.Open("site--new"); open || known || st.reads != 0 {
		t.Fatalf("Open: %v %v, %d reads", open, known, st.reads)
	}
	if s.Reload("site--new") || st.reads != 1 {
		t.Fatalf("unknown label: open, %d reads", st.reads)
	}
	st.routes = []gantry.PreviewRoute{{Label: "site--new", Open: true}, {Label: "site--other", Open: false}}
	if s.Reload("site--new") || st.reads != 1 {
		t.Fatalf("read again within the second (%d reads)", st.reads)
	}
	// Another label reads at once: a preview that just went live is open.
	if s.Reload("site--other") || st.reads != 2 {
		t.Fatalf("another label (%d reads)", st.reads)
	}
	if open, known := s.Open("site--new"); !open || !known {
		t.Fatalf("a public repository's new preview is not open")
	}
}
