package api_test

import (
	"context"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
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
	bob := e.otherToken(t)
	asBob := func(*testing.T, *testEnv) string { return bob }
	runScenariosOn(t, e, []scenario{
		{name: "bob reads alice's data", setup: asBob,
			request: request{method: "GET", url: url}, wantStatus: 404},
		{name: "no such project", auth: true, request: request{method: "GET", url: "/api/projects/nope/data"}, wantStatus: 404},
		{name: "signed out", request: request{method: "GET", url: url}, wantStatus: 401},
		// The app never started: no folder to download or restore into.
		{name: "download without a folder", auth: true, request: request{method: "GET", url: url + "/download"},
			wantStatus: 404, wantMessage: deploy.MsgNoDataFolder},
		{name: "bob downloads alice's data", setup: asBob,
			request: request{method: "GET", url: url + "/download"}, wantStatus: 404},
		{name: "restore as JSON", auth: true, request: request{method: "POST", url: url + "/restore", body: `{"a":1}`},
			wantStatus: 400, wantMessage: "Send the archive as the request body with Content-Type application/gzip"},
		{name: "restore without a folder", auth: true, request: request{method: "POST", url: url + "/restore", body: "x",
			headers: map[string]string{"Content-Type": "application/gzip"}}, wantStatus: 404, wantMessage: deploy.MsgNoDataFolder},
	})
}
