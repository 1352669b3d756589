package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/servetest"
)

// lockedBuffer collects the program's output from several goroutines.
type lockedBuffer = servetest.LockedBuffer

func testEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestServe runs the real `gantry serve` on a free port with a temporary
// data folder, signs up and in over HTTP, and shuts it down: with the
// edge's event loops on (the default) and off.
func TestServe(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	for _, loops := range []string{"on", "off"} {
		t.Run("GANTRY_EDGE_LOOPS="+loops, func(t *testing.T) { testServe(t, loops) })
	}
}

func testServe(t *testing.T, loops string) {
	dataDir := filepath.Join(reachableDir(t), "data")
	var logs lockedBuffer
	ready := make(chan net.Addr, 1)
	m := &Main{
		Stdout: io.Discard, Stderr: &logs,
		Getenv: testEnv(map[string]string{"GANTRY_DATA_DIR": dataDir, "GANTRY_PASSWORD_COST": "1", "GANTRY_EDGE_LOOPS": loops}),
		Ready:  func(a net.Addr) { ready <- a },
	}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--log-format", "json"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() { exit <- m.Run(ctx, args) }()

	var base string
	select {
	case a := <-ready:
		base = "http://" + a.String()
	case code := <-exit:
		t.Fatalf("serve exited with %d:\n%s", code, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start:\n%s", logs.String())
	}

	res, err := http.Get(base + "/api/health")
	if err != nil {
		t.Fatal(err)
	}
	var health struct {
		Success bool
		Data    struct{ Status, Version, Database string }
	}
	json.NewDecoder(res.Body).Decode(&health)
	res.Body.Close()
	if res.StatusCode != 200 || !health.Success || health.Data.Status != "ok" || health.Data.Database != "sqlite" || health.Data.Version != version {
		t.Errorf("health: %d %+v", res.StatusCode, health)
	}

	res, err = http.Post(base+"/api/auth/register", "application/json",
		strings.NewReader(`{"username":"ada","email":"ada@example.com","password":"secret1","fullName":"Ada"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 201 {
		t.Errorf("register: got %d", res.StatusCode)
	}

	// A live-site host reaches the live handler, here the placeholder.
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.Host = "blog.localhost:8080"
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 404 || !strings.Contains(string(body), "No app lives at blog.localhost yet") {
		t.Errorf("live host: %d %s", res.StatusCode, body)
	}

	// A stranger's domain pointed here gets the edge's plain 404, not the
	// sign-in page or the API (issue 24, point 5); so does any name that
	// is not the public host (localhost here, and its loopback literals).
	for _, target := range []string{"/", "/login", "/api/health"} {
		req, _ = http.NewRequest("GET", base+target, nil)
		req.Host = "login.phish.example"
		res, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 404 || !strings.Contains(string(body), "No site here") || strings.Contains(string(body), `id="root"`) {
			t.Errorf("unknown host %s: %d %.300s", target, res.StatusCode, body)
		}
	}
	// A head over 64 KiB on the API is answered with the JSON envelope,
	// behind the loops as without them.
	req, _ = http.NewRequest("GET", base+"/api/health", nil)
	req.Header.Set("X-Big", strings.Repeat("a", 70<<10))
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 431 || !strings.Contains(string(body), `"success":false`) {
		t.Errorf("big head: %d %s", res.StatusCode, body)
	}

	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("serve exited with %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}

	out := logs.String()
	for _, want := range []string{`"msg":"listening"`, fmt.Sprintf(`"edge_loops":%v`, loops == "on"), `"msg":"request"`, `"path":"/api/health"`, `"msg":"stopped"`} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret1") {
		t.Error("a password reached the logs")
	}
	key, err := os.Stat(filepath.Join(dataDir, "secret.key"))
	if err != nil || key.Mode().Perm() != 0o600 {
		t.Errorf("secret key file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "gantry.db")); err != nil {
		t.Errorf("database file: %v", err)
	}
}

func TestCommands(t *testing.T) {
	t.Parallel()
	run := func(env map[string]string, args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		m := &Main{Stdout: &stdout, Stderr: &stderr, Getenv: testEnv(env)}
		return m.Run(context.Background(), args), stdout.String(), stderr.String()
	}
	if code, out, _ := run(nil, "version"); code != 0 || out != "gantry "+version+"\n" {
		t.Errorf("version: %d %q", code, out)
	}
	if code, _, errOut := run(nil); code != 2 || !strings.Contains(errOut, "usage:") {
		t.Errorf("no command: %d %q", code, errOut)
	}
	if code, _, errOut := run(nil, "launch"); code != 2 || !strings.Contains(errOut, `unknown command "launch"`) {
		t.Errorf("unknown command: %d %q", code, errOut)
	}
	if code, _, errOut := run(nil, "serve", "--build-concurrency", "0", "--sandbox", "docker"); code != 2 ||
		!strings.Contains(errOut, "--build-concurrency (GANTRY_BUILD_CONCURRENCY): must be at least 1") ||
		!strings.Contains(errOut, `--sandbox (GANTRY_SANDBOX): "docker" must be bwrap or none`) {
		t.Errorf("bad configuration: %d %q", code, errOut)
	}
	if code, _, errOut := run(nil, "serve", "-h"); code != 0 || !strings.Contains(errOut, "GANTRY_DATA_DIR") {
		t.Errorf("serve -h: %d %q", code, errOut)
	}

	dir := reachableDir(t)
	if code, _, errOut := run(map[string]string{"GANTRY_DATA_DIR": dir}, "migrate"); code != 0 || !strings.Contains(errOut, "schema_version=") {
		t.Errorf("migrate: %d %q", code, errOut)
	}
	// A port already taken is a clear failure, not a hang.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, _, errOut := run(map[string]string{"GANTRY_DATA_DIR": dir, "GANTRY_PASSWORD_COST": "1"}, "serve", "--addr", ln.Addr().String())
	if code != 1 || !strings.Contains(errOut, "address already in use") {
		t.Errorf("taken port: %d %q", code, errOut)
	}
}

// reachableDir returns a temporary folder whose parents the sandbox user can
// search (t.TempDir's are private), removed when t ends.
func reachableDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gantry-cmd-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sandbox.RemoveTree(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDataFolderModes checks the modes of what `gantry migrate` and
// `gantry serve` make in a fresh data folder, and that serve tightens a
// folder an older version left open: the database (and its -wal and -shm
// files) and the secret key readable by the platform only, the folder
// searchable but not listable, sites/ private, builds/ searchable.
func TestDataFolderModes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	dataDir := filepath.Join(reachableDir(t), "data")
	env := map[string]string{"GANTRY_DATA_DIR": dataDir, "GANTRY_PASSWORD_COST": "1"}
	check := func(when string, want map[string]os.FileMode) {
		t.Helper()
		for name, mode := range want {
			fi, err := os.Stat(filepath.Join(dataDir, name))
			if err != nil {
				t.Errorf("%s: %v", when, err)
			} else if got := fi.Mode().Perm(); got != mode {
				t.Errorf("%s: %s has mode %04o, want %04o", when, name, got, mode)
			}
		}
	}

	var logs lockedBuffer
	m := &Main{Stdout: io.Discard, Stderr: &logs, Getenv: testEnv(env)}
	if code := m.Run(context.Background(), []string{"migrate"}); code != 0 {
		t.Fatalf("migrate exited with %d:\n%s", code, logs.String())
	}
	check("after migrate", map[string]os.FileMode{".": 0o700, "secret.key": 0o600, "gantry.db": 0o600})

	// As an older version left it.
	for name, mode := range map[string]os.FileMode{".": 0o755, "secret.key": 0o644, "gantry.db": 0o644, "gantry.db-wal": 0o644,
		"gantry.db-shm": 0o644, "sites": 0o755, "builds": 0o755} {
		p := filepath.Join(dataDir, name)
		var err error
		switch _, statErr := os.Stat(p); {
		case statErr == nil:
		case name == "sites" || name == "builds":
			err = os.Mkdir(p, mode)
		default:
			err = os.WriteFile(p, nil, mode)
		}
		if err == nil {
			err = os.Chmod(p, mode)
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	ready := make(chan net.Addr, 1)
	m = &Main{Stdout: io.Discard, Stderr: &logs, Getenv: testEnv(env), Ready: func(a net.Addr) { ready <- a }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() { exit <- m.Run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}) }()
	select {
	case <-ready:
	case code := <-exit:
		t.Fatalf("serve exited with %d:\n%s", code, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start:\n%s", logs.String())
	}
	check("serving", map[string]os.FileMode{".": 0o711, "secret.key": 0o600, "gantry.db": 0o600, "gantry.db-wal": 0o600,
		"gantry.db-shm": 0o600, "sites": 0o700, "builds": 0o711})
	cancel()
	if code := <-exit; code != 0 {
		t.Errorf("serve exited with %d:\n%s", code, logs.String())
	}
}
