package gantry

// Deployment targets (Deployment.Target): production is what the project's
// subdomain serves; a preview is served on a subdomain of its own
// (PreviewLabel: <subdomain>--<branch>, <subdomain>--<slug>--<hash> or
// <subdomain>--pr-<n>) and never touches production.
const (
	TargetProduction = "production"
	TargetPreview    = "preview"
)

// What started a deployment (DeploymentMetadata.Trigger; SPEC §3 says
// "manual" by default).
const (
	TriggerManual      = "manual"       // the Deploy button, POST /api/deployments
	TriggerPush        = "push"         // a push (GitHub webhook, or the commit watcher)
	TriggerHook        = "hook"         // the project's deploy hook URL
	TriggerPullRequest = "pull_request" // a pull request opened or updated
	TriggerRedeploy    = "redeploy"     // POST /api/deployments/{id}/redeploy
	TriggerRollback    = "rollback"     // an earlier deployment promoted to production
)

// DeployTrigger asks for a deployment that nobody clicked for: a push, a
// pull request, a deploy hook. The deploy service checks the project's
// auto-deploy setting, derives the target (production for the production
// branch without a pull request, a preview otherwise) and cancels the
// queued or running build it supersedes.
type DeployTrigger struct {
	ProjectID string
	Trigger   string // TriggerPush, TriggerHook or TriggerPullRequest
	// Branch to build; "" means the project's production branch.
	Branch string
	// Commit to build; nil means the branch's head, which the server looks
	// up itself.
	Commit *Commit
	// PullRequest > 0 builds a preview of that pull request.
	PullRequest int
	// Fork marks a pull request whose head is in another repository (a
	// stranger's code): its build gets no build cache.
	Fork bool
}
