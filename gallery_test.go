package gantry_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
)

func TestTrendingScore(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, tc := range []struct {
		name         string
		views, likes int
		age          time.Duration
		want         float64
	}{
		{"brand new, nothing yet", 0, 0, 0, 0},
		{"views weigh 0.4", 10, 0, 0, 4},
		{"likes weigh 0.6", 0, 10, 0, 6},
		{"each day adds 0.1", 0, 0, 10 * day, 1},
		{"SPEC example: 100 views, 20 likes, a week old", 100, 20, 7 * day, 40 + 12 + 0.7},
		{"days are fractional", 0, 0, 36 * time.Hour, 0.15},
		{"an hour is a 24th of a day", 0, 0, time.Hour, 0.1 / 24},
		{"all three", 3, 1, 2 * time.Hour, 1.2 + 0.6 + 0.1/12},
		{"large counts", 1_000_000, 250_000, 365 * day, 400_000 + 150_000 + 36.5},
		{"created in the future counts no days", 5, 5, -day, 2 + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := gantry.TrendingScore(tc.views, tc.likes, now.Add(-tc.age), now)
			if math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCategoryOf(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]string{
		"react": "frontend", "vue": "frontend", "angular": "frontend", "nextjs": "frontend",
		"python": "backend", "nodejs": "backend", "static": "static",
		"vanilla": "", "flask": "", "django": "", "express": "", "github": "", "": "", "React": "",
	} {
		if got := gantry.CategoryOf(typ); got != want {
			t.Errorf("CategoryOf(%q) = %q, want %q", typ, got, want)
		}
	}
}

func TestGalleryQuery(t *testing.T) {
	t.Parallel()
	q := gantry.GalleryQuery{Search: "  ada  ", Category: " Frontend", Sort: "TRENDING"}
	q.Normalize()
	if q.Search != "ada" || q.Category != "frontend" || q.Sort != "trending" || q.Limit != 24 {
		t.Fatalf("normalized %+v", q)
	}
	empty := gantry.GalleryQuery{}
	empty.Normalize()
	if empty.Category != "all" || empty.Sort != "recent" || empty.Limit != gantry.GalleryDefaultLimit {
		t.Fatalf("defaults %+v", empty)
	}
	for _, tc := range []struct {
		q    gantry.GalleryQuery
		want string
	}{
		{gantry.GalleryQuery{Category: "games", Sort: "recent", Limit: 1}, "category must be one of all, frontend, backend, static"},
		{gantry.GalleryQuery{Category: "all", Sort: "hot", Limit: 1}, "sort must be one of recent, oldest, name, popular, trending"},
		{gantry.GalleryQuery{Category: "all", Sort: "name", Limit: 101}, "limit must be a whole number from 1 to 100"},
		{gantry.GalleryQuery{Category: "all", Sort: "name", Limit: 5, Offset: -1}, "offset must be a whole number from 0"},
		{gantry.GalleryQuery{Category: "all", Sort: "name", Limit: 5, Search: strings.Repeat("é", 101)}, "search cannot exceed 100 characters"},
		{gantry.GalleryQuery{Category: "all", Sort: "name", Limit: 5, Search: strings.Repeat("é", 100)}, ""},
	} {
		err := tc.q.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (gantry.ErrorCode(err) != gantry.EINVALID || gantry.ErrorMessage(err) != tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.q, err, tc.want)
		}
	}
}
