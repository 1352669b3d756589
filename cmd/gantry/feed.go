package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/domains"
	"github.com/gantryhq/gantry/internal/feed"
	"github.com/gantryhq/gantry/internal/previewaccess"
	"github.com/gantryhq/gantry/internal/store"
)

// replicaFeed is the change feed between replicas (issue 26, point 3) on
// PostgreSQL; nil on SQLite, where one process makes every change and
// nothing of it runs. newReplicaFeed prepares it before the deploy service
// opens, follow starts it once the services are wired.
type replicaFeed struct {
	db    *store.DB
	since int64           // the route seq taken before the deploy service read every route
	logs  *feed.Coalescer // the deploy service's log nudges (deploy.Service.Logged)
}

// newReplicaFeed reads the newest route seq (everything after it is
// applied from the feed) and makes the coalescer of log nudges: at most
// one NOTIFY statement per 50 ms.
func newReplicaFeed(ctx context.Context, db *store.DB, logger *slog.Logger) (*replicaFeed, error) {
	if db.Dialect() != store.Postgres {
		return nil, nil
	}
	f := db.Feed()
	since, err := f.RouteSeq(ctx)
	if err != nil {
		return nil, fmt.Errorf("change feed: %w", err)
	}
	return &replicaFeed{db: db, since: since, logs: &feed.Coalescer{Logger: logger,
		Send: func(ctx context.Context, payloads []string) error { return f.Notify(ctx, store.ChannelLogs, payloads) }}}, nil
}

// logged is what the deploy service tells of each log entry (nil on
// SQLite).
func (r *replicaFeed) logged() func(string, int64) {
	if r == nil {
		return nil
	}
	return r.logs.Add
}

// follow starts the feed: domain changes become a notification, and a
// listener on a connection of its own applies other replicas' route moves
// to this replica's edge (on each nudge, after each reconnect and every
// 30 s), nudges this replica's log followers, and reloads custom domains
// (which makes the TLS layer forget its refusals) and who may see which
// previews when another replica changed them.
func (r *replicaFeed) follow(ctx context.Context, url string, deploys *deploy.Service, customDomains *domains.Service,
	previews *previewaccess.Service, logger *slog.Logger, p *platform) {
	if r == nil {
		return
	}
	f := r.db.Feed()
	ctx, stop := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	p.onClose(func() { stop(); <-done; <-done })
	tell := func(channel, what string) func(context.Context) {
		return func(ctx context.Context) {
			if err := f.Notify(ctx, channel, []string{""}); err != nil {
				logger.Warn("change feed: other replicas not told of a change (they reload within 30 s)", "change", what, "err", err)
			}
		}
	}
	customDomains.Changed = tell(store.ChannelDomains, "custom domains")
	// The setting alone moves no route: without this, B kept serving a
	// preview closed on A to anyone until it restarted.
	previews.Changed = tell(store.ChannelPreviews, "preview access")
	replica := deploy.NewReplica(deploys, f, r.since)
	l := &feed.Listener{URL: url, Logger: logger}
	l.Handle(store.ChannelRoutes, replica.RouteNudge, replica.CatchUpRoutes)
	l.Handle(store.ChannelLogs, func(_ context.Context, payload string) {
		replica.LogNudges(feed.ParsePayload(payload))
	}, nil)
	refresh := func(ctx context.Context) {
		if err := customDomains.Refresh(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("change feed: custom domains not reloaded; serving the last ones known", "err", err)
		}
	}
	l.Handle(store.ChannelDomains, func(ctx context.Context, _ string) { refresh(ctx) }, refresh)
	refreshPreviews := func(ctx context.Context) {
		if err := previews.Refresh(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("change feed: preview access not reloaded; keeping the last known", "err", err)
		}
	}
	l.Handle(store.ChannelPreviews, func(ctx context.Context, _ string) { refreshPreviews(ctx) }, refreshPreviews)
	go func() { r.logs.Run(ctx); done <- struct{}{} }()
	go func() { l.Run(ctx); done <- struct{}{} }()
}
