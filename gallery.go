package gantry

import (
	"context"
	"strings"
	"time"
)

// Discover sort options (SPEC §9).
const (
	SortRecent   = "recent"   // newest deployment first
	SortOldest   = "oldest"   // oldest deployment first
	SortName     = "name"     // project name, A to Z, case-insensitively
	SortPopular  = "popular"  // most likes first, then most views
	SortTrending = "trending" // highest TrendingScore first
)

// GallerySorts lists the sort options in the order the UI offers them.
var GallerySorts = []string{SortRecent, SortOldest, SortName, SortPopular, SortTrending}

// Discover categories (SPEC §9 category mapping).
const (
	CategoryAll      = "all"
	CategoryFrontend = "frontend"
	CategoryBackend  = "backend"
	CategoryStatic   = "static"
)

// GalleryCategories lists the categories in the order of the UI's chips.
var GalleryCategories = []string{CategoryAll, CategoryFrontend, CategoryBackend, CategoryStatic}

// CategoryTypes maps each named category to the project types it holds.
// Every other type (vanilla, flask, express, …) is counted under "all" only.
var CategoryTypes = map[string][]string{
	CategoryFrontend: {"react", "vue", "angular", "nextjs"},
	CategoryBackend:  {"python", "nodejs"},
	CategoryStatic:   {"static"},
}

// CategoryOf returns the named category of a project type, or "" when the
// type falls outside them.
func CategoryOf(projectType string) string {
	for _, c := range []string{CategoryFrontend, CategoryBackend, CategoryStatic} {
		for _, t := range CategoryTypes[c] {
			if t == projectType {
				return c
			}
		}
	}
	return ""
}

// Weights of the trending score (SPEC §9).
const (
	TrendingViewWeight = 0.4
	TrendingLikeWeight = 0.6
	TrendingDayWeight  = 0.1
)

// TrendingScore is SPEC §9's trending score of a deployment at now:
// 0.4 × views + 0.6 × likeCount + 0.1 × days since creation, where days
// are fractional (36 hours is 1.5 days) and never negative.
func TrendingScore(views, likeCount int, createdAt, now time.Time) float64 {
	days := now.Sub(createdAt).Hours() / 24
	if days < 0 {
		days = 0
	}
	return TrendingViewWeight*float64(views) + TrendingLikeWeight*float64(likeCount) + TrendingDayWeight*days
}

// Gallery limits.
const (
	GalleryDefaultLimit = 24  // apps per page when limit is not given
	GalleryMaxLimit     = 100 // the largest page
	GalleryMaxSearch    = 100 // characters of a search
)

// GalleryQuery selects a page of Discover. Viewer is the key of the user or
// visitor asking ("user:<id>" or "visitor:<id>"; "" for nobody), used to
// fill PublicDeployment.Liked.
type GalleryQuery struct {
	Search   string
	Category string
	Sort     string
	Limit    int
	Offset   int
	Viewer   string
}

// Normalize trims the search, lowercases category and sort, and fills the
// defaults: category all, sort recent, limit GalleryDefaultLimit.
func (q *GalleryQuery) Normalize() {
	q.Search = strings.TrimSpace(q.Search)
	q.Category = strings.ToLower(strings.TrimSpace(q.Category))
	q.Sort = strings.ToLower(strings.TrimSpace(q.Sort))
	if q.Category == "" {
		q.Category = CategoryAll
	}
	if q.Sort == "" {
		q.Sort = SortRecent
	}
	if q.Limit == 0 {
		q.Limit = GalleryDefaultLimit
	}
}

// Validate checks a normalized query and returns the first problem as
// EINVALID: an unknown category or sort, a limit outside 1…GalleryMaxLimit,
// a negative offset, or a search longer than GalleryMaxSearch characters or
// holding control or invisible characters (TextRule: "search cannot contain
// control or invisible characters (found U+0000)").
func (q *GalleryQuery) Validate() error {
	if !contains(GalleryCategories, q.Category) {
		return Errorf(EINVALID, "category must be one of %s", strings.Join(GalleryCategories, ", "))
	}
	if !contains(GallerySorts, q.Sort) {
		return Errorf(EINVALID, "sort must be one of %s", strings.Join(GallerySorts, ", "))
	}
	if q.Limit < 1 || q.Limit > GalleryMaxLimit {
		return Errorf(EINVALID, "limit must be a whole number from 1 to %d", GalleryMaxLimit)
	}
	if q.Offset < 0 {
		return Errorf(EINVALID, "offset must be a whole number from 0")
	}
	return TextRule{Field: "search", Max: GalleryMaxSearch}.Check(q.Search)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// PublicDeployment is a live app as the landing page and Discover show it
// (SPEC §3 Public deployment): nothing private (no ids of users, no email,
// environment, logs or build details). Liked says whether the viewer of the
// query likes it.
type PublicDeployment struct {
	ID        string        `json:"_id"`
	URL       string        `json:"url"`
	CreatedAt time.Time     `json:"createdAt"`
	Project   PublicProject `json:"project"`
	User      PublicAuthor  `json:"user"`
	Views     int           `json:"views"`
	LikeCount int           `json:"likeCount"`
	Liked     bool          `json:"liked"`
	// Sleeping: the app is a sleeping server app; a card that shows it
	// sends a wake hint (POST /api/deployments/public/{id}/wake).
	Sleeping bool `json:"sleeping"`
}

// PublicProject is the part of a project Discover shows.
type PublicProject struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"type"`
}

// PublicAuthor is the part of an account Discover shows.
type PublicAuthor struct {
	FullName string `json:"fullName"`
	Username string `json:"username"`
}

// GalleryStats are Discover's header counts: every listed app and the
// distinct developers behind them, whatever the search.
type GalleryStats struct {
	Apps       int `json:"apps"`
	Developers int `json:"developers"`
}

// CategoryCounts are the counts of Discover's chips under the current
// search.
type CategoryCounts struct {
	All      int `json:"all"`
	Frontend int `json:"frontend"`
	Backend  int `json:"backend"`
	Static   int `json:"static"`
}

// Of returns the count of category c (All for anything unknown).
func (c CategoryCounts) Of(category string) int {
	switch category {
	case CategoryFrontend:
		return c.Frontend
	case CategoryBackend:
		return c.Backend
	case CategoryStatic:
		return c.Static
	}
	return c.All
}

// GalleryPage is one page of Discover: the apps, how many match the search
// and category (Total), and the header and chip counts.
type GalleryPage struct {
	Deployments []*PublicDeployment `json:"deployments"`
	Total       int                 `json:"total"`
	Stats       GalleryStats        `json:"stats"`
	Categories  CategoryCounts      `json:"categories"`
}

// GalleryStore lists the public gallery and keeps its views and likes.
// A deployment is listed when it is live, public, the active deployment of
// its project (the one its subdomain serves) and its owner's account is
// active; the other methods answer ENOTFOUND "App not found" for any other
// deployment. Viewer and visitor keys are "user:<account id>" or
// "visitor:<anonymous id>".
type GalleryStore interface {
	// ListPublicDeployments answers one page of listed deployments
	// matching q (normalized and valid).
	ListPublicDeployments(ctx context.Context, q GalleryQuery) (*GalleryPage, error)
	// RecordView counts a visit of visitor to the deployment unless the same
	// visitor was counted for it within the last ViewWindow, and reports
	// whether it counted.
	RecordView(ctx context.Context, deploymentID, visitor string) (counted bool, err error)
	// ToggleLike likes the deployment for liker, or takes the like back when
	// there is one, and answers the new like count and whether liker now
	// likes it.
	ToggleLike(ctx context.Context, deploymentID, liker string) (likeCount int, liked bool, err error)
	// LikeStatus reports whether liker likes the deployment.
	LikeStatus(ctx context.Context, deploymentID, liker string) (bool, error)
}

// ViewWindow is how long a visitor's visit of one app counts once: further
// visits within it are not counted again.
const ViewWindow = time.Hour

// MsgAppNotFound is the ENOTFOUND message for a deployment the gallery does
// not list.
const MsgAppNotFound = "App not found"
