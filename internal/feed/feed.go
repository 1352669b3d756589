// Package feed carries changes between replicas sharing one PostgreSQL
// database (issue 26, point 3; SCALING.md §3): a Listener that follows
// notification channels on a connection of its own (pgxlisten) and runs
// each channel's catch-up on every (re)connect and every safety poll, and
// a Coalescer that sends a replica's log nudges as at most one
// notification statement per window.
//
// Notifications are hints. The truth is in the store (route seqs, log
// entries' seqs): a lost notification costs a delay until the next
// catch-up, never a change.
package feed

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgxlisten"
)

// Defaults of Listener.
const (
	DefaultPoll           = 30 * time.Second
	DefaultReconnectDelay = time.Second
)

// Listener follows notification channels on a dedicated connection.
type Listener struct {
	// URL is the PostgreSQL database's URL.
	URL string
	// Poll is how often every catch-up runs anyway (default DefaultPoll):
	// for notifications lost while the connection was silently down.
	Poll time.Duration
	// ReconnectDelay is the wait before connecting again after the
	// connection was lost (default DefaultReconnectDelay).
	ReconnectDelay time.Duration
	Logger         *slog.Logger

	channels []channel
	mu       sync.Mutex // serialises catch-ups
}

type channel struct {
	name    string
	nudge   func(ctx context.Context, payload string)
	catchUp func(ctx context.Context)
}

// Handle follows channel: nudge gets each notification's payload (on the
// listener's goroutine: it should return quickly), and catchUp, when set,
// runs after every (re)connect, once LISTEN is in place, and every Poll.
// Call it before Run.
func (l *Listener) Handle(name string, nudge func(ctx context.Context, payload string), catchUp func(ctx context.Context)) {
	l.channels = append(l.channels, channel{name: name, nudge: nudge, catchUp: catchUp})
}

// Run listens until ctx is done, reconnecting after ReconnectDelay
// whenever the connection is lost.
func (l *Listener) Run(ctx context.Context) {
	delay := l.ReconnectDelay
	if delay <= 0 {
		delay = DefaultReconnectDelay
	}
	pl := &pgxlisten.Listener{
		Connect:        func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, l.URL) },
		ReconnectDelay: delay,
		LogError: func(ctx context.Context, err error) {
			if ctx.Err() == nil {
				l.logger().Warn("change feed: listening", "err", err)
			}
		},
	}
	for _, c := range l.channels {
		pl.Handle(c.name, handler{l: l, c: c})
	}
	poll := l.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				for _, c := range l.channels {
					l.catchUp(ctx, c)
				}
			}
		}
	}()
	_ = pl.Listen(ctx) // returns only when ctx is done
}

func (l *Listener) catchUp(ctx context.Context, c channel) {
	if c.catchUp == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c.catchUp(ctx)
}

func (l *Listener) logger() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.Default()
}

// handler is one channel's pgxlisten handler: its backlog is its
// catch-up.
type handler struct {
	l *Listener
	c channel
}

func (h handler) HandleNotification(ctx context.Context, n *pgconn.Notification, _ *pgx.Conn) error {
	if h.c.nudge != nil {
		h.c.nudge(ctx, n.Payload)
	}
	return nil
}

func (h handler) HandleBacklog(ctx context.Context, _ string, _ *pgx.Conn) error {
	h.l.catchUp(ctx, h.c)
	return nil
}
