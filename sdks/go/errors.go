package gable

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Error is every refusal of the API (after the retries ran out), and a network failure
// (Status 0, Code "network_error"). Get at its fields with errors.As; match its class with
// errors.Is against the Err… values:
//
//	var apiErr *gable.Error
//	if errors.As(err, &apiErr) { log.Println(apiErr.Code, apiErr.RequestID) }
//	if errors.Is(err, gable.ErrConflict) { … }
type Error struct {
	Status    int    // HTTP status; 0 for a network failure
	Code      string // e.g. "invalid_state_transition"
	Message   string
	RequestID string // quote it to Gable's support
	Param     string // the field at fault, for a 400

	err error // the network failure, if that is what this is
}

// The classes of Error, one per status class, matched with errors.Is.
var (
	ErrInvalidRequest = errors.New("gable: invalid request")        // 400: malformed, or a field is invalid (Param names it)
	ErrAuthentication = errors.New("gable: not authenticated")      // 401: no, an unknown, or the other environment's credential
	ErrPermission     = errors.New("gable: permission denied")      // 403: the credential lacks the scope (or property)
	ErrNotFound       = errors.New("gable: not found")              // 404
	ErrConflict       = errors.New("gable: conflict")               // 409: a state transition, a key whose first request still runs, …
	ErrIdempotency    = errors.New("gable: idempotency key reused") // 422: the Idempotency-Key was used for a different request
	ErrRateLimit      = errors.New("gable: rate limited")           // 429
	ErrServer         = errors.New("gable: server error")           // 5xx
	ErrNetwork        = errors.New("gable: network error")          // status 0: Gable could not be reached
)

func (e *Error) Error() string {
	s := fmt.Sprintf("gable: %d %s: %s", e.Status, e.Code, e.Message)
	if e.RequestID != "" {
		s += " (request " + e.RequestID + ")"
	}
	return s
}

// Is reports whether target is e's class (ErrNotFound for a 404, …).
func (e *Error) Is(target error) bool {
	class := e.class()
	return class != nil && target == class
}

func (e *Error) class() error {
	switch s := e.Status; {
	case s == 0:
		return ErrNetwork
	case s == 400:
		return ErrInvalidRequest
	case s == 401:
		return ErrAuthentication
	case s == 403:
		return ErrPermission
	case s == 404:
		return ErrNotFound
	case s == 409:
		return ErrConflict
	case s == 422:
		return ErrIdempotency
	case s == 429:
		return ErrRateLimit
	case s >= 500:
		return ErrServer
	}
	return nil // another 4xx: only the base Error
}

// Unwrap is the network failure behind a network_error (so errors.Is(err,
// context.DeadlineExceeded) works), nil otherwise.
func (e *Error) Unwrap() error { return e.err }

func errorFrom(resp *http.Response, raw []byte) *Error {
	var body struct {
		Error struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
			Param     string `json:"param"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &body) // not JSON (a proxy's page): the defaults below
	e := &Error{
		Status:    resp.StatusCode,
		Code:      body.Error.Code,
		Message:   body.Error.Message,
		RequestID: body.Error.RequestID,
		Param:     body.Error.Param,
	}
	if e.Code == "" {
		e.Code = "unknown_error"
	}
	if e.Message == "" {
		e.Message = string(raw)
		if len(e.Message) > 200 {
			e.Message = e.Message[:200]
		}
	}
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("Request-Id")
	}
	return e
}
