package clustertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/gantryhq/gantry/internal/gittest"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/servetest"
)

// lease is every replica's GANTRY_LEASE here: a lapsed build is taken
// over within a lease and a reaper tick (half a lease).
const lease = 2 * time.Second

// cluster is one scenario's setting: a PostgreSQL schema of its own on the
// test server, a git server and the settings every replica shares.
type cluster struct {
	t     *testing.T
	bin   string
	dbURL string
	db    *sql.DB
	git   *gittest.Server
	env   map[string]string // shared by every replica
}

// newCluster skips t unless GANTRY_TEST_DATABASE_URL names a PostgreSQL
// server, and fails it unless bin/gantry (or GANTRY_BIN) exists.
func newCluster(t *testing.T, env map[string]string) *cluster {
	t.Helper()
	base := os.Getenv("GANTRY_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("replica scenarios need PostgreSQL: run make test-cluster (scripts/with-postgres sets GANTRY_TEST_DATABASE_URL)")
	}
	bin := os.Getenv("GANTRY_BIN")
	if bin == "" {
		bin, _ = filepath.Abs("../../bin/gantry")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no gantry binary at %s: run make build (or set GANTRY_BIN)", bin)
	}
	c := &cluster{t: t, bin: bin, git: gittest.NewServer(t)}
	c.dbURL, c.db = schema(t, base)
	key := make([]byte, 32)
	rand.Read(key)
	c.env = map[string]string{
		"GANTRY_DATABASE_URL": c.dbURL, "GANTRY_SECRET_KEY": hex.EncodeToString(key),
		"GANTRY_LEASE": lease.String(), "GANTRY_PASSWORD_COST": "1", "GANTRY_GIT_ALLOW_HOSTS": "127.0.0.1",
	}
	for k, v := range env {
		c.env[k] = v
	}
	return c
}

// schema makes a PostgreSQL schema of the test's own, dropped when it
// ends, and returns a URL whose connections use it, with a connection to
// read what the replicas stored.
func schema(t *testing.T, base string) (string, *sql.DB) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("GANTRY_TEST_DATABASE_URL: %v", err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "cluster_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("CREATE SCHEMA " + name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		admin.Exec("DROP SCHEMA " + name + " CASCADE")
		admin.Close()
	})
	return u.String(), db
}

// replica is one `gantry serve` process.
type replica struct {
	node string
	dir  string            // its data folder
	env  map[string]string // its own settings, beside the cluster's
	args []string
	cmd  *exec.Cmd
	done <-chan struct{} // closed once the process ended
	base string          // http://127.0.0.1:port
	peer string          // its GANTRY_PEER_ADDR
	logs *servetest.LockedBuffer
}

// start runs a replica named node (GANTRY_NODE_ID) with a data folder of
// its own and a peer address, and waits until it listens: on a free port,
// or as args say (serve's flags).
func (c *cluster) start(node string, args ...string) *replica {
	c.t.Helper()
	return c.startWith(node, nil, args...)
}

// startWith is start with settings of this replica's own (GANTRY_ROLES).
func (c *cluster) startWith(node string, env map[string]string, args ...string) *replica {
	t := c.t
	t.Helper()
	dir, err := os.MkdirTemp("", "gantry-cluster-"+node+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sandbox.RemoveTree(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // the sandbox's users reach their builds' folders
		t.Fatal(err)
	}
	if len(args) == 0 {
		args = []string{"--addr", "127.0.0.1:0"}
	}
	return c.run(node, dir, env, args)
}

// restart runs a stopped replica again: the same node id, data folder
// and flags.
func (c *cluster) restart(r *replica) *replica {
	c.t.Helper()
	return c.run(r.node, r.dir, r.env, r.args)
}

func (c *cluster) run(node, dir string, env map[string]string, args []string) *replica {
	t := c.t
	t.Helper()
	cmd := exec.Command(c.bin, append([]string{"serve"}, args...)...)
	peer := freeAddr(t)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"GANTRY_DATA_DIR=" + dir, "GANTRY_NODE_ID=" + node, "GANTRY_PEER_ADDR=" + peer}
	for _, e := range []map[string]string{c.env, env} {
		for k, v := range e {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	r := &replica{node: node, dir: dir, env: env, args: args, cmd: cmd, logs: &servetest.LockedBuffer{}, peer: peer}
	r.base, r.done = servetest.Start(t, "replica "+node, cmd, r.logs, 60*time.Second)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replica %s's warnings and errors:\n%s", node, r.warnings())
		}
	})
	return r
}

func (r *replica) signal(sig syscall.Signal) {
	select {
	case <-r.done:
	default:
		_ = r.cmd.Process.Signal(sig)
	}
}

// warnings returns the replica's log lines at WARN and ERROR, and the
// requests it answered with a server error: what a failed scenario shows.
func (r *replica) warnings() string {
	var b strings.Builder
	for _, l := range strings.Split(r.logs.String(), "\n") {
		if strings.Contains(l, "msg=request") && strings.Contains(l, "status=5") ||
			(strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR")) && !strings.Contains(l, "msg=request") {
			b.WriteString("  " + l + "\n")
		}
	}
	return b.String()
}

// kill ends the process at once (SIGKILL), as a crashed machine would.
func (r *replica) kill() {
	r.signal(syscall.SIGKILL)
	<-r.done
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// call sends one API request to r and decodes the envelope's data into out.
func (r *replica) call(t *testing.T, method, path, token, body string, out any) int {
	t.Helper()
	return servetest.Call(t, r.base, method, path, token, body, out)
}

// site asks r's edge for the live site of subdomain: status and body.
func (r *replica) site(t *testing.T, subdomain string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", r.base+"/", nil)
	req.Host = subdomain + ".localhost:8080"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s on %s: %v", req.Host, r.node, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// register makes an account through r and returns its token.
func register(t *testing.T, r *replica, user string) string {
	t.Helper()
	var auth struct{ Token string }
	body := fmt.Sprintf(`{"username":%q,"email":"%s@example.com","password":"secret123","fullName":%q}`, user, user, user)
	if code := r.call(t, "POST", "/api/auth/register", "", body, &auth); code != 201 {
		t.Fatalf("register %s: %d", user, code)
	}
	return auth.Token
}

type project struct {
	ID        string `json:"_id"`
	Subdomain string
}

// slowSite makes a repository whose build waits ms milliseconds, then
// writes dist/index.html saying text; the build's process carries
// "build.js <ms> <text>", by which the test finds the replica running it.
func (c *cluster) slowSite(owner, name string, ms int, text string) (url, buildCommand string) {
	url = c.git.Repo(c.t, owner+"/"+name, "main", "slow site", map[string]string{
		"package.json": `{"name":"` + name + `","version":"1.0.0","private":true}`,
		"build.js": `const fs = require("fs");
setTimeout(() => {
  fs.mkdirSync("dist", { recursive: true });
  fs.writeFileSync("dist/index.html", "<h1>" + process.argv[3] + "</h1>");
}, Number(process.argv[2]));
`,
	})
	return url, fmt.Sprintf("node build.js %d %s", ms, text)
}

// createProject makes a project of url through r, built by buildCommand
// into dist.
func createProject(t *testing.T, r *replica, token, url, name, buildCommand string) project {
	t.Helper()
	var p struct{ Project project }
	body := fmt.Sprintf(`{"repository":{"url":%q},"name":%q,"buildConfig":{"buildCommand":%q,"outputDirectory":"dist"}}`, url, name, buildCommand)
	if code := r.call(t, "POST", "/api/projects/public", token, body, &p); code != 201 {
		t.Fatalf("create project %s: %d", name, code)
	}
	return p.Project
}

// deploy queues a deployment of the project through r.
func deploy(t *testing.T, r *replica, token, projectID string) string {
	t.Helper()
	var d struct {
		Deployment struct {
			ID string `json:"_id"`
		}
	}
	if code := r.call(t, "POST", "/api/deployments", token, `{"projectId":"`+projectID+`"}`, &d); code != 201 {
		t.Fatalf("deploy: %d", code)
	}
	return d.Deployment.ID
}

type deployment struct {
	Status    string
	BuildLogs []struct {
		Level, Message string
		Timestamp      time.Time
	}
}

func (d deployment) log() string {
	var b strings.Builder
	for _, l := range d.BuildLogs {
		fmt.Fprintf(&b, "  %s: %s\n", l.Level, l.Message)
	}
	return b.String()
}

// waitDone polls the deployment through r until it is live or failed.
func waitDone(t *testing.T, r *replica, token, id string, within time.Duration) deployment {
	t.Helper()
	var d struct{ Deployment deployment }
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		d.Deployment = deployment{}
		r.call(t, "GET", "/api/deployments/"+id, token, "", &d)
		if s := d.Deployment.Status; s == "live" || s == "failed" || s == "cancelled" {
			return d.Deployment
		}
		if time.Now().After(deadline) {
			t.Fatalf("deployment %s still %q after %s\n%s", id, d.Deployment.Status, within, d.Deployment.log())
		}
	}
}

// builder waits until one of the replicas runs a process whose command
// line holds marker (a build's) and returns that replica: the one whose
// process is its ancestor.
func builder(t *testing.T, marker string, within time.Duration, rs ...*replica) *replica {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			cmdline, err := os.ReadFile(p)
			if err != nil || !bytes.Contains(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), []byte(marker)) {
				continue
			}
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			for i := 0; pid > 1 && i < 64; i++ {
				for _, r := range rs {
					if r.cmd.Process.Pid == pid {
						return r
					}
				}
				pid = parentOf(pid)
			}
		}
	}
	t.Fatalf("no replica runs %q after %s", marker, within)
	return nil
}

// parentOf reads a process's parent id from /proc (0 once it is gone).
func parentOf(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid …: comm may hold spaces and parentheses.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// claim reads which replica holds the deployment's build and its attempt,
// as stored (deployments.claimed_by, attempt).
func (c *cluster) claim(id string) (node string, attempt int) {
	c.t.Helper()
	var by sql.NullString
	if err := c.db.QueryRowContext(context.Background(),
		"SELECT claimed_by, attempt FROM deployments WHERE id = $1", id).Scan(&by, &attempt); err != nil {
		c.t.Fatalf("read the build's claim: %v", err)
	}
	return by.String, attempt
}

// hasLine reports whether the deployment's log has a line containing s.
func (d deployment) hasLine(s string) bool {
	for _, l := range d.BuildLogs {
		if strings.Contains(l.Message, s) {
			return true
		}
	}
	return false
}
