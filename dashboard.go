package gantry

import (
	"context"
	"time"
)

// DashboardRecent is how many projects and deployments the dashboard lists.
const DashboardRecent = 5

// Dashboard is SPEC §3 Dashboard data: a user's numbers and newest work.
type Dashboard struct {
	Stats             DashboardStats        `json:"stats"`
	RecentProjects    []DashboardProject    `json:"recentProjects"`
	RecentDeployments []DashboardDeployment `json:"recentDeployments"`
}

// DashboardStats counts a user's projects and deployments. Active means
// live; ThisMonth counts deployments created since the start of the current
// month in UTC.
type DashboardStats struct {
	TotalProjects     int `json:"totalProjects"`
	ActiveDeployments int `json:"activeDeployments"`
	TotalDeployments  int `json:"totalDeployments"`
	FailedDeployments int `json:"failedDeployments"`
	ThisMonth         int `json:"thisMonth"`
}

// DashboardProject is one of the newest projects. LastDeployed is when its
// newest deployment was created (nil when it never was); URL is the live URL
// of the deployment its subdomain serves, nil unless that one is live.
type DashboardProject struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Type         string     `json:"type"`
	Status       string     `json:"status"`
	LastDeployed *time.Time `json:"lastDeployed"`
	URL          *string    `json:"url"`
	Sleeping     bool       `json:"sleeping"` // its live server app sleeps (Deployment.Sleeping)
}

// DashboardDeployment is one of the newest deployments. BuildTime is the
// build's duration in milliseconds, nil while it has not ended; DeployedAt
// is when the deployment was created.
type DashboardDeployment struct {
	ID          string    `json:"id"`
	ProjectName string    `json:"projectName"`
	Subdomain   string    `json:"subdomain"`
	Status      string    `json:"status"`
	BuildTime   *int64    `json:"buildTime"`
	DeployedAt  time.Time `json:"deployedAt"`
	Sleeping    bool      `json:"sleeping"` // a live server app that sleeps
}

// DashboardStore computes dashboards from stored projects and deployments.
type DashboardStore interface {
	// Dashboard returns the owner's stats and DashboardRecent newest
	// projects and deployments; now fixes the current month.
	Dashboard(ctx context.Context, userID string, now time.Time) (*Dashboard, error)
}
