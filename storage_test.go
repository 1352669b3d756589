package gantry_test

import (
	"testing"

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
	err := gantry.StorageFullError(u)
	want := "Your projects use 1.02 GB of your 1 GB storage. Delete old deployments or projects to free space, then deploy again."
	if gantry.ErrorCode(err) != gantry.EFORBIDDEN || gantry.ErrorMessage(err) != want {
		t.Fatalf("got %v, want EFORBIDDEN %q", err, want)
	}
}
