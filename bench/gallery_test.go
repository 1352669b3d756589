package bench

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
)

// Size of the gallery BenchmarkGallery queries.
const (
	benchUsers    = 2_000
	benchApps     = 10_000 // listed: live, public, active
	benchUnlisted = 2_000  // older stopped deployments of the same projects
	benchLikes    = 100_000
)

// openGallery builds a SQLite database holding benchUsers accounts,
// benchApps listed apps, benchUnlisted stopped deployments and benchLikes
// likes, written in bulk with plain SQL, in a folder removed when b ends.
func openGallery(b *testing.B) *store.DB {
	b.Helper()
	dir := b.TempDir()
	path := filepath.Join(dir, "gantry.db")
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	raw, err := sql.Open("sqlite", store.SQLiteDSN(path))
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	start := time.Now()
	if err := seedGalleryBench(ctx, raw); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d apps, %d users, %d likes in %s", benchApps, benchUsers, benchLikes, time.Since(start).Round(time.Millisecond))
	return db
}

var (
	benchFirst  = []string{"Ada", "Grace", "Linus", "Margaret", "Alan", "Barbara", "Dennis", "Frances", "Ken", "Radia", "Tim", "Hedy", "Katherine", "Edsger", "Donald", "Anita"}
	benchLast   = []string{"Lovelace", "Hopper", "Torvalds", "Hamilton", "Turing", "Liskov", "Ritchie", "Allen", "Thompson", "Perlman", "Berners-Lee", "Lamarr", "Johnson", "Dijkstra", "Knuth", "Borg"}
	benchWords  = []string{"Pixel", "Garden", "Weather", "Quiz", "Chat", "Portfolio", "Recipe", "Budget", "Habit", "Study", "Music", "Photo", "Travel", "Fitness", "Notes", "Game", "Tracker", "Planner", "Board", "Map"}
	benchTypes  = []string{"react", "vue", "angular", "nextjs", "python", "nodejs", "static", "static", "vanilla", "express", "flask", "django"}
	benchTopics = []string{"for my class", "built with friends", "a weekend project", "for the campus club", "my first app", "with a REST api", "that works offline", "for my portfolio"}
)

func seedGalleryBench(ctx context.Context, raw *sql.DB) error {
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now().UTC().Truncate(time.Millisecond)
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) {
		if err == nil {
			_, err = tx.ExecContext(ctx, q, args...)
		}
	}
	users := make([]string, benchUsers)
	for i := range users {
		users[i] = uuid.Must(uuid.NewV7()).String()
		name := benchFirst[rng.IntN(len(benchFirst))] + " " + benchLast[rng.IntN(len(benchLast))]
		exec(`INSERT INTO users (id, username, email, full_name, password_hash, is_active, created_at, updated_at)
			VALUES (?, ?, ?, ?, 'x', TRUE, ?, ?)`, users[i], fmt.Sprintf("user%04d", i), fmt.Sprintf("user%04d@example.com", i), name, now, now)
	}
	apps := make([]string, benchApps)
	for i := range apps {
		owner := users[rng.IntN(len(users))]
		project := uuid.Must(uuid.NewV7()).String()
		apps[i] = uuid.Must(uuid.NewV7()).String()
		name := fmt.Sprintf("%s %s %d", benchWords[rng.IntN(len(benchWords))], benchWords[rng.IntN(len(benchWords))], i)
		desc := fmt.Sprintf("A %s %s %s", benchWords[rng.IntN(len(benchWords))], benchWords[rng.IntN(len(benchWords))], benchTopics[rng.IntN(len(benchTopics))])
		sub := fmt.Sprintf("app-%05d", i)
		created := now.Add(-time.Duration(rng.Int64N(int64(365 * 24 * time.Hour))))
		exec(`INSERT INTO projects (id, user_id, name, description, status, type, subdomain, active_deployment_id, created_at, updated_at)
			VALUES (?, ?, ?, ?, 'deployed', ?, ?, ?, ?, ?)`, project, owner, name, desc, benchTypes[rng.IntN(len(benchTypes))], sub, apps[i], created, created)
		exec(`INSERT INTO deployments (id, project_id, user_id, subdomain, url, status, views, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 'live', ?, ?, ?)`, apps[i], project, owner, sub, "https://"+sub+".gantry.app", rng.IntN(5000), created, created)
		if i < benchUnlisted {
			exec(`INSERT INTO deployments (id, project_id, user_id, subdomain, url, status, views, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, 'stopped', ?, ?, ?)`, uuid.Must(uuid.NewV7()).String(), project, owner, sub,
				"https://"+sub+".gantry.app", rng.IntN(50), created.Add(-time.Hour), created.Add(-time.Hour))
		}
	}
	// Likes: a few apps are very popular (a power law), each liker at most once.
	seen := map[[2]int]bool{}
	for len(seen) < benchLikes {
		app := int(float64(benchApps) * rng.Float64() * rng.Float64() * rng.Float64())
		liker := rng.IntN(benchUsers * 20)
		if seen[[2]int{app, liker}] {
			continue
		}
		seen[[2]int{app, liker}] = true
		key := fmt.Sprintf("visitor:%022d", liker)
		if liker < benchUsers {
			key = "user:" + users[liker]
		}
		exec(`INSERT INTO deployment_likes (deployment_id, liker, created_at) VALUES (?, ?, ?)`, apps[app], key, now)
	}
	exec(`UPDATE deployments SET like_count = (SELECT COUNT(*) FROM deployment_likes l WHERE l.deployment_id = deployments.id)`)
	if err != nil {
		return err
	}
	return tx.Commit()
}

// BenchmarkGallery measures one Discover request's queries
// (store.ListPublicDeployments: the page, its total, the chip and header
// counts and the viewer's likes) on SQLite with 10,000 listed apps by
// 2,000 users and 100,000 likes: the first page of 24 for each sort, a
// search, a category, a search within a category and a deep page. It
// reports the median and 99th percentile in milliseconds (p50-ms, p99-ms).
// Target: p99 under 20 ms.
func BenchmarkGallery(b *testing.B) {
	db := openGallery(b)
	cases := []struct {
		name string
		q    gantry.GalleryQuery
	}{}
	for _, s := range gantry.GallerySorts {
		cases = append(cases, struct {
			name string
			q    gantry.GalleryQuery
		}{"sort=" + s, gantry.GalleryQuery{Sort: s}})
	}
	cases = append(cases, []struct {
		name string
		q    gantry.GalleryQuery
	}{
		{"search=garden", gantry.GalleryQuery{Search: "garden"}},
		{"search=hopper&sort=trending", gantry.GalleryQuery{Search: "hopper", Sort: gantry.SortTrending}},
		{"search=zzz-none", gantry.GalleryQuery{Search: "zzz-none"}},
		{"category=backend&sort=popular", gantry.GalleryQuery{Category: gantry.CategoryBackend, Sort: gantry.SortPopular}},
		{"category=frontend&search=music&sort=name", gantry.GalleryQuery{Category: gantry.CategoryFrontend, Search: "music", Sort: gantry.SortName}},
		{"sort=trending&page=100", gantry.GalleryQuery{Sort: gantry.SortTrending, Offset: 99 * 24}},
	}...)
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			q := tc.q
			q.Viewer = "visitor:0000000000000000000007"
			q.Normalize()
			if err := q.Validate(); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				page, err := db.Gallery().ListPublicDeployments(ctx, q)
				times = append(times, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				if page.Stats.Apps != benchApps {
					b.Fatalf("got %d apps, want %d", page.Stats.Apps, benchApps)
				}
			}
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			ms := func(p float64) float64 {
				return float64(times[int(p*float64(len(times)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
		})
	}
}
