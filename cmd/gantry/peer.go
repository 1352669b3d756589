package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gantryhq/gantry/internal/config"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/peer"
)

// servePeer opens a replica's peer port (GANTRY_PEER_ADDR; issue 26,
// point 5): other replicas' edges forward there the requests for server
// apps whose home is this node, signed with a key derived from the shared
// secret key. It serves only hops signed for this node (peer.Hop.Handler:
// anything else is 403) through the live edge, which never forwards them
// again; and it makes this replica's edge forward over the same hop.
func servePeer(cfg *config.Config, logger *slog.Logger, p *platform) error {
	hop := peer.New(cfg.SecretKey, cfg.NodeID, 0, nil)
	p.liveEdge.ConfigureHop(hop)
	ln, err := net.Listen("tcp", cfg.PeerAddr)
	if err != nil {
		return fmt.Errorf("peer port (GANTRY_PEER_ADDR): %w", err)
	}
	srv := &http.Server{
		Handler:           hop.Handler(p.liveEdge),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       cfg.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ConnContext:       edge.ConnContext,
	}
	go func() {
		if err := srv.Serve(ln); err != http.ErrServerClosed {
			logger.Error("peer port stopped", "err", err)
		}
	}()
	p.onClose(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	logger.Info("peer port listening", "addr", ln.Addr().String(), "node", cfg.NodeID)
	return nil
}
