package build

import (
	"slices"
	"strings"
	"sync"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// TruncatedMessage is logged once when a build's output exceeds its cap.
const TruncatedMessage = "Log truncated: further output of this build is not stored"

// logSink forwards a build's lines to its Logger: the pipeline's own lines
// always, command output up to max lines, then one truncation warning.
type logSink struct {
	mu        sync.Mutex
	log       Logger
	max       int
	n         int
	truncated bool
	lines     []Line // every line logged, for the diagnosis of a failure
}

func newLogSink(log Logger, max int) *logSink {
	if log == nil {
		log = LoggerFunc(func(string, string) {})
	}
	return &logSink{log: log, max: max}
}

// step logs one of the pipeline's own lines.
func (s *logSink) step(level, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emit(level, msg)
}

// emit logs a line and keeps it; s.mu is held.
func (s *logSink) emit(level, msg string) {
	s.lines = append(s.lines, Line{Level: level, Message: msg})
	s.log.Log(level, msg)
}

// logged returns the lines logged so far.
func (s *logSink) logged() []Line {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lines)
}

// output logs one line of command output: stdout at info, stderr at
// warning when it mentions "warn", error when it mentions an error, info
// otherwise. Terminal escape sequences are removed and blank lines
// dropped.
func (s *logSink) output(stream sandbox.Stream, line string) {
	line = strings.TrimRight(stripANSI(line), " \t")
	if strings.TrimSpace(line) == "" {
		return
	}
	level := gantry.LevelInfo
	if stream == sandbox.Stderr {
		level = stderrLevel(line)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n >= s.max {
		if !s.truncated {
			s.truncated = true
			s.emit(gantry.LevelWarning, TruncatedMessage)
		}
		return
	}
	s.n++
	s.emit(level, line)
}

// stderrLevel guesses the level of a line written to stderr.
func stderrLevel(line string) string {
	l := strings.ToLower(line)
	switch {
	case strings.Contains(l, "warn"):
		return gantry.LevelWarning
	case strings.Contains(l, "error") || strings.Contains(l, "err!") || strings.Contains(l, "fatal"):
		return gantry.LevelError
	}
	return gantry.LevelInfo
}

// stripANSI removes terminal escape sequences (colours, cursor moves).
func stripANSI(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != 0x1b {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch s[i+1] {
		case '[': // CSI: parameters, then a final byte in @–~
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
		case ']': // OSC: up to BEL or ESC \
			j := i + 2
			for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			if j < len(s) && s[j] == 0x1b {
				j++
			}
			i = j
		default: // two-byte sequence
			i++
		}
	}
	return b.String()
}
