package deploy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/events"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// TestFollowLogs: a followed log sends the backlog after the resume point,
// then each live entry once and in order — also after the hub dropped the
// subscription for falling behind — heartbeats while the deployment is
// there, and ends when it is deleted.
func TestFollowLogs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := &gantry.User{FullName: "Ada", Username: "ada", Email: "ada@example.com", PasswordHash: "x", IsActive: true}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	p := &gantry.Project{UserID: u.ID, Name: "site", Branch: "main",
		Repository: gantry.Repository{FullName: "ada/site", CloneURL: "http://127.0.0.1/ada/site.git"}}
	if err := db.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	d := &gantry.Deployment{ProjectID: p.ID, UserID: u.ID, Version: "1.0.0", Subdomain: p.Subdomain}
	if err := db.CreateDeployment(ctx, d); err != nil {
		t.Fatal(err)
	}
	svc := deploytest.New(t, deploytest.Options{DB: db}).Deploys
	n := 0
	appendLog := func(publish bool) {
		t.Helper()
		n++
		e := gantry.LogEntry{Level: gantry.LevelInfo, Type: gantry.LogDeployment, Message: fmt.Sprint("line ", n)}
		if err := db.AppendLog(ctx, d.ID, &e); err != nil {
			t.Fatal(err)
		}
		if publish {
			svc.Hub.Publish(deploy.Topic(d.ID), e)
		}
	}
	for range 3 {
		appendLog(false)
	}

	if _, err := svc.FollowLogs(ctx, "someone-else", d.ID, 0, true, 0); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("another user's stream: got %v, want ENOTFOUND", err)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := svc.FollowLogs(sctx, u.ID, d.ID, 1, true, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	want := 2 // entries 2 and 3 from the store, then the live ones
	heartbeats := 0
	read := func(upTo int) {
		t.Helper()
		for want <= upTo {
			select {
			case ev, ok := <-stream:
				if !ok {
					t.Fatalf("the stream ended before line %d", want)
				}
				if ev.Heartbeat {
					heartbeats++
					continue
				}
				if got := ev.Entry.Message; got != fmt.Sprint("line ", want) {
					t.Fatalf("got %q, want line %d", got, want)
				}
				want++
			case <-time.After(5 * time.Second):
				t.Fatalf("no line %d within 5 s", want)
			}
		}
	}
	read(3)
	appendLog(true)
	read(4)
	// More than the hub holds for a reader that does not read: it drops
	// the subscription, and the stream reads the rest from the store.
	for range events.DefaultBuffer + 20 {
		appendLog(true)
	}
	appendLog(false) // a gap in the live numbers, filled from the store
	appendLog(true)
	read(n)
	time.Sleep(120 * time.Millisecond)
	svc.Hub.Publish(deploy.Topic(d.ID), deploy.Deleted{})
	for {
		select {
		case ev, ok := <-stream:
			if !ok {
				if heartbeats == 0 {
					t.Error("got no heartbeat")
				}
				return
			}
			if ev.Heartbeat {
				heartbeats++
				continue
			}
			t.Fatalf("got %q after the last line", ev.Entry.Message)
		case <-time.After(5 * time.Second):
			t.Fatal("the stream did not end when the deployment was deleted")
		}
	}
}
