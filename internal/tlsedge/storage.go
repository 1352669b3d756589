package tlsedge

import (
	"context"
	"errors"
	"sync"

	"github.com/caddyserver/certmagic"
)

// errStopped answers every storage call made after Manager.Stop.
var errStopped = errors.New("tls: the certificate manager is stopped")

// gatedStorage is the certificate storage as certmagic sees it, closed by
// Manager.Stop. certmagic's goroutines (an order waiting to retry, a
// renewal in the background, a lock kept fresh) have no handle to wait
// on and may outlive the Manager: after close, every call that could
// write fails at once, calls in flight are cancelled and waited for, so
// nothing is written to the folder once Stop has returned (a test's
// temporary folder is removed, a restarted process takes over the folder).
// Unlock and Delete still pass: they only remove files.
type gatedStorage struct {
	backend

	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup
	ctx      context.Context // cancelled by close
	cancel   context.CancelFunc
}

// backend is what gatedStorage closes: the certificate folder
// (certmagic.FileStorage), or the storage replicas share
// (SharedStorage).
type backend interface {
	certmagic.Storage
	certmagic.TryLocker
}

var (
	_ certmagic.Storage   = (*gatedStorage)(nil)
	_ certmagic.TryLocker = (*gatedStorage)(nil)
)

func newGatedStorage(b backend) *gatedStorage {
	ctx, cancel := context.WithCancel(context.Background())
	return &gatedStorage{backend: b, ctx: ctx, cancel: cancel}
}

// enter admits one call (false after close) and returns its context,
// cancelled by close as well; done must follow. The Manager admits its
// callbacks from certmagic (decide, onEvent) the same way, so that Stop
// waits for those in flight too.
func (g *gatedStorage) enter(ctx context.Context) (context.Context, func(), bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, nil, false
	}
	g.inflight.Add(1)
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(g.ctx, cancel)
	return ctx, func() { stop(); cancel(); g.inflight.Done() }, true
}

// close refuses every later call, cancels those in flight and waits for
// them to return.
func (g *gatedStorage) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.cancel()
	g.inflight.Wait()
}

func (g *gatedStorage) Store(ctx context.Context, key string, value []byte) error {
	ctx, done, ok := g.enter(ctx)
	if !ok {
		return errStopped
	}
	defer done()
	return g.backend.Store(ctx, key, value)
}

func (g *gatedStorage) Load(ctx context.Context, key string) ([]byte, error) {
	ctx, done, ok := g.enter(ctx)
	if !ok {
		return nil, errStopped
	}
	defer done()
	return g.backend.Load(ctx, key)
}

func (g *gatedStorage) Exists(ctx context.Context, key string) bool {
	ctx, done, ok := g.enter(ctx)
	if !ok {
		return false
	}
	defer done()
	return g.backend.Exists(ctx, key)
}

func (g *gatedStorage) List(ctx context.Context, prefix string, recursive bool) ([]string, error) {
	ctx, done, ok := g.enter(ctx)
	if !ok {
		return nil, errStopped
	}
	defer done()
	return g.backend.List(ctx, prefix, recursive)
}

func (g *gatedStorage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	ctx, done, ok := g.enter(ctx)
	if !ok {
		return certmagic.KeyInfo{}, errStopped
	}
	defer done()
	return g.backend.Stat(ctx, key)
}

func (g *gatedStorage) Lock(ctx context.Context, name string) error {
	ctx, done, ok := g.enter(ctx)
	if !ok {
		return errStopped
	}
	defer done()
	return g.backend.Lock(ctx, name)
}

func (g *gatedStorage) TryLock(ctx context.Context, name string) (bool, error) {
	ctx, done, ok := g.enter(ctx)
	if !ok {
		return false, errStopped
	}
	defer done()
	return g.backend.TryLock(ctx, name)
}
