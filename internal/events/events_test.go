package events_test

import (
	"testing"

	"github.com/gantryhq/gantry/internal/events"
)

func TestPublishFanOut(t *testing.T) {
	h := events.NewHub()
	a, b := h.Subscribe("d1"), h.Subscribe("d1")
	other := h.Subscribe("d2")
	h.Publish("d1", 1)
	h.Publish("d1", 2)
	for _, s := range []*events.Subscription{a, b} {
		for want := 1; want <= 2; want++ {
			if got := <-s.C; got != want {
				t.Fatalf("got %v, want %d", got, want)
			}
		}
	}
	select {
	case v := <-other.C:
		t.Fatalf("other topic got %v, want nothing", v)
	default:
	}
	a.Close()
	a.Close() // twice is safe
	if got := h.Subscribers("d1"); got != 1 {
		t.Fatalf("got %d subscribers, want 1", got)
	}
}

func TestSlowSubscriberDropped(t *testing.T) {
	h := events.NewHub()
	s := h.Subscribe("d")
	for i := 0; i < events.DefaultBuffer+1; i++ {
		h.Publish("d", i)
	}
	n := 0
	for range s.C {
		n++
	}
	if n != events.DefaultBuffer || !s.Dropped() {
		t.Fatalf("got %d messages, dropped=%v; want %d and dropped", n, s.Dropped(), events.DefaultBuffer)
	}
	if got := h.Subscribers("d"); got != 0 {
		t.Fatalf("got %d subscribers, want 0", got)
	}
}
