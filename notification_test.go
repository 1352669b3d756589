package gantry_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/gantryhq/gantry"
)

func TestEventNotifications(t *testing.T) {
	t.Parallel()
	user := &gantry.User{ID: "u1", FullName: "Maya Chen", Username: "maya"}
	project := &gantry.Project{ID: "p1", UserID: "u1", Name: "Portfolio", Repository: gantry.Repository{FullName: "maya/portfolio"}}
	dep := &gantry.Deployment{ID: "d1", UserID: "u1", URL: "http://portfolio.localhost:8080",
		Project: &gantry.DeploymentProject{Name: "Portfolio"}}
	for _, tc := range []struct {
		name string
		got  *gantry.Notification
		want gantry.Notification
	}{
		{"welcome", gantry.WelcomeNotification(user), gantry.Notification{Type: "system", Title: "Welcome to Gantry",
			Message: "Hi Maya! Import a repository and it goes live on its own subdomain: start with a new project.", ActionURL: "/projects/new"}},
		{"welcome without a full name", gantry.WelcomeNotification(&gantry.User{ID: "u1", Username: "maya"}), gantry.Notification{
			Type: "system", Title: "Welcome to Gantry",
			Message: "Hi maya! Import a repository and it goes live on its own subdomain: start with a new project.", ActionURL: "/projects/new"}},
		{"project created", gantry.ProjectCreatedNotification(project), gantry.Notification{Type: "project", Title: "Project created",
			Message: "Portfolio is ready to deploy from maya/portfolio.", ActionURL: "/projects/p1"}},
		{"project deleted", gantry.ProjectDeletedNotification(project, 0), gantry.Notification{Type: "project", Title: "Project deleted",
			Message: "Portfolio was deleted.", ActionURL: "/projects"}},
		{"project and deployments deleted", gantry.ProjectDeletedNotification(project, 3), gantry.Notification{Type: "project",
			Title: "Project deleted", Message: "Portfolio and its 3 deployments were deleted; its address no longer serves a site.", ActionURL: "/projects"}},
		{"live", gantry.DeploymentLiveNotification(dep), gantry.Notification{Type: "success", Title: "Deployment live",
			Message: "Portfolio is live at http://portfolio.localhost:8080.", ActionURL: "/deployments/d1"}},
		{"failed", gantry.DeploymentFailedNotification(dep, "  Build command exited with code 1 "), gantry.Notification{Type: "error",
			Title: "Deployment failed", Message: "Portfolio failed: Build command exited with code 1", ActionURL: "/deployments/d1"}},
		{"failed without a reason or project", gantry.DeploymentFailedNotification(&gantry.Deployment{ID: "d/2", UserID: "u1"}, ""),
			gantry.Notification{Type: "error", Title: "Deployment failed", Message: "Your deployment failed: Build failed", ActionURL: "/deployments/d%2F2"}},
		{"crashed", gantry.AppCrashedNotification(dep, 5, "exit status 1"), gantry.Notification{Type: "error",
			Title:     "App stopped after repeated crashes",
			Message:   "Portfolio crashed 5 times in a row and was stopped: exit status 1. Check its runtime logs, then restart or deploy a fix.",
			ActionURL: "/deployments/d1"}},
		{"github connected", gantry.GitHubConnectedNotification("u1", "maya", 1), gantry.Notification{Type: "success",
			Title: "GitHub connected", Message: "@maya is connected: 1 repository ready to deploy.", ActionURL: "/github-integration"}},
		{"github connected, many", gantry.GitHubConnectedNotification("u1", "maya", 12), gantry.Notification{Type: "success",
			Title: "GitHub connected", Message: "@maya is connected: 12 repositories ready to deploy.", ActionURL: "/github-integration"}},
		{"github disconnected", gantry.GitHubDisconnectedNotification("u1", "maya"), gantry.Notification{Type: "info",
			Title:     "GitHub disconnected",
			Message:   "@maya was disconnected. Your projects stay; private repositories cannot be built until you connect again.",
			ActionURL: "/github-integration"}},
		{"github revoked", gantry.GitHubRevokedNotification("u1", "maya"), gantry.Notification{Type: "warning",
			Title:     "GitHub access revoked",
			Message:   "GitHub no longer accepts Gantry's access to @maya, so it was disconnected. Connect again to build private repositories.",
			ActionURL: "/github-integration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.UserID = "u1"
			if diff := cmp.Diff(&tc.want, tc.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNotificationMessageIsClipped(t *testing.T) {
	t.Parallel()
	reason := strings.Repeat("é", 2000)
	n := gantry.DeploymentFailedNotification(&gantry.Deployment{ID: "d1"}, reason)
	if got := utf8.RuneCountInString(n.Message); got != 500 || !strings.HasSuffix(n.Message, "…") || !utf8.ValidString(n.Message) {
		t.Errorf("got %d runes ending %q, want 500 ending in …", got, n.Message[len(n.Message)-6:])
	}
}
