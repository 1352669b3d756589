package tlsedge_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/gantryhq/gantry/internal/store/storetest"
	"github.com/gantryhq/gantry/internal/tlsedge"
)

// Two replicas' certificate storages on one database (SQLite here,
// PostgreSQL in make test-pg) see each other's files as certmagic expects
// of a storage (Load, Exists, Stat, List, Delete of a folder) and hold
// each other off with its locks; a lock whose holder died lets go after
// its lease; a single server's certificate folder is imported once.
func TestSharedStorage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	a, b := tlsedge.NewSharedStorage(db.TLSObjects()), tlsedge.NewSharedStorage(db.TLSObjects())

	crt := "certificates/acme/example.com/example.com.crt"
	if err := a.Store(ctx, crt, []byte("CERT")); err != nil {
		t.Fatal(err)
	}
	a.Store(ctx, "certificates/acme/example.com/example.com.key", []byte("KEY"))
	a.Store(ctx, "certificatesX/other", []byte("x"))
	if v, err := b.Load(ctx, crt); err != nil || string(v) != "CERT" {
		t.Fatalf("replica B loads %q, %v", v, err)
	}
	if _, err := b.Load(ctx, "certificates/acme/nope.crt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing key: %v, want fs.ErrNotExist", err)
	}
	if !b.Exists(ctx, "certificates/acme") || b.Exists(ctx, "certificates/ac") {
		t.Fatal("Exists of a folder, or of a part of a name, is wrong")
	}
	if info, err := b.Stat(ctx, crt); err != nil || !info.IsTerminal || info.Size != 4 || info.Modified.IsZero() {
		t.Fatalf("Stat of a file: %+v, %v", info, err)
	}
	if info, err := b.Stat(ctx, "certificates"); err != nil || info.IsTerminal {
		t.Fatalf("Stat of a folder: %+v, %v", info, err)
	}
	if got, err := b.List(ctx, "certificates", false); err != nil || !slices.Equal(got, []string{"certificates/acme"}) {
		t.Fatalf("List: %q, %v", got, err)
	}
	want := []string{"certificates/acme", "certificates/acme/example.com", crt, "certificates/acme/example.com/example.com.key"}
	if got, _ := b.List(ctx, "certificates", true); !slices.Equal(got, want) {
		t.Fatalf("List recursive: %q, want %q", got, want)
	}
	if err := b.Delete(ctx, "certificates/acme"); err != nil {
		t.Fatal(err)
	}
	if a.Exists(ctx, crt) || !a.Exists(ctx, "certificatesX/other") {
		t.Fatal("Delete of a folder left a file in it, or took its neighbour")
	}
	if err := a.Delete(ctx, "certificates/acme"); err != nil {
		t.Fatalf("Delete of what is gone: %v", err)
	}

	// Locks: one holder across replicas.
	if ok, err := a.TryLock(ctx, "issue_cert_example.com"); !ok || err != nil {
		t.Fatalf("A's TryLock: %v %v", ok, err)
	}
	if ok, _ := b.TryLock(ctx, "issue_cert_example.com"); ok {
		t.Fatal("B took a lock A holds")
	}
	wctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	if err := b.Lock(wctx, "issue_cert_example.com"); err == nil {
		t.Fatal("B's Lock returned while A held the lock")
	}
	cancel()
	locked := make(chan error, 1)
	go func() { locked <- b.Lock(ctx, "issue_cert_example.com") }()
	time.Sleep(200 * time.Millisecond)
	if err := a.Unlock(ctx, "issue_cert_example.com"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-locked:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("B's Lock did not return after A's Unlock")
	}
	b.Unlock(ctx, "issue_cert_example.com")

	// A holder that died (no renewal) lets go once its lease is over.
	now := time.Now()
	if ok, err := db.TLSObjects().TryLockName(ctx, "issue_cert_dead.example", "dead-replica", now, now.Add(time.Minute)); !ok || err != nil {
		t.Fatalf("dead replica's lock: %v %v", ok, err)
	}
	if ok, _ := b.TryLock(ctx, "issue_cert_dead.example"); ok {
		t.Fatal("B took a lock still within its holder's lease")
	}
	b.Now = func() time.Time { return time.Now().Add(61 * time.Second) }
	if ok, err := b.TryLock(ctx, "issue_cert_dead.example"); !ok || err != nil {
		t.Fatalf("B could not take a lock whose holder died a lease ago: %v %v", ok, err)
	}
	b.Unlock(ctx, "issue_cert_dead.example")

	// A single server's folder, imported once.
	dir := t.TempDir()
	files := &certmagic.FileStorage{Path: dir}
	files.Store(ctx, "certificates/acme/site.example/site.example.crt", []byte("OLD CERT"))
	files.Store(ctx, "acme/ca/users/ops@example.com/ops.json", []byte("{}"))
	if n, err := tlsedge.ImportFolder(ctx, dir, a); err != nil || n != 2 {
		t.Fatalf("import: %d, %v; want 2", n, err)
	}
	if v, _ := b.Load(ctx, "certificates/acme/site.example/site.example.crt"); string(v) != "OLD CERT" {
		t.Fatalf("imported certificate reads %q", v)
	}
	if n, _ := tlsedge.ImportFolder(ctx, dir, a); n != 0 {
		t.Fatalf("a second import copied %d", n)
	}
	if n, err := tlsedge.ImportFolder(ctx, t.TempDir()+"/none", a); n != 0 || err != nil {
		t.Fatalf("import of no folder: %d, %v", n, err)
	}
}
