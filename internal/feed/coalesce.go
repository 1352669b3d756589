package feed

import (
	"context"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of Coalescer.
const (
	DefaultWindow = 50 * time.Millisecond
	// MaxPayload bounds one notification's payload: PostgreSQL refuses
	// 8000 bytes and more.
	MaxPayload = 7999
)

// Coalescer gathers "deployment id: newest seq" marks (Add) and sends them
// as one Send call per Window at most, however many marks came: the
// payloads "id:seq,id:seq,…", each under MaxPayload bytes. One replica so
// takes NOTIFY's commit lock about 20 times a second at most (SCALING.md
// §6).
type Coalescer struct {
	// Send delivers payloads in one statement (store.Feed.Notify on
	// ChannelLogs).
	Send   func(ctx context.Context, payloads []string) error
	Window time.Duration
	Logger *slog.Logger

	mu      sync.Mutex
	pending map[string]int64
	kick    chan struct{}
	once    sync.Once
}

func (c *Coalescer) init() {
	c.once.Do(func() { c.kick = make(chan struct{}, 1) })
}

// Add marks deployment id's log as stored up to seq.
func (c *Coalescer) Add(id string, seq int64) {
	c.init()
	c.mu.Lock()
	if c.pending == nil {
		c.pending = make(map[string]int64)
	}
	if seq > c.pending[id] {
		c.pending[id] = seq
	}
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Run sends the marks until ctx is done: the first mark of a quiet spell
// at once, then at most one Send per Window.
func (c *Coalescer) Run(ctx context.Context) {
	c.init()
	window := c.Window
	if window <= 0 {
		window = DefaultWindow
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		c.mu.Lock()
		marks := c.pending
		c.pending = nil
		c.mu.Unlock()
		if len(marks) > 0 {
			if err := c.Send(ctx, Payloads(marks)); err != nil && ctx.Err() == nil {
				// The followers catch up at their next heartbeat.
				c.logger().Warn("change feed: log nudges not sent", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(window):
		}
	}
}

func (c *Coalescer) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

// Payloads writes marks as "id:seq" lists joined by commas, each under
// MaxPayload bytes, in the order of the ids.
func Payloads(marks map[string]int64) []string {
	ids := make([]string, 0, len(marks))
	for id := range marks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []string
	var b strings.Builder
	for _, id := range ids {
		item := id + ":" + strconv.FormatInt(marks[id], 10)
		if b.Len() > 0 && b.Len()+1+len(item) > MaxPayload {
			out = append(out, b.String())
			b.Reset()
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item)
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// ParsePayload reads a payload written by Payloads, skipping malformed
// items.
func ParsePayload(p string) map[string]int64 {
	out := map[string]int64{}
	for _, item := range strings.Split(p, ",") {
		id, n, ok := strings.Cut(item, ":")
		if !ok || id == "" {
			continue
		}
		seq, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			continue
		}
		out[id] = max(out[id], seq)
	}
	return out
}
