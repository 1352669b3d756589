package api

import (
	"errors"
	"mime"
	"net/http"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deadline"
)

// MaxRestoreBytes is the largest archive POST /api/projects/{id}/data/restore
// takes (the data folder's own size bounds it further).
const MaxRestoreBytes = 1 << 30

// handleDownloadData streams the project's production data folder as a
// .tar.gz attachment; 404 when the project has none yet.
func (s projectAPI) handleDownloadData(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	name, write, err := s.Deploys.DataArchive(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	w.Header().Set("Cache-Control", "no-store")
	if err := write(w); err != nil {
		// Headers are sent: the archive ends short, and the log says why.
		s.Logger.Warn("data download cut off", "project", r.PathValue("id"), "err", err)
	}
}

// handleRestoreData replaces the project's production data folder with
// the .tar.gz archive the body holds (Content-Type application/gzip), or
// with ?snapshot=<id>, while its app is stopped: {data: {mount, size,
// folders, snapshots}}.
func (s projectAPI) handleRestoreData(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if snap := r.URL.Query().Get("snapshot"); snap != "" {
		s.answerRestore(w, r, u, s.Deploys.RestoreData(r.Context(), u.ID, r.PathValue("id"), snap, nil))
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/gzip" && ct != "application/x-gzip" &&
		ct != "application/octet-stream" {
		s.writeError(w, r, gantry.Errorf(gantry.EINVALID, "Send the archive as the request body with Content-Type application/gzip"))
		return
	}
	body := http.MaxBytesReader(w, r.Body, MaxRestoreBytes)
	err := s.Deploys.RestoreData(r.Context(), u.ID, r.PathValue("id"), "", body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		err = gantry.Errorf(gantry.EINVALID, "The archive is larger than 1 GiB")
	case errors.Is(err, deadline.ErrSlowBody):
		err = gantry.Errorf(gantry.ETIMEOUT, "The archive did not arrive in time: upload a smaller one, or from a faster connection")
	}
	s.answerRestore(w, r, u, err)
}

// answerRestore answers a restore that ended with err: the error, or the
// folders as they are now.
func (s projectAPI) answerRestore(w http.ResponseWriter, r *http.Request, u *gantry.User, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := s.projectData(r, u)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": d, "message": "Data folder restored"})
}

// projectData is the project's data folders with production's snapshots.
func (s projectAPI) projectData(r *http.Request, u *gantry.User) (*gantry.ProjectData, error) {
	d, err := s.Projects.DataFolders(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if d.Snapshots, err = s.Deploys.DataSnapshots(r.Context(), u.ID, r.PathValue("id")); err != nil {
		return nil, err
	}
	return d, nil
}
