package gantry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
)

func TestFormatSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{512, "512 B"},
		{1023, "1023 B"},
		{1024, "1 KB"},
		{1536, "1.5 KB"},
		{412 << 20, "412 MB"},
		{45<<20 + 300<<10, "45.3 MB"},
		{1 << 30, "1 GB"},
		{gantry.GiB + gantry.GiB/50, "1.02 GB"},
		{1<<30 - 1, "1 GB"}, // 1023.99… MB rounds up to the next unit
		{25 * gantry.GiB, "25 GB"},
		{100 * gantry.GiB, "100 GB"},
	} {
		if got := gantry.FormatSize(tc.n); got != tc.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestPlanMaxStorage(t *testing.T) {
	t.Parallel()
	for plan, want := range map[string]int64{"free": gantry.GiB, "": gantry.GiB, "gold": gantry.GiB,
		"basic": 5 * gantry.GiB, "pro": 25 * gantry.GiB, "enterprise": 100 * gantry.GiB} {
		if got := gantry.PlanMaxStorage(plan); got != want {
			t.Errorf("PlanMaxStorage(%q) = %d, want %d", plan, got, want)
		}
	}
}

func TestStorageFull(t *testing.T) {
	t.Parallel()
	u := gantry.StorageUsage{Used: gantry.GiB + gantry.GiB/50, Budget: gantry.GiB}
	if !u.Full() || (gantry.StorageUsage{Used: gantry.GiB - 1, Budget: gantry.GiB}).Full() {
		t.Fatal("Full: want true at or over the budget only")
	}
	err := gantry.StorageFullError(u, []gantry.ProjectUsage{{Name: "shop", Bytes: 700 << 20}, {Name: "blog", Bytes: 300 << 20},
		{Name: "api", Bytes: 44 << 20}, {Name: "docs", Bytes: 1 << 10}})
	want := "Your projects use 1.02 GB of your 1 GB storage, all of it in live deployments and logs (shop 700 MB, blog 300 MB, api 44 MB). Stop or delete a project, or clear its logs, then deploy again."
	if gantry.ErrorCode(err) != gantry.EFORBIDDEN || gantry.ErrorMessage(err) != want {
		t.Fatalf("got %v, want EFORBIDDEN %q", err, want)
	}
}

func TestRoomOrder(t *testing.T) {
	t.Parallel()
	pruned := time.Now()
	d := func(id, project, status string, files int64) *gantry.Deployment {
		return &gantry.Deployment{ID: id, ProjectID: project, Status: status, FilesSize: files}
	}
	// Newest first, as the store lists them.
	ds := []*gantry.Deployment{
		d("a5", "a", gantry.DeploymentLive, 1),
		d("b3", "b", gantry.DeploymentStopped, 1), // b's active (stopped project)
		d("a4", "a", gantry.DeploymentFailed, 1),
		d("a3", "a", gantry.DeploymentStopped, 1), // a's newest stopped
		d("b2", "b", gantry.DeploymentStopped, 1),
		d("a2", "a", gantry.DeploymentStopped, 0), // keeps no files
		d("a1", "a", gantry.DeploymentStopped, 1),
		d("b1", "b", gantry.DeploymentBuilding, 1),
		{ID: "a0", ProjectID: "a", Status: gantry.DeploymentStopped, FilesSize: 1, PrunedAt: &pruned},
	}
	rollbacks, last := gantry.RoomOrder(ds, map[string]bool{"b3": true})
	names := func(ds []*gantry.Deployment) string {
		var s []string
		for _, d := range ds {
			s = append(s, d.ID)
		}
		return strings.Join(s, " ")
	}
	if got := names(rollbacks); got != "a1 b2 a4" {
		t.Errorf("rollbacks: got %q, want oldest first %q", got, "a1 b2 a4")
	}
	if got := names(last); got != "a3 b3" {
		t.Errorf("last: got %q, want %q", got, "a3 b3")
	}
}
