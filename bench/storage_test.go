package bench

import (
	"fmt"
	"testing"

	"github.com/gantryhq/gantry/internal/deploy"
)

// BenchmarkStorage (issue 32's bench/storagebench) deploys a Next.js
// server app, a Vite site and an Express app (the pinned fixtures), each
// in a data folder and an account of its own (on a plan whose budget no
// step fills, so that no rollback is removed to make room), then redeploys
// it unchanged and after a one-line change. After each step it prints
// what is stored, once what the deployment's build left behind is put
// away (its build caches saved): the account's storage as the platform
// counts it and du of the data folder without the
// build caches (hard-linked files counted once, app volumes' images as
// allocated), each against the first deploy (targets: unchanged ≤ +2 %,
// one-line change ≤ +5 %), and the seconds to publish (a site) or to
// start (an app), under each layout of the deployments' files, side by
// side (target: at most 1.05× today's). It reports <app>-same-% and
// <app>-oneline-% (of the account's storage), <app>-du-same-% and
// <app>-du-oneline-%, and <app>-golive-x. GANTRY_BENCH_APPS (names,
// comma-separated) runs only some of them.
func BenchmarkStorage(b *testing.B) {
	type step struct {
		what      string
		used, du  int64
		goLiveSec float64 // publish (a site), or publish and start (an app)
		publish   float64
	}
	type result struct {
		app, layout string
		steps       []step
	}
	var results []result
	b.ResetTimer()
	for _, a := range chosenApps(nextServerApp, viteReactApp, expressApp) {
		for _, l := range layouts {
			pl := newPipeline(b, roomyPlan)
			l.set(pl.stack.Deploys)
			p := pl.project(b, a)
			r := result{app: a.name, layout: l.name}
			for _, what := range []string{"first", "unchanged", "one-line"} {
				if what == "one-line" {
					pl.edit(b, a)
				}
				d, _, err := pl.deploy(b, p)
				if err != nil {
					b.Error(err)
					break
				}
				pl.settle(b, d)
				u := pl.usage(b)
				r.steps = append(r.steps, step{what: what, used: u.Used, du: pl.du(b),
					goLiveSec: float64(d.BuildInfo.Phases["publish"]+d.BuildInfo.Phases["start"]) / 1000,
					publish:   float64(d.BuildInfo.Phases["publish"]) / 1000})
			}
			if len(r.steps) == 3 {
				results = append(results, r)
			}
		}
	}
	b.StopTimer()
	fmt.Printf("\n%-10s %-8s %-9s %10s %8s %10s %8s %9s %9s   (targets: unchanged ≤ +2 %%, one-line ≤ +5 %%)\n",
		"app", "layout", "step", "used", "Δ", "du", "Δ", "publish", "+start")
	goLive := map[string]map[string]float64{} // app → layout → seconds of the three steps
	for _, r := range results {
		first := r.steps[0]
		if goLive[r.app] == nil {
			goLive[r.app] = map[string]float64{}
		}
		for _, s := range r.steps {
			fmt.Printf("%-10s %-8s %-9s %10s %+7.1f%% %10s %+7.1f%% %8.2fs %8.2fs\n", r.app, r.layout, s.what, mb(s.used), pct(s.used, first.used),
				mb(s.du), pct(s.du, first.du), s.publish, s.goLiveSec)
			goLive[r.app][r.layout] += s.goLiveSec
		}
		if r.layout != layouts[0].name {
			continue
		}
		b.ReportMetric(pct(r.steps[1].used, first.used), r.app+"-same-%")
		b.ReportMetric(pct(r.steps[2].used, first.used), r.app+"-oneline-%")
		b.ReportMetric(pct(r.steps[1].du, first.du), r.app+"-du-same-%")
		b.ReportMetric(pct(r.steps[2].du, first.du), r.app+"-du-oneline-%")
	}
	if len(layouts) < 2 {
		return
	}
	fmt.Printf("\npublish/start, the three steps' sum: %s vs %s (target ≤ 1.05×)\n", layouts[0].name, layouts[1].name)
	for _, r := range results {
		if g := goLive[r.app]; r.layout == layouts[0].name && g[layouts[1].name] > 0 {
			x := g[layouts[0].name] / g[layouts[1].name]
			fmt.Printf("%-10s %6.2fs vs %6.2fs  %5.2f×\n", r.app, g[layouts[0].name], g[layouts[1].name], x)
			b.ReportMetric(x, r.app+"-golive-x")
		}
	}
}

// layouts are the ways the deployments' files are kept that BenchmarkStorage
// compares, the platform's own first: by content, and today's layout
// before it (deploy.Service.FlatFiles).
var layouts = []struct {
	name string
	set  func(*deploy.Service)
}{
	{"content", func(*deploy.Service) {}},                     // blobs named by their hash, a manifest per deployment
	{"today", func(s *deploy.Service) { s.FlatFiles = true }}, // a full copy per deployment, the layout before blobs
}

// pct is how much more than base n is, in percent.
func pct(n, base int64) float64 { return 100 * float64(n-base) / float64(base) }
