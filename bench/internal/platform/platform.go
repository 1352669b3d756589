// Package platform drives a real `gantry serve` (bin/gantry) through its
// JSON API as tenants do, for the benchmarks that measure the whole
// platform (bench/hostile, bench/sleepbench): a git server on loopback
// that the tenants' projects are created from (StartGit, GitServer.Repo),
// a started gantry process (Start, Gantry), and tenants who sign up,
// create projects, deploy them, wait for what their deployments do and
// delete them (Tenant). Every failure ends the benchmark through
// load.Fatalf, and gantry and the git server stop at load.RunExit.
package platform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/bench/internal/load"
)

// Options are what differs between the benchmarks' gantry processes.
type Options struct {
	// Env is added to the environment gantry runs with (NAME=value),
	// after the settings every benchmark's gantry has: PATH, HOME, the
	// address, public URL and data folder, GANTRY_PASSWORD_COST=1 and
	// GANTRY_GIT_ALLOW_HOSTS=127.0.0.1. Tenants with an IP need
	// GANTRY_TRUST_PROXY=true here.
	Env []string
	// StopWait is how long Stop waits for gantry to end after SIGTERM
	// before it kills it; 0 is 60 s.
	StopWait time.Duration
	// LogOnFailure: a wait that fails prints gantry's whole log with its
	// message (keep the log short then, e.g. GANTRY_LOG_LEVEL=warn: at the
	// default level it has a line for every request).
	LogOnFailure bool
}

// Gantry is a running `gantry serve`.
type Gantry struct {
	cmd  *exec.Cmd
	port int
	base string
	log  string
	dir  string
	opts Options
	done chan struct{}
}

// Start runs bin serve on a loopback port with its data folder in
// dir/data and its log in dir/gantry.log, and waits up to 30 s until it
// answers. It stops at RunExit (Stop); once it has ended, the mounts
// under dir it leaves (app workspaces, which it keeps for a restart) are
// detached.
func Start(bin, dir string, opts Options) *Gantry {
	load.Must(os.MkdirAll(dir, 0o755))
	port := load.FreePort()
	g := &Gantry{port: port, base: fmt.Sprintf("http://127.0.0.1:%d", port), log: filepath.Join(dir, "gantry.log"),
		dir: dir, opts: opts, done: make(chan struct{})}
	logFile, err := os.Create(g.log)
	load.Must(err)
	g.cmd = exec.Command(bin, "serve")
	g.cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"GANTRY_ADDR=" + fmt.Sprintf("127.0.0.1:%d", port),
		"GANTRY_PUBLIC_URL=" + fmt.Sprintf("http://localhost:%d", port),
		"GANTRY_DATA_DIR=" + filepath.Join(dir, "data"),
		"GANTRY_PASSWORD_COST=1",
		"GANTRY_GIT_ALLOW_HOSTS=127.0.0.1",
	}, opts.Env...)
	g.cmd.Stdout, g.cmd.Stderr = logFile, logFile
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	load.Must(g.cmd.Start())
	go func() { _ = g.cmd.Wait(); logFile.Close(); unmountUnder(dir); close(g.done) }()
	load.AtExit(g.Stop)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if res, err := http.Get(g.base + "/api/health"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return g
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(g.log)
			load.Fatalf("gantry did not answer within 30 s:\n%s", out)
		}
	}
}

// Port is the loopback port gantry serves the API and the sites on.
func (g *Gantry) Port() int { return g.port }

// PID is the gantry process's id.
func (g *Gantry) PID() int { return g.cmd.Process.Pid }

// Stop ends gantry, which stops its apps (SIGTERM, then SIGKILL after
// Options.StopWait); it may be called more than once.
func (g *Gantry) Stop() {
	select {
	case <-g.done:
		return
	default:
	}
	wait := g.opts.StopWait
	if wait == 0 {
		wait = 60 * time.Second
	}
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(wait):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

// unmountUnder detaches every mount under dir: the app workspaces (loop
// devices, freed with their mounts) that gantry serve leaves mounted when
// it stops, since a restart starts those apps again.
func unmountUnder(dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			_ = syscall.Unmount(f[4], syscall.MNT_DETACH)
		}
	}
}

// Tenant is a user of the API: signed up (Token), or not yet (no token).
type Tenant struct {
	g     *Gantry
	Token string
	// IP, when not empty, is sent as X-Forwarded-For on each of the
	// tenant's requests, so that tenants spread over addresses of their
	// own stay under the per-address rate limits (sign-ups above all);
	// gantry must trust it (GANTRY_TRUST_PROXY=true in Options.Env).
	IP string
}

// Project is a tenant's project.
type Project struct {
	ID, Subdomain string
}

// Deployment is what the waits look at.
type Deployment struct {
	Status    string
	Error     string
	Sleeping  bool
	BuildLogs []struct{ Message string } // the newest 200 lines
}

// Call sends a JSON API request as t and decodes the answer's data into
// out; it ends the benchmark when the status is not want.
func (t *Tenant) Call(method, path string, body any, want int, out any) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		load.Must(err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, t.g.base+path, rd)
	load.Must(err)
	req.Header.Set("Content-Type", "application/json")
	if t.IP != "" {
		req.Header.Set("X-Forwarded-For", t.IP)
	}
	if t.Token != "" {
		req.Header.Set("Authorization", "Bearer "+t.Token)
	}
	res, err := http.DefaultClient.Do(req)
	load.Must(err)
	defer res.Body.Close()
	var env struct {
		Data    json.RawMessage
		Message string
	}
	_ = json.NewDecoder(res.Body).Decode(&env)
	if res.StatusCode != want {
		load.Fatalf("%s %s: got %d (%s), want %d", method, path, res.StatusCode, env.Message, want)
	}
	if out != nil {
		load.Must(json.Unmarshal(env.Data, out))
	}
}

// SignUp registers the user name (password secret123) from address ip
// ("": the connection's own, no X-Forwarded-For; see Tenant.IP).
func (g *Gantry) SignUp(name, ip string) *Tenant {
	t := &Tenant{g: g, IP: ip}
	var auth struct{ Token string }
	t.Call("POST", "/api/auth/register", map[string]string{
		"username": name, "email": name + "@example.com", "password": "secret123", "fullName": name,
	}, 201, &auth)
	t.Token = auth.Token
	return t
}

// CreateProject creates the project name from the public repository repo
// with the build configuration cfg (outputDirectory, buildCommand,
// startCommand, …).
func (t *Tenant) CreateProject(name, repo string, cfg map[string]string) Project {
	var p struct {
		Project struct {
			ID        string `json:"_id"`
			Subdomain string
		}
	}
	t.Call("POST", "/api/projects/public", map[string]any{
		"repository": map[string]string{"url": repo}, "name": name, "buildConfig": cfg,
	}, 201, &p)
	return Project{ID: p.Project.ID, Subdomain: p.Project.Subdomain}
}

// Deploy starts a deployment of project projectID and returns its id.
func (t *Tenant) Deploy(projectID string) string {
	var d struct {
		Deployment struct {
			ID string `json:"_id"`
		}
	}
	t.Call("POST", "/api/deployments", map[string]string{"projectId": projectID}, 201, &d)
	return d.Deployment.ID
}

// DeleteProject deletes project id, which stops its deployments.
func (t *Tenant) DeleteProject(id string) {
	t.Call("DELETE", "/api/projects/"+id, nil, 200, nil)
}

// Deployment is deployment id as it is now.
func (t *Tenant) Deployment(id string) Deployment {
	var d struct{ Deployment Deployment }
	t.Call("GET", "/api/deployments/"+id, nil, 200, &d)
	return d.Deployment
}

// wait polls deployment id every 100 ms until done says so, for up to
// limit. A deployment that fails, or is not done in time, ends the
// benchmark; unless tolerate, where a failed one is reported (printed,
// and false returned).
func (t *Tenant) wait(id, what string, limit time.Duration, tolerate bool, done func(Deployment) bool) bool {
	var d Deployment
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		d = t.Deployment(id)
		if done(d) {
			return true
		}
		if d.Status == "failed" {
			break
		}
	}
	if tolerate && d.Status == "failed" {
		fmt.Printf("deployment %s failed: %s\n", id, d.Error)
		return false
	}
	if t.g.opts.LogOnFailure {
		out, _ := os.ReadFile(t.g.log)
		load.Fatalf("deployment %s: not %s: %s %s\n%s", id, what, d.Status, d.Error, out)
	}
	load.Fatalf("deployment %s: not %s: %s %s", id, what, d.Status, d.Error)
	return false
}

// WaitLive waits up to two minutes until deployment id is live.
func (t *Tenant) WaitLive(id string) {
	t.wait(id, "live", 2*time.Minute, false, func(d Deployment) bool { return d.Status == "live" })
}

// WaitLiveFor waits up to limit until deployment id is live, and reports
// false when it failed instead.
func (t *Tenant) WaitLiveFor(id string, limit time.Duration) bool {
	return t.wait(id, "live", limit, true, func(d Deployment) bool { return d.Status == "live" })
}

// WaitLog waits up to two minutes until the build of deployment id has
// logged line. The deployment's answer holds its newest 200 log lines,
// and a command that prints fast pushes its first line out of them before
// the next poll: 200 lines are taken as the command running too (the
// pipeline's own lines before it are a dozen).
func (t *Tenant) WaitLog(id, line string) {
	t.wait(id, "logging "+line, 2*time.Minute, false, func(d Deployment) bool {
		if d.Status == "building" && len(d.BuildLogs) >= 200 {
			return true
		}
		for _, l := range d.BuildLogs {
			if l.Message == line {
				return true
			}
		}
		return false
	})
}

// WaitEnded waits up to two minutes until deployment id has ended its
// build (live, failed or stopped: not pending, building or deploying) and
// returns it.
func (t *Tenant) WaitEnded(id string) Deployment {
	var d Deployment
	t.wait(id, "ended", 2*time.Minute, false, func(dd Deployment) bool {
		d = dd
		return dd.Status != gantry.DeploymentPending && dd.Status != gantry.DeploymentBuilding && dd.Status != gantry.DeploymentDeploying
	})
	return d
}

// WaitSleepingFor waits up to limit until deployment id is live and
// asleep (its app stopped after GANTRY_APP_IDLE without a request).
func (t *Tenant) WaitSleepingFor(id string, limit time.Duration) {
	t.wait(id, "sleeping", limit, false, func(d Deployment) bool { return d.Status == "live" && d.Sleeping })
}
