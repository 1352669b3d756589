package deploy

import (
	"context"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// startBuilt starts a freshly built app. Its build may have pruned its
// dev dependencies, holding node_modules as installed beside the
// workspace (build.HeldFolder): the pruning is committed (what was held
// is dropped, which frees its space) once the app answers without them;
// when it does not start without them, node_modules is put back as
// installed and the app starts again.
func (s *apps) startBuilt(ctx context.Context, d *gantry.Deployment) (*appRun, error) {
	defer addPhase(&d.BuildInfo, "start", time.Now())
	if err := s.place.claim(ctx, d.ID, true); err != nil {
		return nil, err
	}
	vol := s.WorkDir(d.ID)
	run, err := s.startApp(ctx, d, nil)
	if !build.Held(vol) {
		return run, err
	}
	if err == nil {
		s.dropHeld(ctx, d)
		return run, nil
	}
	if ctx.Err() != nil || gantry.ErrorCode(err) != gantry.EINVALID {
		// Not the app's own failure to start (startApp explains those as
		// EINVALID): nothing tells whether node_modules is the cause.
		return nil, err
	}
	s.log(ctx, d.ID, gantry.LevelWarning, gantry.LogDeployment,
		"The app did not start without its dev dependencies: putting them back and starting it again")
	// Put back under the overlay of a workspace stored by content: it
	// shows over the pruned files at the next start (sandbox.MountFiles).
	if err := sandbox.UnmountFiles(vol); err != nil {
		s.logger().Error("unmount app files", "deployment", d.ID, "err", err)
	}
	if ok, rerr := build.RestoreHeld(vol); rerr != nil || !ok {
		s.logger().Error("restore dev dependencies", "deployment", d.ID, "err", rerr)
		return nil, err
	}
	s.storage.recordFiles(ctx, d)
	run, err = s.startApp(ctx, d, nil)
	if err == nil {
		// The first start's diagnosis no longer says why anything failed.
		if d.Diagnosis != nil {
			d.Diagnosis = nil
			if err := s.Store.SetDeploymentDiagnosis(context.WithoutCancel(ctx), d.ID, nil); err != nil && !lost(err) {
				s.logger().Error("clear diagnosis", "deployment", d.ID, "err", err)
			}
		}
		s.log(ctx, d.ID, gantry.LevelInfo, gantry.LogDeployment,
			"The app runs with its dev dependencies: its start command needs them, so they are kept")
	}
	return run, err
}

// dropHeld commits a pruning: node_modules as installed, held until the
// app answered without its dev dependencies, is removed, the volume gives
// the freed blocks back to the disk, and the deployment's size is measured
// again.
func (s *apps) dropHeld(ctx context.Context, d *gantry.Deployment) {
	vol := s.WorkDir(d.ID)
	if err := build.DropHeld(vol); err != nil {
		s.logger().Error("drop held dev dependencies", "deployment", d.ID, "err", err)
		return
	}
	if err := sandbox.Trim(vol); err != nil {
		s.logger().Warn("trim app volume", "deployment", d.ID, "err", err)
	}
	s.storage.recordFiles(ctx, d)
}
