package gantry

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Notification types (SPEC §3). The web app shows an icon per type and a
// bell for any other.
const (
	NotifyDeployment = "deployment"
	NotifyProject    = "project"
	NotifySystem     = "system"
	NotifySuccess    = "success"
	NotifyError      = "error"
	NotifyWarning    = "warning"
	NotifyInfo       = "info"
)

// Limits of notifications. A user keeps at most KeepNotifications (the
// oldest go first); a list answers DefaultNotificationLimit unless asked for
// up to MaxNotificationLimit.
const (
	KeepNotifications        = 200
	DefaultNotificationLimit = 50
	MaxNotificationLimit     = 200

	notificationTitleMax   = 120
	notificationMessageMax = 500
)

// Notification is a message to one user about a platform event.
type Notification struct {
	ID        string    `json:"_id"`
	UserID    string    `json:"-"`
	Type      string    `json:"type"`
	Title     string    `json:"title"`
	Message   string    `json:"message"`
	Read      bool      `json:"read"`
	ActionURL string    `json:"actionUrl"` // a path of the web app ("/deployments/…"), or ""
	CreatedAt time.Time `json:"createdAt"`
}

// NotificationFilter narrows ListNotifications. Limit ≤ 0 means
// DefaultNotificationLimit.
type NotificationFilter struct {
	Limit      int
	UnreadOnly bool
}

// NotificationList is one page of a user's notifications, newest first,
// with the user's counts (which do not depend on the filter).
type NotificationList struct {
	Notifications []*Notification `json:"notifications"`
	UnreadCount   int             `json:"unreadCount"`
	Total         int             `json:"total"`
}

// NotificationStore persists notifications. Every method is scoped to its
// owner: another user's notification is ENOTFOUND. Unread counts are
// counted, never kept as a counter, so they can never go below 0.
type NotificationStore interface {
	// CreateNotification inserts n (unread), filling ID and CreatedAt, and
	// drops the user's oldest beyond KeepNotifications.
	CreateNotification(ctx context.Context, n *Notification) error
	// ListNotifications returns the owner's notifications, newest first.
	ListNotifications(ctx context.Context, userID string, f NotificationFilter) (*NotificationList, error)
	// MarkNotificationRead marks one notification read (again is fine) and
	// returns it and the owner's unread count afterwards.
	MarkNotificationRead(ctx context.Context, userID, id string) (*Notification, int, error)
	// MarkAllNotificationsRead marks every notification of the owner read
	// and returns how many were unread.
	MarkAllNotificationsRead(ctx context.Context, userID string) (int, error)
	// DeleteNotification removes one notification and returns the owner's
	// unread count afterwards.
	DeleteNotification(ctx context.Context, userID, id string) (int, error)
	// ClearNotifications removes every notification of the owner and
	// returns how many there were.
	ClearNotifications(ctx context.Context, userID string) (int, error)
}

// Notifier tells a user about an event of the platform. Notify never fails
// the work that caused the event: an implementation logs its own failures.
// It may be called with a context that is already cancelled (a build that
// was cut short) and must still deliver.
type Notifier interface {
	Notify(ctx context.Context, n *Notification)
}

// The notifications of the platform's events. Each names the web app's
// page of what it is about in ActionURL.

// WelcomeNotification greets a user who just registered.
func WelcomeNotification(u *User) *Notification {
	name := strings.TrimSpace(u.FullName)
	if first, _, ok := strings.Cut(name, " "); ok {
		name = first
	}
	if name == "" {
		name = u.Username
	}
	return newNotification(u.ID, NotifySystem, "Welcome to Gantry",
		fmt.Sprintf("Hi %s! Import a repository and it goes live on its own subdomain: start with a new project.", name),
		"/projects/new")
}

// ProjectCreatedNotification says p was created and is ready to deploy.
func ProjectCreatedNotification(p *Project) *Notification {
	msg := fmt.Sprintf("%s is ready to deploy", p.Name)
	if p.Repository.FullName != "" {
		msg += " from " + p.Repository.FullName
	}
	return newNotification(p.UserID, NotifyProject, "Project created", msg+".", projectPath(p.ID))
}

// ProjectDeletedNotification says p and its deployments (n of them) are
// gone; it points at the projects list.
func ProjectDeletedNotification(p *Project, deployments int) *Notification {
	msg := fmt.Sprintf("%s was deleted.", p.Name)
	if deployments > 0 {
		msg = fmt.Sprintf("%s and its %d deployment%s were deleted; its address no longer serves a site.",
			p.Name, deployments, plural(deployments))
	}
	return newNotification(p.UserID, NotifyProject, "Project deleted", msg, "/projects")
}

// DeploymentLiveNotification says d went live at its URL.
func DeploymentLiveNotification(d *Deployment) *Notification {
	return newNotification(d.UserID, NotifySuccess, "Deployment live",
		fmt.Sprintf("%s is live at %s.", deploymentName(d), d.URL), deploymentPath(d.ID))
}

// DeploymentFailedNotification says d failed and why.
func DeploymentFailedNotification(d *Deployment, reason string) *Notification {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		reason = "Build failed"
	}
	return newNotification(d.UserID, NotifyError, "Deployment failed",
		fmt.Sprintf("%s failed: %s", deploymentName(d), reason), deploymentPath(d.ID))
}

// AppCrashedNotification says the runtime stopped d's app after it crashed
// crashes times in a row, and the last reason.
func AppCrashedNotification(d *Deployment, crashes int, reason string) *Notification {
	msg := fmt.Sprintf("%s crashed %d time%s in a row and was stopped", deploymentName(d), crashes, plural(crashes))
	if reason = strings.TrimSpace(reason); reason != "" {
		msg += ": " + reason
	}
	return newNotification(d.UserID, NotifyError, "App stopped after repeated crashes",
		msg+". Check its runtime logs, then restart or deploy a fix.", deploymentPath(d.ID))
}

// AppWakeFailedNotification says d's sleeping app did not start the last
// failures times it was woken, and the last reason; it stays live and
// asleep, and is tried again by its next visitors.
func AppWakeFailedNotification(d *Deployment, failures int, reason string) *Notification {
	msg := fmt.Sprintf("%s was asleep and did not start the last %d times a visitor woke it", deploymentName(d), failures)
	if reason = strings.TrimSpace(reason); reason != "" {
		msg += ": " + reason
	}
	return newNotification(d.UserID, NotifyError, "App does not wake up",
		msg+". Visitors get a \"try again\" page meanwhile. Check its logs, then restart it or deploy a fix.", deploymentPath(d.ID))
}

// GitHubConnectedNotification says the GitHub account login is connected
// with repos repositories.
func GitHubConnectedNotification(userID, login string, repos int) *Notification {
	return newNotification(userID, NotifySuccess, "GitHub connected",
		fmt.Sprintf("@%s is connected: %d repositor%s ready to deploy.", login, repos, pluralY(repos)),
		"/github-integration")
}

// GitHubDisconnectedNotification says the user disconnected login.
func GitHubDisconnectedNotification(userID, login string) *Notification {
	return newNotification(userID, NotifyInfo, "GitHub disconnected",
		fmt.Sprintf("@%s was disconnected. Your projects stay; private repositories cannot be built until you connect again.", login),
		"/github-integration")
}

// GitHubRevokedNotification says GitHub refused the stored access of login,
// so the account was disconnected.
func GitHubRevokedNotification(userID, login string) *Notification {
	return newNotification(userID, NotifyWarning, "GitHub access revoked",
		fmt.Sprintf("GitHub no longer accepts Gantry's access to @%s, so it was disconnected. Connect again to build private repositories.", login),
		"/github-integration")
}

func newNotification(userID, typ, title, msg, action string) *Notification {
	return &Notification{UserID: userID, Type: typ, Title: clip(title, notificationTitleMax),
		Message: clip(msg, notificationMessageMax), ActionURL: action}
}

func projectPath(id string) string    { return "/projects/" + url.PathEscape(id) }
func deploymentPath(id string) string { return "/deployments/" + url.PathEscape(id) }

// deploymentName is the name of d's project, or "Your deployment".
func deploymentName(d *Deployment) string {
	if d.Project != nil && d.Project.Name != "" {
		return d.Project.Name
	}
	return "Your deployment"
}

// clip shortens s to at most max runes, ending it with "…" when cut.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:max-1])) + "…"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func pluralY(n int) string {
	if n == 1 {
		return "y"
	}
	return "ies"
}
