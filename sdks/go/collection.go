package gable

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Record is one record as the API renders it (JSON object → map).
type Record map[string]any

// ID is the record's "id" ("" when absent).
func (r Record) ID() string {
	s, _ := r["id"].(string)
	return s
}

// Expanded is the record an expanded reference holds (field "unit_id" of a lease asked
// with WithExpand("unit")), and whether it holds one: false when the field is absent, null
// or still an id.
func (r Record) Expanded(field string) (Record, bool) {
	m, ok := r[field].(map[string]any)
	return Record(m), ok
}

// Decode fills v (a pointer to the caller's struct, with json tags) from the record.
func (r Record) Decode(v any) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// Filters are a list's filters: field → value for equality (filter[field]=value), or
// field → Ops for comparisons (filter[field][op]=value). Slices are joined by commas
// (for "in" and "nin"), booleans are true/false, times RFC 3339.
//
//	gable.Filters{"status": "active", "rent": gable.Ops{"gte": 1000}, "currency": "USD"}
type Filters map[string]any

// Ops are comparisons on one field: op (ne gt gte lt lte in nin exists) → value.
type Ops map[string]any

// ListParams are a list's options; every one is optional.
type ListParams struct {
	Filters Filters
	// Sort is a comma list of fields, "-" first for descending ("-created_at,number").
	Sort string
	// Fields limits the fields returned (id and object always are).
	Fields []string
	// Expand answers references with their records instead of their ids, on every page:
	// []string{"unit", "unit.property"} (see WithExpand).
	Expand []string
	// Fieldsets limit the fields of other collections' records, expanded ones included:
	// collection → fields, map[string][]string{"units": {"number"}} (fields[units]=number).
	Fieldsets map[string][]string
	// Limit is the page size (1..100; the server's default when 0).
	Limit int
	// Cursor starts from a page's Meta.NextCursor.
	Cursor string
}

func (p *ListParams) query(collection string) url.Values {
	q := url.Values{}
	if p == nil {
		return q
	}
	for field, v := range p.Filters {
		if ops, ok := asOps(v); ok {
			for op, ov := range ops {
				q.Set(fmt.Sprintf("filter[%s][%s]", field, op), filterValue(ov))
			}
			continue
		}
		q.Set(fmt.Sprintf("filter[%s]", field), filterValue(v))
	}
	if p.Sort != "" {
		q.Set("sort", p.Sort)
	}
	if len(p.Fields) > 0 {
		q.Set("fields["+collection+"]", strings.Join(p.Fields, ","))
	}
	addShape(q, p.Fieldsets, p.Expand)
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	return q
}

// addShape adds the answer's shape to q: fields[collection]=a,b per fieldset, and one
// expand[]=path per path (the API's repeated form).
func addShape(q url.Values, fieldsets map[string][]string, expand []string) {
	for collection, fields := range fieldsets {
		if len(fields) > 0 {
			q.Set("fields["+collection+"]", strings.Join(fields, ","))
		}
	}
	for _, path := range expand {
		q.Add("expand[]", path)
	}
}

// asOps reads a filter's value as op → value when it is a map (Ops, map[string]any,
// map[string]string, …).
func asOps(v any) (map[string]any, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
		return nil, false
	}
	ops := make(map[string]any, rv.Len())
	for _, k := range rv.MapKeys() {
		ops[k.String()] = rv.MapIndex(k).Interface()
	}
	return ops, true
}

func filterValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.Format(time.RFC3339)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case fmt.Stringer:
		return x.String()
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		parts := make([]string, rv.Len())
		for i := range parts {
			parts[i] = filterValue(rv.Index(i).Interface())
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}

// Meta is a list page's meta.
type Meta struct {
	HasMore    bool   `json:"has_more"`
	NextCursor string `json:"next_cursor"`
	RequestID  string `json:"request_id"`
}

// Page is one page of a list, as the API answers it.
type Page struct {
	Data []Record `json:"data"`
	Meta Meta     `json:"meta"`
}

// Collection is one collection of the API (/v1/{name}).
type Collection struct {
	client *Client
	name   string
}

// Name is the collection's API name ("purchase-orders").
func (c *Collection) Name() string { return c.name }

func (c *Collection) path(id ...string) string {
	p := "/" + c.name
	for _, s := range id {
		p += "/" + url.PathEscape(s)
	}
	return p
}

// List returns an iterator over every record matching params, page after page (it
// follows meta.next_cursor while meta.has_more). Nothing is fetched before Next.
//
//	it := c.Units.List(ctx, &gable.ListParams{Filters: gable.Filters{"property_id": id}})
//	for it.Next() {
//		u := it.Record()
//	}
//	if err := it.Err(); err != nil { … }
func (c *Collection) List(ctx context.Context, params *ListParams) *Iter {
	q := params.query(c.name)
	return &Iter{ctx: ctx, c: c, query: q, cursor: q.Get("cursor")}
}

// Page fetches one page (params.Cursor picks which).
func (c *Collection) Page(ctx context.Context, params *ListParams) (*Page, error) {
	var page Page
	if err := c.client.Do(ctx, http.MethodGet, c.path(), params.query(c.name), nil, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// Get fetches one record; WithExpand and WithFields shape it.
func (c *Collection) Get(ctx context.Context, id string, opts ...CallOption) (Record, error) {
	return c.one(ctx, http.MethodGet, c.path(id), nil, opts...)
}

// Create makes a record from body (a Record, a map or a struct with json tags);
// WithIdempotencyKey, WithExpand and WithFields apply.
func (c *Collection) Create(ctx context.Context, body any, opts ...CallOption) (Record, error) {
	return c.one(ctx, http.MethodPost, c.path(), body, opts...)
}

// Update changes the fields in body (PATCH); WithExpand and WithFields shape the answer.
func (c *Collection) Update(ctx context.Context, id string, body any, opts ...CallOption) (Record, error) {
	return c.one(ctx, http.MethodPatch, c.path(id), body, opts...)
}

// Delete deletes a record; it returns the record as it was.
func (c *Collection) Delete(ctx context.Context, id string) (Record, error) {
	return c.one(ctx, http.MethodDelete, c.path(id), nil)
}

// Action runs a state-machine action (POST /v1/{collection}/{id}/{action}), e.g.
// c.Listings.Action(ctx, id, "publish", nil). body may be nil; WithIdempotencyKey,
// WithExpand and WithFields apply.
func (c *Collection) Action(ctx context.Context, id, action string, body any, opts ...CallOption) (Record, error) {
	return c.one(ctx, http.MethodPost, c.path(id, action), body, opts...)
}

func (c *Collection) one(ctx context.Context, method, path string, body any, opts ...CallOption) (Record, error) {
	var env struct {
		Data Record `json:"data"`
	}
	if err := c.client.Do(ctx, method, path, nil, body, &env, opts...); err != nil {
		return nil, err
	}
	return env.Data, nil
}

// Iter walks a list across its pages; see Collection.List.
type Iter struct {
	ctx     context.Context
	c       *Collection
	query   url.Values
	cursor  string
	started bool
	buf     []Record
	cur     Record
	meta    Meta
	err     error
}

// Next advances to the next record, fetching the next page when needed; false at the end
// or on an error (see Err).
func (it *Iter) Next() bool {
	for len(it.buf) == 0 {
		// A page claiming more without a cursor would loop forever: treat it as the end.
		if it.err != nil || (it.started && (!it.meta.HasMore || it.meta.NextCursor == "")) {
			return false
		}
		q := url.Values{}
		for k, v := range it.query {
			q[k] = v
		}
		if it.cursor != "" {
			q.Set("cursor", it.cursor)
		}
		var page Page
		if it.err = it.c.client.Do(it.ctx, http.MethodGet, it.c.path(), q, nil, &page); it.err != nil {
			return false
		}
		it.started, it.buf, it.meta, it.cursor = true, page.Data, page.Meta, page.Meta.NextCursor
	}
	it.cur, it.buf = it.buf[0], it.buf[1:]
	return true
}

// Record is the current record.
func (it *Iter) Record() Record { return it.cur }

// Meta is the meta of the last page fetched.
func (it *Iter) Meta() Meta { return it.meta }

// Err is the error that stopped the iteration, if any.
func (it *Iter) Err() error { return it.err }

// All collects the remaining records.
func (it *Iter) All() ([]Record, error) {
	var out []Record
	for it.Next() {
		out = append(out, it.Record())
	}
	return out, it.Err()
}

// Payments is the payments collection, with CreateTestPayment.
type Payments struct {
	*Collection
}

// CreateTestPayment makes a sandbox payment whose outcome is scenario ("succeeded",
// "failed", "reversed"), for amount (a decimal string in major units, "12.50" or "3") in
// currency. extra adds fields (invoice_id, lease_id, …) and may be nil. It always sends
// an Idempotency-Key: pass WithIdempotencyKey to retry safely across processes
// (WithExpand("invoice") answers the payment's invoice_id with the invoice).
func (p *Payments) CreateTestPayment(ctx context.Context, scenario, amount, currency string, extra Record, opts ...CallOption) (Record, error) {
	body := Record{}
	for k, v := range extra {
		body[k] = v
	}
	body["scenario"], body["amount"], body["currency"] = scenario, amount, currency
	return p.Create(ctx, body, opts...)
}
