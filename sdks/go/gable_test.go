package gable_test

// The kit against a real Gable (started by sdks/run.sh, which exports GABLE_SANDBOX_URL and
// GABLE_TEST_KEY: a sandbox key with every scope).

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gable/gable-go"
)

var (
	run     = randomHex(4)
	address = gable.Record{"line1": "1 Kit Street", "city": "Portland", "country": "US"}
)

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// client is a sandbox client for the server under test; a test fails (never skips) when
// the environment does not name one.
func client(t *testing.T, opts ...gable.Option) *gable.Client {
	t.Helper()
	url, key := os.Getenv("GABLE_SANDBOX_URL"), os.Getenv("GABLE_TEST_KEY")
	if url == "" || key == "" {
		t.Fatal("GABLE_SANDBOX_URL and GABLE_TEST_KEY must name a running Gable (sdks/run.sh go)")
	}
	return gable.Sandbox(key, append([]gable.Option{gable.WithBaseURL(url)}, opts...)...)
}

// must(t)(call) is call's record, or the test's end on its error.
func must(t *testing.T) func(gable.Record, error) gable.Record {
	return func(r gable.Record, err error) gable.Record {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}

func newProperty(t *testing.T, g *gable.Client, name string) gable.Record {
	t.Helper()
	return must(t)(g.Properties.Create(context.Background(), gable.Record{
		"name": fmt.Sprintf("%s %s", name, run), "kind": "residential", "address": address,
	}))
}

func ids(records []gable.Record) []string {
	out := make([]string, len(records))
	for i, r := range records {
		out[i] = r.ID()
	}
	return out
}

// Every collection of the served description is a field of the client, and every field is
// one of them (the fields are generated from the registry: `make generate`).
func TestEveryCollectionHasAnAccessor(t *testing.T) {
	c := client(t)
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	if err := c.Do(context.Background(), "GET", "/openapi.json", nil, nil, &doc); err != nil {
		t.Fatal(err)
	}
	// Every collection has a record path, /v1/{name}/{id}; nothing else has one.
	recordPath := regexp.MustCompile(`^/v1/([a-z-]+)/\{id\}$`)
	var described []string
	for p := range doc.Paths {
		if m := recordPath.FindStringSubmatch(p); m != nil {
			described = append(described, m[1])
		}
	}
	if len(described) == 0 {
		t.Fatal("the description has no collections")
	}
	v := reflect.ValueOf(c).Elem()
	var fields []string
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		var name string
		switch col := v.Field(i).Interface().(type) {
		case *gable.Collection:
			name = col.Name()
		case *gable.Payments:
			name = col.Name()
		default:
			t.Fatalf("field %s is a %T, not a collection", f.Name, col)
		}
		if v.Field(i).IsNil() {
			t.Fatalf("field %s is nil", f.Name)
		}
		if want := pascal(name); f.Name != want {
			t.Errorf("the field of %s is %s, want %s", name, f.Name, want)
		}
		fields = append(fields, name)
	}
	sort.Strings(described)
	sort.Strings(fields)
	if !reflect.DeepEqual(fields, described) {
		t.Fatalf("the client's collections differ from the served description's (run `make generate`):\n got  %v\n want %v", fields, described)
	}
	if c.Collection("purchase-orders").Name() != "purchase-orders" || c.PurchaseOrders.Name() != "purchase-orders" {
		t.Error("purchase-orders")
	}
}

// pascal is a collection's field name: `purchase-orders` is PurchaseOrders.
func pascal(name string) string {
	var b strings.Builder
	for _, w := range strings.Split(name, "-") {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

func TestCreateListWithAutoPaginationAndFilters(t *testing.T) {
	ctx, g := context.Background(), client(t)
	own := newProperty(t, g, "Paging Court")
	var made []gable.Record
	for i := 0; i < 5; i++ {
		made = append(made, must(t)(g.Units.Create(ctx, gable.Record{
			"property_id": own.ID(), "number": fmt.Sprintf("%s-%d", run, i), "bedrooms": i % 2,
		})))
	}

	it := g.Units.List(ctx, &gable.ListParams{Filters: gable.Filters{"property_id": own.ID()}, Limit: 2, Sort: "number"})
	var seen []gable.Record
	for it.Next() {
		seen = append(seen, it.Record())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids(seen), ids(made)) {
		t.Fatalf("three pages of two, in order: got %v, want %v", ids(seen), ids(made))
	}

	oneBed, err := g.Units.List(ctx, &gable.ListParams{
		Filters: gable.Filters{"property_id": own.ID(), "bedrooms": 1},
		Fields:  []string{"id", "bedrooms"},
	}).All()
	if err != nil {
		t.Fatal(err)
	}
	if len(oneBed) != 2 {
		t.Fatalf("filtered on bedrooms=1: %d units, want 2", len(oneBed))
	}
	for _, u := range oneBed {
		for field := range u {
			if field != "id" && field != "bedrooms" && field != "object" {
				t.Fatalf("fields=id,bedrooms returned %q: %v", field, u)
			}
		}
	}

	page, err := g.Units.Page(ctx, &gable.ListParams{Filters: gable.Filters{"property_id": own.ID()}, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !page.Meta.HasMore || page.Meta.NextCursor == "" || len(page.Data) != 2 {
		t.Fatalf("a first page of two of five: has_more=%v, next_cursor=%q, %d records",
			page.Meta.HasMore, page.Meta.NextCursor, len(page.Data))
	}
}

func TestActionsAndTypedErrors(t *testing.T) {
	ctx, g := context.Background(), client(t)
	prop := newProperty(t, g, "Kit Court")
	unit := must(t)(g.Units.Create(ctx, gable.Record{"property_id": prop.ID(), "number": run + "-L"}))
	listing := must(t)(g.Listings.Create(ctx, gable.Record{
		"unit_id": unit.ID(), "title": "Bright", "rent": "1450.00", "currency": "USD",
	}))
	published := must(t)(g.Listings.Action(ctx, listing.ID(), "publish", nil))
	if published["status"] != "published" {
		t.Fatalf("publish: status %v", published["status"])
	}

	_, err := g.Listings.Action(ctx, listing.ID(), "publish", nil)
	var apiErr *gable.Error
	if !errors.Is(err, gable.ErrConflict) || !errors.As(err, &apiErr) {
		t.Fatalf("publishing twice: want a 409 *gable.Error, got %v", err)
	}
	if apiErr.Status != 409 || apiErr.Code != "invalid_state_transition" || apiErr.RequestID == "" {
		t.Fatalf("publishing twice: %d %q, request id %q", apiErr.Status, apiErr.Code, apiErr.RequestID)
	}
	if errors.Is(err, gable.ErrNotFound) {
		t.Fatal("a 409 matched ErrNotFound")
	}

	_, err = g.Units.Get(ctx, newUUID())
	if !errors.Is(err, gable.ErrNotFound) || !errors.As(err, &apiErr) || apiErr.Status != 404 {
		t.Fatalf("an unknown unit: want a 404, got %v", err)
	}

	_, err = g.Units.Create(ctx, gable.Record{"property_id": prop.ID(), "number": run + "-X", "bedrooms": -1})
	if !errors.Is(err, gable.ErrInvalidRequest) || !errors.As(err, &apiErr) || apiErr.Param != "bedrooms" {
		t.Fatalf("bedrooms -1: want a 400 on param bedrooms, got %v", err)
	}

	bogus := gable.Sandbox("gbl_test_"+strings.Repeat("x", 43), gable.WithBaseURL(os.Getenv("GABLE_SANDBOX_URL")))
	_, err = bogus.Units.Page(ctx, nil)
	if !errors.Is(err, gable.ErrAuthentication) {
		t.Fatalf("a bogus key: want a 401, got %v", err)
	}
}

// expanded is the record field holds (t fails when it is still an id).
func expanded(t *testing.T, r gable.Record, field, what string) gable.Record {
	t.Helper()
	rec, ok := r.Expanded(field)
	if !ok {
		t.Fatalf("%s: %s is %#v, want the record", what, field, r[field])
	}
	return rec
}

func TestExpandAnswersReferencesWithTheirRecords(t *testing.T) {
	ctx, g := context.Background(), client(t)
	prop := newProperty(t, g, "Expand Court")
	unit := must(t)(g.Units.Create(ctx, gable.Record{"property_id": prop.ID(), "number": run + "-E"}))
	terms := func(start string) gable.Record {
		return gable.Record{"unit_id": unit.ID(), "start_date": start, "rent": "100.00", "currency": "USD"}
	}
	lease := must(t)(g.Leases.Create(ctx, terms("2027-01-01"), gable.WithExpand("unit")))
	if u := expanded(t, lease, "unit_id", "create"); u["object"] != "unit" || u.ID() != unit.ID() {
		t.Fatalf("create's unit_id: %v", u)
	}
	if lease["property_id"] != prop.ID() {
		t.Fatalf("what was not asked for stays an id: property_id %#v", lease["property_id"])
	}
	second := must(t)(g.Leases.Create(ctx, terms("2027-02-01")))
	if second["unit_id"] != unit.ID() {
		t.Fatalf("without expand, an id: unit_id %#v", second["unit_id"])
	}

	got := must(t)(g.Leases.Get(ctx, lease.ID(), gable.WithExpand("unit", "unit.property")))
	u := expanded(t, got, "unit_id", "get")
	p := expanded(t, u, "property_id", "get's unit")
	if u["object"] != "unit" || u["number"] != run+"-E" || p["object"] != "property" || p["name"] != "Expand Court "+run {
		t.Fatalf("get with unit and unit.property: unit %v, property %v", u, p)
	}

	// Two pages of one: the second page must be asked with expand[] too.
	listed, err := g.Leases.List(ctx, &gable.ListParams{
		Filters: gable.Filters{"unit_id": unit.ID()}, Sort: "start_date", Limit: 1, Expand: []string{"unit"},
	}).All()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids(listed), []string{lease.ID(), second.ID()}) {
		t.Fatalf("the unit's leases: %v", ids(listed))
	}
	for i, l := range listed {
		if u := expanded(t, l, "unit_id", fmt.Sprintf("page %d", i+1)); u["object"] != "unit" || u["number"] != run+"-E" {
			t.Fatalf("page %d's unit: %v", i+1, u)
		}
	}
	page, err := g.Leases.Page(ctx, &gable.ListParams{Filters: gable.Filters{"unit_id": unit.ID()}, Limit: 1, Expand: []string{"unit"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || expanded(t, page.Data[0], "unit_id", "Page").ID() != unit.ID() {
		t.Fatalf("a page with expand: %v", page.Data)
	}

	// Fieldsets of the expanded collections; an update and an action answer expanded too.
	trimmed := must(t)(g.Leases.Get(ctx, lease.ID(), gable.WithExpand("unit"), gable.WithFields("leases", "rent"), gable.WithFields("units", "number")))
	if keys := sortedKeys(trimmed); !reflect.DeepEqual(keys, []string{"id", "object", "rent", "unit_id"}) {
		t.Fatalf("fields[leases]=rent with expand[]=unit: %v (the expanded reference is shown)", keys)
	}
	if keys := sortedKeys(expanded(t, trimmed, "unit_id", "trimmed")); !reflect.DeepEqual(keys, []string{"id", "number", "object"}) {
		t.Fatalf("fields[units]=number: %v", keys)
	}
	updated := must(t)(g.Leases.Update(ctx, lease.ID(), gable.Record{"rent": "120.00"}, gable.WithExpand("unit.property")))
	if updated["rent"] != float64(120) || expanded(t, expanded(t, updated, "unit_id", "update"), "property_id", "update's unit").ID() != prop.ID() {
		t.Fatalf("update with unit.property: %v", updated)
	}
	invoice := must(t)(g.Invoices.Create(ctx, gable.Record{"lease_id": lease.ID(), "amount_due": "120.00", "currency": "USD", "due_date": "2027-01-01"}))
	opened := must(t)(g.Invoices.Action(ctx, invoice.ID(), "open", nil, gable.WithExpand("lease.unit")))
	if opened["status"] != "open" || expanded(t, expanded(t, opened, "lease_id", "action"), "unit_id", "action's lease")["number"] != run+"-E" {
		t.Fatalf("open with lease.unit: %v", opened)
	}

	_, err = g.Leases.Get(ctx, lease.ID(), gable.WithExpand("unit", "nope"))
	var apiErr *gable.Error
	if !errors.Is(err, gable.ErrInvalidRequest) || !errors.As(err, &apiErr) {
		t.Fatalf("an unknown path: want ErrInvalidRequest, got %v", err)
	}
	if apiErr.Status != 400 || apiErr.Code != "invalid_parameter" || apiErr.Param != "expand[]" {
		t.Fatalf("an unknown path: %d %q on param %q", apiErr.Status, apiErr.Code, apiErr.Param)
	}
}

func sortedKeys(r gable.Record) []string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// newUUID is a random version 4 UUID.
func newUUID() string {
	h := randomHex(16)
	return h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32]
}

func countPayments(t *testing.T, g *gable.Client) int {
	t.Helper()
	all, err := g.Payments.List(context.Background(), &gable.ListParams{Limit: 100}).All()
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

func TestARetriedTestPaymentPaysOnce(t *testing.T) {
	ctx, g := context.Background(), client(t)
	// A test invoice paid safely twice: only an open invoice takes payments.
	prop := newProperty(t, g, "Pay Court")
	unit := must(t)(g.Units.Create(ctx, gable.Record{"property_id": prop.ID(), "number": run + "-P"}))
	lease := must(t)(g.Leases.Create(ctx, gable.Record{
		"unit_id": unit.ID(), "start_date": "2027-01-01", "rent": "100.00", "currency": "USD",
	}))
	invoice := must(t)(g.Invoices.Create(ctx, gable.Record{
		"lease_id": lease.ID(), "amount_due": "100.00", "currency": "USD", "due_date": "2027-01-01",
	}))
	if invoice["status"] != "draft" {
		t.Fatalf("a new invoice: status %v, want draft", invoice["status"])
	}
	if opened := must(t)(g.Invoices.Action(ctx, invoice.ID(), "open", nil)); opened["status"] != "open" {
		t.Fatalf("open: status %v", opened["status"])
	}

	before := countPayments(t, g)
	key := gable.WithIdempotencyKey(newUUID())
	pay := gable.Record{"invoice_id": invoice.ID()}
	first := must(t)(g.Payments.CreateTestPayment(ctx, "succeeded", "100.00", "USD", pay, key))
	again := must(t)(g.Payments.CreateTestPayment(ctx, "succeeded", "100.00", "USD", pay, key))
	if first.ID() != again.ID() {
		t.Fatalf("the same key made two payments: %s and %s", first.ID(), again.ID())
	}
	if first["status"] != "succeeded" || again["status"] != "succeeded" {
		t.Fatalf("scenario succeeded: status %v, then %v", first["status"], again["status"])
	}
	if after := countPayments(t, g); after != before+1 {
		t.Fatalf("one payment for the retried request: %d before, %d after", before, after)
	}
	paid := must(t)(g.Invoices.Get(ctx, invoice.ID()))
	if paid["status"] != "paid" {
		t.Fatalf("the paid invoice: status %v, want paid", paid["status"])
	}
	// Amounts are JSON numbers (float64 in a Record).
	if amount, ok := paid["amount_paid"].(float64); !ok || amount != 100 {
		t.Fatalf("the paid invoice: amount_paid %#v, want the number 100", paid["amount_paid"])
	}
	other := must(t)(g.Payments.CreateTestPayment(ctx, "failed", "3", "USD", nil))
	if other.ID() == first.ID() || other["status"] != "failed" {
		t.Fatalf("a second payment without a key: id %s (first %s), status %v", other.ID(), first.ID(), other["status"])
	}
}

func TestAReusedIdempotencyKeyIsErrIdempotency(t *testing.T) {
	ctx, g := context.Background(), client(t)
	key := gable.WithIdempotencyKey(newUUID())
	first := must(t)(g.Payments.CreateTestPayment(ctx, "succeeded", "21.00", "USD", nil, key))
	before := countPayments(t, g)
	_, err := g.Payments.CreateTestPayment(ctx, "succeeded", "22.00", "USD", nil, key)
	var apiErr *gable.Error
	if !errors.Is(err, gable.ErrIdempotency) || !errors.As(err, &apiErr) {
		t.Fatalf("the same key with another amount: want ErrIdempotency, got %v", err)
	}
	if apiErr.Status != 422 || apiErr.Code != "idempotency_key_reused" || apiErr.RequestID == "" {
		t.Fatalf("the same key with another amount: %d %q, request id %q", apiErr.Status, apiErr.Code, apiErr.RequestID)
	}
	if errors.Is(err, gable.ErrConflict) {
		t.Fatal("a 422 matched ErrConflict")
	}
	if now := must(t)(g.Payments.Get(ctx, first.ID())); !reflect.DeepEqual(now, first) {
		t.Fatalf("the first payment changed: %v, now %v", first, now)
	}
	if after := countPayments(t, g); after != before {
		t.Fatalf("no second payment: %d before, %d after", before, after)
	}
}

func Test429IsRetriedAfterRetryAfter(t *testing.T) {
	ctx := context.Background()
	// The server runs with a low sandbox rate limit (sdks/run.sh); this burst exceeds it.
	impatient := client(t, gable.WithMaxRetries(0))
	var err error
	for i := 0; i < 400 && err == nil; i++ { // stops at the first 429
		_, err = impatient.Units.Page(ctx, &gable.ListParams{Limit: 1})
	}
	var apiErr *gable.Error
	if !errors.Is(err, gable.ErrRateLimit) || !errors.As(err, &apiErr) || apiErr.Status != 429 {
		t.Fatalf("up to 400 requests without retries: want a 429, got %v", err)
	}

	patient := client(t, gable.WithMaxRetries(5))
	started := time.Now()
	for i := 0; i < 20; i++ {
		if _, err := patient.Units.Page(ctx, &gable.ListParams{Limit: 1}); err != nil {
			t.Fatalf("request %d with retries: %v", i, err)
		}
	}
	if waited := time.Since(started); waited <= 500*time.Millisecond {
		t.Fatalf("the burst took %v: it had to wait for Retry-After", waited)
	}
}

type delivery struct {
	body   []byte
	header http.Header
}

// receiver is an HTTP server on 127.0.0.1:0 recording the POSTs it gets.
func receiver(t *testing.T) (string, <-chan delivery) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan delivery, 16)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case got <- delivery{body, r.Header.Clone()}:
		default:
		}
		w.WriteHeader(http.StatusOK)
	})}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); wg.Wait() })
	return "http://" + ln.Addr().String() + "/hook", got
}

func TestWebhookVerificationOfARealDelivery(t *testing.T) {
	ctx, g := context.Background(), client(t)
	url, got := receiver(t)
	hook := must(t)(g.Webhooks.Create(ctx, gable.Record{"url": url, "events": []string{"lead.created"}}))
	secret, _ := hook["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatal("creating a webhook endpoint returned no whsec_ secret")
	}
	defer func() {
		if _, err := g.Webhooks.Delete(ctx, hook.ID()); err != nil {
			t.Error(err)
		}
	}()
	lead := must(t)(g.Leads.Create(ctx, gable.Record{"name": "Lee", "email": "lee." + run + "@example.com"}))

	var d delivery
	select {
	case d = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("Gable delivered no event within 30 s")
	}
	event, err := gable.Verify(d.body, d.header, secret)
	if err != nil {
		t.Fatal(err)
	}
	if event.Type != "lead.created" || event.Data.Object.ID() != lead.ID() {
		t.Fatalf("delivered %q about %q, want lead.created about %s", event.Type, event.Data.Object.ID(), lead.ID())
	}

	tampered := bytes.Replace(d.body, []byte("Lee"), []byte("Eve"), 1)
	if bytes.Equal(tampered, d.body) {
		t.Fatal("the delivered body does not name the lead")
	}
	refusals := map[string]func() error{
		"a tampered body": func() error { _, err := gable.Verify(tampered, d.header, secret); return err },
		"a wrong secret":  func() error { _, err := gable.Verify(d.body, d.header, "whsec_wrong"); return err },
		"a stale timestamp": func() error {
			_, err := gable.Verify(d.body, d.header, secret, gable.WithNow(time.Now().Add(time.Hour)))
			return err
		},
	}
	for why, verify := range refusals {
		var sigErr *gable.SignatureVerificationError
		if err := verify(); !errors.As(err, &sigErr) {
			t.Errorf("%s: want a *gable.SignatureVerificationError, got %v", why, err)
		}
	}
}

// output is what a child process writes to one stream, kept whole (os/exec copies the pipe
// into it from a goroutine of its own, so the pipe never fills).
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// `gable listen --forward-to` signs each event as a delivery, under the secret that
// `gable listen --print-secret` prints: what a developer configures in their app.
func TestAGableListenForwardVerifiesWithVerify(t *testing.T) {
	bin := os.Getenv("GABLE_BIN")
	if bin == "" {
		t.Skip("GABLE_BIN (the gable binary) is not set: sdks/run.sh sets it to run `gable listen`")
	}
	ctx, g := context.Background(), client(t)
	hookURL, got := receiver(t)
	forwardTo := strings.TrimSuffix(hookURL, "/hook") + "/webhooks"
	env := append(os.Environ(),
		"GABLE_API_URL="+os.Getenv("GABLE_SANDBOX_URL"),
		"GABLE_API_KEY="+os.Getenv("GABLE_TEST_KEY"),
		"GABLE_CLI_HOME="+t.TempDir(),
	)

	printCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	printSecret := exec.CommandContext(printCtx, bin, "listen", "--print-secret")
	printSecret.Env = env
	printed, err := printSecret.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("gable listen --print-secret: %v: %s", err, exit.Stderr)
		}
		t.Fatalf("gable listen --print-secret: %v", err)
	}
	secret := strings.TrimSpace(string(printed))
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("gable listen --print-secret printed %q, not a whsec_ secret", printed)
	}

	listen := exec.Command(bin, "listen", "--forward-to", forwardTo, "--events", "lead.created")
	listen.Env = env
	var stdout, stderr output
	listen.Stdout, listen.Stderr = &stdout, &stderr
	if err := listen.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = listen.Wait(); close(exited) }()
	t.Cleanup(func() {
		// Ctrl-C (it prints its summary and exits), then a kill if it lingers.
		select {
		case <-exited:
			return
		default:
		}
		_ = listen.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = listen.Process.Kill()
			<-exited
		}
	})
	said := func() string { return stderr.String() + stdout.String() }
	ready := func() bool { return strings.Contains(stderr.String(), "Forwarding each event to") }
	for deadline := time.Now().Add(20 * time.Second); !ready() && time.Now().Before(deadline); {
		select {
		case <-exited:
			t.Fatalf("gable listen ended before it was forwarding (%v): %s", listen.ProcessState, said())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if !ready() {
		t.Fatalf("gable listen was not forwarding within 20 s: %s", said())
	}

	lead := must(t)(g.Leads.Create(ctx, gable.Record{"name": "Lee Listen", "email": "lee.listen." + run + "@example.com"}))
	var d delivery
	timeout := time.After(30 * time.Second)
	for found := false; !found; {
		select {
		case d = <-got:
			var about struct {
				Data struct {
					Object struct {
						ID string `json:"id"`
					} `json:"object"`
				} `json:"data"`
			}
			found = json.Unmarshal(d.body, &about) == nil && about.Data.Object.ID == lead.ID()
		case <-timeout:
			t.Fatalf("gable listen forwarded no lead.created about %s within 30 s: %s", lead.ID(), said())
		}
	}

	event, err := gable.Verify(d.body, d.header, secret)
	if err != nil {
		t.Fatal(err)
	}
	if event.Type != "lead.created" || event.Data.Object.ID() != lead.ID() {
		t.Fatalf("forwarded %q about %q, want lead.created about %s", event.Type, event.Data.Object.ID(), lead.ID())
	}
	if id := d.header.Get("Gable-Event-Id"); id != event.ID {
		t.Fatalf("Gable-Event-Id is %q, the event's id %q", id, event.ID)
	}
	tampered := bytes.Replace(d.body, []byte("Lee Listen"), []byte("Eve Listen"), 1)
	if bytes.Equal(tampered, d.body) {
		t.Fatal("the forwarded body does not name the lead")
	}
	var sigErr *gable.SignatureVerificationError
	if _, err := gable.Verify(tampered, d.header, secret); !errors.As(err, &sigErr) {
		t.Fatalf("a tampered body: want a *gable.SignatureVerificationError, got %v", err)
	}
}
