package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gantryhq/gantry/bench/internal/load"
	"github.com/gantryhq/gantry/bench/internal/platform"
)

// previewsCase is the name of the case previewsBeyondThePlan measures
// (-only matches it as it matches the attacks').
const previewsCase = "previews beyond the plan"

// previewBranches are the branches the previews attacker asks a preview of,
// in each of its projects, through the projects' deploy hooks (?branch=):
// 3 projects × (1 + 5) server apps would be 18, three times the Free
// plan's 5 live deployments.
var previewBranches = []string{"b1", "b2", "b3", "b4", "b5"}

// previewsBeyondThePlan is the case of a Free account that tries to keep
// more server apps running than its plan's live deployments: three
// projects whose production deployment is a node app, and for each five
// previews asked through the deploy hook with ?branch= (no GitHub). Every
// preview counts against the plan, so at most 5 deployments end live and
// awake, the others are refused (403 when asked for, or failed with the
// plan's message at go-live for builds queued meanwhile). It prints the
// counts and whether the plan held; the bystander is not loaded (the
// case's claim is the count). gitRoot is the git server's root (its bare
// repositories are branched there).
func previewsBeyondThePlan(g *platform.Gantry, git *platform.GitServer, gitRoot string) {
	const repo = "previewer/apps"
	cloneURL := git.Repo(repo, attackFiles)
	for _, b := range previewBranches {
		cmd := exec.Command("git", "--git-dir", filepath.Join(gitRoot, repo+".git"), "branch", b, "main")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			load.Fatalf("git branch %s: %v\n%s", b, err, out)
		}
	}
	t := g.SignUp("previewer", "")
	const plan = 5 // the Free plan's live deployments
	var ids []string
	var projects []string
	for i := range 3 {
		p := t.CreateProject(fmt.Sprintf("previews-%d", i+1), cloneURL, map[string]string{"startCommand": "exec node server.js"})
		projects = append(projects, p.ID)
		id := t.Deploy(p.ID)
		t.WaitLive(id)
		ids = append(ids, id)
	}
	asked, refused := 0, 0
	for _, pid := range projects {
		var got struct {
			Project struct{ DeployHookURL string }
		}
		t.Call("GET", "/api/projects/"+pid, nil, 200, &got)
		_, path, ok := strings.Cut(got.Project.DeployHookURL, "/api/")
		if !ok {
			load.Fatalf("%s: project %s has no deploy hook URL: %q", previewsCase, pid, got.Project.DeployHookURL)
		}
		for _, b := range previewBranches {
			asked++
			id, code := hook(g, "/api/"+path+"?branch="+url.QueryEscape(b))
			switch {
			case code == http.StatusCreated:
				ids = append(ids, id)
			case code == http.StatusForbidden:
				refused++
			default:
				load.Fatalf("%s: deploy hook ?branch=%s: %d", previewsCase, b, code)
			}
		}
	}
	failed := 0
	for _, id := range ids[3:] {
		if d := t.WaitEnded(id); d.Status == "failed" && strings.Contains(d.Error, "live deployments") {
			failed++
		}
	}
	var list struct {
		Deployments []struct {
			Status   string
			Sleeping bool
		}
	}
	t.Call("GET", "/api/deployments?status=live", nil, 200, &list)
	live, awake := len(list.Deployments), 0
	for _, d := range list.Deployments {
		if !d.Sleeping {
			awake++
		}
	}
	met := "met"
	if live > plan || awake > plan {
		met = "not met"
	}
	fmt.Printf("%s: 3 production apps and %d previews asked through deploy hooks; %d refused when asked (403), %d failed at go-live with the plan's message; %d live, %d awake; plan allows %d: %s\n",
		previewsCase, asked, refused, failed, live, awake, plan, met)
	for _, pid := range projects {
		t.DeleteProject(pid)
	}
}

// hook POSTs to a deploy hook path (no credentials) and returns the
// deployment's id and the status; a 429 (the account's pending builds are
// full) is waited out and asked again.
func hook(g *platform.Gantry, path string) (string, int) {
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(time.Second) {
		res, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d%s", g.Port(), path), "application/json", nil)
		load.Must(err)
		var env struct {
			Data struct {
				Deployment struct {
					ID string `json:"_id"`
				}
			}
		}
		_ = json.NewDecoder(res.Body).Decode(&env)
		res.Body.Close()
		if res.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			return env.Data.Deployment.ID, res.StatusCode
		}
	}
}
