package deploy

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/gantryhq/gantry"
)

// core is what every capability of the deploy service shares (the
// builds, release, apps, triggers and storage capabilities each hold
// it): the shared configuration — the store, the deployment log streams,
// the edge's routes, notifications, secrets, the data folder, the clock
// and the logger — with the helpers over it (log, publish, notify, now,
// buildEnv, the owner's GitHub token), and the background loops' wait
// group.
type core struct {
	*SharedConfig
	// wg counts the background loops Open starts; Close waits for them.
	wg sync.WaitGroup
}

func (s *core) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// sandboxUID returns the uid (and gid: the same number) that the
// account's builds and apps run under; 0, the sandbox's default, without a
// configured range.
func (s *core) sandboxUID(ctx context.Context, userID string) (uint32, error) {
	if s.SandboxUIDs.Count == 0 {
		return 0, nil
	}
	slot, err := s.Store.SandboxSlot(ctx, userID)
	if err != nil {
		return 0, err
	}
	return s.SandboxUIDs.UID(slot)
}

func (s *core) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// SiteDir and WorkDir are where a deployment's published files and build
// workspace live.
func (s *core) SiteDir(id string) string { return filepath.Join(s.DataDir, "sites", id) }
func (s *core) WorkDir(id string) string { return filepath.Join(s.DataDir, "builds", id) }

// log stores one entry of a deployment and publishes it to its stream.
func (s *core) log(ctx context.Context, id, level, typ, msg string) {
	s.logSeq(ctx, id, level, typ, msg)
}

// logSeq is log, returning the entry's seq (0 when it was not stored).
func (s *core) logSeq(ctx context.Context, id, level, typ, msg string) int64 {
	e := gantry.LogEntry{Timestamp: s.now(), Level: level, Type: typ, Message: msg}
	if err := s.Store.AppendLog(context.WithoutCancel(ctx), id, &e); err != nil {
		if gantry.ErrorCode(err) != gantry.ENOTFOUND {
			s.logger().Error("append log", "deployment", id, "err", err)
		}
		return 0
	}
	s.publish(id, e)
	return e.Seq
}

// publish sends a stored entry to the deployment's log stream, and marks
// it for other replicas (Logged).
func (s *core) publish(id string, e gantry.LogEntry) {
	if s.Hub != nil {
		s.Hub.Publish(Topic(id), e)
	}
	if s.Logged != nil {
		s.Logged(id, e.Seq)
	}
}

// line is a deployment log entry written now, for a transition to store
// in its own transaction (gantry.Change.Line).
func (s *core) line(level, msg string) *gantry.LogEntry {
	return &gantry.LogEntry{Timestamp: s.now(), Level: level, Type: gantry.LogDeployment, Message: msg}
}

// notify hands n to Notify, when one is set.
func (s *core) notify(ctx context.Context, n *gantry.Notification) {
	if s.Notify != nil {
		s.Notify.Notify(ctx, n)
	}
}
