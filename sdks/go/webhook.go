package gable

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is how far a delivery's Gable-Timestamp may be from the clock.
const DefaultTolerance = 300 * time.Second

// Event is a webhook delivery's event (also what GET /v1/events/{id} returns).
type Event struct {
	ID              string    `json:"id"`
	Object          string    `json:"object"`
	Type            string    `json:"type"` // e.g. "lead.created"
	CreatedAt       time.Time `json:"created_at"`
	Livemode        bool      `json:"livemode"`
	APIVersion      string    `json:"api_version"`
	RelatedObjectID string    `json:"related_object_id"`
	PropertyID      string    `json:"property_id"`
	Data            EventData `json:"data"`
	Test            bool      `json:"test"` // a sample sent by POST /v1/webhooks/{id}/test

	// Raw is the verified payload, for fields Event does not name.
	Raw json.RawMessage `json:"-"`
}

// EventData is what changed: the record after the change and, for updates, the
// attributes it altered with their values before.
type EventData struct {
	Object             Record `json:"object"`
	PreviousAttributes Record `json:"previous_attributes"`
}

// SignatureVerificationError is Verify's refusal: the delivery is not from Gable, was
// changed, or is too old to trust.
type SignatureVerificationError struct {
	Reason string
}

func (e *SignatureVerificationError) Error() string {
	return "gable: webhook signature verification failed: " + e.Reason
}

// VerifyOption configures Verify.
type VerifyOption func(*verifyConfig)

type verifyConfig struct {
	tolerance time.Duration
	now       time.Time
}

// WithTolerance sets how far Gable-Timestamp may be from the clock (default 300 s).
func WithTolerance(d time.Duration) VerifyOption {
	return func(v *verifyConfig) { v.tolerance = d }
}

// WithNow sets the clock Verify compares Gable-Timestamp with (default time.Now()).
func WithNow(t time.Time) VerifyOption {
	return func(v *verifyConfig) { v.now = t }
}

// Verify checks a webhook delivery and returns its event. payload is the raw body as
// received (verify before parsing); header holds Gable-Timestamp and Gable-Signature
// (looked up case-insensitively); secret is the endpoint's whsec_… string. One of the
// space-separated v1= values must be the HMAC-SHA256 of "<timestamp>.<payload>" under the
// secret (compared in constant time), and the timestamp must be within the tolerance.
// A refusal is a *SignatureVerificationError.
func Verify(payload []byte, header http.Header, secret string, opts ...VerifyOption) (Event, error) {
	cfg := verifyConfig{tolerance: DefaultTolerance, now: time.Now()}
	for _, o := range opts {
		o(&cfg)
	}
	refuse := func(reason string) (Event, error) {
		return Event{}, &SignatureVerificationError{Reason: reason}
	}
	timestamp := headerValue(header, "Gable-Timestamp")
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return refuse("no Gable-Timestamp")
	}
	var signatures [][]byte
	for _, s := range strings.Fields(headerValue(header, "Gable-Signature")) {
		if h := strings.TrimPrefix(s, "v1="); h != s {
			if sig, err := hex.DecodeString(h); err == nil {
				signatures = append(signatures, sig)
			}
		}
	}
	if len(signatures) == 0 {
		return refuse("no v1 signature in Gable-Signature")
	}
	if age := cfg.now.Sub(time.Unix(ts, 0)); age > cfg.tolerance || -age > cfg.tolerance {
		return refuse("the timestamp is outside the tolerance: a replay, or a clock far off")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(ts, 10) + "."))
	mac.Write(payload)
	expected := mac.Sum(nil)
	matched := false
	for _, sig := range signatures {
		// Check every value, so the time taken does not tell which one matched.
		if hmac.Equal(expected, sig) {
			matched = true
		}
	}
	if !matched {
		return refuse("no signature matches this secret and body")
	}
	var event Event
	if err := json.Unmarshal(payload, &event); err != nil {
		return Event{}, fmt.Errorf("gable: the verified payload is not an event: %w", err)
	}
	event.Raw = append(json.RawMessage(nil), payload...)
	return event, nil
}

// headerValue is a header's values joined by spaces, whatever the case of its name
// (http.Header.Get only finds canonical keys; a map built by hand may not have them).
func headerValue(h http.Header, name string) string {
	var values []string
	for k, vs := range h {
		if strings.EqualFold(k, name) {
			values = append(values, vs...)
		}
	}
	return strings.TrimSpace(strings.Join(values, " "))
}
