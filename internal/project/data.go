package project

import (
	"context"

	"github.com/gantryhq/gantry"
)

// DataFolders describes the owner's project's persistent data folders
// (issue 28, point 1): where apps see them and what each holds as last
// measured, production's first. ENOTFOUND for another user's project.
func (s *Service) DataFolders(ctx context.Context, userID, projectID string) (*gantry.ProjectData, error) {
	if _, err := s.Store.FindProject(ctx, userID, projectID); err != nil {
		return nil, err
	}
	fs, err := s.Store.AppData().Folders(ctx, projectID)
	if err != nil {
		return nil, err
	}
	d := &gantry.ProjectData{Mount: gantry.DataMount, Folders: fs, Snapshots: []gantry.DataSnapshot{}}
	for _, f := range fs {
		d.Size += f.Bytes
	}
	return d, nil
}
