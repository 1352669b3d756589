// Package bench holds Gantry's benchmarks; see bench/run.
package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/project"
)

// BenchmarkDeployOverhead measures the platform's own time in a deploy of a
// static site with no build step: from the create call to live, minus what
// a plain `git clone --depth=1` of the same repository takes in the same run
// (the part of a deploy that is git's, not Gantry's). It reports the median
// of each as deploy-ms, git-ms and overhead-ms.
func BenchmarkDeployOverhead(b *testing.B) {
	pl := newPipeline(b, roomyPlan)
	db, data, svc, u, stack := pl.db, pl.dir, pl.stack.Deploys, pl.user, pl.stack
	url := pl.git.Repo(b, "bench/site", "main", "site", map[string]string{
		"index.html": "<h1>hello</h1>", "about/index.html": "<p>about</p>", "style.css": "body{margin:0}",
	})
	ctx := context.Background()
	name := "site"
	p, err := stack.Projects.CreatePublic(ctx, u, project.Input{Repository: &project.RepositoryInput{URL: url}, Name: &name,
		BuildConfig: &gantry.BuildConfig{OutputDirectory: "."}})
	if err != nil {
		b.Fatal(err)
	}

	var deploys, clones []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		d, err := svc.Create(ctx, u.ID, deploy.CreateRequest{ProjectID: p.ID})
		if err != nil {
			b.Fatal(err)
		}
		for {
			got, err := db.FindDeployment(ctx, "", d.ID)
			if err != nil {
				b.Fatal(err)
			}
			if got.Status == gantry.DeploymentLive {
				break
			}
			if !got.InProgress() {
				b.Fatalf("deployment ended %s: %s", got.Status, got.Error)
			}
			time.Sleep(time.Millisecond)
		}
		deploys = append(deploys, time.Since(start))

		dir := filepath.Join(data, "clone")
		start = time.Now()
		if out, err := exec.Command("git", "clone", "-q", "--depth=1", "--single-branch", "--branch", "main", "--no-tags", url, dir).CombinedOutput(); err != nil {
			b.Fatalf("git clone: %v\n%s", err, out)
		}
		clones = append(clones, time.Since(start))
		os.RemoveAll(dir)
	}
	b.StopTimer()
	dm, gm := median(deploys), median(clones)
	b.ReportMetric(float64(dm.Microseconds())/1000, "deploy-ms")
	b.ReportMetric(float64(gm.Microseconds())/1000, "git-ms")
	b.ReportMetric(float64((dm-gm).Microseconds())/1000, "overhead-ms")
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
