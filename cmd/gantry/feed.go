package main

import (
	"context"
	"log/slog"

	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/domains"
	"github.com/gantryhq/gantry/internal/feed"
	"github.com/gantryhq/gantry/internal/store"
)

// followReplicas wires the change feed between replicas (issue 26, point
// 3) when db is PostgreSQL: the deploy service's log entries become
// coalesced nudges (at most one NOTIFY statement per 50 ms), domain changes
// a notification; and a listener on a connection of its own applies other
// replicas' route moves to this replica's edge (on each nudge, after each
// reconnect and every 30 s), nudges this replica's log followers, and
// reloads custom domains (which makes the TLS layer forget its refusals).
// On SQLite one process has every change already: nothing runs.
func followReplicas(ctx context.Context, url string, db *store.DB, deploys *deploy.Service, logs *feed.Coalescer,
	customDomains *domains.Service, logger *slog.Logger, p *platform) {
	if db.Dialect() != store.Postgres {
		return
	}
	f := db.Feed()
	ctx, stop := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	p.onClose(func() { stop(); <-done; <-done })
	customDomains.Changed = func(ctx context.Context) {
		if err := f.Notify(ctx, store.ChannelDomains, []string{""}); err != nil {
			logger.Warn("change feed: other replicas not told of a domain change (they reload within 30 s)", "err", err)
		}
	}

	replica := deploy.NewReplica(deploys, f)
	l := &feed.Listener{URL: url, Logger: logger}
	l.Handle(store.ChannelRoutes, replica.RouteNudge, replica.CatchUpRoutes)
	l.Handle(store.ChannelLogs, func(_ context.Context, payload string) {
		replica.LogNudges(feed.ParsePayload(payload))
	}, nil)
	l.Handle(store.ChannelDomains, func(ctx context.Context, _ string) {
		refreshDomains(ctx, customDomains, logger)
	}, func(ctx context.Context) { refreshDomains(ctx, customDomains, logger) })
	go func() { logs.Run(ctx); done <- struct{}{} }()
	go func() { l.Run(ctx); done <- struct{}{} }()
}

// logNudges returns the coalescer of the deploy service's log nudges
// (deploy.Service.Logged) on PostgreSQL; nil on SQLite. followReplicas
// runs it.
func logNudges(db *store.DB, logger *slog.Logger) *feed.Coalescer {
	if db.Dialect() != store.Postgres {
		return nil
	}
	f := db.Feed()
	return &feed.Coalescer{Logger: logger, Send: func(ctx context.Context, payloads []string) error {
		return f.Notify(ctx, store.ChannelLogs, payloads)
	}}
}

func refreshDomains(ctx context.Context, customDomains *domains.Service, logger *slog.Logger) {
	if err := customDomains.Refresh(ctx); err != nil && ctx.Err() == nil {
		logger.Warn("change feed: custom domains not reloaded; serving the last ones known", "err", err)
	}
}
