package gantry

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
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

// PlanName is a plan's display name ("free" → "Free"); a missing or
// unknown plan shows as Free (SPEC §3).
func PlanName(plan string) string {
	switch plan {
	case PlanBasic:
		return "Basic"
	case PlanPro:
		return "Pro"
	case PlanEnterprise:
		return "Enterprise"
	}
	return "Free"
}

// PlanAllowsAlwaysOn reports whether plan may keep its server apps
// running without a request (Project.AlwaysOn): every paid plan; the free
// plan's apps sleep after GANTRY_APP_IDLE.
func PlanAllowsAlwaysOn(plan string) bool {
	switch plan {
	case PlanBasic, PlanPro, PlanEnterprise:
		return true
	}
	return false
}

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

// Subscription is a user's plan and its limits. MaxStorage is the storage
// budget in bytes (PlanMaxStorage of the plan when the account was made).
type Subscription struct {
	Plan           string `json:"plan"`
	MaxProjects    int    `json:"maxProjects"`
	MaxDeployments int    `json:"maxDeployments"`
	MaxStorage     int64  `json:"maxStorage"`
}

// What a GitHub call answers when the user has no connected account, and
// when GitHub refuses the stored access (or it no longer opens): both
// EINVALID.
const (
	MsgConnectGitHub = "Connect your GitHub account first"
	MsgGitHubRevoked = "GitHub access was revoked: connect your GitHub account again"
)

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

// UserStats is SPEC §3 User stats, plus what the account's deployments
// take of its storage budget.
type UserStats struct {
	TotalProjects     int          `json:"totalProjects"`
	TotalDeployments  int          `json:"totalDeployments"`
	ActiveDeployments int          `json:"activeDeployments"`
	AccountAge        int          `json:"accountAge"` // whole days since createdAt
	Storage           StorageUsage `json:"storage"`
}

// UserUpdate holds the profile fields a user may change; nil means unchanged.
// It is the body of PUT /api/auth/profile and PUT /api/users/profile.
type UserUpdate struct {
	FullName *string `json:"fullName"`
	Username *string `json:"username"`
	Email    *string `json:"email"`
	Avatar   *string `json:"avatar"`
}

// Normalize trims the fields that are set and lowercases the email.
func (u *UserUpdate) Normalize() {
	trim := func(p *string) {
		if p != nil {
			*p = strings.TrimSpace(*p)
		}
	}
	trim(u.FullName)
	trim(u.Username)
	trim(u.Avatar)
	if u.Email != nil {
		*u.Email = NormalizeEmail(*u.Email)
	}
}

// Validate checks every field that is set by the SPEC §5 rules, in the
// order full name, username, email, avatar, and returns the first failure
// as EINVALID. Call Normalize first.
func (u *UserUpdate) Validate() error {
	if u.FullName != nil {
		if err := ValidateFullName(*u.FullName); err != nil {
			return err
		}
	}
	if u.Username != nil {
		if err := ValidateUsername(*u.Username); err != nil {
			return err
		}
	}
	if u.Email != nil {
		if err := ValidateEmail(*u.Email); err != nil {
			return err
		}
	}
	if u.Avatar != nil {
		if err := ValidateAvatar(*u.Avatar); err != nil {
			return err
		}
	}
	return nil
}

// Registration is the body of POST /api/auth/register. The password is
// plain text here and is hashed before it reaches a store.
type Registration struct {
	Username string `json:"username"`
	Email    string `json:"email"`
	Password string `json:"password"`
	FullName string `json:"fullName"`
}

// Normalize trims the username, email and full name and lowercases the
// email. The password is kept as typed.
func (r *Registration) Normalize() {
	r.Username = strings.TrimSpace(r.Username)
	r.Email = NormalizeEmail(r.Email)
	r.FullName = strings.TrimSpace(r.FullName)
}

// Validate applies the SPEC §5 registration rules in the order of its table
// (username, email, password, full name) and returns the first failure as
// EINVALID with the SPEC's message. Call Normalize first.
func (r *Registration) Validate() error {
	if err := ValidateUsername(r.Username); err != nil {
		return err
	}
	if err := ValidateEmail(r.Email); err != nil {
		return err
	}
	if err := ValidatePassword(r.Password); err != nil {
		return err
	}
	return ValidateFullName(r.FullName)
}

// Limits of user fields. The minimums and the full-name maximum are SPEC §9;
// the other maximums are the server's own.
const (
	UsernameMinLen = 3
	UsernameMaxLen = 30
	PasswordMinLen = 6
	PasswordMaxLen = 128
	FullNameMaxLen = 100
	EmailMaxLen    = 254
	AvatarMaxLen   = 2048
)

var (
	usernameChars = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	emailShape    = regexp.MustCompile(`^[^\s@]+@[^\s@]+\.[^\s@]+$`)
)

// NormalizeEmail trims and lowercases an email address; emails are unique
// and compared in this form.
func NormalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// ValidateUsername checks a username: required, 3 to 30 characters, ASCII
// letters, digits, underscores and hyphens only.
func ValidateUsername(s string) error {
	switch n := utf8.RuneCountInString(s); {
	case !HasVisible(s):
		return Errorf(EINVALID, "Username is required")
	case n < UsernameMinLen:
		return Errorf(EINVALID, "Username must be at least 3 characters long")
	case n > UsernameMaxLen:
		return Errorf(EINVALID, "Username cannot exceed 30 characters")
	case !usernameChars.MatchString(s):
		return Errorf(EINVALID, "Username can only contain letters, numbers, underscores, and hyphens")
	}
	return nil
}

// ValidateEmail checks an email address: required, at most 254
// characters, no control or invisible characters (TextRule), and shaped
// like local@domain.tld with no spaces.
func ValidateEmail(s string) error {
	switch {
	case s == "":
		return Errorf(EINVALID, "Email is required")
	case utf8.RuneCountInString(s) > EmailMaxLen:
		return Errorf(EINVALID, "Please enter a valid email address")
	}
	if err := ValidateLoginEmail(s); err != nil {
		return err
	}
	if !emailShape.MatchString(s) {
		return Errorf(EINVALID, "Please enter a valid email address")
	}
	return nil
}

// ValidateLoginEmail checks the email of a sign-in for what no account's
// email holds: control or invisible characters, invalid UTF-8 ("Email
// cannot contain control or invisible characters (found U+0000)"). The rest
// is the password check's to refuse, with one answer for a wrong email or
// password. The password of a sign-in is not checked: it is only compared.
func ValidateLoginEmail(s string) error {
	return TextRule{Field: "Email", Max: len(s)}.Check(s)
}

// ValidatePassword checks a new password: required, 6 to 128 characters,
// no control or invisible characters (see TextRule; spaces are allowed).
func ValidatePassword(s string) error {
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		return Errorf(EINVALID, "Password is required")
	case n < PasswordMinLen:
		return Errorf(EINVALID, "Password must be at least 6 characters long")
	case n > PasswordMaxLen:
		return Errorf(EINVALID, "Password cannot exceed 128 characters")
	}
	return TextRule{Field: "Password", Max: PasswordMaxLen}.Check(s)
}

// ValidateFullName checks a full name: required (a visible character),
// at most 100 characters, one line without control or invisible
// characters.
func ValidateFullName(s string) error {
	return TextRule{Field: "Full name", Max: FullNameMaxLen, Required: true}.Check(s)
}

// ValidateAvatar checks an avatar: empty, or an absolute https URL of at
// most 2048 characters without control or invisible characters (the UI's
// Content-Security-Policy loads images over https only).
func ValidateAvatar(s string) error {
	if s == "" {
		return nil
	}
	if err := (TextRule{Field: "Avatar", Max: AvatarMaxLen}).Check(s); err != nil {
		return Errorf(EINVALID, "Avatar must be an https URL")
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return Errorf(EINVALID, "Avatar must be an https URL")
	}
	return nil
}

// UserStore persists users. Implemented by internal/store for SQLite and
// PostgreSQL.
type UserStore interface {
	// CreateUser inserts u, filling ID and timestamps. A taken username or
	// email (case-insensitive) is ECONFLICT.
	CreateUser(ctx context.Context, u *User) error
	// FindUserByID returns the user with id; ENOTFOUND when absent.
	FindUserByID(ctx context.Context, id string) (*User, error)
	// FindUserByEmail matches case-insensitively; ENOTFOUND when absent.
	FindUserByEmail(ctx context.Context, email string) (*User, error)
	// UpdateUser normalizes and validates upd (EINVALID with the first
	// failing rule's message), applies the fields that are set and returns
	// the updated user. ENOTFOUND for a missing user; ECONFLICT when the
	// username or email belongs to another account.
	UpdateUser(ctx context.Context, id string, upd UserUpdate) (*User, error)
	// SetPasswordHash replaces the password hash; ENOTFOUND when absent.
	SetPasswordHash(ctx context.Context, id, hash string) error
	// TouchLastLogin sets lastLogin; ENOTFOUND when absent.
	TouchLastLogin(ctx context.Context, id string, at time.Time) error
	// UserStats counts the user's projects, deployments and live
	// deployments, the whole days from createdAt to now, and the storage
	// the deployments use.
	UserStats(ctx context.Context, id string, now time.Time) (*UserStats, error)
}
