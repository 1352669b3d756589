package sandbox_test

import (
	"testing"

	"github.com/gantryhq/gantry/internal/sandbox"
)

// TestReownVolume: an app volume built under an account's old sandbox uid
// (a slot since given back to the pool) is given to the account's new uid
// before it runs: the app can write its files again, as that uid only.
func TestReownVolume(t *testing.T) {
	s := mustSandbox(t)
	const oldUID, newUID = 20101, 20102
	v := volume(t, s, sandbox.Disk{Bytes: 16 << 20, Inodes: 200}, oldUID)
	if out, err := runIn(t, s, v, oldUID, `mkdir -p data && echo one > data/f`); err != nil {
		t.Fatalf("build as %d: %v\n%s", oldUID, err, out)
	}
	if out, err := runIn(t, s, v, newUID, `echo two > data/f`); err == nil {
		t.Fatalf("uid %d wrote uid %d's files:\n%s", newUID, oldUID, out)
	}
	if err := s.Reown(v, newUID, newUID); err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(t, s, v, newUID, `echo two > data/f && echo three > /tmp/t`); err != nil {
		t.Fatalf("after Reown, uid %d cannot write its volume: %v\n%s", newUID, err, out)
	}
	if out, err := runIn(t, s, v, oldUID, `ls data`); err == nil {
		t.Fatalf("the old uid %d still reads the volume:\n%s", oldUID, out)
	}
}
