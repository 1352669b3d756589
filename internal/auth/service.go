// Package auth signs users up and in: argon2id password hashes, signed
// bearer tokens with an expiry, and rate limits on failed sign-ins and on
// registrations.
package auth

import (
	"context"
	"time"

	"github.com/gantryhq/gantry"
)

// Rate limits: 10 failed sign-ins per 15 minutes per client IP and per
// account, and 10 registrations (accounts created or refused as taken) per
// 15 minutes per client IP.
const (
	LoginFailures = 10
	RegisterLimit = 10
	LimitWindow   = 15 * time.Minute
)

// Messages of the accounts API (SPEC §8 for the rate limits).
const (
	MsgInvalidLogin     = "Invalid email or password"
	MsgInactive         = "This account has been deactivated"
	MsgTooManyLogins    = "Too many login attempts. Please wait a few minutes before trying again."
	MsgTooManyRegisters = "Too many registration attempts. Please wait a few minutes before trying again."
	MsgTooManyAttempts  = "Too many attempts. Please wait a few minutes before trying again."
	MsgWrongPassword    = "Current password is incorrect"
)

// Service is the accounts service: registration, sign-in, token checks and
// password changes. Create it with NewService.
type Service struct {
	Users     gantry.UserStore
	Passwords *Passwords
	Tokens    *Tokens

	// LoginByIP and LoginByAccount count failed sign-ins (and wrong current
	// passwords on a password change, by account); RegisterByIP counts
	// registrations that reached the database.
	LoginByIP      *Limiter
	LoginByAccount *Limiter
	RegisterByIP   *Limiter

	// Notify welcomes new accounts (gantry.WelcomeNotification). Nil sends
	// nothing.
	Notify gantry.Notifier

	// Now returns the current time; tests replace it.
	Now func() time.Time
}

// NewService returns the accounts service with the default rate limits.
func NewService(users gantry.UserStore, passwords *Passwords, tokens *Tokens) *Service {
	return &Service{
		Users:          users,
		Passwords:      passwords,
		Tokens:         tokens,
		LoginByIP:      NewLimiter(LoginFailures, LimitWindow),
		LoginByAccount: NewLimiter(LoginFailures, LimitWindow),
		RegisterByIP:   NewLimiter(RegisterLimit, LimitWindow),
		Now:            time.Now,
	}
}

// Register validates r by the SPEC §5 rules (EINVALID with the first
// failing rule's message), creates the account with the defaults (role
// student, free plan with 3 projects and 5 deployments, active, not
// verified, no avatar, signed in now), welcomes it with a notification and
// returns it with a token. A taken username or email is ECONFLICT; more
// than RegisterLimit registrations (created or refused as taken) from
// clientIP in the window are ETOOMANY.
func (s *Service) Register(ctx context.Context, clientIP string, r gantry.Registration) (_ *gantry.User, _ string, err error) {
	r.Normalize()
	if err := r.Validate(); err != nil {
		return nil, "", err
	}
	if !s.RegisterByIP.Take(clientIP) {
		return nil, "", gantry.Errorf(gantry.ETOOMANY, MsgTooManyRegisters)
	}
	defer func() {
		if err != nil && gantry.ErrorCode(err) != gantry.ECONFLICT {
			s.RegisterByIP.Return(clientIP) // only created and taken count
		}
	}()
	hash, err := s.Passwords.Hash(ctx, r.Password)
	if err != nil {
		return nil, "", err
	}
	now := s.Now()
	u := &gantry.User{
		FullName:     r.FullName,
		Username:     r.Username,
		Email:        r.Email,
		Role:         gantry.RoleStudent,
		Subscription: gantry.Subscription{Plan: gantry.PlanFree, MaxProjects: gantry.DefaultMaxProjects, MaxDeployments: gantry.DefaultMaxDeployments},
		IsActive:     true,
		LastLogin:    &now,
		GitHub:       gantry.GitHubLink{Repos: []gantry.GitHubRepo{}},
		PasswordHash: hash,
	}
	if err := s.Users.CreateUser(ctx, u); err != nil {
		return nil, "", err
	}
	token, _, err := s.Tokens.Issue(u.ID)
	if err != nil {
		return nil, "", err
	}
	if s.Notify != nil {
		s.Notify.Notify(ctx, gantry.WelcomeNotification(u))
	}
	return u, token, nil
}

// Login checks an email and password and returns the user, with lastLogin
// set to now, and a token. A missing account and a wrong password give the
// same EUNAUTHORIZED MsgInvalidLogin, after the same work. After
// LoginFailures failures in the window from clientIP or for the email,
// every attempt is ETOOMANY until the window has passed; a success resets
// the account's count. Attempts are counted before the password is checked,
// so concurrent guesses cannot exceed the limit. A deactivated account is
// EFORBIDDEN.
func (s *Service) Login(ctx context.Context, clientIP, email, password string) (_ *gantry.User, _ string, err error) {
	email = gantry.NormalizeEmail(email)
	if email == "" {
		return nil, "", gantry.Errorf(gantry.EINVALID, "Email is required")
	}
	if password == "" {
		return nil, "", gantry.Errorf(gantry.EINVALID, "Password is required")
	}
	if !s.LoginByIP.Take(clientIP) {
		return nil, "", gantry.Errorf(gantry.ETOOMANY, MsgTooManyLogins)
	}
	if !s.LoginByAccount.Take(email) {
		s.LoginByIP.Return(clientIP)
		return nil, "", gantry.Errorf(gantry.ETOOMANY, MsgTooManyLogins)
	}
	failed := false // a wrong email or password: the attempt keeps counting
	defer func() {
		if !failed {
			s.LoginByIP.Return(clientIP)
			s.LoginByAccount.Return(email)
		}
		if err == nil {
			s.LoginByAccount.Reset(email)
		}
	}()
	invalid := gantry.Errorf(gantry.EUNAUTHORIZED, MsgInvalidLogin)
	u, err := s.Users.FindUserByEmail(ctx, email)
	if gantry.ErrorCode(err) == gantry.ENOTFOUND {
		s.Passwords.VerifyDummy(ctx, password)
		failed = true
		return nil, "", invalid
	} else if err != nil {
		return nil, "", err
	}
	ok, err := s.Passwords.Verify(ctx, u.PasswordHash, password)
	if err != nil {
		return nil, "", err
	} else if !ok {
		failed = true
		return nil, "", invalid
	}
	if !u.IsActive {
		return nil, "", gantry.Errorf(gantry.EFORBIDDEN, MsgInactive)
	}
	now := s.Now().UTC().Truncate(time.Millisecond)
	if err := s.Users.TouchLastLogin(ctx, u.ID, now); err != nil {
		return nil, "", err
	}
	u.LastLogin = &now
	token, _, err := s.Tokens.Issue(u.ID)
	if err != nil {
		return nil, "", err
	}
	return u, token, nil
}

// Authenticate returns the user a bearer token belongs to. A bad or
// expired token is EUNAUTHORIZED (see Tokens.Verify), and so is the token
// of a deleted account (MsgSignIn); a deactivated account is EFORBIDDEN.
func (s *Service) Authenticate(ctx context.Context, token string) (*gantry.User, error) {
	if token == "" {
		return nil, gantry.Errorf(gantry.EUNAUTHORIZED, MsgSignIn)
	}
	id, err := s.Tokens.Verify(token)
	if err != nil {
		return nil, err
	}
	u, err := s.Users.FindUserByID(ctx, id)
	if gantry.ErrorCode(err) == gantry.ENOTFOUND {
		return nil, gantry.Errorf(gantry.EUNAUTHORIZED, MsgSignIn)
	} else if err != nil {
		return nil, err
	}
	if !u.IsActive {
		return nil, gantry.Errorf(gantry.EFORBIDDEN, MsgInactive)
	}
	return u, nil
}

// ChangePassword replaces u's password after checking the current one.
// Missing fields and a new password that breaks the SPEC §5 password rules
// are EINVALID; a wrong current password is EINVALID MsgWrongPassword and
// counts as a failed sign-in of the account (so it is rate limited like
// one). Tokens issued before stay valid.
func (s *Service) ChangePassword(ctx context.Context, u *gantry.User, current, next string) error {
	if current == "" {
		return gantry.Errorf(gantry.EINVALID, "Current password is required")
	}
	if next == "" {
		return gantry.Errorf(gantry.EINVALID, "New password is required")
	}
	if err := gantry.ValidatePassword(next); err != nil {
		return err
	}
	if !s.LoginByAccount.Take(u.Email) {
		return gantry.Errorf(gantry.ETOOMANY, MsgTooManyAttempts)
	}
	ok, err := s.Passwords.Verify(ctx, u.PasswordHash, current)
	if err != nil {
		s.LoginByAccount.Return(u.Email)
		return err
	} else if !ok {
		return gantry.Errorf(gantry.EINVALID, MsgWrongPassword) // the attempt keeps counting
	}
	s.LoginByAccount.Return(u.Email)
	hash, err := s.Passwords.Hash(ctx, next)
	if err != nil {
		return err
	}
	return s.Users.SetPasswordHash(ctx, u.ID, hash)
}
