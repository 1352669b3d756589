package deploy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// Storage accounting. Each deployment records what its kept files take on
// disk once it is built (FilesSize); the store adds the bytes of its log
// messages, so an account's usage is one sum (Store.StorageUsage) and no
// request walks the disk. The projects' build caches are the platform's,
// not counted here: they have bounds of their own (cachekeeper.go); a
// static site's build volume is removed once it is published.

// room is what makeRoom freed: deployments whose files it removed.
type room struct {
	pruned []*gantry.Deployment
	names  map[string]string // project id → name
	freed  int64
}

// checkStorage makes room for a new deployment of userID's (makeRoom) and
// refuses it (StorageFullError) only when the account's live deployments
// and logs fill its budget on their own. What it freed is logged to the
// new deployment once it is queued (logRoom).
// storage is the deploy service's storage capability: budgets, making
// room, measuring and pruning deployments' files, and the build caches
// (caches).
type storage struct {
	*core
	*StorageConfig
	// appDisk is BuildsConfig.AppDisk: a server app's writable space.
	appDisk *int64
	apps    *apps // the running apps' volumes are measured
	// cacheKeep keeps the build caches (caches()).
	cacheOnce sync.Once
	cacheKeep *cacheKeeper
}

func (k *storage) checkStorage(ctx context.Context, userID string) (*room, error) {
	return k.makeRoom(ctx, userID, true)
}

// makeRoom brings userID's storage back under its budget when it is full
// (used ≥ budget), removing, in this order and each oldest first until
// it is not: the files of the stopped and failed deployments kept for
// rollback beyond each project's newest stopped one; then each project's
// newest stopped deployment and the stopped
// one a stopped project's subdomain last served. Live and in-progress
// deployments and logs are never touched. When even all of that would
// not bring the account under its budget, nothing is removed and, with
// refuse, the answer is StorageFullError naming the biggest projects.
// A removed deployment keeps its record, marked pruned, with a line in
// its own log saying why.
func (k *storage) makeRoom(ctx context.Context, userID string, refuse bool) (*room, error) {
	s := k
	u, err := s.Store.StorageUsage(ctx, userID)
	if err != nil || !u.Full() {
		return nil, err
	}
	// One account's passes one at a time: a second finds the room made.
	l := s.apps.appLock("room " + userID)
	l.Lock()
	defer l.Unlock()
	if u, err = s.Store.StorageUsage(ctx, userID); err != nil || !u.Full() {
		return nil, err
	}
	ds, err := s.Store.ListDeployments(ctx, userID, gantry.DeploymentFilter{})
	if err != nil {
		return nil, err
	}
	ps, err := s.Store.ListProjects(ctx, userID)
	if err != nil {
		return nil, err
	}
	active := map[string]bool{}
	r := &room{names: map[string]string{}}
	for _, p := range ps {
		r.names[p.ID] = p.Name
		if p.ActiveDeployment != nil && p.ActiveDeployment.ID != "" {
			active[p.ActiveDeployment.ID] = true
		}
	}
	rollbacks, last := gantry.RoomOrder(ds, active)
	// What is left once every candidate's files are gone:
	// a blob a live deployment links to too stays (FilesWithout).
	freeing := map[string]bool{}
	var ids []string
	for _, d := range append(slices.Clone(rollbacks), last...) {
		freeing[d.ID] = true
		ids = append(ids, d.ID)
	}
	left, err := s.Store.Blobs().FilesWithout(ctx, userID, ids)
	if err != nil {
		return nil, err
	}
	left += u.Logs
	if left >= u.Budget {
		if !refuse {
			return nil, nil
		}
		return nil, gantry.StorageFullError(*u, kept(ds, freeing, r.names))
	}
	over := u.Used - u.Budget + 1
	ctx = context.WithoutCancel(ctx)
	prune := func(d *gantry.Deployment) {
		if over <= 0 {
			return
		}
		ok, err := s.Store.PruneDeployment(ctx, d.ID, s.now())
		if err != nil {
			s.logger().Error("make room", "deployment", d.ID, "err", err)
		}
		if !ok {
			return // restarted or removed meanwhile
		}
		s.log(ctx, d.ID, gantry.LevelInfo, gantry.LogDeployment, MsgRoomLine)
		s.removeFiles(d)
		r.pruned = append(r.pruned, d)
		// What it freed: its blobs other deployments link to stay.
		freed := d.FilesSize
		if now, err := s.Store.StorageUsage(ctx, userID); err == nil {
			freed = over - (now.Used - u.Budget + 1)
		}
		r.freed += freed
		over -= freed
	}
	for _, d := range rollbacks {
		prune(d)
	}
	for _, d := range last {
		prune(d)
	}
	if len(r.pruned) > 0 {
		ids := make([]string, 0, len(r.pruned))
		for _, d := range r.pruned {
			ids = append(ids, d.ID)
		}
		s.logger().Info("storage: made room", "user", userID, "pruned", ids, "freed", r.freed)
	}
	if refuse {
		if u, err := s.Store.StorageUsage(ctx, userID); err == nil && u.Full() {
			// Restarts or builds took the room meanwhile.
			ds, _ := s.Store.ListDeployments(ctx, userID, gantry.DeploymentFilter{})
			return r, gantry.StorageFullError(*u, kept(ds, nil, r.names))
		}
	}
	return r, nil
}

// makeRoomFor makes room (never refusing) once d's files are counted, and
// logs to d what it freed.
func (k *storage) makeRoomFor(ctx context.Context, d *gantry.Deployment) {
	s := k
	r, err := k.makeRoom(ctx, d.UserID, false)
	if err != nil {
		s.logger().Error("make room", "deployment", d.ID, "err", err)
	}
	k.logRoom(ctx, d.ID, r)
}

// kept sums, per project, what making room cannot free (the files of ds
// but those in freeing, and every log) and lists the projects biggest first.
func kept(ds []*gantry.Deployment, freeing map[string]bool, names map[string]string) []gantry.ProjectUsage {
	by := map[string]int64{}
	for _, d := range ds {
		by[d.ProjectID] += d.LogSize
		if !freeing[d.ID] {
			by[d.ProjectID] += d.FilesSize
		}
	}
	out := make([]gantry.ProjectUsage, 0, len(by))
	for id, n := range by {
		name := names[id]
		if name == "" && len(ds) > 0 {
			name = id
		}
		out = append(out, gantry.ProjectUsage{Name: name, Bytes: n})
	}
	slices.SortFunc(out, func(a, b gantry.ProjectUsage) int {
		if c := cmp.Compare(b.Bytes, a.Bytes); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// MsgRoomLine is the log line of a deployment whose files were removed to
// make room for a new deployment.
const MsgRoomLine = "Files removed to make room for a new deployment: the account's storage was full, and this deployment was only kept for rollback. Deploy again to run this version."

// logRoom writes to deployment id's log what was freed for it, naming
// each deployment whose files were removed.
func (k *storage) logRoom(ctx context.Context, id string, r *room) {
	s := k
	if r == nil || len(r.pruned) == 0 {
		return
	}
	var parts []string
	if len(r.pruned) > 0 {
		names := make([]string, 0, len(r.pruned))
		for _, d := range r.pruned {
			names = append(names, describeKept(d, r.names[d.ProjectID]))
		}
		parts = append(parts, fmt.Sprintf("removed the files of %d older deployment%s kept for rollback: %s",
			len(r.pruned), plural(len(r.pruned)), strings.Join(names, "; ")))
	}
	msg := fmt.Sprintf("Storage was full, so %s (%s freed).", strings.Join(parts, ", and "), gantry.FormatSize(r.freed))
	if len(r.pruned) > 0 {
		msg += " Their records stay; deploy again to run one of them."
	}
	s.log(ctx, id, gantry.LevelInfo, gantry.LogDeployment, msg)
}

// describeKept names a deployment in a log line: its project, version,
// commit and the day it was made, and what its files took.
func describeKept(d *gantry.Deployment, project string) string {
	var b strings.Builder
	b.WriteString(gantry.FirstNonBlank(project, d.ProjectID))
	if d.Version != "" {
		b.WriteString(" " + d.Version)
	}
	b.WriteString(" (")
	if c := gantry.ShortSHA(d.Metadata.CommitHash); c != "" {
		b.WriteString("commit " + c + ", ")
	}
	b.WriteString(d.Status + " deployment of " + d.CreatedAt.UTC().Format("2006-01-02 15:04") + " UTC, ")
	b.WriteString(gantry.FormatSize(d.FilesSize) + ")")
	return b.String()
}

// filesOf is where d's kept files are: a static site's published folder,
// or a server app's workspace volume — its image file, whose allocated
// blocks are what the volume costs on disk (sandbox.Volume), or a plain
// folder where the sandbox makes no volumes (mode none, older versions).
func (k *storage) filesOf(d *gantry.Deployment) string {
	s := k
	if !IsApp(d) {
		return s.SiteDir(d.ID)
	}
	if img := s.WorkDir(d.ID) + ".img"; fileExists(img) {
		return img
	}
	return s.WorkDir(d.ID)
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// recordFiles measures d's kept files and records their size: the blobs
// they link to, when they have a manifest (recordBlobs), or what they
// take on disk.
func (k *storage) recordFiles(ctx context.Context, d *gantry.Deployment) {
	s := k
	if recordBlobs(ctx, s, d) {
		return
	}
	d.FilesSize = diskUsage(k.filesOf(d))
	if err := s.Store.SetDeploymentFiles(context.WithoutCancel(ctx), d.ID, d.FilesSize); err != nil {
		s.logger().Error("record deployment size", "deployment", d.ID, "err", err)
	}
}

// dropFiles removes d's published folder and workspace volume and records
// that it keeps nothing.
func (k *storage) dropFiles(ctx context.Context, d *gantry.Deployment) {
	s := k
	s.removeFiles(d)
	if d.FilesSize != 0 {
		d.FilesSize = 0
		if err := s.Store.SetDeploymentFiles(context.WithoutCancel(ctx), d.ID, 0); err != nil &&
			gantry.ErrorCode(err) != gantry.ENOTFOUND {
			s.logger().Error("record deployment size", "deployment", d.ID, "err", err)
		}
	}
}

// diskUsage returns the bytes the file or folder at path takes on disk
// (allocated blocks, so a sparse image counts what was written; folders
// included; symlinks are not followed), 0 when it does not exist.
func diskUsage(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // vanished or unreadable: counts as nothing
		}
		if fi, err := e.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			} else {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// MsgPrunedLine is the log line of a deployment whose files were pruned.
const MsgPrunedLine = "Files removed to save space: a project keeps the files of its newest 10 stopped deployments (3 for server apps). Deploy again to run this version."

// prune removes the files of the project's old stopped and failed
// deployments that gantry.Prunable picks; their records stay, marked
// pruned. The store marks each one only while it is still stopped or
// failed and not pruned, and a restart's go-live only while it is not
// pruned, both on the deployment's row: a deployment being restarted is
// either pruned first (and the restart refused) or live first (and kept).
func (k *storage) prune(ctx context.Context, projectID string) {
	s := k
	ctx = context.WithoutCancel(ctx)
	ds, err := s.Store.PruneDeployments(ctx, projectID, s.now())
	if err != nil {
		if gantry.ErrorCode(err) != gantry.ENOTFOUND {
			s.logger().Error("prune deployments", "project", projectID, "err", err)
		}
		return
	}
	for _, d := range ds {
		// The line first: it is stored once the files are gone for good
		// (marked pruned above), so whoever sees them gone finds it.
		s.log(ctx, d.ID, gantry.LevelInfo, gantry.LogDeployment, MsgPrunedLine)
		s.removeFiles(d)
	}
}

// recoverStorage runs at start-up: it measures the files of deployments
// built before sizes were recorded, prunes every project with stopped
// or failed deployments, and tidies the blob stores (tidyBlobs).
func (k *storage) recoverStorage(ctx context.Context) error {
	s := k
	ds, err := s.Store.ListDeploymentsByStatus(ctx, gantry.DeploymentLive, gantry.DeploymentStopped, gantry.DeploymentFailed)
	if err != nil {
		return err
	}
	measured := 0
	projects := map[string]bool{}
	var order []string
	for _, d := range ds {
		if d.PrunedAt == nil && d.FilesSize == 0 {
			if _, err := os.Lstat(k.filesOf(d)); err == nil {
				k.recordFiles(ctx, d)
				measured++
			} else if !errors.Is(err, fs.ErrNotExist) {
				s.logger().Error("measure deployment", "deployment", d.ID, "err", err)
			}
		}
		if d.Status != gantry.DeploymentLive && !projects[d.ProjectID] {
			projects[d.ProjectID] = true
			order = append(order, d.ProjectID)
		}
	}
	for _, id := range order {
		k.prune(ctx, id)
	}
	tidyBlobs(ctx, s)
	if measured > 0 {
		s.logger().Info("deployment sizes measured", "deployments", measured)
	}
	return nil
}

// DefaultMeasureEvery is how often running apps' volumes are measured
// (Service.MeasureEvery).
const DefaultMeasureEvery = time.Minute

// measureLoop measures the volumes of the running server apps every
// MeasureEvery until ctx ends: what an app writes at run time counts
// against its owner's storage as its build did.
func (k *storage) measureLoop(ctx context.Context) {
	s := k
	defer s.wg.Done()
	every := s.apps.MeasureEvery
	if every <= 0 {
		every = DefaultMeasureEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, id := range s.apps.running("", "") {
			k.measureApp(ctx, id)
		}
		for _, f := range s.apps.dataFolders() {
			k.measureData(ctx, f[0], f[1])
		}
	}
}

// measureApp records what deployment id's app volume takes now: the
// larger of what its filesystem holds (statfs of the mounted volume) and
// what its image takes on the host's disk (its allocated blocks: a file
// written and deleted still takes them). A deployment whose files were
// removed meanwhile keeps its 0 (MeasuredDeploymentFiles).
func (k *storage) measureApp(ctx context.Context, id string) {
	s := k
	ws := s.WorkDir(id)
	img := ws + ".img"
	if !fileExists(img) {
		return // no volume (mode none): measured once, when it was built
	}
	n := diskUsage(img)
	if fileExists(sandbox.FilesDir(ws)) {
		n = volumeHolds(ws) // stored by content: its blobs are added by the store
	} else if u, ok := sandbox.MountedUsage(ws); ok && u.Bytes > n {
		n = u.Bytes
	}
	if n <= 0 {
		return
	}
	if err := s.Store.MeasuredDeploymentFiles(context.WithoutCancel(ctx), id, n); err != nil {
		s.logger().Error("measure app volume", "deployment", id, "err", err)
	}
}

// storageLeft is what userID has left of the storage budget now (at
// least 1: a build is only started below the budget); 0 when it cannot
// be read (no bound then).
func (k *storage) storageLeft(ctx context.Context, userID string) int64 {
	s := k
	u, err := s.Store.StorageUsage(ctx, userID)
	if err != nil {
		return 0
	}
	return max(u.Budget-u.Used-k.reservedBy(userID, ""), 1)
}

// reservedBy is what the running apps of userID, but deployment except's,
// may still write: the free space of their volumes. It is not in the
// account's usage yet, so it is not left for another app either.
func (k *storage) reservedBy(userID, except string) int64 {
	s := k
	var n int64
	for _, id := range s.apps.running(userID, except) {
		if u, ok := sandbox.MountedUsage(s.WorkDir(id)); ok {
			n += u.FreeBytes
		}
	}
	return n
}

// sizeAppVolume makes the writable space of d's app volume (at path, its
// app not running) what its account has left of its storage budget, less
// what the account's other running apps may still write (reservedBy), at
// most AppDisk and at least build.MinAppDisk: an app past the account's
// budget is refused writes by the kernel (ENOSPC), and several apps of
// one account share what is left rather than each getting all of it.
// startApp calls it under the account's lock, until the app is
// registered. The volume is resized
// only when that moves its size by more than a few MiB; a volume that
// cannot be resized keeps its size.
func (k *storage) sizeAppVolume(ctx context.Context, d *gantry.Deployment, path string) {
	s := k
	if s.apps.Apps == nil || s.apps.Apps.Sandbox == nil {
		return
	}
	u, err := s.Store.StorageUsage(ctx, d.UserID)
	if err != nil {
		return
	}
	v, err := s.apps.Apps.Sandbox.AttachVolume(path)
	if err != nil {
		return // the runtime says why it cannot start
	}
	held := v.Usage()
	if held.Bytes == 0 && held.FreeBytes == 0 {
		return // mode none
	}
	appDisk := *s.appDisk
	if appDisk <= 0 {
		appDisk = build.DefaultAppDisk
	}
	// What the account has left, this volume's contents already counted
	// (at their last measure), less what its other running apps may
	// still write.
	free := min(appDisk, max(u.Budget-u.Used-k.reservedBy(d.UserID, d.ID), build.MinAppDisk))
	want := held.Bytes + free
	const slack = 8 << 20
	if diff := v.Disk.Bytes - want; diff > -slack && diff < slack {
		return
	}
	if err := v.Resize(context.WithoutCancel(ctx), want); err != nil {
		s.logger().Error("size app volume", "deployment", d.ID, "err", err)
	}
}
