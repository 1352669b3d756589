// Package peer is the signed hop between replicas (issue 26, point 5): a
// replica's edge forwards a request for a server app whose home is another
// node to that node's peer address (GANTRY_PEER_ADDR), signed with a key
// every replica derives from the shared GANTRY_SECRET_KEY. The peer port
// serves only requests signed for its own node within a short time
// window, each once, and marks them as having arrived over the hop so the
// edge serves them locally or answers 503, never forwarding again.
package peer

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The hop's headers: who sent it to whom, when, a random nonce, the
// client's address as the sending edge saw it, whether the client came
// over TLS ("https"), and the signature over them and the request's
// method, host and path.
const (
	HeaderFrom   = "Gantry-Hop-From"
	HeaderTo     = "Gantry-Hop-To"
	HeaderTime   = "Gantry-Hop-Time"
	HeaderNonce  = "Gantry-Hop-Nonce"
	HeaderClient = "Gantry-Hop-Client"
	HeaderProto  = "Gantry-Hop-Proto"
	HeaderSig    = "Gantry-Hop-Signature"
)

// DefaultWindow is how far a hop's timestamp may be from the receiver's
// clock (either way): older or newer hops are refused as stale.
const DefaultWindow = 10 * time.Second

// Hop signs requests this node forwards and checks those it receives.
// Build it with New; it is safe for concurrent use.
type Hop struct {
	key    []byte
	node   string
	window time.Duration
	now    func() time.Time

	mu   sync.Mutex
	seen map[string]int64 // nonces of hops accepted within the window → their time (unix ns)
	last int64            // when seen was last swept
}

// New returns the hop of node, its key derived from the platform's secret
// key (the same on every replica). window 0 means DefaultWindow; now nil
// means time.Now.
func New(secretKey, node string, window time.Duration, now func() time.Time) *Hop {
	if window <= 0 {
		window = DefaultWindow
	}
	if now == nil {
		now = time.Now
	}
	m := hmac.New(sha256.New, []byte(secretKey))
	m.Write([]byte("gantry peer hop v1"))
	return &Hop{key: m.Sum(nil), node: node, window: window, now: now, seen: make(map[string]int64)}
}

// Node is the node id this hop signs as and accepts hops for.
func (h *Hop) Node() string { return h.node }

func (h *Hop) sign(method, host, uri, ts, nonce, from, to, client, proto string) string {
	m := hmac.New(sha256.New, h.key)
	for _, s := range [...]string{method, host, uri, ts, nonce, from, to, client, proto} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Sign sets r's hop headers for a hop from this node to node to, with
// client the address of the client the request came from, and secure
// whether it came over TLS.
func (h *Hop) Sign(r *http.Request, to, client string, secure bool) {
	proto := "http"
	if secure {
		proto = "https"
	}
	var b [12]byte
	rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	ts := strconv.FormatInt(h.now().UnixMilli(), 10)
	hd := r.Header
	hd.Set(HeaderFrom, h.node)
	hd.Set(HeaderTo, to)
	hd.Set(HeaderTime, ts)
	hd.Set(HeaderNonce, nonce)
	hd.Set(HeaderClient, client)
	hd.Set(HeaderProto, proto)
	hd.Set(HeaderSig, h.sign(r.Method, r.Host, r.URL.RequestURI(), ts, nonce, h.node, to, client, proto))
}

// Refused is why a hop was refused; its message says what to check.
type Refused struct{ Reason string }

func (e *Refused) Error() string { return e.Reason }

// Verify checks that r is a hop signed for this node, within the window,
// not seen before; it returns the sending node and the client's address.
func (h *Hop) Verify(r *http.Request) (from, client string, err error) {
	hd := r.Header
	from, to, ts, nonce, sig := hd.Get(HeaderFrom), hd.Get(HeaderTo), hd.Get(HeaderTime), hd.Get(HeaderNonce), hd.Get(HeaderSig)
	client = hd.Get(HeaderClient)
	if sig == "" || from == "" || ts == "" || nonce == "" {
		return "", "", &Refused{"This is a replica's peer port: it serves only requests forwarded by another replica and signed with the platform's key."}
	}
	uri := r.RequestURI // as it came on the wire, as the sender signed it
	if uri == "" {
		uri = r.URL.RequestURI()
	}
	want := h.sign(r.Method, r.Host, uri, ts, nonce, from, to, client, hd.Get(HeaderProto))
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return "", "", &Refused{"The forwarded request's signature does not match: check that every replica has the same GANTRY_SECRET_KEY."}
	}
	if to != h.node {
		return "", "", &Refused{fmt.Sprintf("The forwarded request was signed for node %s, and this is node %s: the sender's placements are out of date.", to, h.node)}
	}
	ms, err := strconv.ParseInt(ts, 10, 64)
	now := h.now()
	if err != nil {
		return "", "", &Refused{"The forwarded request's time is not a number."}
	}
	at := time.UnixMilli(ms)
	if d := now.Sub(at); d > h.window || d < -h.window {
		return "", "", &Refused{fmt.Sprintf("The forwarded request is stale: signed %s from this node's clock (at most %s): check the replicas' clocks (NTP).", d.Round(time.Millisecond), h.window)}
	}
	if !h.firstUse(nonce, now.UnixNano()) {
		return "", "", &Refused{"The forwarded request was replayed: each signed hop is served once."}
	}
	return from, client, nil
}

// firstUse records nonce, reporting whether it was new within the window.
// Old nonces are swept at most once a window, so the set holds at most
// two windows' worth of hops.
func (h *Hop) firstUse(nonce string, now int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.seen[nonce]; ok {
		return false
	}
	win := int64(h.window)
	if now-h.last > win {
		for n, t := range h.seen {
			if now-t > 2*win {
				delete(h.seen, n)
			}
		}
		h.last = now
	}
	h.seen[nonce] = now
	return true
}

type arrivedKey struct{}

// Arrived reports whether the request of ctx came over the hop: it is
// served here or refused, never forwarded again.
func Arrived(ctx context.Context) bool { return ctx.Value(arrivedKey{}) != nil }

// Handler serves the peer port: requests that Verify accepts go to next,
// marked as arrived over the hop (Arrived), with their client's address as
// RemoteAddr, a non-nil TLS when the client came over TLS (so the edge
// sets X-Forwarded-Proto, redirects and cookie names as for its own
// clients), and the hop's headers removed; every other request gets 403
// with the reason in Gantry's JSON envelope.
func (h *Hop) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, client, err := h.Verify(r)
		if err != nil {
			var ref *Refused
			msg := "The forwarded request was refused."
			if errors.As(err, &ref) {
				msg = ref.Reason
			}
			body, _ := json.Marshal(struct {
				Success bool   `json:"success"`
				Message string `json:"message"`
			}{false, msg})
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			w.Write(body)
			return
		}
		if r.Header.Get(HeaderProto) == "https" && r.TLS == nil {
			r.TLS = &tls.ConnectionState{HandshakeComplete: true}
		}
		for _, k := range [...]string{HeaderFrom, HeaderTo, HeaderTime, HeaderNonce, HeaderClient, HeaderProto, HeaderSig} {
			r.Header.Del(k)
		}
		if client != "" {
			r.RemoteAddr = client
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), arrivedKey{}, true)))
	})
}
