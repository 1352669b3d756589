package deploy

// Settled waits until the build of deployment id that s runs, if any, has
// ended. The store reports a build's end (live, failed) a moment before
// its worker has pointed the edge at it, notified and pruned: a caller
// that checks what the edge serves once the store says live (tests) waits
// for that too.
func Settled(s *Service, id string) {
	b := s.builds
	b.mu.Lock()
	rb := b.running[id]
	b.mu.Unlock()
	if rb != nil {
		<-rb.done
	}
}
