package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/gittest"
	"github.com/gantryhq/gantry/internal/servetest"
)

// TestMain lets the test binary act as the gantry binary, so tests can run
// it as a real process and kill it.
func TestMain(m *testing.M) {
	if os.Getenv("GANTRY_TEST_AS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// server is a gantry serve process started by a test.
type server struct {
	cmd  *exec.Cmd
	base string
	logs *lockedBuffer
	done <-chan struct{} // closed once it ended
}

func startServer(t *testing.T, env map[string]string) *server {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0")
	cmd.Env = []string{"GANTRY_TEST_AS_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	s := &server{cmd: cmd, logs: &lockedBuffer{}}
	s.base, s.done = servetest.Start(t, "gantry serve", cmd, s.logs, 30*time.Second)
	return s
}

func (s *server) kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// call sends one API request and decodes data into out.
func (s *server) call(t *testing.T, method, path, token, body string, out any) int {
	t.Helper()
	return servetest.Call(t, s.base, method, path, token, body, out)
}

// TestKilledMidBuild kills the platform while a build runs and starts it
// again: the cut-off build ends failed with a line saying why, and the
// live site is served again without rebuilding.
func TestKilledMidBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	git := gittest.NewServer(t)
	site := git.Repo(t, "ada/site", "main", "site", map[string]string{"index.html": "<h1>still here</h1>"})
	slow := git.Repo(t, "ada/slow", "main", "slow", map[string]string{
		"package.json": `{"name":"slow","version":"1.0.0","scripts":{"build":"node -e \"setTimeout(()=>{}, 600000)\""}}`,
	})
	env := map[string]string{
		"GANTRY_DATA_DIR": reachableDir(t), "GANTRY_PASSWORD_COST": "1", "GANTRY_GIT_ALLOW_HOSTS": "127.0.0.1",
	}
	s := startServer(t, env)

	var auth struct{ Token string }
	if code := s.call(t, "POST", "/api/auth/register", "", `{"username":"ada","email":"ada@example.com","password":"secret123","fullName":"Ada"}`, &auth); code != 201 {
		t.Fatalf("register: %d", code)
	}
	deploy := func(url, name string) string {
		var p struct {
			Project struct {
				ID string `json:"_id"`
			}
		}
		if code := s.call(t, "POST", "/api/projects/public", auth.Token, fmt.Sprintf(`{"repository":{"url":%q},"name":%q}`, url, name), &p); code != 201 {
			t.Fatalf("create project: %d", code)
		}
		var d struct {
			Deployment struct {
				ID string `json:"_id"`
			}
		}
		if code := s.call(t, "POST", "/api/deployments", auth.Token, `{"projectId":"`+p.Project.ID+`"}`, &d); code != 201 {
			t.Fatalf("deploy: %d", code)
		}
		return d.Deployment.ID
	}
	type dep struct {
		Status    string
		Error     string
		BuildLogs []struct{ Level, Message string }
	}
	wait := func(id string, done func(dep) bool) dep {
		var d struct{ Deployment dep }
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			s.call(t, "GET", "/api/deployments/"+id, auth.Token, "", &d)
			if done(d.Deployment) {
				return d.Deployment
			}
		}
		t.Fatalf("deployment %s: still %+v\n%s", id, d.Deployment, s.logs.String())
		return dep{}
	}
	liveID := deploy(site, "site")
	wait(liveID, func(d dep) bool { return d.Status == "live" })
	slowID := deploy(slow, "slow")
	wait(slowID, func(d dep) bool {
		for _, l := range d.BuildLogs {
			if strings.Contains(l.Message, "npm run build") {
				return true
			}
		}
		return false
	})

	s.kill()
	s = startServer(t, env)
	got := wait(slowID, func(d dep) bool { return d.Status != "building" })
	last := got.BuildLogs[len(got.BuildLogs)-1]
	if got.Status != "failed" || last.Level != "error" || !strings.Contains(last.Message, "platform restarted") {
		t.Fatalf("cut-off build: %+v", got)
	}
	req, _ := http.NewRequest("GET", s.base+"/", nil)
	req.Host = "site.localhost:8080"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "still here") {
		t.Fatalf("live site after restart: %d %s", res.StatusCode, body)
	}
	// No process of the killed build survives.
	if out, _ := exec.Command("pgrep", "-u", "10001", "-f", "setTimeout").Output(); len(out) > 0 {
		t.Fatalf("build processes survived the kill: %s", out)
	}
}
