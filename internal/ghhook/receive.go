package ghhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

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
	MsgRateLimited     = "Too many deliveries for this webhook; redeliver this one from GitHub in a minute"
	MsgPong            = "Pong"
	msgPayloadNotJSON  = "The payload must be JSON (set the webhook's content type to application/json)"
	msgPayloadNoRepoID = "The payload names no repository"
	msgPayloadNotHook  = "The payload names another repository than this webhook's"
	msgBadHookID       = "X-GitHub-Hook-ID must be the webhook's id (a whole number)"
)

// Delivery is one webhook request as GitHub sends it.
type Delivery struct {
	Event     string // X-GitHub-Event
	ID        string // X-GitHub-Delivery
	HookID    string // X-GitHub-Hook-ID
	RepoID    string // X-GitHub-Hook-Installation-Target-ID (the repository's id)
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
// headers or a signed payload that is not JSON naming the webhook's
// repository; EUNAUTHORIZED MsgBadSignature when the signature is missing
// or does not match the webhook X-GitHub-Hook-ID names (nothing is done
// then, nothing is read of the body, and nothing is said about which
// webhooks Gantry knows); ETOOMANY MsgRateLimited past the webhook's rate;
// EUNAVAILABLE MsgBusy when the project's share of the queue (or the whole
// queue) is full.
//
// A delivery is known by its webhook and the SHA-256 of its body, not by
// X-GitHub-Delivery (which nobody signs): the same signed body again, under
// any delivery id, does nothing again. Replays seen lately are answered
// from memory before the rate is counted; the rate is counted before the
// delivery is claimed in the database. A delivery is stored in the
// database (gantry.WebhookJobStore) until a worker of any replica has
// handled it: one project's at a time, projects in turn.
func (s *Service) Receive(ctx context.Context, d Delivery) (string, error) {
	if err := gantry.ValidateGitHubEvent(d.Event); err != nil {
		return "", err
	}
	if err := gantry.ValidateDeliveryID(d.ID); err != nil {
		return "", err
	}
	sig, ok := parseSignature(d.Signature)
	if !ok {
		return "", gantry.Errorf(gantry.EUNAUTHORIZED, MsgBadSignature)
	}
	hookID, err := strconv.ParseInt(strings.TrimSpace(d.HookID), 10, 64)
	if err != nil || hookID <= 0 {
		return "", gantry.Errorf(gantry.EINVALID, msgBadHookID)
	}
	h, err := s.signedBy(ctx, hookID, d, sig)
	if err != nil {
		return "", err
	}
	// Signed by the webhook's secret: now the body may be read.
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
	if head.Repository.ID != h.RepoID {
		return "", gantry.Errorf(gantry.EINVALID, msgPayloadNotHook)
	}
	s.start()
	sum := sha256.Sum256(d.Body)
	key := "hook-" + strconv.FormatInt(hookID, 10) + "-" + d.Event + "-" + hex.EncodeToString(sum[:])
	if s.recent.has(key) {
		return MsgAlreadyHandled, nil
	}
	if !s.limits.allow(hookID, time.Now()) {
		return "", gantry.Errorf(gantry.ETOOMANY, MsgRateLimited)
	}
	if d.Event == "ping" {
		if fresh, err := s.claim(ctx, key); err != nil || !fresh {
			return MsgAlreadyHandled, err
		}
		s.record(ctx, h.ProjectID, "ping", "", gantry.DeliveryOK, "GitHub reached Gantry")
		return MsgPong, nil
	}
	// The delivery is stored with its claim, in one transaction, only
	// when its project's share of the queue has room: one refused for
	// want of room is not used up and may be redelivered.
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return "", gantry.Errorf(gantry.EUNAVAILABLE, "Gantry is shutting down; redeliver this one from GitHub in a minute")
	}
	status, err := s.Store.WebhookJobs().Enqueue(ctx, &gantry.WebhookJob{ID: key, ProjectID: h.ProjectID, Event: d.Event, Payload: d.Body},
		orInt(s.ProjectQueue, DefaultProjectQueue), orInt(s.QueueSize, DefaultQueueSize))
	if err != nil {
		return "", err
	}
	switch status {
	case gantry.JobBusy:
		return "", gantry.Errorf(gantry.EUNAVAILABLE, MsgBusy)
	case gantry.JobDuplicate:
		s.recent.add(key)
		return MsgAlreadyHandled, nil
	}
	s.recent.add(key)
	deliveryWorker{s}.wake()
	return MsgQueued, nil
}

// claim claims delivery key in the store (false: handled before) and
// remembers it.
func (s *Service) claim(ctx context.Context, key string) (bool, error) {
	fresh, err := s.Store.ClaimGitHubDelivery(ctx, key)
	if err != nil {
		return false, err
	}
	s.recent.add(key)
	return fresh, nil
}

// signedBy returns the webhook whose secret signed d: the one GitHub's id
// hookID names, or — GitHub pings a hook as it creates it, before its id
// is stored — one of the repository's (d.RepoID) whose id is not stored
// yet (or was stored in between the two look-ups). EUNAUTHORIZED
// MsgBadSignature when none did.
func (s *Service) signedBy(ctx context.Context, hookID int64, d Delivery, sig []byte) (*gantry.GitHubHook, error) {
	var candidates []*gantry.GitHubHook
	h, err := s.Store.GitHubHookByHookID(ctx, hookID)
	switch {
	case err == nil:
		candidates = append(candidates, h)
	case gantry.ErrorCode(err) != gantry.ENOTFOUND:
		return nil, err
	default:
		repoID, err := strconv.ParseInt(strings.TrimSpace(d.RepoID), 10, 64)
		if err != nil || repoID <= 0 {
			break
		}
		hooks, err := s.Store.GitHubHooksByRepo(ctx, repoID)
		if err != nil {
			return nil, err
		}
		for _, h := range hooks {
			// 0: not stored yet; hookID: stored since the first look-up.
			if h.HookID == 0 || h.HookID == hookID {
				candidates = append(candidates, h)
			}
		}
	}
	for _, h := range candidates {
		secret, err := s.Secrets.Open(h.Secret)
		if err != nil {
			continue // sealed under another key: it can match nothing
		}
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(d.Body)
		if hmac.Equal(m.Sum(nil), sig) {
			return h, nil
		}
	}
	return nil, gantry.Errorf(gantry.EUNAUTHORIZED, MsgBadSignature)
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
