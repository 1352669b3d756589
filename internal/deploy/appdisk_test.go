package deploy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
)

// writerApp is pyApp with /write?mb=N, which writes N MiB to a file in its
// workspace and says how far it got.
func writerApp(version string) map[string]string {
	files := pyApp(version)
	files["app.py"] = strings.Replace(files["app.py"], `        elif url.path == "/read":`, `        elif url.path == "/write":
            mb, n = int(urllib.parse.parse_qs(url.query)["mb"][0]), 0
            try:
                with open("fill.bin", "wb") as f:
                    for _ in range(mb):
                        f.write(b"x" * (1 << 20))
                        f.flush()
                        n += 1
                    os.fsync(f.fileno())
                body = "wrote %d MiB" % n
            except OSError as e:
                body = "denied after %d MiB: %s" % (n, e)
        elif url.path == "/read":`, 1)
	return files
}

// TestAppWritesCountAgainstStorage: an app's writes at run time count
// against its owner's storage (its volume measured while it runs), and
// the account's apps cannot write past what it has left of its budget:
// each app's volume is sized to what is left less what the account's
// other running apps may still write, so the kernel refuses the rest
// (ENOSPC). An account with 96 MiB whose two apps each try to write 200
// MiB is stopped near 96 MiB in all, and its usage shows what was written.
func TestAppWritesCountAgainstStorage(t *testing.T) {
	e := newEnv(t)
	const budget = 96 << 20
	u := &gantry.User{FullName: "Disk Filler", Username: "filler", Email: "filler@example.com", PasswordHash: "x", IsActive: true,
		Subscription: gantry.Subscription{Plan: gantry.PlanFree, MaxProjects: 3, MaxDeployments: 5, MaxStorage: budget}}
	if err := e.db.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	e.user = u
	ctx := context.Background()
	subs := []string{"filler", "filler2"}
	for _, name := range subs {
		d := e.deploy(e.project(name, writerApp("v1")))
		e.mustLive(d)
	}
	e.svc.MeasureEvery = 300 * time.Millisecond
	_, _, addr := e.sleepy(time.Hour) // a restart, measuring often
	for _, sub := range subs {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if code, _ := fetch(t, addr, sub, "/"); code == 200 {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("%s not answering after the restart: %d", sub, code)
			}
		}
	}
	before, err := e.db.StorageUsage(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	wrote := 0
	for _, sub := range subs {
		code, body := fetch(t, addr, sub, "/write?mb=200")
		if code != 200 || !strings.HasPrefix(body, "denied after") || !strings.Contains(body, "No space left on device") {
			t.Fatalf("%s writing 200 MiB with %s of %s used: %d %q", sub, gantry.FormatSize(before.Used), gantry.FormatSize(budget), code, body)
		}
		var n int
		fmt.Sscanf(body, "denied after %d MiB", &n)
		t.Logf("%s wrote %d MiB", sub, n)
		wrote += n
	}
	// What was left, and at most the least writable space an app gets
	// (16 MiB) for the second app.
	if left := (budget - before.Used) >> 20; wrote < 32 || int64(wrote) > left+16+4 {
		t.Fatalf("the apps wrote %d MiB with %d MiB left", wrote, left)
	}
	// Measured while they run: the account's usage shows it.
	var after *gantry.StorageUsage
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		after, err = e.db.StorageUsage(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if after.Files >= before.Files+int64(wrote-4)<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("usage %s after the apps wrote %d MiB (before: %s): their writes are not counted",
				gantry.FormatSize(after.Files), wrote, gantry.FormatSize(before.Files))
		}
	}
	if after.Used > budget+24<<20 {
		t.Fatalf("usage %s over a budget of %s", gantry.FormatSize(after.Used), gantry.FormatSize(budget))
	}
	t.Logf("before %s, wrote %d MiB, after %s (budget %s)", gantry.FormatSize(before.Used), wrote, gantry.FormatSize(after.Used), gantry.FormatSize(budget))
}
