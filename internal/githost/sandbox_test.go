package githost

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/gittest"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
	"github.com/google/go-cmp/cmp"
)

// mustSandbox returns a bwrap-mode Sandbox with an isolated network (the
// platform's), skipping the test where bubblewrap cannot run (not root,
// not installed), as the sandbox package's own tests do.
func mustSandbox(tb testing.TB) *sandbox.Sandbox {
	tb.Helper()
	if testing.Short() {
		tb.Skip("runs git in the sandbox")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		tb.Skip("bubblewrap is not installed")
	}
	if os.Geteuid() != 0 {
		tb.Skip("the sandbox tests run as root")
	}
	s := sandbox.New(sandbox.Config{})
	if err := s.Available(); err != nil {
		tb.Fatalf("sandbox not available: %v", err)
	}
	return s
}

// dataDir returns a folder laid out like the platform's data folder: mode
// 0711 down from a parent the sandbox user can pass through.
func dataDir(tb testing.TB) string {
	tb.Helper()
	base := tb.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o711); err != nil {
			tb.Fatal(err)
		}
	}
	return base
}

// owners maps every path under dir (relative, dir itself as ".") to the
// uid owning it.
func owners(tb testing.TB, dir string) map[string]uint32 {
	tb.Helper()
	out := map[string]uint32{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fi.Sys().(*syscall.Stat_t).Uid
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func TestSandboxedCloneRunsAsSandboxUser(t *testing.T) {
	sb := mustSandbox(t)
	gs := gittest.NewServer(t)
	url := gs.Repo(t, "alice/site", "main", "Ship it\n\nbody", map[string]string{"index.html": "<h1>hi</h1>", "src/app.js": "x"})
	g := &Git{Checker: NewChecker("127.0.0.1"), Sandbox: sb, Timeout: 30 * time.Second, CloneTimeout: 30 * time.Second}

	ws := filepath.Join(dataDir(t), "builds", "d1")
	if err := os.MkdirAll(filepath.Dir(ws), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := sb.PrepareWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	c, err := g.Clone(context.Background(), url, "main", ws, "", 0, 0)
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	if c.Message != "Ship it\n\nbody" || c.Author != "Test Author" || len(c.SHA) != 40 {
		t.Errorf("commit = %+v", c)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "index.html")); err != nil || string(b) != "<h1>hi</h1>" {
		t.Errorf("index.html = %q, %v", b, err)
	}
	// git wrote every file itself, as the sandbox user: had it run as root,
	// the clone would be root's.
	own := owners(t, ws)
	if len(own) < 5 {
		t.Fatalf("workspace holds only %v", own)
	}
	for p, uid := range own {
		if uid != sb.UID() {
			t.Errorf("%s belongs to uid %d, want the sandbox user %d", p, uid, sb.UID())
		}
	}
}

func TestSandboxedCloneAsAccountUID(t *testing.T) {
	sb := mustSandbox(t)
	gs := gittest.NewServer(t)
	url := gs.Repo(t, "alice/site", "main", "first", map[string]string{"index.html": "x"})
	g := &Git{Checker: NewChecker("127.0.0.1"), Sandbox: sb, Timeout: 30 * time.Second, CloneTimeout: 30 * time.Second}
	const uid, gid = 10077, 10077
	ws := filepath.Join(dataDir(t), "builds", "d2")
	if err := os.MkdirAll(filepath.Dir(ws), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(ws, uid, gid); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Clone(context.Background(), url, "main", ws, "", uid, gid); err != nil {
		t.Fatalf("clone as %d: %v", uid, err)
	}
	for p, u := range owners(t, ws) {
		if u != uid {
			t.Errorf("%s belongs to uid %d, want %d", p, u, uid)
		}
	}
}

func TestSandboxedCloneReachesOnlyAllowListedLoopback(t *testing.T) {
	sb := mustSandbox(t)
	gs := gittest.NewServer(t)
	url := gs.Repo(t, "alice/site", "main", "first", map[string]string{"index.html": "x"})
	port := gs.URL[strings.LastIndex(gs.URL, ":")+1:]
	ctx := context.Background()

	// An allow-listed name resolving to loopback: resolved once, pinned,
	// and reached through that one port of the host's loopback.
	byName := strings.Replace(url, "127.0.0.1", "localhost", 1)
	g := &Git{Checker: NewChecker("localhost:" + port), Sandbox: sb, Timeout: 30 * time.Second}
	if c, err := g.BranchHead(ctx, byName, "main"); err != nil || c.Message != "first" {
		t.Fatalf("BranchHead(%s) = %+v, %v", byName, c, err)
	}
	// Not allow-listed: refused before git runs.
	g = &Git{Checker: NewChecker(), Sandbox: sb, Timeout: 30 * time.Second}
	if _, err := g.BranchHead(ctx, url, "main"); gantry.ErrorMessage(err) != "Host not allowed: 127.0.0.1 resolves to a private address" {
		t.Fatalf("BranchHead without an allow list: %v", err)
	}
}

func TestReachable(t *testing.T) {
	ref := func(raw string) *RepoRef {
		r, err := ParseRepoURL(raw)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	addrs := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	for _, tc := range []struct {
		ref       string
		addrs     []netip.Addr
		wantPorts []int
		wantAllow []netip.Prefix
	}{
		{"http://localhost:8080/a/b.git", addrs("127.0.0.1", "::1"), []int{8080}, nil},
		{"https://git.campus.edu/a/b.git", addrs("10.20.1.5"), nil, []netip.Prefix{netip.MustParsePrefix("10.20.1.5/32")}},
		{"https://git.example.com/a/b.git", addrs("93.184.216.34"), nil, nil},
		{"http://[fd00::5]:3000/a/b.git", addrs("fd00::5"), nil, []netip.Prefix{netip.MustParsePrefix("fd00::5/128")}},
	} {
		ports, allow := reachable(ref(tc.ref), tc.addrs)
		if diff := cmp.Diff(tc.wantPorts, ports); diff != "" {
			t.Errorf("%s ports (-want +got):\n%s", tc.ref, diff)
		}
		if diff := cmp.Diff(tc.wantAllow, allow, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
			t.Errorf("%s allow (-want +got):\n%s", tc.ref, diff)
		}
	}
}

// stallingClones serves gs's repositories, except that git's fetches
// (POST …/git-upload-pack) hang until the client goes away: ls-remote and
// the probe work, clones never finish.
func stallingClones(t *testing.T, gs *gittest.Server) *httptest.Server {
	t.Helper()
	target, _ := url.Parse(gs.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			_, _ = io.Copy(io.Discard, r.Body) // then a closed connection cancels r's context
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestLookupCloneInSandboxLeavesNothingBehind(t *testing.T) {
	sb := mustSandbox(t)
	gs := gittest.NewServer(t)
	gs.Repo(t, "alice/site", "main", "first", map[string]string{"index.html": "<h1>hi</h1>", "package.json": "{}"})
	stall := stallingClones(t, gs)
	data := dataDir(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the system temp folder, for this test

	var seen struct {
		dir   string
		owner uint32
		files []string
	}
	// The lookup that succeeds has time to spare on a busy machine (a
	// volume made, the sandbox's network set up, the clone); the stalled
	// one below runs under a service of 2 s.
	cfg := Config{
		AllowHosts: []string{"127.0.0.1"},
		Sandbox:    sb,
		DataDir:    data,
		Timeout:    30 * time.Second,
		Detect: func(dir string) (string, gantry.BuildConfig, error) {
			seen.dir = dir
			own := owners(t, dir)
			seen.owner = own["index.html"]
			for p := range own {
				if !strings.HasPrefix(p, ".git") && p != "." {
					seen.files = append(seen.files, p)
				}
			}
			return "static", gantry.BuildConfig{OutputDirectory: "."}, nil
		},
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	res, err := s.Lookup(ctx, gs.URL+"/alice/site")
	if err != nil {
		t.Fatalf("lookup: %v", err)
	}
	if res.Framework != "static" || res.Repository.LastCommit == nil || res.Repository.LastCommit.Message != "first" {
		t.Errorf("lookup = %+v", res)
	}
	// A volume of its own under lookups/: lookups/lookup-…/workspace.
	if filepath.Dir(filepath.Dir(seen.dir)) != filepath.Join(data, "lookups") || filepath.Base(seen.dir) != "workspace" {
		t.Errorf("the lookup cloned into %s, want a volume under %s", seen.dir, filepath.Join(data, "lookups"))
	}
	if seen.owner != sb.UID() {
		t.Errorf("the lookup's clone belongs to uid %d, want the sandbox user %d", seen.owner, sb.UID())
	}
	if diff := cmp.Diff([]string{"index.html", "package.json"}, slices.Sorted(slices.Values(seen.files))); diff != "" {
		t.Errorf("files the detector saw (-want +got):\n%s", diff)
	}

	// A clone that outlasts the lookup's time limit.
	cfg.Timeout = 2 * time.Second
	short, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = short.Lookup(ctx, stall.URL+"/alice/site")
	port := stall.URL[strings.LastIndex(stall.URL, ":")+1:]
	if want := "Timed out after 2s while contacting 127.0.0.1:" + port; gantry.ErrorMessage(err) != want {
		t.Errorf("stalled lookup: %v, want %q", err, want)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("stalled lookup took %s", d)
	}

	for _, dir := range []string{filepath.Join(data, "lookups"), tmp} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			t.Errorf("left behind in %s: %s", dir, e.Name())
		}
	}
}

// fakeDNS answers A queries for every name with addr over UDP on loopback
// (no other record), counting the questions; resolver returns a Go
// resolver that asks only it.
type fakeDNS struct {
	conn    net.PacketConn
	addr    netip.Addr
	queries atomic.Int32
}

func newFakeDNS(t *testing.T, addr netip.Addr) *fakeDNS {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	d := &fakeDNS{conn: conn, addr: addr}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply := d.answer(buf[:n]); reply != nil {
				_, _ = conn.WriteTo(reply, from)
			}
		}
	}()
	return d
}

// answer builds the reply to one query: the header and question copied,
// and one A record when an A record was asked.
func (d *fakeDNS) answer(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	end := 12
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5 // the root label, QTYPE, QCLASS
	if end > len(q) {
		return nil
	}
	d.queries.Add(1)
	qtype := uint16(q[end-4])<<8 | uint16(q[end-3])
	r := append([]byte{q[0], q[1], 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0}, q[12:end]...)
	if qtype == 1 {
		r[7] = 1
		a := d.addr.As4()
		r = append(r, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, a[0], a[1], a[2], a[3])
	}
	return r
}

func (d *fakeDNS) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, "udp", d.conn.LocalAddr().String())
	}}
}

// TestSandboxedGitUsesTheCheckedAddress names the git server by a name
// only the platform's resolver knows: the sandboxed git, whose resolver
// has never heard of it, reaches the server only through the address
// resolved (once) and checked before it ran.
func TestSandboxedGitUsesTheCheckedAddress(t *testing.T) {
	sb := mustSandbox(t)
	gs := gittest.NewServer(t)
	url := gs.Repo(t, "alice/site", "main", "pinned", map[string]string{"index.html": "x"})
	port := gs.URL[strings.LastIndex(gs.URL, ":")+1:]
	dns := newFakeDNS(t, netip.MustParseAddr("127.0.0.1"))
	const name = "git.gantry-pin.test"
	checker := NewChecker(name + ":" + port)
	checker.Resolver = dns.resolver()
	g := &Git{Checker: checker, Sandbox: sb, Timeout: 30 * time.Second, CloneTimeout: 30 * time.Second}
	byName := strings.Replace(url, "127.0.0.1", name, 1)

	ws := filepath.Join(dataDir(t), "ws")
	c, err := g.Clone(context.Background(), byName, "main", ws, "", 0, 0)
	if err != nil {
		t.Fatalf("clone %s: %v", byName, err)
	}
	if c.Message != "pinned" {
		t.Errorf("commit = %+v", c)
	}
	if n := dns.queries.Load(); n == 0 {
		t.Error("the platform never resolved the name")
	}
}

func TestSandboxedLookupTooLarge(t *testing.T) {
	sb := mustSandbox(t)
	gs := gittest.NewServer(t)
	big := make([]byte, 1<<20)
	rand.Read(big)
	gs.Repo(t, "alice/big", "main", "big", map[string]string{"blob.bin": string(big)})
	data := dataDir(t)
	s, err := New(Config{
		AllowHosts: []string{"127.0.0.1"}, Sandbox: sb, DataDir: data, LookupMaxSize: 256 << 10,
		Detect: func(string) (string, gantry.BuildConfig, error) { return "static", gantry.BuildConfig{}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Lookup(context.Background(), gs.URL+"/alice/big")
	if msg := gantry.ErrorMessage(err); msg != "Repository is too large (limit 256 KiB)" {
		t.Errorf("lookup of a 1 MiB repository: %v, want Repository is too large (limit 256 KiB)", err)
	}
	entries, err := os.ReadDir(filepath.Join(data, "lookups"))
	if err != nil || len(entries) > 0 {
		t.Errorf("lookups folder after the lookup: %d entries, %v; want it empty", len(entries), err)
	}
}

// TestSandboxedDumbHTTP clones from a host that speaks only dumb HTTP with
// git in the sandbox: a build's clone, a lookup and a branch head, and the
// failures git itself meets there, each told in a sentence.
func TestSandboxedDumbHTTP(t *testing.T) {
	sb := mustSandbox(t)
	ds := gittest.NewDumbServer(t)
	ds.Repo(t, "alice/site", "main", "first", map[string]string{"index.html": "<h1>v1</h1>"})
	url := ds.Repo(t, "alice/site", "main", "second", map[string]string{"about.html": "about"})
	big := make([]byte, 12<<20)
	rand.Read(big)
	ds.Repo(t, "alice/big", "main", "big", map[string]string{"blob.bin": string(big)})
	hostile := dumbHostile(t, ds)
	port := hostile.URL[strings.LastIndex(hostile.URL, ":")+1:]
	data := dataDir(t)
	ctx := context.Background()
	g := &Git{Checker: NewChecker("127.0.0.1"), Sandbox: sb, Timeout: 30 * time.Second, CloneTimeout: 30 * time.Second}

	// A build's clone, into a volume as the pipeline makes one.
	if err := os.MkdirAll(filepath.Join(data, "builds"), 0o711); err != nil {
		t.Fatal(err)
	}
	vol, err := sb.OpenVolume(filepath.Join(data, "builds", "d1"), sandbox.Disk{Bytes: 8 << 20, Inodes: 10000}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sandbox.RemoveVolume(vol.Path) })
	c, err := g.Clone(ctx, url, "main", vol.Workspace, "", 0, 0)
	if err != nil || c.Message != "second" {
		t.Fatalf("Clone = %+v, %v; want the second commit", c, err)
	}
	for p, uid := range owners(t, vol.Workspace) {
		if uid != sb.UID() {
			t.Errorf("%s belongs to uid %d, want the sandbox user %d", p, uid, sb.UID())
		}
	}
	if b, err := os.ReadFile(filepath.Join(vol.Workspace, "index.html")); err != nil || string(b) != "<h1>v1</h1>" {
		t.Errorf("index.html = %q, %v", b, err)
	}
	// A clone bigger than its volume: git runs out of disk space.
	emptyDir(vol.Workspace)
	_, err = g.Clone(ctx, ds.URL+"/alice/big.git", "main", vol.Workspace, "", 0, 0)
	if msg := gantry.ErrorMessage(err); !strings.HasPrefix(msg, "Repository is too large (limit ") || gantry.ErrorCode(err) != gantry.EINVALID {
		t.Errorf("clone of 12 MiB into 8 MiB: %v, want Repository is too large", err)
	}
	noRawGit(t, gantry.ErrorMessage(err))

	// A lookup and a sync's branch head.
	s, err := New(Config{AllowHosts: []string{"127.0.0.1"}, Sandbox: sb, DataDir: data, Timeout: 30 * time.Second,
		Detect: func(string) (string, gantry.BuildConfig, error) { return "static", gantry.BuildConfig{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Lookup(ctx, url)
	if err != nil || res.Branch != "main" || res.Repository.LastCommit == nil || res.Repository.LastCommit.SHA != c.SHA {
		t.Fatalf("Lookup = %+v, %v; want main at %s", res, err, c.SHA)
	}
	head, err := s.LatestCommit(ctx, res.Repository, "main", "")
	if err != nil || head.SHA != c.SHA {
		t.Fatalf("LatestCommit = %+v, %v; want %s", head, err, c.SHA)
	}

	short := &Git{Checker: NewChecker("127.0.0.1"), Sandbox: sb, Timeout: 2 * time.Second, CloneTimeout: 2 * time.Second}
	if _, err := short.BranchHead(ctx, hostile.URL+"/stall/alice/site.git", "main"); gantry.ErrorMessage(err) != "Timed out after 2s while contacting 127.0.0.1:"+port {
		t.Errorf("stalled objects: %v, want a time-out", err)
	}
	// Refused by the sandbox's network policy: the probe reached the host,
	// but git is not given its loopback port.
	r, err := g.prepare(ctx, url, "", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r.loopPorts = nil
	dir, remove, err := g.newLookupDir()
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	_, err = g.run(ctx, r, runOpts{timeout: 10 * time.Second, dir: dir}, "ls-remote", "--", r.url)
	dsHost := strings.TrimPrefix(ds.URL, "http://")
	if want := "Could not connect to " + dsHost + ": check the URL, or try again later if the host is down"; gantry.ErrorMessage(err) != want {
		t.Errorf("git refused by the network policy: %v, want %q", err, want)
	}
	// The host stops listening after the probe: through the sandbox's port
	// forwarding, git's connection is reset before any answer.
	_, err = g.BranchHead(ctx, hostile.URL+"/vanish/alice/site.git", "main")
	if want := "Could not connect to 127.0.0.1:" + port + ": check the URL, or try again later if the host is down"; gantry.ErrorMessage(err) != want {
		t.Errorf("host gone after the probe: %v, want %q", err, want)
	}
}

// TestSandboxSetupFailureIsThePlatforms makes pasta fail as it did under
// load ("Failed to open tun socket in namespace") when git's sandbox is
// set up: a failure or two is retried and the clone succeeds; a failure
// that persists is told as the platform's (503, retry safe), never as a
// problem with the repository's URL.
func TestSandboxSetupFailureIsThePlatforms(t *testing.T) {
	mustSandbox(t)
	gs := gittest.NewServer(t)
	url := gs.Repo(t, "alice/site", "main", "first", map[string]string{"index.html": "x"})
	data := dataDir(t)
	if err := os.Mkdir(filepath.Join(data, "builds"), 0o711); err != nil {
		t.Fatal(err)
	}
	clone := func(t *testing.T, failures int) error {
		t.Helper()
		sb := sandbox.New(sandbox.Config{Pasta: sandboxtest.FlakyPasta(t, failures)})
		g := &Git{Checker: NewChecker("127.0.0.1"), Sandbox: sb, Timeout: 30 * time.Second, CloneTimeout: 30 * time.Second}
		ws := filepath.Join(data, "builds", strings.ReplaceAll(t.Name(), "/", "-"))
		if err := os.MkdirAll(ws, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := sb.PrepareWorkspace(ws); err != nil {
			t.Fatal(err)
		}
		_, err := g.Clone(context.Background(), url, "main", ws, "", 0, 0)
		return err
	}
	t.Run("transient", func(t *testing.T) {
		if err := clone(t, 2); err != nil {
			t.Fatalf("clone after two set-up failures: %v", err)
		}
	})
	t.Run("persistent", func(t *testing.T) {
		err := clone(t, -1)
		want := "The platform could not set up the sandbox git runs in (its network did not start): this is the platform's fault, not your repository's, and trying again in a minute is safe"
		if msg := gantry.ErrorMessage(err); msg != want || gantry.ErrorCode(err) != gantry.EUNAVAILABLE {
			t.Errorf("got %q (%s); want %q (503)", msg, gantry.ErrorCode(err), want)
		}
		var se *sandbox.SetupError
		if !errors.As(err, &se) {
			t.Errorf("%v does not carry the SetupError", err)
		}
	})
}
