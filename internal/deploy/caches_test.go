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
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// cachedRepo is an npm project with a local dependency (no registry
// needed) and a lockfile, so its builds save node_modules.
var cachedRepo = map[string]string{
	"package.json": `{"name":"t","version":"1.0.0","private":true,"scripts":{"build":"node build.js"},
  "dependencies":{"local-lib":"file:./local-lib"}}`,
	"local-lib/package.json": `{"name":"local-lib","version":"1.0.0"}`,
	"package-lock.json": `{"name":"t","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{
  "":{"name":"t","version":"1.0.0","dependencies":{"local-lib":"file:./local-lib"}},
  "local-lib":{"version":"1.0.0"},
  "node_modules/local-lib":{"resolved":"local-lib","link":true}}}`,
	"build.js": `require('fs').mkdirSync('dist'); require('fs').writeFileSync('dist/index.html', 'ok');`,
}

// cacheBytes sums the bytes of the user's build caches the store records.
func cacheBytes(t *testing.T, db *store.DB, userID string) int64 {
	t.Helper()
	cs, err := db.BuildCaches(context.Background(), userID)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range cs {
		n += c.Bytes
	}
	return n
}

func hasLine(lines []string, prefix string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) })
}

// A project's caches come back on its next build, are not counted in its
// owner's storage, never reach another account's build of the same repository,
// and go with the project.
func TestBuildCachePerProject(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("cached", cachedRepo)
	if d := e.deploy(p); d.Status != gantry.DeploymentLive {
		t.Fatalf("first deploy %s\n%s", d.Status, strings.Join(e.logs(d.ID), "\n"))
	} else if logs := e.logs(d.ID); !hasLine(logs, "info: Saved build cache: ") {
		t.Fatalf("nothing saved:\n%s", strings.Join(logs, "\n"))
	}
	u, err := e.db.StorageUsage(ctx, e.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cacheBytes(t, e.db, e.user.ID) <= 0 || u.Used != u.Files+u.Logs {
		t.Errorf("got usage %+v and %d bytes of caches, want the caches recorded and not counted", u, cacheBytes(t, e.db, e.user.ID))
	}
	d := e.deploy(p)
	if logs := e.logs(d.ID); !hasLine(logs, "info: Restored build cache: ") || !strings.Contains(strings.Join(logs, "\n"), "lockfile unchanged") {
		t.Errorf("second deploy restored nothing:\n%s", strings.Join(logs, "\n"))
	}

	// Another account, the same repository: a cache of its own.
	bob := storetest.MustCreateUser(t, e.db, "bob", "Bob")
	name := "bobs-copy"
	in := project.Input{Repository: &project.RepositoryInput{URL: e.git.Repo(t, "bob/copy", "main", "initial commit", cachedRepo), DefaultBranch: "main"}, Name: &name}
	bp, err := e.projects().CreatePublic(ctx, bob, in)
	if err != nil {
		t.Fatal(err)
	}
	bd, err := e.svc.Create(ctx, bob.ID, deploy.CreateRequest{ProjectID: bp.ID, Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	bd = e.wait(bd.ID)
	if logs := e.logs(bd.ID); hasLine(logs, "info: Restored build cache") || !hasLine(logs, "info: No build cache yet") {
		t.Errorf("another account's build found a cache:\n%s", strings.Join(logs, "\n"))
	}

	// Deleting the project deletes its caches.
	if _, err := os.Stat(e.svc.CacheDir(p.ID)); err != nil {
		t.Fatal(err)
	}
	if err := e.projects().DeleteProject(ctx, e.user.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.svc.CacheDir(p.ID)); !os.IsNotExist(err) {
		t.Errorf("the project's caches outlived it (%v)", err)
	}
	if n := cacheBytes(t, e.db, e.user.ID); n != 0 {
		t.Errorf("got %d bytes of caches after the project was deleted", n)
	}
}

// Over the account's bound, the least recently used project's caches go
// first, and then over the platform's, whoever's they are; an eviction is
// recorded.
func TestBuildCacheEviction(t *testing.T) {
	db := storetest.MustOpenDB(t)
	s := deploytest.New(t, deploytest.Options{DB: db})
	ctx := context.Background()
	ann := storetest.MustCreateUser(t, db, "ann", "Ann")
	bob := storetest.MustCreateUser(t, db, "bob", "Bob")
	s.Deploys.BuildCacheAccount = gantry.GiB
	s.Deploys.BuildCacheTotal = 1100 << 20
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i, c := range []struct {
		owner *gantry.User
		name  string
	}{{bob, "bobs"}, {ann, "old"}, {ann, "mid"}, {ann, "new"}} {
		p, _ := storetest.MustCreateApp(t, db, storetest.App{Owner: c.owner, Name: c.name})
		ids = append(ids, p.ID)
		os.MkdirAll(s.Deploys.CacheDir(p.ID), 0o700)
		os.WriteFile(filepath.Join(s.Deploys.CacheDir(p.ID), "node_modules.tar.zst"), []byte("x"), 0o600)
		if err := db.SetBuildCache(ctx, p.ID, 400<<20, base.Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	// The oldest of ann's is used again: "mid" is now her least recently used.
	if err := db.TouchBuildCache(ctx, ids[1], base.Add(5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	deploy.EvictCaches(s.Deploys, ctx, ann.ID)
	all, err := db.BuildCacheRecords().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, c := range all {
		left = append(left, c.ProjectID)
	}
	// ann's 1.2 GiB is over her 1 GiB: "mid" goes; the 1.2 GiB left is
	// over the platform's 1100 MiB: bob's, the least recently used, goes.
	if want := []string{ids[3], ids[1]}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v (mid and bob's evicted)", left, want)
	}
	for _, id := range []string{ids[0], ids[2]} {
		if _, err := os.Stat(s.Deploys.CacheDir(id)); !os.IsNotExist(err) {
			t.Errorf("evicted caches still on disk (%v)", err)
		}
		if at, err := db.BuildCacheRecords().Eviction(ctx, id); err != nil || at.IsZero() {
			t.Errorf("eviction of %s not recorded (%v)", id, err)
		}
	}
	if at, _ := db.BuildCacheRecords().Eviction(ctx, ids[3]); !at.IsZero() {
		t.Errorf("a kept cache recorded as evicted at %v", at)
	}
}

// Caches are kept per target: a preview branch starts from production's
// caches but writes only its own, a fork's pull request gets none, and
// nothing a preview leaves in .next/cache reaches the next production
// build.
func TestBuildCachePerTarget(t *testing.T) {
	e := newEnv(t)
	repo := maps.Clone(cachedRepo)
	repo["build.js"] = `const fs = require('fs');
const seen = fs.existsSync('.next/cache/marker') ? fs.readFileSync('.next/cache/marker', 'utf8') : 'none';
const prod = fs.existsSync('.next/cache/production');
fs.mkdirSync('.next/cache', {recursive: true});
if (fs.existsSync('plant')) fs.writeFileSync('.next/cache/marker', fs.readFileSync('plant', 'utf8'));
else fs.writeFileSync('.next/cache/production', 'p');
fs.mkdirSync('dist', {recursive: true});
fs.writeFileSync('dist/index.html', 'marker=' + seen + ' production-cache=' + prod);
`
	p := e.project("cache-targets", repo)
	planted := func(by string) map[string]string {
		r := maps.Clone(repo)
		r["plant"] = by
		return r
	}
	e.git.Repo(t, "ada/cache-targets", "feature", "plant", planted("feature"))
	e.git.Repo(t, "ada/cache-targets", "fork-head", "plant", planted("fork"))
	serves := func(d *gantry.Deployment, want string) {
		t.Helper()
		if code, body := e.get(d.Subdomain, "/"); code != 200 || body != want {
			t.Fatalf("%s serves %d %q, want %q\n%s", d.Subdomain, code, body, want, strings.Join(e.logs(d.ID), "\n"))
		}
	}

	prod := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID}))
	serves(prod, "marker=none production-cache=false")

	// A branch preview reads production's caches, and plants a marker.
	feature := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Branch: "feature"}))
	serves(feature, "marker=none production-cache=true")
	if logs := e.logs(feature.ID); !hasLine(logs, "info: Restored build cache from production: ") || !hasLine(logs, "info: Saved build cache: ") {
		t.Fatalf("the preview did not start from production's caches:\n%s", strings.Join(logs, "\n"))
	}

	// A fork's pull request neither reads nor writes any cache.
	fork := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Trigger: gantry.TriggerPullRequest, Branch: "fork-head", PullRequest: 7, Fork: true}))
	serves(fork, "marker=none production-cache=false")
	if logs := e.logs(fork.ID); hasLine(logs, "info: Restored build cache") || hasLine(logs, "info: Saved build cache") || hasLine(logs, "info: No build cache") {
		t.Fatalf("a fork's build used the caches:\n%s", strings.Join(logs, "\n"))
	}
	if !fork.Metadata.Fork {
		t.Errorf("the fork's deployment does not say it is one: %+v", fork.Metadata)
	}

	// Production never sees the markers.
	prod2 := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Trigger: gantry.TriggerHook}))
	serves(prod2, "marker=none production-cache=true")

	// The branch keeps its own caches; a redeploy of the fork still has none.
	feature2 := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Branch: "feature", Trigger: gantry.TriggerHook}))
	serves(feature2, "marker=feature production-cache=true")
	again, err := e.svc.Redeploy(context.Background(), e.user.ID, fork.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	again = e.live(again)
	serves(again, "marker=none production-cache=false")

	// Every target's caches are recorded.
	var onDisk int64
	filepath.WalkDir(e.svc.CacheDir(p.ID), func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, _ := d.Info()
			onDisk += fi.Size()
		}
		return nil
	})
	if n := cacheBytes(t, e.db, e.user.ID); n != onDisk || onDisk == 0 {
		t.Errorf("caches recorded %d, %d on disk", n, onDisk)
	}
}
