// Package gable is Gable's Go starter kit: a client for the REST API (/v1), standard
// library only.
//
// Every collection is a field of the Client (c.Leases, c.PurchaseOrders for
// "purchase-orders") with List (an auto-paginating iterator), Page, Get, Create, Update,
// Delete and Action; references come as records instead of ids with ListParams.Expand or
// WithExpand. Every POST carries an Idempotency-Key (one per call, reused by its
// retries); 429, 5xx and network errors are retried with jittered exponential backoff,
// honouring Retry-After. Refusals are *Error values matched with errors.Is against
// ErrNotFound, ErrConflict, …; webhook deliveries are checked with Verify.
package gable

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const (
	// APIVersion is the API version this kit is written against (sent as Gable-Version).
	APIVersion = "2026-11-22"
	// Version is this kit's version (sent in User-Agent).
	Version = "0.1.0"

	// LiveURL and SandboxURL are the base addresses of a default local installation
	// (gable serve).
	LiveURL    = "http://127.0.0.1:8080/v1"
	SandboxURL = "http://127.0.0.1:8081/v1"
)

// Option configures a Client.
type Option func(*Client)

// WithBaseURL sets the environment's API address; "/v1" is added when it is missing.
func WithBaseURL(u string) Option {
	return func(c *Client) { c.baseURL = normalizeBase(u) }
}

// WithMaxRetries sets how many times a request refused with 429 or 5xx, or lost to a
// network error, is retried (default 3; 0 disables retries).
func WithMaxRetries(n int) Option {
	return func(c *Client) {
		if n < 0 {
			n = 0
		}
		c.maxRetries = n
	}
}

// WithHTTPClient sets the *http.Client requests are made with (default: one with a 30 s
// timeout).
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) { c.httpClient = h }
}

// WithBackoff sets the retries' backoff: the n-th retry waits a random time up to
// min(max, base·2ⁿ) (full jitter), unless the server sent Retry-After.
// Defaults: 500 ms and 8 s.
func WithBackoff(base, max time.Duration) Option {
	return func(c *Client) { c.backoff, c.maxBackoff = base, max }
}

// NewClient returns a client for one environment. key is an API key (gbl_live_…,
// gbl_test_…) or an OAuth access token; the base address defaults to SandboxURL.
func NewClient(key string, opts ...Option) *Client {
	c := &Client{
		key:        key,
		baseURL:    SandboxURL,
		httpClient: &http.Client{Timeout: 30 * time.Second},
		maxRetries: 3,
		backoff:    500 * time.Millisecond,
		maxBackoff: 8 * time.Second,
	}
	for _, o := range opts {
		o(c)
	}
	c.wire()
	return c
}

// Sandbox returns a client for the sandbox environment (SandboxURL unless WithBaseURL
// says otherwise).
func Sandbox(key string, opts ...Option) *Client {
	return NewClient(key, append([]Option{WithBaseURL(SandboxURL)}, opts...)...)
}

// Live returns a client for the live environment (LiveURL unless WithBaseURL says
// otherwise).
func Live(key string, opts ...Option) *Client {
	return NewClient(key, append([]Option{WithBaseURL(LiveURL)}, opts...)...)
}

// BaseURL is the API address requests go to (ending in /v1).
func (c *Client) BaseURL() string { return c.baseURL }

// Collection returns a collection by its API name ("purchase-orders").
func (c *Client) Collection(name string) *Collection {
	return &Collection{client: c, name: name}
}

func normalizeBase(u string) string {
	u = strings.TrimRight(u, "/")
	if !strings.HasSuffix(u, "/v1") {
		u += "/v1"
	}
	return u
}

// CallOption configures one call.
type CallOption func(*callConfig)

type callConfig struct {
	idempotencyKey string
	expand         []string
	fieldsets      map[string][]string
}

// WithIdempotencyKey sends key as the POST's Idempotency-Key instead of a fresh UUID:
// pass your own to retry a request safely across processes.
func WithIdempotencyKey(key string) CallOption {
	return func(cc *callConfig) { cc.idempotencyKey = key }
}

// WithExpand answers the call's references with their records instead of their ids: each
// path is a reference field's name without "_id" ("unit" for unit_id, "charges" for
// charge_ids), dotted to go further ("unit.property"); at most 10 paths of 3 levels. The
// record takes the id's place (read it with Record.Expanded). Sent as one expand[] per
// path; given more than once, the paths add up. For Get, Create, Update, Action and
// CreateTestPayment; a list takes ListParams.Expand.
//
//	lease, err := c.Leases.Get(ctx, id, gable.WithExpand("unit", "unit.property"))
//
// An unknown path is an ErrInvalidRequest whose Param is "expand[]".
func WithExpand(paths ...string) CallOption {
	return func(cc *callConfig) { cc.expand = append(cc.expand, paths...) }
}

// WithFields answers only these fields of collection's records (id and object always
// come): the call's own collection, or one an expansion brings
// (gable.WithFields("units", "number") trims every expanded unit). A list takes
// ListParams.Fields and ListParams.Fieldsets.
func WithFields(collection string, fields ...string) CallOption {
	return func(cc *callConfig) {
		if cc.fieldsets == nil {
			cc.fieldsets = map[string][]string{}
		}
		cc.fieldsets[collection] = fields
	}
}

// Do sends one request to path (relative to the base address, e.g. "/units"), with
// retries, and decodes the JSON answer into out (unless out is nil). body, when not nil,
// is sent as JSON; WithExpand and WithFields add to query. Collections call it; use it for
// what they do not cover.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body, out any, opts ...CallOption) error {
	var cc callConfig
	for _, o := range opts {
		o(&cc)
	}
	if len(cc.expand) > 0 || len(cc.fieldsets) > 0 {
		q := url.Values{}
		for k, v := range query {
			q[k] = append([]string(nil), v...)
		}
		addShape(q, cc.fieldsets, cc.expand)
		query = q
	}
	u := c.baseURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("gable: encoding the request body: %w", err)
		}
	}
	header := http.Header{
		"Authorization": {"Bearer " + c.key},
		"Gable-Version": {APIVersion},
		"Accept":        {"application/json"},
		"User-Agent":    {"gable-go/" + Version},
	}
	if payload != nil {
		header.Set("Content-Type", "application/json")
	}
	if method == http.MethodPost {
		// One key per call: its retries reuse it, so a retried POST is made once.
		key := cc.idempotencyKey
		if key == "" {
			key = newUUID()
		}
		header.Set("Idempotency-Key", key)
	}

	for attempt := 0; ; attempt++ {
		raw, resp, err := c.send(ctx, method, u, header, payload)
		if err != nil {
			if ctx.Err() == nil && attempt < c.maxRetries {
				if werr := c.wait(ctx, attempt, ""); werr == nil {
					continue
				}
			}
			return &Error{Code: "network_error", Message: "could not reach Gable: " + err.Error(), err: err}
		}
		if resp.StatusCode >= 400 {
			if (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500) && attempt < c.maxRetries {
				if werr := c.wait(ctx, attempt, resp.Header.Get("Retry-After")); werr == nil {
					continue
				}
			}
			return errorFrom(resp, raw)
		}
		if out == nil || len(raw) == 0 {
			return nil
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("gable: decoding the answer to %s %s: %w", method, path, err)
		}
		return nil
	}
}

// send makes one attempt; a failure to send or to read the whole answer is a network error.
func (c *Client) send(ctx context.Context, method, u string, header http.Header, payload []byte) ([]byte, *http.Response, error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, nil, err
	}
	req.Header = header.Clone()
	resp, err := c.httpClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	return raw, resp, nil
}

// wait sleeps before retry number attempt+1: Retry-After (whole seconds) when the server
// sent it, else full jitter, a random time up to the exponential bound.
func (c *Client) wait(ctx context.Context, attempt int, retryAfter string) error {
	var d time.Duration
	if secs, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && secs >= 0 {
		d = time.Duration(secs) * time.Second
	} else {
		bound := c.maxBackoff
		if attempt < 30 && c.backoff<<uint(attempt) < bound {
			bound = c.backoff << uint(attempt)
		}
		d = jitter(bound)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// jitter is a uniformly random duration in [0, bound], from crypto/rand because Go 1.19's
// math/rand starts from the same seed in every process (clients would retry in step).
func jitter(bound time.Duration) time.Duration {
	if bound <= 0 {
		return 0
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return bound
	}
	return time.Duration(binary.BigEndian.Uint64(b[:]) % uint64(bound+1))
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(errors.New("gable: no randomness for an idempotency key: " + err.Error()))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
