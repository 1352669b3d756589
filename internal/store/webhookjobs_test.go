package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/secret"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// GitHub delivery jobs: a replay is a duplicate and a full share is busy
// (neither stored); four workers claiming at once (on PostgreSQL, make
// test-pg, as on SQLite) take at most one job of each project; a worker
// that dies lets its job go after its lease, taken again as attempt 2;
// only the job's holder finishes it.
func TestWebhookJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	jobs := db.WebhookJobs()
	u := mustCreateUser(t, db, "ada")
	var projects []string
	for i := range 2 {
		p := mustCreateProject(t, db, u.ID, fmt.Sprint("site", i))
		if err := db.SaveGitHubHook(ctx, &gantry.GitHubHook{ProjectID: p.ID, RepoID: int64(100 + i), Secret: secret.Version + "sealed"}); err != nil {
			t.Fatal(err)
		}
		projects = append(projects, p.ID)
		for k := range 3 {
			st, err := jobs.Enqueue(ctx, &gantry.WebhookJob{ID: fmt.Sprintf("hook-%d-%d", i, k), ProjectID: p.ID, Event: "push",
				Payload: []byte(`{"n":1}`)}, 3, 100)
			if err != nil || st != gantry.JobQueued {
				t.Fatalf("enqueue: %s %v", st, err)
			}
		}
	}
	if st, _ := jobs.Enqueue(ctx, &gantry.WebhookJob{ID: "hook-0-0", ProjectID: projects[0], Event: "push", Payload: []byte("{}")}, 3, 100); st != gantry.JobDuplicate {
		t.Fatalf("a replay: %s", st)
	}
	if st, _ := jobs.Enqueue(ctx, &gantry.WebhookJob{ID: "hook-0-9", ProjectID: projects[0], Event: "push", Payload: []byte("{}")}, 3, 100); st != gantry.JobBusy {
		t.Fatalf("past the project's share: %s", st)
	}
	if st, _ := jobs.Enqueue(ctx, &gantry.WebhookJob{ID: "hook-0-9", ProjectID: projects[0], Event: "push", Payload: []byte("{}")}, 4, 100); st != gantry.JobQueued {
		t.Fatalf("a busy delivery was used up: %s", st)
	}

	var mu sync.Mutex
	taken := map[string]int{}
	var got []*gantry.WebhookJob
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j, err := jobs.Claim(ctx, fmt.Sprint("worker-", w), time.Minute)
			if gantry.ErrorCode(err) == gantry.ENOTFOUND {
				return
			} else if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			taken[j.ProjectID]++
			got = append(got, j)
		}()
	}
	wg.Wait()
	if len(taken) != 2 || taken[projects[0]] != 1 || taken[projects[1]] != 1 {
		t.Fatalf("four workers took %v, want one job of each project", taken)
	}
	if _, err := jobs.Claim(ctx, "worker-9", time.Minute); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("a fifth claim while both projects are being handled: %v", err)
	}
	// The first job's worker dies; after its lease another takes it again.
	db.Now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	again, err := jobs.Claim(ctx, "worker-9", time.Minute)
	if err != nil || again.Attempts != 2 {
		t.Fatalf("after the lease: %+v, %v; want a job at attempt 2", again, err)
	}
	if err := jobs.Finish(ctx, again.ID, "worker-0"); err != nil {
		t.Fatal(err)
	}
	if n, _ := jobs.Count(ctx); n != 7 {
		t.Fatalf("%d jobs after a finish by a worker that no longer holds it, want 7", n)
	}
	if err := jobs.Finish(ctx, again.ID, "worker-9"); err != nil {
		t.Fatal(err)
	}
	if n, _ := jobs.Count(ctx); n != 6 {
		t.Fatalf("%d jobs after its holder finished one, want 6", n)
	}
}

// Workers claiming and finishing as fast as they can while deliveries keep
// coming (on PostgreSQL, make test-pg, as on SQLite): each job is taken
// once, and never while another job of its project is held. (Claim locked
// only the project's webhook row: on PostgreSQL a claim that read the jobs
// before another claim committed then took that job a second time.)
func TestWebhookJobsClaimedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	jobs := db.WebhookJobs()
	u := mustCreateUser(t, db, "ada")
	const nProjects, perProject, nWorkers = 3, 40, 8
	var projects []string
	for i := range nProjects {
		p := mustCreateProject(t, db, u.ID, fmt.Sprint("site", i))
		if err := db.SaveGitHubHook(ctx, &gantry.GitHubHook{ProjectID: p.ID, RepoID: int64(100 + i), Secret: secret.Version + "sealed"}); err != nil {
			t.Fatal(err)
		}
		projects = append(projects, p.ID)
	}
	var mu sync.Mutex
	claims := map[string]int{}  // job id → times taken
	held := map[string]string{} // project → job held now
	var done sync.WaitGroup
	stop := make(chan struct{})
	for w := range nWorkers {
		done.Add(1)
		go func() {
			defer done.Done()
			owner := fmt.Sprint("worker-", w)
			for {
				j, err := jobs.Claim(ctx, owner, time.Minute)
				if gantry.ErrorCode(err) == gantry.ENOTFOUND {
					select {
					case <-stop:
						return
					default:
						time.Sleep(time.Millisecond)
						continue
					}
				} else if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				claims[j.ID]++
				if other := held[j.ProjectID]; other != "" {
					t.Errorf("%s took %s while %s of its project was held", owner, j.ID, other)
				}
				held[j.ProjectID] = j.ID
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				delete(held, j.ProjectID)
				mu.Unlock()
				if err := jobs.Finish(ctx, j.ID, owner); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for k := range perProject {
		for i, p := range projects {
			id := fmt.Sprintf("hook-%d-%d", i, k)
			for {
				st, err := jobs.Enqueue(ctx, &gantry.WebhookJob{ID: id, ProjectID: p, Event: "push", Payload: []byte(`{}`)}, 2, 100)
				if err != nil {
					t.Fatal(err)
				}
				if st == gantry.JobQueued {
					break
				}
				time.Sleep(time.Millisecond) // its project's share is full
			}
		}
	}
	for {
		if n, err := jobs.Count(ctx); err != nil {
			t.Fatal(err)
		} else if n == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	done.Wait()
	if len(claims) != nProjects*perProject {
		t.Errorf("%d jobs taken, want %d", len(claims), nProjects*perProject)
	}
	for id, n := range claims {
		if n != 1 {
			t.Errorf("job %s taken %d times", id, n)
		}
	}
}
