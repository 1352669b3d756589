package githost

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/gittest"
)

// inOwnNetns runs the test named name again in a network namespace of its
// own (unshare --net) and reports whether the caller is that run; the
// parent fails when the child does. Root only: it skips otherwise, as the
// sandbox tests do.
func inOwnNetns(t *testing.T) bool {
	t.Helper()
	if os.Getenv("GANTRY_TEST_NETNS") == t.Name() {
		return true
	}
	if testing.Short() {
		t.Skip("makes a network namespace")
	}
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	cmd := exec.Command("unshare", "--net", "--", os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "GANTRY_TEST_NETNS="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("in a network namespace of its own: %v\n%s", err, out)
	}
	return false
}

// TestProbeRefusesHostsOwnAddress mounts a port oracle: a user pastes a
// repository URL naming the machine's own public address (here 11.0.0.1,
// given to a veth interface of a namespace the test makes) and a port, and
// learns from the answer whether a service listens there. The repository
// probe, which runs outside the sandbox, must refuse the address before
// connecting, as the sandbox's rules do, and the service must see no
// request; the dial hook refuses it too, for a name that resolves there
// only at connection time.
func TestProbeRefusesHostsOwnAddress(t *testing.T) {
	if !inOwnNetns(t) {
		return
	}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", "pub0", "type", "veth", "peer", "name", "pub1"},
		{"addr", "add", "11.0.0.1/24", "dev", "pub0"},
		{"link", "set", "pub0", "up"},
		{"link", "set", "pub1", "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	gs := gittest.NewServer(t)
	gs.Repo(t, "alice/site", "main", "first", map[string]string{"index.html": "x"})
	var hits atomic.Int32
	ln, err := net.Listen("tcp", "11.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		gs.Config.Handler.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	url := "http://" + ln.Addr().String() + "/alice/site.git"

	// The control: the service answers whoever connects.
	resp, err := http.Get(url + "/info/refs?service=git-upload-pack")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the namespace is broken: %v %v", err, resp)
	}
	resp.Body.Close()
	hits.Store(0)

	g := &Git{Checker: NewChecker(), Timeout: 30 * time.Second}
	_, err = g.BranchHead(context.Background(), url, "main")
	if msg := gantry.ErrorMessage(err); msg != "Host not allowed: 11.0.0.1 is this server's own address" {
		t.Errorf("BranchHead(%s) = %v; want the host's own address refused", url, err)
	}
	resp, err = NewChecker().HTTPClient(10 * time.Second).Get(url + "/info/refs?service=git-upload-pack")
	if err == nil {
		resp.Body.Close()
		t.Errorf("HTTPClient reached the host's own address: %s", resp.Status)
	} else if !strings.Contains(err.Error(), "Host not allowed: 11.0.0.1 is this server's own address") {
		t.Errorf("HTTPClient: %v; want the host's own address refused", err)
	}
	if n := hits.Load(); n > 0 {
		t.Errorf("the host's own service got %d requests", n)
	}

	// An operator who allow-lists the address gets it.
	g = &Git{Checker: NewChecker("11.0.0.1"), Timeout: 30 * time.Second}
	if c, err := g.BranchHead(context.Background(), url, "main"); err != nil || c.Message != "first" {
		t.Errorf("allow-listed BranchHead = %+v, %v", c, err)
	}
}
