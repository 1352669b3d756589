package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deadline"
)

// codeStatus maps each gantry error code to its HTTP status. Codes not
// listed, and errors without a code, are 500 "Internal error.".
var codeStatus = map[string]int{
	gantry.ECONFLICT:       http.StatusConflict,
	gantry.EINVALID:        http.StatusBadRequest,
	gantry.ENOTFOUND:       http.StatusNotFound,
	gantry.EUNAUTHORIZED:   http.StatusUnauthorized,
	gantry.EFORBIDDEN:      http.StatusForbidden,
	gantry.ETOOMANY:        http.StatusTooManyRequests,
	gantry.EUNAVAILABLE:    http.StatusServiceUnavailable,
	gantry.ENOTIMPLEMENTED: http.StatusNotImplemented,
	gantry.EINTERNAL:       http.StatusInternalServerError,
	gantry.ETIMEOUT:        http.StatusRequestTimeout,
}

// ErrorStatus returns the HTTP status of err's gantry code.
func ErrorStatus(err error) int {
	if status, ok := codeStatus[gantry.ErrorCode(err)]; ok {
		return status
	}
	return http.StatusInternalServerError
}

// envelope is the shape of every API answer.
type envelope struct {
	Success bool   `json:"success"`
	Data    any    `json:"data,omitempty"`
	Message string `json:"message,omitempty"`
}

// writeJSON answers {"success":true,"data":data} with status.
func writeJSON(w http.ResponseWriter, status int, data any) {
	writeEnvelope(w, status, envelope{Success: true, Data: data})
}

func writeEnvelope(w http.ResponseWriter, status int, e envelope) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(e) // a failed write means the client went away
}

// MsgDatabaseAway answers a request that needed the database while it
// could not be reached (a restart, a failover): 503, Retry-After
// DatabaseRetry.
const MsgDatabaseAway = "Gantry cannot reach its database at the moment (it may be restarting): try again in a few seconds."

// DatabaseRetry is the Retry-After of MsgDatabaseAway.
const DatabaseRetry = 5 * time.Second

// awayError is MsgDatabaseAway (503, Retry-After DatabaseRetry) for the
// database error cause.
type awayError struct {
	coded *gantry.Error
	cause error
}

func databaseAway(cause error) error {
	return &awayError{coded: gantry.Errorf(gantry.EUNAVAILABLE, MsgDatabaseAway), cause: cause}
}

func (e *awayError) Error() string             { return e.coded.Error() + ": " + e.cause.Error() }
func (e *awayError) Unwrap() error             { return e.coded }
func (e *awayError) RetryAfter() time.Duration { return DatabaseRetry }

// retryAfter is an error that says how long the client should wait
// (auth.LimitError).
type retryAfter interface {
	RetryAfter() time.Duration
}

// writeError answers {"success":false,"message":…} with the status of
// err's code. Uncoded and EINTERNAL errors are logged and shown as
// "Internal error.", never in their own words. An error that says how long
// to wait (a RetryAfter method) sets the Retry-After header, in whole
// seconds rounded up.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := ErrorStatus(err)
	msg := gantry.ErrorMessage(err)
	var coded *gantry.Error
	if !errors.As(err, &coded) && s.Unreachable != nil && s.Unreachable(err) {
		err = databaseAway(err)
		status, msg = ErrorStatus(err), gantry.ErrorMessage(err)
	}
	var away *awayError
	if errors.As(err, &away) {
		s.Logger.WarnContext(r.Context(), "database unreachable", "method", r.Method, "path", logPath(r), "err", redact(r, away.cause.Error()))
	} else if status == http.StatusInternalServerError {
		s.Logger.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", logPath(r), "err", redact(r, err.Error()))
		msg = "Internal error."
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="gantry"`)
	}
	if status == http.StatusRequestTimeout {
		w.Header().Set("Connection", "close") // the rest of the body is not read
	}
	var ra retryAfter
	if errors.As(err, &ra) && ra.RetryAfter() > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((ra.RetryAfter()+time.Second-1)/time.Second)))
	}
	writeEnvelope(w, status, envelope{Success: false, Message: msg})
}

// MaxBodyBytes is the largest request body decode accepts (1 MiB).
const MaxBodyBytes = 1 << 20

// decode reads a request body holding exactly one JSON object into v (a
// pointer to a struct). Failures are EINVALID with a message saying what is
// wrong: a body over 1 MiB, an empty body, invalid UTF-8, malformed JSON, a body that is
// not an object, a field v does not have, a value of the wrong type, or
// data after the object; ETIMEOUT (408) for a body that did not arrive
// within Server.BodyTimeout.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return gantry.Errorf(gantry.EINVALID, "Request body too large (limit 1 MiB)")
	} else if errors.Is(err, deadline.ErrSlowBody) {
		return gantry.Errorf(gantry.ETIMEOUT, "Request body did not arrive in time")
	} else if err != nil {
		return gantry.Errorf(gantry.EINVALID, "Could not read the request body")
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return gantry.Errorf(gantry.EINVALID, "Request body is empty: expected a JSON object")
	}
	// encoding/json would turn invalid bytes into U+FFFD and store them.
	if !utf8.Valid(trimmed) {
		return gantry.Errorf(gantry.EINVALID, "Request body must be valid UTF-8 text")
	}
	if trimmed[0] != '{' {
		if !json.Valid(trimmed) {
			return malformed(trimmed, json.Unmarshal(trimmed, new(any)))
		}
		return gantry.Errorf(gantry.EINVALID, "Request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr) && typeErr.Field != "":
			return gantry.Errorf(gantry.EINVALID, "Invalid value for field %s: expected %s", gantry.Quote(typeErr.Field), jsonKind(typeErr))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name, uerr := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
			if uerr != nil {
				name = strings.TrimPrefix(err.Error(), "json: unknown field ")
			}
			return gantry.Errorf(gantry.EINVALID, "Unknown field %s", gantry.Quote(name))
		default:
			return malformed(trimmed, err)
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return gantry.Errorf(gantry.EINVALID, "Malformed JSON: unexpected data after the object")
	}
	return nil
}

// malformed describes a JSON syntax error with its byte offset.
func malformed(body []byte, err error) error {
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return gantry.Errorf(gantry.EINVALID, "Malformed JSON at byte %d: %s", syntax.Offset,
			strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return gantry.Errorf(gantry.EINVALID, "Malformed JSON: unexpected end of input")
	}
	return gantry.Errorf(gantry.EINVALID, "Malformed JSON: %s", strings.TrimPrefix(fmt.Sprint(err), "json: "))
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(e *json.UnmarshalTypeError) string {
	switch e.Type.Kind().String() {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "number"
	case "slice", "array":
		return "array"
	case "struct", "map":
		return "object"
	case "ptr", "pointer":
		if e.Type.Elem() != nil {
			return jsonKind(&json.UnmarshalTypeError{Type: e.Type.Elem()})
		}
	}
	return e.Type.String()
}

// handleAPINotFound answers unknown API paths with a JSON 404, or a JSON
// 405 with an Allow header when the path exists for other methods.
func (s *Server) handleAPINotFound(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method || (m == http.MethodGet && r.Method == http.MethodHead) {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/api/" && pattern != "/api" && pattern != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeEnvelope(w, http.StatusMethodNotAllowed, envelope{Message: "Method " + r.Method + " is not allowed here"})
		return
	}
	writeEnvelope(w, http.StatusNotFound, envelope{Message: "Not found: no API endpoint at " + r.URL.Path})
}
