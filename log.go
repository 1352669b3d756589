package gantry

import "time"

// Log levels and types (SPEC §3 Log entry).
const (
	LevelInfo    = "info"
	LevelWarning = "warning"
	LevelError   = "error"
	LevelSuccess = "success"

	LogDeployment = "deployment"
	LogRuntime    = "runtime"
)

// LogEntry is one line of a deployment's build or runtime output. Seq
// orders a deployment's entries and is the SSE event id.
type LogEntry struct {
	Seq       int64     `json:"seq"`
	Timestamp time.Time `json:"timestamp"`
	Level     string    `json:"level"`
	Type      string    `json:"type"`
	Message   string    `json:"message"`
}
