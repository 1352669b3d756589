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
// an app cannot write past what the account has left of its budget: its
// volume is sized to that, so the kernel refuses the rest (ENOSPC). An
// account with 96 MiB that tries to write 200 MiB from its app is
// stopped near 96 MiB, and its usage shows what was written.
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
	p := e.project("Filler", writerApp("v1"))
	d := e.deploy(p)
	e.mustLive(d)
	e.svc.MeasureEvery = 300 * time.Millisecond
	_, _, addr := e.sleepy(time.Hour) // a restart, measuring often
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if code, _ := fetch(t, addr, "filler", "/"); code == 200 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("not answering after the restart: %d", code)
		}
	}
	before, err := e.db.StorageUsage(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	code, body := fetch(t, addr, "filler", "/write?mb=200")
	if code != 200 || !strings.HasPrefix(body, "denied after") || !strings.Contains(body, "No space left on device") {
		t.Fatalf("writing 200 MiB with %s of %s used: %d %q", gantry.FormatSize(before.Used), gantry.FormatSize(budget), code, body)
	}
	var wrote int
	fmt.Sscanf(body, "denied after %d MiB", &wrote)
	if wrote < 32 || int64(wrote)<<20 > budget-before.Used+16<<20 {
		t.Fatalf("wrote %d MiB with %s left", wrote, gantry.FormatSize(budget-before.Used))
	}
	// Measured while it runs: the account's usage shows it.
	var after *gantry.StorageUsage
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		after, err = e.db.StorageUsage(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if after.Files >= before.Files+int64(wrote-2)<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("usage %s after the app wrote %d MiB (before: %s): its writes are not counted",
				gantry.FormatSize(after.Files), wrote, gantry.FormatSize(before.Files))
		}
	}
	if after.Used > budget+budget/10 {
		t.Fatalf("usage %s over a budget of %s", gantry.FormatSize(after.Used), gantry.FormatSize(budget))
	}
	t.Logf("before %s, wrote %d MiB, after %s (budget %s)", gantry.FormatSize(before.Used), wrote, gantry.FormatSize(after.Used), gantry.FormatSize(budget))
}
