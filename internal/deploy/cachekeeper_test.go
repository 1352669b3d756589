package deploy_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// bigCacheRepo is cachedRepo whose build leaves half a megabyte of
// framework cache (random, so it stays that large packed).
func bigCacheRepo() map[string]string {
	r := maps.Clone(cachedRepo)
	r["build.js"] = `const fs = require('fs');
fs.mkdirSync('.next/cache', {recursive: true});
if (!fs.existsSync('.next/cache/blob')) fs.writeFileSync('.next/cache/blob', require('crypto').randomBytes(512 * 1024));
fs.mkdirSync('dist', {recursive: true});
fs.writeFileSync('dist/index.html', 'ok');
`
	return r
}

// A Free-plan account whose app fills most of its budget still gets its
// build cache back: caches are not counted in the storage budget, so a
// full account never drops them to make room.
func TestBuildCacheOutsideBudget(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("cached", bigCacheRepo())
	first := e.live(e.deploy(p))
	if logs := e.logs(first.ID); !hasLine(logs, "info: Saved build cache: ") {
		t.Fatalf("nothing saved:\n%s", strings.Join(logs, "\n"))
	}
	caches := cacheBytes(t, e.db, e.user.ID)
	if caches < 256<<10 {
		t.Fatalf("the caches take %d bytes, want the half megabyte the build left", caches)
	}
	// Another app of the account's fills the budget but for half of what
	// the caches take.
	u, err := e.db.StorageUsage(ctx, e.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Budget != gantry.DefaultMaxStorage {
		t.Fatalf("budget %d, want the Free plan's", u.Budget)
	}
	_, big := storetest.MustCreateApp(t, e.db, storetest.App{Owner: e.user, Name: "big"})
	if err := e.db.SetDeploymentFiles(ctx, big.ID, u.Budget-u.Files-u.Logs-caches/2); err != nil {
		t.Fatal(err)
	}
	d := e.live(e.deploy(p))
	if logs := e.logs(d.ID); !hasLine(logs, "info: Restored build cache: ") {
		t.Errorf("the cache did not come back on a nearly full account:\n%s", strings.Join(logs, "\n"))
	}
	if u, _ := e.db.StorageUsage(ctx, e.user.ID); u.Used != u.Files+u.Logs || u.Used >= u.Budget {
		t.Errorf("usage %+v: want the caches not counted and the account not full", u)
	}
}

// The least recently used caches over the account's bound are evicted,
// and the next build of their project says so, and when.
func TestBuildCacheEvictionSaysSo(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.svc.BuildCacheAccount = 800 << 10 // room for one project's caches (half a megabyte)
	a := e.project("first", bigCacheRepo())
	b := e.project("second", bigCacheRepo())
	e.live(e.deploy(a))
	e.live(e.deploy(b))
	if at, err := e.db.BuildCacheRecords().Eviction(ctx, a.ID); err != nil || at.IsZero() {
		t.Fatalf("the first project's caches were not evicted (%v); %d bytes of caches", err, cacheBytes(t, e.db, e.user.ID))
	}
	// Evicted three days ago, say.
	if err := e.db.BuildCacheRecords().Evicted(ctx, a.ID, time.Now().Add(-3*24*time.Hour-time.Hour)); err != nil {
		t.Fatal(err)
	}
	d := e.live(e.deploy(a))
	logs := e.logs(d.ID)
	if !hasLine(logs, "info: Build cache was removed 3 days ago to free space; this build saves a new one") || hasLine(logs, "info: No build cache yet") {
		t.Errorf("the build does not say its cache was evicted:\n%s", strings.Join(logs, "\n"))
	}
	// A project that never had caches still says it has none yet.
	c := e.project("third", bigCacheRepo())
	if logs := e.logs(e.live(e.deploy(c)).ID); !hasLine(logs, "info: No build cache yet") {
		t.Errorf("a first build:\n%s", strings.Join(logs, "\n"))
	}
}

// The deployment goes live before its build cache is saved: a save made
// slow holds nothing back, and the next build of the project restores
// the whole cache once the save is done.
func TestCacheSavedAfterLive(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	saving, finish := make(chan string), make(chan struct{})
	deploy.BeforeCacheSave(e.svc, func(id string) {
		saving <- id
		<-finish
	})
	started := func(id string) {
		t.Helper()
		select {
		case got := <-saving:
			if got != id {
				t.Fatalf("saving %s, want %s", got, id)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("no cache save started:\n%s", strings.Join(e.logs(id), "\n"))
		}
	}
	for _, server := range []bool{false, true} {
		repo, name := bigCacheRepo(), "site"
		if server {
			name = "app"
			repo["package.json"] = strings.Replace(repo["package.json"], `"build":"node build.js"`, `"build":"node build.js","start":"node server.js"`, 1)
			repo["server.js"] = `require('http').createServer((q, s) => s.end('up')).listen(process.env.PORT);`
		}
		p := e.project(name, repo)
		d, err := e.svc.Create(ctx, e.user.ID, deploy.CreateRequest{ProjectID: p.ID, Version: "1.0.0"})
		if err != nil {
			t.Fatal(err)
		}
		started(d.ID)
		// The save is held: the deployment is live and serves meanwhile.
		got, err := e.db.FindDeployment(ctx, "", d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != gantry.DeploymentLive {
			t.Fatalf("%s: status %s while its cache is being saved, want live\n%s", name, got.Status, strings.Join(e.logs(d.ID), "\n"))
		}
		if code, body := e.get(got.Subdomain, "/"); code != 200 {
			t.Errorf("%s serves %d %q while its cache is being saved", name, code, body)
		}
		if logs := e.logs(d.ID); hasLine(logs, "info: Saved build cache") {
			t.Errorf("saved before the save:\n%s", strings.Join(logs, "\n"))
		}
		during := got.FilesSize // an app's: measured while its caches are held
		// A new build of the project meanwhile waits for the save to end
		// before it restores.
		next, err := e.svc.Create(ctx, e.user.ID, deploy.CreateRequest{ProjectID: p.ID, Version: "1.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		finish <- struct{}{}
		started(next.ID)
		logs := e.logs(d.ID)
		live := slices.IndexFunc(logs, func(l string) bool { return strings.HasPrefix(l, "success: Deployment is live") })
		saved := slices.IndexFunc(logs, func(l string) bool { return strings.HasPrefix(l, "info: Saved build cache: ") })
		if live < 0 || saved < live {
			t.Errorf("%s: want the save logged after going live:\n%s", name, strings.Join(logs, "\n"))
		}
		if logs := e.logs(next.ID); !hasLine(logs, "info: Restored build cache: ") {
			t.Errorf("%s: the next build did not restore the saved cache:\n%s", name, strings.Join(logs, "\n"))
		}
		finish <- struct{}{}
		e.live(e.wait(next.ID))
		if server {
			// The caches held in the app's volume for their save (the
			// half-megabyte .next/cache) were never counted as the app's:
			// it took no more while they were held than once they went.
			after, err := e.db.FindDeployment(ctx, "", d.ID)
			if err != nil {
				t.Fatal(err)
			}
			if after.FilesSize > 0 && during > after.FilesSize+256<<10 {
				t.Errorf("app: %d bytes counted while its caches were held for the save, %d after: the held caches were counted", during, after.FilesSize)
			}
		}
		if _, err := os.Stat(e.svc.WorkDir(d.ID)); os.IsNotExist(err) == server {
			t.Errorf("%s: workspace after the save: %v (a site's is removed, an app's kept)", name, err)
		}
	}
}

// A cache save that fails leaves the deployment live, with a line in its
// log.
func TestCacheSaveFailureKeepsLive(t *testing.T) {
	e := newEnv(t)
	p := e.project("cached", bigCacheRepo())
	deploy.BeforeCacheSave(e.svc, func(string) {
		// Where the caches go is a file: the save cannot write there.
		dir := filepath.Join(e.svc.CacheDir(p.ID), "production")
		os.RemoveAll(dir)
		os.MkdirAll(filepath.Dir(dir), 0o700)
		os.WriteFile(dir, []byte("in the way"), 0o600)
	})
	d := e.live(e.deploy(p))
	logs := e.logs(d.ID)
	if !hasLine(logs, "warning: Build cache not saved") {
		t.Errorf("no line says the cache was not saved:\n%s", strings.Join(logs, "\n"))
	}
	if code, _ := e.get(d.Subdomain, "/"); code != 200 {
		t.Errorf("the deployment serves %d", code)
	}
}
