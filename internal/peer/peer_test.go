package peer_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/peer"
)

const key = "0123456789abcdef0123456789abcdef"

// The peer port serves a hop signed for its node once; it refuses with
// 403 and a clear message an unsigned request, a forged or re-signed one
// (another key, a changed path or host, another node's), a replay of an
// accepted hop and one whose time is outside the window. What it serves
// is marked as having arrived over the hop, with the client's address.
func TestPeerPortRefusesAllButFreshSignedHops(t *testing.T) {
	var served atomic.Int32
	var remote string
	b := peer.New(key, "b", 2*time.Second, nil)
	srv := httptest.NewServer(b.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !peer.Arrived(r.Context()) || r.Header.Get(peer.HeaderSig) != "" {
			t.Error("served without the hop's mark, or with its headers")
		}
		served.Add(1)
		remote = r.RemoteAddr
		io.WriteString(w, "app")
	})))
	defer srv.Close()
	a := peer.New(key, "a", 0, nil)
	req := func(path string) *http.Request {
		r, _ := http.NewRequest("GET", srv.URL+path, nil)
		r.Host = "app.localhost"
		return r
	}
	do := func(r *http.Request) (int, string) {
		t.Helper()
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	refused := func(name string, r *http.Request, want string) {
		t.Helper()
		code, body := do(r)
		if code != http.StatusForbidden || !strings.Contains(body, `"success":false`) || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s; want 403 saying %q", name, code, body, want)
		}
	}

	good := req("/x?y=1")
	a.Sign(good, "b", "203.0.113.9:4711", false)
	replay := good.Clone(good.Context())
	if code, body := do(good); code != 200 || body != "app" || remote != "203.0.113.9:4711" {
		t.Fatalf("signed hop: %d %s from %s", code, body, remote)
	}
	refused("replayed", replay, "replayed")
	refused("unsigned", req("/x"), "peer port")

	other := peer.New("another key of at least thirty-two bytes", "a", 0, nil)
	forged := req("/x")
	other.Sign(forged, "b", "", false)
	refused("other key", forged, "GANTRY_SECRET_KEY")

	moved := req("/x")
	a.Sign(moved, "b", "", false)
	moved.URL.Path = "/admin"
	refused("path changed", moved, "signature")

	rehosted := req("/x")
	a.Sign(rehosted, "b", "", false)
	rehosted.Host = "victim.localhost"
	refused("host changed", rehosted, "signature")

	upgraded := req("/x")
	a.Sign(upgraded, "b", "", false)
	upgraded.Header.Set(peer.HeaderProto, "https")
	refused("scheme changed", upgraded, "signature")

	forC := req("/x")
	a.Sign(forC, "c", "", false)
	refused("signed for another node", forC, "for node c")

	old := peer.New(key, "a", 0, func() time.Time { return time.Now().Add(-5 * time.Second) })
	stale := req("/x")
	old.Sign(stale, "b", "", false)
	refused("stale", stale, "stale")
	ahead := peer.New(key, "a", 0, func() time.Time { return time.Now().Add(5 * time.Second) })
	future := req("/x")
	ahead.Sign(future, "b", "", false)
	refused("from the future", future, "stale")

	if n := served.Load(); n != 1 {
		t.Fatalf("served %d requests, want only the signed one", n)
	}
}
