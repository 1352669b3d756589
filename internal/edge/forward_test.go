package edge_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/peer"
)

const hopKey = "0123456789abcdef0123456789abcdef"

// replica is one replica's edge on its public port and its peer port
// (the hop's Handler in front of the same edge), counting what the peer
// port received.
type replica struct {
	edge         *edge.Edge
	table        *edge.Table
	public, peer *httptest.Server
	hops         atomic.Int32
}

func newReplica(t *testing.T, node string) *replica {
	t.Helper()
	r := &replica{table: edge.NewTable()}
	e := edge.New("localhost", r.table, "http://localhost:8080")
	hop := peer.New(hopKey, node, 0, nil)
	e.ConfigureHop(hop)
	r.edge, r.public = e, httptest.NewServer(e)
	in := hop.Handler(e)
	r.peer = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hops.Add(1)
		in.ServeHTTP(w, req)
	}))
	t.Cleanup(r.public.Close)
	t.Cleanup(r.peer.Close)
	return r
}

func hopGet(t *testing.T, url, host string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Host = host
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// A request for an app homed on another replica is forwarded to that
// replica's peer port and answered by the app there, with its public host
// and the client's address; the peer port refuses the same request sent
// to it directly without the hop's signature.
func TestForwardToHomeReplica(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	b.table.Set("app", edge.Site{DeploymentID: "d1", Status: gantry.DeploymentLive, ProxyTarget: startApp(t)})
	a.table.Set("app", edge.Site{DeploymentID: "d1", Status: gantry.DeploymentLive,
		Home: strings.TrimPrefix(b.peer.URL, "http://"), HomeNode: "b"})

	code, body := hopGet(t, a.public.URL+"/echo?q=1", "app.localhost")
	if code != 200 || !strings.Contains(body, "GET /echo?q=1 host=app.localhost") || !strings.Contains(body, `xff=["127.0.0.1"]`) {
		t.Fatalf("through a: %d %s; want the app's answer, for the client's address", code, body)
	}
	if b.hops.Load() != 1 {
		t.Fatalf("b's peer port got %d hops, want 1", b.hops.Load())
	}
	// A client over TLS at a: the app at b sees https, as it would at b.
	secure := httptest.NewTLSServer(a.edge)
	defer secure.Close()
	req, _ := http.NewRequest("GET", secure.URL+"/echo", nil)
	req.Host = "app.localhost"
	res, err := secure.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(got), `xfp="https"`) {
		t.Fatalf("over TLS through a: %d %s; want the app to see X-Forwarded-Proto https", res.StatusCode, got)
	}
	code, body = hopGet(t, b.peer.URL+"/echo", "app.localhost")
	if code != http.StatusForbidden || !strings.Contains(body, "signed with the platform's key") {
		t.Fatalf("unsigned at b's peer port: %d %s; want 403", code, body)
	}
}

// A request that arrived over the hop is never forwarded again: when the
// two replicas each think the other is the app's home (a takeover under
// way), the second one answers 503 and the first one's peer port never
// sees the request come back.
func TestHopNeverForwardedTwice(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	a.table.Set("app", edge.Site{DeploymentID: "d1", Status: gantry.DeploymentLive,
		Home: strings.TrimPrefix(b.peer.URL, "http://"), HomeNode: "b"})
	b.table.Set("app", edge.Site{DeploymentID: "d1", Status: gantry.DeploymentLive,
		Home: strings.TrimPrefix(a.peer.URL, "http://"), HomeNode: "a"})
	code, body := hopGet(t, a.public.URL+"/", "app.localhost")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "moving between servers") {
		t.Fatalf("%d %s; want 503 from b", code, body)
	}
	if a.hops.Load() != 0 || b.hops.Load() != 1 {
		t.Fatalf("hops: a %d, b %d; want 0 and 1", a.hops.Load(), b.hops.Load())
	}
	// A home that cannot be reached is 503 too, with Retry-After.
	a.table.Set("gone", edge.Site{DeploymentID: "d2", Status: gantry.DeploymentLive, Home: refusedAddr(t), HomeNode: "c"})
	if code, body := hopGet(t, a.public.URL+"/", "gone.localhost"); code != http.StatusServiceUnavailable || !strings.Contains(body, "cannot be reached") {
		t.Fatalf("home down: %d %s; want 503", code, body)
	}
}

// BenchmarkHop compares a request to a server app through the edge of its
// home replica (local) with one through another replica's edge, forwarded
// over the signed hop (forwarded): the hop's cost is the difference of
// their p99s (issue 26's target: at most 1 ms more). One client, keep-alive.
func BenchmarkHop(b *testing.B) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer app.Close()
	home, other := edge.NewTable(), edge.NewTable()
	home.Set("app", edge.Site{DeploymentID: "d1", Status: gantry.DeploymentLive, ProxyTarget: strings.TrimPrefix(app.URL, "http://")})
	eh, eo := edge.New("localhost", home, ""), edge.New("localhost", other, "")
	hh, ho := peer.New(hopKey, "home", 0, nil), peer.New(hopKey, "other", 0, nil)
	eh.ConfigureHop(hh)
	eo.ConfigureHop(ho)
	pub, peerPort, pubOther := httptest.NewServer(eh), httptest.NewServer(hh.Handler(eh)), httptest.NewServer(eo)
	defer pub.Close()
	defer peerPort.Close()
	defer pubOther.Close()
	other.Set("app", edge.Site{DeploymentID: "d1", Status: gantry.DeploymentLive, Home: strings.TrimPrefix(peerPort.URL, "http://"), HomeNode: "home"})
	for _, c := range []struct{ name, url string }{{"local", pub.URL}, {"forwarded", pubOther.URL}} {
		b.Run(c.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			lat := make([]time.Duration, 0, b.N)
			req, _ := http.NewRequest("GET", c.url+"/", nil)
			req.Host = "app.localhost"
			for i := 0; i < b.N; i++ {
				start := time.Now()
				res, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Fatalf("%s: %d", c.name, res.StatusCode)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
