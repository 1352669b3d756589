package api_test

import (
	"context"
	"testing"

	"github.com/gantryhq/gantry"
)

// GET /api/projects/{id}/data answers the project's data folders as last
// measured, production's first, and their total; another user's project
// is 404.
func TestProjectData(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, false)
	project := d.createProject(t, d.git.Repo(t, "alice/ledger", "main", "v1", map[string]string{"index.html": "v1"}), "ledger")
	url := "/api/projects/" + project + "/data"
	rec := e.do(request{method: "GET", url: url, headers: bearer(e.token)})
	if got := dataField[gantry.ProjectData](t, rec, "data"); rec.Code != 200 || got.Mount != "/data" || got.Size != 0 || len(got.Folders) != 0 {
		t.Fatalf("a project without data: %d %s", rec.Code, rec.Body.String())
	}
	ctx := context.Background()
	for name, n := range map[string]int64{"preview-ledger--feature": 1 << 20, "production": 5 << 20} {
		if err := e.db.AppData().Measured(ctx, project, name, n); err != nil {
			t.Fatal(err)
		}
	}
	rec = e.do(request{method: "GET", url: url, headers: bearer(e.token)})
	got := dataField[gantry.ProjectData](t, rec, "data")
	if rec.Code != 200 || got.Size != 6<<20 || len(got.Folders) != 2 || got.Folders[0].Name != "production" ||
		got.Folders[0].Bytes != 5<<20 || got.Folders[1].Name != "preview-ledger--feature" || got.Folders[0].MeasuredAt.IsZero() {
		t.Fatalf("data: %d %s", rec.Code, rec.Body.String())
	}
	runScenariosOn(t, e, []scenario{
		{name: "bob reads alice's data", setup: func(t *testing.T, e *testEnv) string { return e.otherToken(t) },
			request: request{method: "GET", url: url}, wantStatus: 404},
		{name: "no such project", auth: true, request: request{method: "GET", url: "/api/projects/nope/data"}, wantStatus: 404},
		{name: "signed out", request: request{method: "GET", url: url}, wantStatus: 401},
	})
}
