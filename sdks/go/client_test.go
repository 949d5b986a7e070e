package gable_test

// Unit tests of the transport against a stand-in server on 127.0.0.1:0: headers, query
// encoding, retries and their idempotency key, Retry-After, error classes.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gable/gable-go"
)

// seen is what the stand-in server received.
type seen struct {
	method, path, query string
	header              http.Header
	body                string
}

// standIn serves answer (called with the attempt's number, from 1) and records every
// request; it returns the server's address without /v1 and the requests so far.
func standIn(t *testing.T, answer func(n int, w http.ResponseWriter)) (string, func() []seen) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []seen
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(body)})
		n := len(got)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		answer(n, w)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String(), func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), got...)
	}
}

func fail(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Request-Id", "req_header")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"code":%q,"message":"no","param":"bedrooms"}}`, code)
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func fast(base string, opts ...gable.Option) *gable.Client {
	return gable.NewClient("gbl_test_unit", append([]gable.Option{
		gable.WithBaseURL(base), gable.WithBackoff(time.Millisecond, 5*time.Millisecond),
	}, opts...)...)
}

func TestRequestsCarryVersionAgentKeyAndQuery(t *testing.T) {
	base, got := standIn(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			_, _ = io.WriteString(w, `{"data":[],"meta":{"has_more":false,"next_cursor":null}}`)
			return
		}
		_, _ = io.WriteString(w, `{"data":{"id":"po_1"}}`)
	})
	c := fast(base + "/")
	if c.BaseURL() != base+"/v1" {
		t.Fatalf("base URL %q: /v1 not appended", c.BaseURL())
	}
	page, err := c.Units.Page(context.Background(), &gable.ListParams{
		Filters: gable.Filters{"property_id": "p1", "rent": gable.Ops{"gte": 1000}, "status": map[string]any{"in": []string{"a", "b"}}, "furnished": true},
		Sort:    "-created_at,number", Fields: []string{"id", "rent"}, Limit: 2, Cursor: "cur",
	})
	if err != nil || page.Meta.HasMore {
		t.Fatal(page, err)
	}
	r := got()[0]
	want := "cursor=cur&fields%5Bunits%5D=id%2Crent&filter%5Bfurnished%5D=true&filter%5Bproperty_id%5D=p1" +
		"&filter%5Brent%5D%5Bgte%5D=1000&filter%5Bstatus%5D%5Bin%5D=a%2Cb&limit=2&sort=-created_at%2Cnumber"
	if r.method != "GET" || r.path != "/v1/units" || r.query != want {
		t.Fatalf("%s %s?%s\nwant GET /v1/units?%s", r.method, r.path, r.query, want)
	}
	for name, value := range map[string]string{
		"Authorization": "Bearer gbl_test_unit", "Gable-Version": "2026-11-22", "User-Agent": "gable-go/0.1.0",
	} {
		if r.header.Get(name) != value {
			t.Errorf("%s: %q, want %q", name, r.header.Get(name), value)
		}
	}
	if r.header.Get("Idempotency-Key") != "" {
		t.Error("a GET carried an Idempotency-Key")
	}

	if _, err := c.PurchaseOrders.Create(context.Background(), gable.Record{"vendor_id": "v"}); err != nil {
		t.Fatal(err)
	}
	r = got()[1]
	if r.path != "/v1/purchase-orders" || !uuidV4.MatchString(r.header.Get("Idempotency-Key")) || r.body != `{"vendor_id":"v"}` {
		t.Fatalf("POST %s, Idempotency-Key %q, body %s", r.path, r.header.Get("Idempotency-Key"), r.body)
	}
}

func TestRetriesReuseTheIdempotencyKey(t *testing.T) {
	base, got := standIn(t, func(n int, w http.ResponseWriter) {
		if n < 3 {
			fail(w, 503, "unavailable")
			return
		}
		_, _ = io.WriteString(w, `{"data":{"id":"pay_1","status":"succeeded"}}`)
	})
	p, err := fast(base).Payments.CreateTestPayment(context.Background(), "succeeded", "12.50", "USD",
		gable.Record{"invoice_id": "inv_1"}, gable.WithIdempotencyKey("order-0001"))
	if err != nil || p.ID() != "pay_1" {
		t.Fatal(p, err)
	}
	reqs := got()
	if len(reqs) != 3 {
		t.Fatalf("%d attempts, want 3", len(reqs))
	}
	for _, r := range reqs {
		if r.header.Get("Idempotency-Key") != "order-0001" || r.body != `{"amount":"12.50","currency":"USD","invoice_id":"inv_1","scenario":"succeeded"}` {
			t.Fatalf("an attempt with key %q and body %s", r.header.Get("Idempotency-Key"), r.body)
		}
	}
	// Without a key of the caller's, the retries share the one the kit made.
	base, got = standIn(t, func(n int, w http.ResponseWriter) {
		if n < 2 {
			fail(w, 429, "rate_limited")
			return
		}
		_, _ = io.WriteString(w, `{"data":{}}`)
	})
	if _, err := fast(base).Payments.CreateTestPayment(context.Background(), "failed", "3", "USD", nil); err != nil {
		t.Fatal(err)
	}
	if reqs = got(); len(reqs) != 2 || reqs[0].header.Get("Idempotency-Key") != reqs[1].header.Get("Idempotency-Key") || !uuidV4.MatchString(reqs[0].header.Get("Idempotency-Key")) {
		t.Fatalf("%d attempts, keys %q", len(reqs), []string{reqs[0].header.Get("Idempotency-Key"), reqs[len(reqs)-1].header.Get("Idempotency-Key")})
	}
}

func TestMaxRetries(t *testing.T) {
	for _, retries := range []int{0, 2} {
		base, got := standIn(t, func(_ int, w http.ResponseWriter) { fail(w, 500, "internal") })
		_, err := fast(base, gable.WithMaxRetries(retries)).Units.Get(context.Background(), "u1")
		if !errors.Is(err, gable.ErrServer) || len(got()) != retries+1 {
			t.Fatalf("max %d retries: %d attempts, error %v", retries, len(got()), err)
		}
	}
	// 4xx other than 429 are answers, not accidents: never retried.
	base, got := standIn(t, func(_ int, w http.ResponseWriter) { fail(w, 409, "conflict") })
	if _, err := fast(base).Units.Action(context.Background(), "u1", "archive", nil); !errors.Is(err, gable.ErrConflict) || len(got()) != 1 {
		t.Fatalf("a 409 made %d attempts: %v", len(got()), err)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	base, got := standIn(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			fail(w, 429, "rate_limited")
			return
		}
		_, _ = io.WriteString(w, `{"data":{"id":"u1"}}`)
	})
	started := time.Now()
	if _, err := fast(base).Units.Get(context.Background(), "u1"); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(started); waited < time.Second || len(got()) != 2 {
		t.Fatalf("%d attempts in %v: Retry-After: 1 not waited for", len(got()), waited)
	}
}

func TestErrorClassesAndFields(t *testing.T) {
	classes := []error{gable.ErrInvalidRequest, gable.ErrAuthentication, gable.ErrPermission, gable.ErrNotFound,
		gable.ErrConflict, gable.ErrIdempotency, gable.ErrRateLimit, gable.ErrServer, gable.ErrNetwork}
	for status, want := range map[int]error{400: gable.ErrInvalidRequest, 401: gable.ErrAuthentication,
		403: gable.ErrPermission, 404: gable.ErrNotFound, 409: gable.ErrConflict, 422: gable.ErrIdempotency,
		429: gable.ErrRateLimit, 500: gable.ErrServer, 503: gable.ErrServer, 418: nil} {
		status := status
		base, _ := standIn(t, func(_ int, w http.ResponseWriter) { fail(w, status, "code_"+strconv.Itoa(status)) })
		_, err := fast(base, gable.WithMaxRetries(0)).Units.Get(context.Background(), "u1")
		var apiErr *gable.Error
		if !errors.As(err, &apiErr) || apiErr.Status != status || apiErr.Code != "code_"+strconv.Itoa(status) ||
			apiErr.Message != "no" || apiErr.Param != "bedrooms" || apiErr.RequestID != "req_header" {
			t.Fatalf("%d: %#v", status, err)
		}
		for _, class := range classes {
			if errors.Is(err, class) != (class == want) {
				t.Errorf("%d: errors.Is(err, %v) = %v", status, class, errors.Is(err, class))
			}
		}
	}
}

func TestANetworkFailureIsStatusZero(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = fast(base, gable.WithMaxRetries(2)).Units.Get(context.Background(), "u1")
	var apiErr *gable.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 0 || apiErr.Code != "network_error" || !errors.Is(err, gable.ErrNetwork) {
		t.Fatalf("want a network_error with status 0, got %#v", err)
	}
}

func TestTheIteratorStopsOnAnError(t *testing.T) {
	base, got := standIn(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			_, _ = io.WriteString(w, `{"data":[{"id":"a"},{"id":"b"}],"meta":{"has_more":true,"next_cursor":"c2"}}`)
			return
		}
		fail(w, 404, "resource_missing")
	})
	records, err := fast(base).Units.List(context.Background(), &gable.ListParams{Limit: 2}).All()
	if len(records) != 2 || !errors.Is(err, gable.ErrNotFound) {
		t.Fatalf("%d records, error %v", len(records), err)
	}
	if q := got()[1].query; q != "cursor=c2&limit=2" {
		t.Fatalf("the second page was asked as %q", q)
	}
}

func TestExpandIsRepeatedOnEveryCallAndEveryPage(t *testing.T) {
	base, got := standIn(t, func(n int, w http.ResponseWriter) {
		switch n {
		case 1:
			_, _ = io.WriteString(w, `{"data":[{"id":"a","unit_id":{"id":"u","object":"unit"}}],"meta":{"has_more":true,"next_cursor":"c2"}}`)
		case 2:
			_, _ = io.WriteString(w, `{"data":[{"id":"b","unit_id":"u"}],"meta":{"has_more":false}}`)
		default:
			_, _ = io.WriteString(w, `{"data":{"id":"x"}}`)
		}
	})
	ctx, c := context.Background(), fast(base)
	records, err := c.Leases.List(ctx, &gable.ListParams{
		Filters: gable.Filters{"status": "active"}, Expand: []string{"unit", "unit.property"}, Limit: 1,
		Fieldsets: map[string][]string{"units": {"number"}},
	}).All()
	if err != nil || len(records) != 2 {
		t.Fatal(records, err)
	}
	if u, ok := records[0].Expanded("unit_id"); !ok || u.ID() != "u" {
		t.Fatalf("Expanded on a record: %v %v", u, ok)
	}
	if _, ok := records[1].Expanded("unit_id"); ok {
		t.Fatal("Expanded on an id said it is a record")
	}
	calls := []func() (gable.Record, error){
		func() (gable.Record, error) {
			return c.Leases.Get(ctx, "l 1", gable.WithExpand("unit", "unit.property"), gable.WithFields("leases", "rent"), gable.WithFields("units", "number", "bedrooms"))
		},
		func() (gable.Record, error) {
			return c.Leases.Create(ctx, gable.Record{"rent": 1}, gable.WithExpand("unit"), gable.WithExpand("unit.property"), gable.WithIdempotencyKey("k-123456"))
		},
		func() (gable.Record, error) {
			return c.Leases.Update(ctx, "l1", gable.Record{"rent": 2}, gable.WithExpand("unit"))
		},
		func() (gable.Record, error) {
			return c.Leases.Action(ctx, "l1", "send", nil, gable.WithExpand("unit", "unit.property"))
		},
		func() (gable.Record, error) {
			return c.Payments.CreateTestPayment(ctx, "succeeded", "1.00", "USD", nil, gable.WithExpand("invoice"))
		},
		func() (gable.Record, error) { return c.Leases.Get(ctx, "l1") },
	}
	for i, call := range calls {
		if _, err := call(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	e := "expand%5B%5D=unit&expand%5B%5D=unit.property"
	want := []string{
		"GET /v1/leases?" + e + "&fields%5Bunits%5D=number&filter%5Bstatus%5D=active&limit=1",
		"GET /v1/leases?cursor=c2&" + e + "&fields%5Bunits%5D=number&filter%5Bstatus%5D=active&limit=1",
		"GET /v1/leases/l 1?" + e + "&fields%5Bleases%5D=rent&fields%5Bunits%5D=number%2Cbedrooms",
		"POST /v1/leases?" + e,
		"PATCH /v1/leases/l1?expand%5B%5D=unit",
		"POST /v1/leases/l1/send?" + e,
		"POST /v1/payments?expand%5B%5D=invoice",
		"GET /v1/leases/l1?",
	}
	seenCalls := got()
	for i, r := range seenCalls {
		if line := r.method + " " + r.path + "?" + r.query; i >= len(want) || line != want[i] {
			t.Errorf("request %d: %s", i, line)
		}
	}
	if len(seenCalls) != len(want) {
		t.Fatalf("%d requests, want %d", len(seenCalls), len(want))
	}
	if key := seenCalls[3].header.Get("Idempotency-Key"); key != "k-123456" {
		t.Fatalf("the create's Idempotency-Key: %q", key)
	}
}

func TestPresets(t *testing.T) {
	if gable.Sandbox("gbl_test_unit").BaseURL() != gable.SandboxURL || gable.Live("gbl_live_unit").BaseURL() != gable.LiveURL {
		t.Fatal("the presets' base URLs")
	}
	if c := gable.Sandbox("gbl_test_unit"); c.Collection("purchase-orders").Name() != "purchase-orders" || c.PurchaseOrders == nil {
		t.Fatal("a collection by its API name, and its field")
	}
}
