package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/gittest"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
	"github.com/gantryhq/gantry/internal/store"
)

// viteApp is a small Vite + React app, as `npm create vite` makes it.
var viteApp = map[string]string{
	"package.json": `{"name":"vite-react","private":true,"version":"0.0.0","type":"module",
  "scripts":{"dev":"vite","build":"vite build","preview":"vite preview"},
  "dependencies":{"react":"19.3.1","react-dom":"19.3.1"},
  "devDependencies":{"@vitejs/plugin-react":"6.3.0","vite":"8.3.8"}}`,
	"vite.config.js": `import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'
export default defineConfig({ plugins: [react()] })
`,
	"index.html": `<!doctype html><html lang="en"><head><meta charset="UTF-8"><title>Vite + React</title></head>
<body><div id="root"></div><script type="module" src="/src/main.jsx"></script></body></html>`,
	"src/main.jsx": `import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import App from './App.jsx'
import './index.css'
createRoot(document.getElementById('root')).render(<StrictMode><App /></StrictMode>)
`,
	"src/App.jsx": `import { useState } from 'react'
export default function App() {
  const [count, setCount] = useState(0)
  return <main><h1>Vite + React</h1><button onClick={() => setCount((c) => c + 1)}>count is {count}</button></main>
}
`,
	"src/index.css": `body { font-family: system-ui; margin: 0; } main { padding: 2rem; }`,
}

// nextApp is a small Next.js app (App Router), exported as a static site
// (next.config.mjs: output 'export'): what is measured is the build, and
// a server app's start is measured elsewhere.
var nextApp = map[string]string{
	"next.config.mjs": `export default { output: 'export' }
`,
	"package.json": `{"name":"next-app","private":true,"version":"0.1.0",
  "scripts":{"dev":"next dev","build":"next build","start":"next start"},
  "dependencies":{"next":"16.4.6","react":"19.3.1","react-dom":"19.3.1"}}`,
	"app/layout.js": `export const metadata = { title: 'Next.js app' }
export default function RootLayout({ children }) {
  return <html lang="en"><body>{children}</body></html>
}
`,
	"app/page.js": `export default function Home() {
  return <main><h1>Hello from Next.js</h1><p>A student's portfolio.</p></main>
}
`,
	"app/about/page.js": `export default function About() { return <main><h1>About</h1></main> }
`,
}

// BenchmarkRedeploy measures a redeploy of an unchanged project against
// its first deploy, with the build caches (node_modules for an unchanged
// lockfile, npm's cache, the frameworks' caches) between them: a Vite +
// React app (target: the redeploy takes at most 40% of the first deploy)
// and a Next.js app (at most 50%), side by side in one run. Packages come
// from the npm registry (GANTRY_SANDBOX_ALLOW as make exports it). Each
// reports first-s, redeploy-s (median of 3) and redeploy-% of first.
func BenchmarkRedeploy(b *testing.B) {
	sb := sandboxtest.Require(b, sandbox.Config{})
	data, err := os.MkdirTemp("", "gantry-redeploybench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sandbox.RemoveTree(data) })
	os.Chmod(data, 0o755)
	db, err := store.Open(context.Background(), filepath.Join(data, "gantry.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	git := gittest.NewServer(b)
	hosts, err := githost.New(githost.Config{AllowHosts: []string{"127.0.0.1"}, Sandbox: sb})
	if err != nil {
		b.Fatal(err)
	}
	stack := deploytest.New(b, deploytest.Options{DB: db, Sandbox: sb, Repos: hosts, Workers: true, Apps: true, Poll: 5 * time.Millisecond})
	svc := stack.Deploys
	svc.BuildTimeout = 10 * time.Minute
	ctx := context.Background()
	u := &gantry.User{FullName: "Bench", Username: "bench", Email: "bench@example.com", PasswordHash: "x", IsActive: true,
		Subscription: gantry.Subscription{Plan: "pro", MaxProjects: 100, MaxDeployments: 100, MaxStorage: 25 * gantry.GiB}}
	if err := db.CreateUser(ctx, u); err != nil {
		b.Fatal(err)
	}

	deployOnce := func(p *gantry.Project) (time.Duration, error) {
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
				took := time.Since(start)
				// The steps' lines, with their times, for -v.
				logs, _ := db.Logs(ctx, d.ID, 0, 0)
				for _, l := range logs {
					if m := l.Message; strings.Contains(m, "cache") || strings.HasPrefix(m, "Installing") ||
						strings.HasPrefix(m, "Building") || strings.HasPrefix(m, "Build completed") || strings.HasPrefix(m, "Published") {
						b.Logf("%s %s +%s %s", p.Name, d.ID[len(d.ID)-4:], l.Timestamp.Sub(start).Round(10*time.Millisecond), m)
					}
				}
				return took, nil
			}
			if !got.InProgress() {
				logs, _ := db.Logs(ctx, d.ID, 0, 0)
				var lines []string
				for _, l := range logs {
					lines = append(lines, l.Message)
				}
				return 0, fmt.Errorf("%s: deployment ended %s: %s\n%s", p.Name, got.Status, got.Error, strings.Join(lines, "\n"))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	type row struct {
		name, target  string
		limit         float64
		first, redepl time.Duration
	}
	var rows []row
	b.ResetTimer()
	for _, app := range []struct {
		name  string
		files map[string]string
		limit float64
	}{{"vite-react", viteApp, 40}, {"nextjs", nextApp, 50}} {
		url := git.Repo(b, "bench/"+app.name, "main", app.name, app.files)
		name := app.name
		p, err := stack.Projects.CreatePublic(ctx, u, project.Input{Repository: &project.RepositoryInput{URL: url}, Name: &name})
		if err != nil {
			b.Fatal(err)
		}
		first, err := deployOnce(p)
		var again []time.Duration
		for i := 0; err == nil && i < 3; i++ {
			var d time.Duration
			if d, err = deployOnce(p); err == nil {
				again = append(again, d)
			}
		}
		if err != nil {
			b.Error(err) // the other app still runs
			continue
		}
		rows = append(rows, row{name: app.name, limit: app.limit, first: first, redepl: median(again)})
	}
	b.StopTimer()
	fmt.Printf("\n%-12s %10s %12s %12s %8s\n", "app", "first", "redeploy", "redeploy/1st", "target")
	for _, r := range rows {
		pct := 100 * r.redepl.Seconds() / r.first.Seconds()
		fmt.Printf("%-12s %9.1fs %11.1fs %11.0f%% %7s%%\n", r.name, r.first.Seconds(), r.redepl.Seconds(), pct, fmt.Sprint("≤", r.limit))
		b.ReportMetric(r.first.Seconds(), r.name+"-first-s")
		b.ReportMetric(r.redepl.Seconds(), r.name+"-redeploy-s")
		b.ReportMetric(pct, r.name+"-redeploy-%")
	}
}
