// Package ghhook is push to deploy from GitHub (issue 14): it registers a
// repository webhook for each project made from a connected GitHub
// repository (and removes it with the project), receives GitHub's signed
// push and pull_request deliveries, queues deployments through the deploy
// service (Deployer), keeps pull requests (fork pull requests wait for the
// owner's approval), and reports back to GitHub: a commit status on each
// pull request's head commit and one comment per pull request, edited in
// place after every build.
//
// Every GitHub call uses the project owner's GitHub token (sealed at rest,
// opened with Decrypt) and is best effort: a failure is logged (and, for
// the webhook, recorded for the Git card), never a failed deployment or a
// lost project.
package ghhook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/ghlink"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/secret"
	"golang.org/x/time/rate"
)

// Deployer queues and removes deployments; the deploy service is the real
// one.
type Deployer interface {
	// Trigger queues a deployment nobody clicked for (target production
	// for the production branch without a pull request, a preview
	// otherwise). It refuses when the project's auto-deploy is off and
	// cancels the build it supersedes.
	Trigger(ctx context.Context, t gantry.DeployTrigger) (*gantry.Deployment, error)
	// RemovePreviews stops and removes the previews of a pull request (>0)
	// or of a branch.
	RemovePreviews(ctx context.Context, projectID string, pullRequest int, branch string) error
}

// GitHub is the part of GitHub's REST API the service calls
// (*githost.GitHub).
type GitHub interface {
	CreateHook(ctx context.Context, token, fullName, url, secret string) (int64, error)
	DeleteHook(ctx context.Context, token, fullName string, id int64) error
	SetStatus(ctx context.Context, token, fullName, sha string, st githost.Status) error
	CreateComment(ctx context.Context, token, fullName string, number int, body string) (int64, error)
	EditComment(ctx context.Context, token, fullName string, id int64, body string) error
}

var _ GitHub = (*githost.GitHub)(nil)

// Store is what the service needs of the database (internal/store).
type Store interface {
	FindUserByID(ctx context.Context, id string) (*gantry.User, error)
	FindProject(ctx context.Context, userID, id string) (*gantry.Project, error)
	SaveGitHubHook(ctx context.Context, h *gantry.GitHubHook) error
	FindGitHubHook(ctx context.Context, projectID string) (*gantry.GitHubHook, error)
	GitHubHookByHookID(ctx context.Context, hookID int64) (*gantry.GitHubHook, error)
	GitHubHooksByRepo(ctx context.Context, repoID int64) ([]*gantry.GitHubHook, error)
	RecordGitHubDelivery(ctx context.Context, projectID string, d gantry.GitHubDelivery) error
	ClaimGitHubDelivery(ctx context.Context, id string) (bool, error)
	SaveGitHubPullRequest(ctx context.Context, pr *gantry.GitHubPullRequest) error
	FindGitHubPullRequest(ctx context.Context, projectID string, number int) (*gantry.GitHubPullRequest, error)
	FindGitHubPullRequestByDeployment(ctx context.Context, projectID, deploymentID string) (*gantry.GitHubPullRequest, error)
	ListGitHubPullRequests(ctx context.Context, projectID string) ([]*gantry.GitHubPullRequest, error)
	ProjectEnv(ctx context.Context, projectID string) ([]gantry.EnvVar, error)
	// WebhookJobs keeps verified deliveries until a worker (on any
	// replica) has handled them.
	WebhookJobs() gantry.WebhookJobStore
}

// Defaults of Service.
const (
	// DefaultQueueSize is how many deliveries may wait to be handled (or
	// be handled) in all; more are answered 503 (GitHub shows them as
	// failed, to be redelivered).
	DefaultQueueSize = 1024
	// DefaultProjectQueue is how many of one project's deliveries may
	// wait; more of that project's are answered 503, others' are not.
	DefaultProjectQueue = 32
	// DefaultHookBurst and DefaultHookEvery are each webhook's delivery
	// rate: a bucket of DefaultHookBurst signed deliveries, one more every
	// DefaultHookEvery; beyond it 429, before the delivery is claimed.
	DefaultHookBurst = 60
	DefaultHookEvery = time.Second
	// recentDeliveries is how many delivery keys are remembered in memory
	// (replays answered without the database).
	recentDeliveries = 4096
	// DefaultWorkers handle queued deliveries at once.
	DefaultWorkers = 2
	// DefaultJobPoll is how often an idle worker looks for deliveries
	// nobody woke it for: taken by other replicas, or left by a worker
	// that died (once its lease, JobLease, has passed).
	DefaultJobPoll = time.Second
	// DefaultJobLease is how long a worker holds a delivery: longer than
	// handling one may take (2 CallTimeout).
	DefaultJobLease = 2*CallTimeout + 30*time.Second
	// MaxJobAttempts is how many times a delivery is taken: one whose
	// workers died that often is dropped, recorded as failed.
	MaxJobAttempts = 3
	// CallTimeout bounds each GitHub call and each delivery's work.
	CallTimeout = 30 * time.Second
	// WebhookPath is where GitHub delivers, under the public URL.
	WebhookPath = "/api/webhooks/github"
	// StatusContext names Gantry's commit statuses.
	StatusContext = "gantry/preview"
)

// Service is push to deploy from GitHub. Set the fields, then use it; Close
// stops its workers.
type Service struct {
	Store    Store
	GitHub   GitHub
	Deployer Deployer
	// Secrets seals the webhooks' secrets (secret.GitHubHooks).
	Secrets *secret.Box
	// Decrypt opens owners' sealed GitHub access tokens (secret.GitHubTokens).
	Decrypt func(sealed string) (string, error)
	// PublicURL is where GitHub reaches Gantry and where links in statuses
	// and comments point (no trailing slash), e.g. https://gantry.example.com.
	PublicURL string
	// QueueSize, ProjectQueue, Workers, HookBurst, HookEvery, JobPoll and
	// JobLease: DefaultQueueSize, DefaultProjectQueue, DefaultWorkers,
	// DefaultHookBurst, DefaultHookEvery, DefaultJobPoll and
	// DefaultJobLease when 0.
	QueueSize, ProjectQueue, Workers, HookBurst int
	HookEvery, JobPoll, JobLease                time.Duration
	Logger                                      *slog.Logger
	// Now returns the current time; tests replace it.
	Now func() time.Time

	startOnce sync.Once
	owner     string        // this process's name on the jobs it holds
	nudge     chan struct{} // wakes an idle worker: a delivery was queued
	stop      chan struct{} // closed by Close
	active    atomic.Int32  // deliveries this process's workers are handling
	recent    *recent
	limits    *limiters
	reports   sync.WaitGroup // running DeploymentFinished reports
	workers   sync.WaitGroup
	closeOnce sync.Once
	mu        sync.Mutex
	closed    bool
	locks     sync.Map // project id → *sync.Mutex: one delivery or build report of a project at a time
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// lock serializes the work on one project (two deliveries of one pull
// request must not both create its comment).
func (s *Service) lock(projectID string) func() {
	m, _ := s.locks.LoadOrStore(projectID, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// start starts the workers once.
func (s *Service) start() {
	s.startOnce.Do(func() {
		var b [8]byte
		_, _ = rand.Read(b[:])
		s.owner = hex.EncodeToString(b[:])
		s.nudge, s.stop = make(chan struct{}, 1), make(chan struct{})
		s.recent = newRecent(recentDeliveries)
		every := s.HookEvery
		if every <= 0 {
			every = DefaultHookEvery
		}
		s.limits = &limiters{every: every, burst: orInt(s.HookBurst, DefaultHookBurst), by: map[int64]*rate.Limiter{}}
		for range orInt(s.Workers, DefaultWorkers) {
			s.workers.Add(1)
			go deliveryWorker{s}.work()
		}
	})
}

func orInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// Wait blocks until no delivery is waiting or being handled (by any
// process on the database) and every finished build is reported (for
// tests).
func (s *Service) Wait() {
	s.start()
	for {
		n, err := s.Store.WebhookJobs().Count(context.Background())
		if err == nil && n == 0 && s.active.Load() == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.reports.Wait()
}

// Close stops taking deliveries, lets the workers finish the ones they
// are handling and stops them. Deliveries still waiting stay in the
// database for the next start (or another replica). It is safe to call
// more than once.
func (s *Service) Close() {
	s.closeOnce.Do(func() {
		s.start()
		s.mu.Lock()
		s.closed = true
		close(s.stop)
		s.mu.Unlock()
		s.workers.Wait()
		s.reports.Wait()
	})
}

// userToken returns the GitHub token of userID: "" (and the reason, for the
// log) when the account is gone, not connected or its token does not open.
func (s *Service) userToken(ctx context.Context, userID string) (string, error) {
	u, err := s.Store.FindUserByID(ctx, userID)
	if err != nil {
		return "", err
	}
	token, err := ghlink.OpenToken(u, s.Decrypt)
	if err != nil {
		return "", err
	}
	if token == "" {
		return "", gantry.Errorf(gantry.EINVALID, gantry.MsgConnectGitHub)
	}
	return token, nil
}

// repoID returns the GitHub id of p's repository, 0 when it has none.
func repoID(p *gantry.Project) int64 {
	id, err := strconv.ParseInt(p.Repository.ID, 10, 64)
	if err != nil || id <= 0 {
		return 0
	}
	return id
}

// newSecret returns a fresh webhook secret: 32 random bytes, hex.
func newSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// publicMessage is err as the Git card may show it: a gantry.Error's
// message, else a generic sentence (internal errors stay in the log).
func publicMessage(err error, fallback string) string {
	if code := gantry.ErrorCode(err); code != "" && code != gantry.EINTERNAL {
		return gantry.ErrorMessage(err)
	}
	return fallback
}

// Register adds the repository webhook of p, a project u just made from
// one of their GitHub repositories, with a fresh secret of its own. It
// never fails the caller: when GitHub refuses or cannot be reached, the
// webhook is recorded as missing with the reason (the Git card shows it;
// POST /api/projects/{id}/webhook retries) and the failure is logged.
func (s *Service) Register(ctx context.Context, u *gantry.User, p *gantry.Project) {
	if _, err := s.register(ctx, u.ID, p); err != nil {
		s.logger().WarnContext(ctx, "github webhook: not registered", "project", p.ID, "err", err)
	}
}

// register adds p's webhook (replacing the one it had) and stores it,
// with the error when GitHub refused.
func (s *Service) register(ctx context.Context, userID string, p *gantry.Project) (*gantry.GitHubHook, error) {
	id := repoID(p)
	if id == 0 || p.Repository.FullName == "" {
		return nil, gantry.Errorf(gantry.EINVALID, "This project's repository is not on GitHub: use its deploy hook instead")
	}
	plain, err := newSecret()
	if err != nil {
		return nil, err
	}
	sealed, err := s.Secrets.Seal(plain)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CallTimeout)
	defer cancel()
	h := &gantry.GitHubHook{ProjectID: p.ID, RepoID: id, RepoName: p.Repository.FullName, Secret: sealed,
		Error: "The GitHub webhook is being added"}
	// Stored first: GitHub pings the new hook at once, signed with this
	// secret.
	if err := s.Store.SaveGitHubHook(ctx, h); err != nil {
		return nil, err
	}
	h.Error = ""
	token, err := s.userToken(ctx, userID)
	if err == nil {
		h.HookID, err = s.GitHub.CreateHook(ctx, token, p.Repository.FullName, s.PublicURL+WebhookPath, plain)
	}
	if err != nil {
		h.Error = "The GitHub webhook could not be added: " +
			publicMessage(err, "GitHub could not be reached") + ". Pushes are not deployed until it is."
	}
	if serr := s.Store.SaveGitHubHook(ctx, h); serr != nil {
		return nil, serr
	}
	if err != nil {
		code := gantry.ErrorCode(err)
		if code == gantry.EINTERNAL {
			code = gantry.EUNAVAILABLE
		}
		return h, gantry.Errorf(code, "%s", h.Error)
	}
	return h, nil
}

// Unregister removes p's webhook at GitHub before p is deleted. It is best
// effort: a failure is logged and the deletion goes on (the store drops
// the webhook's row with the project).
func (s *Service) Unregister(ctx context.Context, p *gantry.Project) {
	h, err := s.Store.FindGitHubHook(ctx, p.ID)
	if err != nil || h.HookID == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CallTimeout)
	defer cancel()
	log := s.logger().With("project", p.ID, "repository", h.RepoName, "hook", h.HookID)
	token, err := s.userToken(ctx, p.UserID)
	if err == nil {
		err = s.GitHub.DeleteHook(ctx, token, repoName(p, h), h.HookID)
	}
	if err != nil {
		log.WarnContext(ctx, "github webhook: could not remove it at GitHub; the project is deleted anyway", "err", err)
	}
}

// repoName is the repository's current full name (a renamed repository is
// synced into the project), else the one the hook was made for.
func repoName(p *gantry.Project, h *gantry.GitHubHook) string {
	return gantry.FirstNonBlank(p.Repository.FullName, h.RepoName)
}

// Reregister replaces the webhook of the owner's project userID/projectID
// with a fresh one (POST /api/projects/{id}/webhook): the old hook is
// removed at GitHub (best effort), a new one with a new secret is added.
// Another user's project is ENOTFOUND; GitHub's refusal is returned (and
// recorded).
func (s *Service) Reregister(ctx context.Context, userID, projectID string) (*View, error) {
	p, err := s.Store.FindProject(ctx, userID, projectID)
	if err != nil {
		return nil, err
	}
	unlock := s.lock(p.ID)
	defer unlock()
	s.Unregister(ctx, p)
	if _, err := s.register(ctx, userID, p); err != nil {
		return nil, err
	}
	return s.view(ctx, p)
}
