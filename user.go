package gantry

import (
	"context"
	"time"
)

// Roles a user may have. They are badges only (SPEC §6).
const (
	RoleStudent   = "student"
	RoleHobbyist  = "hobbyist"
	RoleDeveloper = "developer"
	RoleAdmin     = "admin"
)

// Plans and the default limits of the free plan (SPEC §6, §9).
const (
	PlanFree       = "free"
	PlanBasic      = "basic"
	PlanPro        = "pro"
	PlanEnterprise = "enterprise"

	DefaultMaxProjects    = 3
	DefaultMaxDeployments = 5
)

// User is an account. Its JSON form is SPEC §3 User; PasswordHash never
// leaves the server.
type User struct {
	ID           string       `json:"_id"`
	FullName     string       `json:"fullName"`
	Username     string       `json:"username"`
	Email        string       `json:"email"`
	Avatar       string       `json:"avatar"`
	Role         string       `json:"role"`
	Subscription Subscription `json:"subscription"`
	IsVerified   bool         `json:"isVerified"`
	IsActive     bool         `json:"isActive"`
	CreatedAt    time.Time    `json:"createdAt"`
	UpdatedAt    time.Time    `json:"updatedAt"`
	LastLogin    *time.Time   `json:"lastLogin"`
	GitHub       GitHubLink   `json:"github"`

	PasswordHash string `json:"-"`
}

// Subscription is a user's plan and its limits.
type Subscription struct {
	Plan           string `json:"plan"`
	MaxProjects    int    `json:"maxProjects"`
	MaxDeployments int    `json:"maxDeployments"`
}

// GitHubLink is a user's connected GitHub account. AccessToken is stored
// encrypted and never serialised.
type GitHubLink struct {
	Connected   bool         `json:"connected"`
	ID          int64        `json:"id,omitempty"`
	Username    string       `json:"username"`
	Avatar      string       `json:"avatar"`
	Repos       []GitHubRepo `json:"repos"`
	AccessToken string       `json:"-"`
}

// GitHubRepo is one repository of a connected account (SPEC §3).
type GitHubRepo struct {
	ID            int64     `json:"id"`
	Name          string    `json:"name"`
	FullName      string    `json:"fullName"`
	Description   string    `json:"description"`
	Private       bool      `json:"private"`
	DefaultBranch string    `json:"defaultBranch"`
	UpdatedAt     time.Time `json:"updatedAt"`
	URL           string    `json:"url"`
}

// UserStats is SPEC §3 User stats.
type UserStats struct {
	TotalProjects     int `json:"totalProjects"`
	TotalDeployments  int `json:"totalDeployments"`
	ActiveDeployments int `json:"activeDeployments"`
	AccountAge        int `json:"accountAge"` // whole days since createdAt
}

// UserUpdate holds the profile fields a user may change; nil means unchanged.
type UserUpdate struct {
	FullName *string
	Username *string
	Email    *string
	Avatar   *string
}

// UserStore persists users. Implemented by internal/store for SQLite and
// PostgreSQL.
type UserStore interface {
	// CreateUser inserts u, filling ID and timestamps. A taken username or
	// email (case-insensitive) is ECONFLICT.
	CreateUser(ctx context.Context, u *User) error
	FindUserByID(ctx context.Context, id string) (*User, error)
	// FindUserByEmail matches case-insensitively; ENOTFOUND when absent.
	FindUserByEmail(ctx context.Context, email string) (*User, error)
	UpdateUser(ctx context.Context, id string, upd UserUpdate) (*User, error)
	SetPasswordHash(ctx context.Context, id, hash string) error
	TouchLastLogin(ctx context.Context, id string, at time.Time) error
	UserStats(ctx context.Context, id string, now time.Time) (*UserStats, error)
}
