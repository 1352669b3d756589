package gantry

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The rules every text a client sends must follow, whatever the field:
//
//   - valid UTF-8;
//   - no control characters: C0 (U+0000–U+001F, NUL included), DEL and C1
//     (U+007F–U+009F), except tab, line feed and carriage return in the
//     fields that may hold several lines (TextRule.Multiline);
//   - no bidirectional embeddings, overrides and isolates (U+202A–U+202E,
//     U+2066–U+2069), no line or paragraph separators (U+2028, U+2029) and
//     no other invisible format characters (Unicode category Cf: zero-width
//     space, byte order mark, soft hyphen, word joiner, direction marks…),
//     except the zero-width joiner and non-joiner (U+200C, U+200D), which
//     some scripts and emoji sequences need, and emoji tag characters
//     (U+E0020–U+E007F, the subdivision flags);
//   - at most a field's number of characters, counted as Unicode code
//     points, not bytes;
//   - a required field needs a visible character (a letter, digit,
//     punctuation or symbol; a zero-width space or a Hangul filler alone is
//     not a name).
//
// Error messages that repeat a value quote it with Quote, which shows at
// most QuoteMaxLen characters of it.

// QuoteMaxLen is how many characters of a value Quote shows.
const QuoteMaxLen = 100

// Quote returns s as a double-quoted Go string literal for an error
// message: control and invisible characters escaped (\x00, \u202e), cut
// after QuoteMaxLen characters with "…" before the closing quote. Every
// message that echoes a value the client sent goes through it, so an answer
// never grows with the input.
func Quote(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	n := 0
	for i := range s {
		if n == QuoteMaxLen {
			q := strconv.Quote(s[:i])
			return q[:len(q)-1] + `…"`
		}
		n++
	}
	return strconv.Quote(s)
}

// TextRule is what one text field may hold: Check applies it with messages
// that name Field.
type TextRule struct {
	// Field names the field in messages, capitalised: "Project name".
	Field string
	// Max is the most characters (code points) the field may hold.
	Max int
	// Required fields need a visible character ("<Field> is required").
	Required bool
	// Multiline fields may hold tabs, line feeds and carriage returns.
	Multiline bool
}

// Check returns the first rule s breaks, as EINVALID, in this order:
// "<Field> is required" (no visible character, for a required field),
// "<Field> cannot exceed <Max> characters", "<Field> must be valid UTF-8
// text", "<Field> must be a single line" (a line break in a single-line
// field) and "<Field> cannot contain control or invisible characters
// (found U+XXXX)". Trim s first where the field is trimmed.
func (t TextRule) Check(s string) error {
	if t.Required && !HasVisible(s) {
		return Errorf(EINVALID, "%s is required", t.Field)
	}
	if utf8.RuneCountInString(s) > t.Max {
		return Errorf(EINVALID, "%s cannot exceed %d characters", t.Field, t.Max)
	}
	if !utf8.ValidString(s) {
		return Errorf(EINVALID, "%s must be valid UTF-8 text", t.Field)
	}
	for _, r := range s {
		if !Forbidden(r, t.Multiline) {
			continue
		}
		if r == '\n' || r == '\r' {
			return Errorf(EINVALID, "%s must be a single line", t.Field)
		}
		return Errorf(EINVALID, "%s cannot contain control or invisible characters (found %U)", t.Field, r)
	}
	return nil
}

// Forbidden reports whether r may not appear in client text (see the rules
// above); multiline allows tab, line feed and carriage return.
func Forbidden(r rune, multiline bool) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return !multiline
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	case r == 0x200c, r == 0x200d, r >= 0xe0020 && r <= 0xe007f:
		return false
	}
	return unicode.Is(unicode.Cf, r) // the bidi controls U+202A–U+202E and U+2066–U+2069 among them
}

// invisibleLetters are letters and symbols that draw nothing.
var invisibleLetters = map[rune]bool{
	0x115f: true, 0x1160: true, 0x3164: true, 0xffa0: true, // Hangul fillers
	0x2800: true, // braille pattern blank
}

// HasVisible reports whether s holds a character that draws something: a
// letter, digit, punctuation mark or symbol (not a space, control, format
// character, combining mark on its own, or one of the blank letters).
func HasVisible(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.L, unicode.N, unicode.P, unicode.S, unicode.Co) && !invisibleLetters[r] {
			return true
		}
	}
	return false
}

// CleanText makes a text from a code host (a repository's description, a
// commit's message or author) safe to store and show: invalid UTF-8 and
// the characters Forbidden refuses are dropped (line breaks and tabs become
// spaces unless multiline, where CR LF becomes LF), spaces around are
// trimmed, and it is cut to max characters, the last one "…" when cut.
// Facts about a repository come from the host, never from a client, but
// the host is not trusted to keep them small or printable either.
func CleanText(s string, max int, multiline bool) string {
	s = strings.ToValidUTF8(s, "")
	if multiline {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	s = strings.Map(func(r rune) rune {
		switch {
		case !multiline && (r == '\t' || r == '\n' || r == '\r'):
			return ' '
		case Forbidden(r, multiline):
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	cut := []rune(s)[:max-1]
	return strings.TrimSpace(string(cut)) + "…"
}

// checkRequestText is the rule of a query parameter or path of a request:
// no control or invisible characters, valid UTF-8, no length limit (each
// parameter has its own).
func checkRequestText(field, s string) error {
	return TextRule{Field: field, Max: len(s)}.Check(s)
}

// ValidateQueryParam checks one query parameter's name and value by
// checkRequestText: 400 `Query parameter "search" cannot contain control or
// invisible characters (found U+0000)` and the like. The API applies it to
// every query parameter of every call before the call runs.
func ValidateQueryParam(name, value string) error {
	if err := checkRequestText("Query parameter "+Quote(name), name); err != nil {
		return err
	}
	return checkRequestText("Query parameter "+Quote(name), value)
}

// ValidateRequestPath checks the decoded path of an API call by
// checkRequestText ("The request path cannot contain …"): ids and
// subdomains in paths reach the database, and PostgreSQL refuses NUL.
func ValidateRequestPath(path string) error {
	return checkRequestText("The request path", path)
}

// validIDChar reports whether r may appear in an id (UUIDv7s, subdomains).
func validIDChar(r rune) bool {
	return r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// ValidID reports whether s could be an id of a stored record: 1 to 64
// ASCII letters, digits, hyphens and underscores. Ids in bodies (projectId,
// deploymentId) that are not are answered as unknown ids, without asking
// the database.
func ValidID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !validIDChar(r) {
			return false
		}
	}
	return true
}

// FirstNonBlank returns the first of vs that is not blank, without its
// surrounding spaces, or "": a value a client may have sent, then the
// fallbacks.
func FirstNonBlank(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
