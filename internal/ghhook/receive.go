package ghhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/gantryhq/gantry"
)

// MaxBody is the largest delivery accepted, in bytes. GitHub caps payloads
// at 25 MB, but pushes and pull requests are a few kilobytes (a push lists
// at most 20 commits); 5 MiB leaves room and bounds what an unauthenticated
// caller can make Gantry read and hash.
const MaxBody = 5 << 20

// Messages of deliveries.
const (
	MsgBadSignature    = "The signature (X-Hub-Signature-256) does not match this repository's webhook"
	MsgAlreadyHandled  = "Already handled"
	MsgQueued          = "Queued"
	MsgBusy            = "Too many deliveries are waiting; redeliver this one from GitHub in a minute"
	MsgPong            = "Pong"
	msgPayloadNotJSON  = "The payload must be JSON (set the webhook's content type to application/json)"
	msgPayloadNoRepoID = "The payload names no repository"
)

// Delivery is one webhook request as GitHub sends it.
type Delivery struct {
	Event     string // X-GitHub-Event
	ID        string // X-GitHub-Delivery
	Signature string // X-Hub-Signature-256
	Body      []byte // at most MaxBody
}

// job is a verified delivery for one project's webhook.
type job struct {
	hook  *gantry.GitHubHook
	event string
	body  []byte
}

// Receive checks a delivery and queues its work; it answers at once, never
// waiting for a clone or a build. It returns the message for a 2xx answer
// (MsgQueued, MsgPong, MsgAlreadyHandled) or an error: EINVALID for bad
// headers or a payload that is not JSON naming a repository; EUNAUTHORIZED
// MsgBadSignature when the signature is missing or matches no webhook of
// the payload's repository (nothing is done then, and nothing is said
// about which repositories Gantry knows); EUNAVAILABLE MsgBusy when the
// queue is full. A delivery id handled before does nothing again.
func (s *Service) Receive(ctx context.Context, d Delivery) (string, error) {
	if err := gantry.ValidateGitHubEvent(d.Event); err != nil {
		return "", err
	}
	if err := gantry.ValidateDeliveryID(d.ID); err != nil {
		return "", err
	}
	var head struct {
		Repository *struct {
			ID int64 `json:"id"`
		} `json:"repository"`
	}
	if err := json.Unmarshal(d.Body, &head); err != nil {
		return "", gantry.Errorf(gantry.EINVALID, msgPayloadNotJSON)
	}
	if head.Repository == nil || head.Repository.ID <= 0 {
		return "", gantry.Errorf(gantry.EINVALID, msgPayloadNoRepoID)
	}
	sig, ok := parseSignature(d.Signature)
	if !ok {
		return "", gantry.Errorf(gantry.EUNAUTHORIZED, MsgBadSignature)
	}
	hooks, err := s.Store.GitHubHooksByRepo(ctx, head.Repository.ID)
	if err != nil {
		return "", err
	}
	var matched []*gantry.GitHubHook
	for _, h := range hooks {
		secret, err := s.Secrets.Open(h.Secret)
		if err != nil {
			continue // sealed under another key: it can match nothing
		}
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(d.Body)
		if hmac.Equal(m.Sum(nil), sig) {
			matched = append(matched, h)
		}
	}
	if len(matched) == 0 {
		return "", gantry.Errorf(gantry.EUNAUTHORIZED, MsgBadSignature)
	}
	s.start()
	if d.Event != "ping" {
		// Reserve room in the queue before claiming the id, so a delivery
		// refused for want of room can be redelivered.
		for i := range matched {
			select {
			case s.slots <- struct{}{}:
			default:
				for range i {
					<-s.slots
				}
				return "", gantry.Errorf(gantry.EUNAVAILABLE, MsgBusy)
			}
		}
	}
	release := func() {
		if d.Event != "ping" {
			for range matched {
				<-s.slots
			}
		}
	}
	fresh, err := s.Store.ClaimGitHubDelivery(ctx, d.ID)
	if err != nil || !fresh {
		release()
		if err != nil {
			return "", err
		}
		return MsgAlreadyHandled, nil
	}
	if d.Event == "ping" {
		for _, h := range matched {
			s.record(ctx, h.ProjectID, "ping", "", gantry.DeliveryOK, "GitHub reached Gantry")
		}
		return MsgPong, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		release()
		return "", gantry.Errorf(gantry.EUNAVAILABLE, "Gantry is shutting down; redeliver this one from GitHub in a minute")
	}
	for _, h := range matched {
		s.pending.Add(1)
		s.jobs <- job{hook: h, event: d.Event, body: d.Body} // room was reserved
	}
	return MsgQueued, nil
}

// parseSignature decodes "sha256=<64 hex digits>".
func parseSignature(h string) ([]byte, bool) {
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(h), "sha256=")
	if !ok || len(hexSig) != 2*sha256.Size {
		return nil, false
	}
	b, err := hex.DecodeString(hexSig)
	return b, err == nil
}

// work handles queued deliveries until Close.
func (s *Service) work() {
	defer s.workers.Done()
	for j := range s.jobs {
		<-s.slots
		s.handle(j)
		s.pending.Done()
	}
}

// handle does what one delivery asks and records the result on the
// project's webhook. A panic is logged, not fatal.
func (s *Service) handle(j job) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*CallTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			s.logger().ErrorContext(ctx, "github webhook: panic while handling a delivery", "project", j.hook.ProjectID, "panic", r)
		}
	}()
	unlock := s.lock(j.hook.ProjectID)
	defer unlock()
	p, err := s.Store.FindProject(ctx, j.hook.UserID, j.hook.ProjectID)
	if err != nil {
		return // deleted meanwhile
	}
	var r result
	switch j.event {
	case "push":
		r = s.push(ctx, p, j.hook, j.body)
	case "pull_request":
		r = s.pullRequest(ctx, p, j.hook, j.body)
	default:
		r = result{event: j.event, status: gantry.DeliveryIgnored, message: "Gantry does not act on " + j.event + " events"}
	}
	s.record(ctx, p.ID, r.event, r.action, r.status, r.message)
}

// result is what a delivery did, for the Git card.
type result struct {
	event, action, status, message string
}

// record stores the last delivery of projectID's webhook.
func (s *Service) record(ctx context.Context, projectID, event, action, status, message string) {
	d := gantry.GitHubDelivery{At: s.now(), Event: event, Action: action, Result: status,
		Message: gantry.CleanText(message, 500, false)}
	if err := s.Store.RecordGitHubDelivery(ctx, projectID, d); err != nil && gantry.ErrorCode(err) != gantry.ENOTFOUND {
		s.logger().ErrorContext(ctx, "github webhook: could not record a delivery", "project", projectID, "err", err)
	}
}

// triggerResult is the result of asking the Deployer for a deployment:
// ok, or ignored (the deploy service refused, e.g. auto-deploy is off),
// or failed (an internal error, logged).
func (s *Service) triggerResult(ctx context.Context, r *result, projectID string, err error, ok string) {
	switch code := gantry.ErrorCode(err); code {
	case "":
		r.status, r.message = gantry.DeliveryOK, ok
	case gantry.EINTERNAL:
		s.logger().ErrorContext(ctx, "github webhook: deployment not queued", "project", projectID, "err", err)
		r.status, r.message = gantry.DeliveryFailed, "The deployment could not be queued (internal error)"
	default:
		r.status, r.message = gantry.DeliveryIgnored, gantry.ErrorMessage(err)
	}
}
