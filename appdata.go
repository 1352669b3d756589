package gantry

import (
	"context"
	"time"
)

// DataMount is where a server app's persistent data folder is mounted in
// its sandbox, and DATA_DIR's value (issue 28, point 1).
const DataMount = "/data"

// DataFolder is one of a project's persistent data folders: production's
// ("production"), or a preview's ("preview-<label>"), with its bytes as
// last measured.
type DataFolder struct {
	Name       string    `json:"name"`
	Bytes      int64     `json:"bytes"`
	MeasuredAt time.Time `json:"measuredAt"`
}

// ProductionData names production's data folder.
const ProductionData = "production"

// DataFolderName is the data folder of d's target: production's, or one
// of its preview label's own.
func DataFolderName(d *Deployment) string {
	if d.IsPreview() {
		return "preview-" + d.Subdomain
	}
	return ProductionData
}

// AppDataStore records the projects' data folders and their sizes.
type AppDataStore interface {
	// Measured records the bytes of projectID's data folder name.
	Measured(ctx context.Context, projectID, name string, bytes int64) error
	// Folders lists projectID's data folders, production first.
	Folders(ctx context.Context, projectID string) ([]DataFolder, error)
	// Forget drops the record of projectID's data folder name.
	Forget(ctx context.Context, projectID, name string) error
}

// ProjectData is a project's persistent data folders, as
// GET /api/projects/{id}/data answers them.
type ProjectData struct {
	Mount   string       `json:"mount"` // DataMount
	Size    int64        `json:"size"`  // every folder's bytes
	Folders []DataFolder `json:"folders"`
	// Snapshots are production's folder's daily snapshots, newest first.
	Snapshots []DataSnapshot `json:"snapshots"`
}

// DataSnapshot is one snapshot of a data folder: its id is when it was
// taken (UTC, "20261127T030000Z").
type DataSnapshot struct {
	ID    string    `json:"id"`
	At    time.Time `json:"at"`
	Bytes int64     `json:"bytes"`
}
