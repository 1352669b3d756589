package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
)

// BenchmarkRedeploy (issue 25's bench/redeploybench) measures, for each
// pinned fixture — a Next.js server app, an Angular app, a Vite React app
// and an Express app, each in an account of its own on the Free plan —
// its first deploy, a redeploy of the same commit and a redeploy after a
// one-line change, in one run through the real pipeline (packages from
// the npm registry, GANTRY_SANDBOX_ALLOW as make exports it). Targets: the
// same commit in at most 0.3× the first deploy's time, the one-line change
// in at most 0.5×. It prints each deployment's seconds in clone, restore,
// install, build, prune, publish, save and start (buildInfo.phases), and
// reports <app>-first-s, -same-x and -oneline-x. Each redeploy starts once
// the deployment before it has saved its build caches (after going live). GANTRY_BENCH_APPS (names,
// comma-separated) runs only some of them.
func BenchmarkRedeploy(b *testing.B) {
	pl := newPipeline(b, freePlan)
	type row struct {
		name                 string
		first, same, oneLine time.Duration
		deploys              [3]*gantry.Deployment
	}
	var rows []row
	b.ResetTimer()
	for _, a := range chosenApps(nextServerApp, angularApp, viteReactApp, expressApp) {
		acct := pl.account(b, "redeploy-"+a.name, freePlan)
		p := acct.project(b, a)
		r := row{name: a.name}
		var err error
		steps := []struct {
			took *time.Duration
			edit bool
		}{{&r.first, false}, {&r.same, false}, {&r.oneLine, true}}
		for i, st := range steps {
			if st.edit {
				acct.edit(b, a)
			}
			if r.deploys[i], *st.took, err = acct.deploy(b, p); err != nil {
				break
			}
			// Its build caches are saved after it went live; the next
			// build would wait for that save at its restore.
			acct.settle(b, r.deploys[i])
			for _, l := range acct.logs(r.deploys[i].ID) {
				if strings.Contains(l, "cache") || strings.Contains(l, "Dependencies up to date") {
					b.Logf("%s #%d %s", a.name, i+1, l)
				}
			}
		}
		if err != nil {
			b.Error(err) // the other apps still run
			continue
		}
		rows = append(rows, r)
	}
	b.StopTimer()
	fmt.Printf("\n%-10s %8s %8s %7s %8s %7s   (targets: same ≤ 0.30×, one-line ≤ 0.50×)\n", "app", "first", "same", "×", "one-line", "×")
	for _, r := range rows {
		same, one := r.same.Seconds()/r.first.Seconds(), r.oneLine.Seconds()/r.first.Seconds()
		fmt.Printf("%-10s %7.1fs %7.1fs %6.2f× %7.1fs %6.2f×\n", r.name, r.first.Seconds(), r.same.Seconds(), same, r.oneLine.Seconds(), one)
		b.ReportMetric(r.first.Seconds(), r.name+"-first-s")
		b.ReportMetric(same, r.name+"-same-x")
		b.ReportMetric(one, r.name+"-oneline-x")
	}
	fmt.Println("\nseconds per step (buildInfo.phases):")
	for _, r := range rows {
		for i, what := range []string{"first", "same", "one-line"} {
			fmt.Printf("%-10s %-8s %s\n", r.name, what, phases(r.deploys[i]))
		}
	}
}
