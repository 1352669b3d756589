package gantry

import "time"

// Notification types (SPEC §3).
const (
	NotifyDeployment = "deployment"
	NotifyProject    = "project"
	NotifySystem     = "system"
	NotifySuccess    = "success"
	NotifyError      = "error"
	NotifyWarning    = "warning"
	NotifyInfo       = "info"
)

// Notification is a message to one user about a platform event.
type Notification struct {
	ID        string    `json:"_id"`
	UserID    string    `json:"-"`
	Type      string    `json:"type"`
	Title     string    `json:"title"`
	Message   string    `json:"message"`
	Read      bool      `json:"read"`
	ActionURL string    `json:"actionUrl"`
	CreatedAt time.Time `json:"createdAt"`
}
