// Package gantry holds Gantry's domain: users, projects, deployments, log
// entries and notifications, the error codes every layer speaks, and the
// service interfaces the HTTP layer calls. It imports nothing of the project.
package gantry

import (
	"errors"
	"fmt"
)

// Error codes. The API maps each to one HTTP status (internal/api/error.go).
const (
	ECONFLICT       = "conflict"        // 409: unique value taken
	EINTERNAL       = "internal"        // 500: never shown to users
	EINVALID        = "invalid"         // 400: validation failed
	ENOTFOUND       = "not_found"       // 404: missing, or not the caller's
	EUNAUTHORIZED   = "unauthorized"    // 401: no, bad or expired token
	EFORBIDDEN      = "forbidden"       // 403: plan limit and similar
	ETOOMANY        = "too_many"        // 429: rate limited
	EUNAVAILABLE    = "unavailable"     // 503: a dependency is not configured
	ENOTIMPLEMENTED = "not_implemented" // 501
	ETIMEOUT        = "timeout"         // 408: the request body did not arrive in time
)

// Error is an application error: Code selects the status, Message is shown
// to the user as is.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("gantry error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of err: the *Error's message,
// or "Internal error." for anything uncoded.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}
