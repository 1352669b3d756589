// Package events is Gantry's in-process publish/subscribe hub: log lines and
// status changes of deployments fan out from the builder and the runtime to
// every open log stream. Delivery is best effort: a subscriber that falls
// more than its buffer behind is closed rather than allowed to block the
// publisher, and resumes from the store (the SSE stream's Last-Event-ID).
package events

import "sync"

// DefaultBuffer is how many undelivered messages a subscriber may hold.
const DefaultBuffer = 256

// Hub fans messages out to the subscribers of a topic. The zero value is
// not usable; call NewHub.
type Hub struct {
	mu     sync.Mutex
	topics map[string]map[*Subscription]struct{}
}

// NewHub returns an empty hub.
func NewHub() *Hub {
	return &Hub{topics: make(map[string]map[*Subscription]struct{})}
}

// Subscription receives a topic's messages on C until it is closed, either
// by Close or by the hub when the subscriber fell behind (then Dropped
// reports true).
type Subscription struct {
	C       <-chan any
	c       chan any
	hub     *Hub
	topic   string
	once    sync.Once
	dropped bool
}

// Subscribe registers a subscriber to topic with the default buffer.
func (h *Hub) Subscribe(topic string) *Subscription {
	c := make(chan any, DefaultBuffer)
	s := &Subscription{C: c, c: c, hub: h, topic: topic}
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.topics[topic]
	if subs == nil {
		subs = make(map[*Subscription]struct{})
		h.topics[topic] = subs
	}
	subs[s] = struct{}{}
	return s
}

// Publish delivers v to every subscriber of topic without blocking.
func (h *Hub) Publish(topic string, v any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.topics[topic] {
		select {
		case s.c <- v:
		default:
			s.dropped = true
			h.removeLocked(s)
		}
	}
}

// Close unsubscribes s and closes its channel. It is safe to call twice.
func (s *Subscription) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.removeLocked(s)
}

// Dropped reports whether the hub closed s because it fell behind.
func (s *Subscription) Dropped() bool {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.dropped
}

func (h *Hub) removeLocked(s *Subscription) {
	s.once.Do(func() {
		if subs := h.topics[s.topic]; subs != nil {
			delete(subs, s)
			if len(subs) == 0 {
				delete(h.topics, s.topic)
			}
		}
		close(s.c)
	})
}

// Subscribers returns how many subscribers topic has (for tests and metrics).
func (h *Hub) Subscribers(topic string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.topics[topic])
}
