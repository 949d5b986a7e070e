// A client made by openapi-typescript (types) + openapi-fetch (calls) from Gable's own
// description makes real calls: create a property, list leases with a filter and a sparse
// fieldset, read errors. tsc checks these calls against the generated types first, so a
// description that generates awkward or wrong types fails here before anything runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/gable.js";

type LeaseFilter = components["schemas"]["LeaseFilter"];

const url = (process.env.GABLE_SANDBOX_URL ?? "").replace(/\/+$/, "");
const key = process.env.GABLE_TEST_KEY ?? "";
assert.ok(url && key, "GABLE_SANDBOX_URL and GABLE_TEST_KEY are set by sdks/run.sh");
// Paths in the description start with /v1, so the base is the origin.
const baseUrl = url.replace(/\/v1$/, "");
const run = randomUUID().slice(0, 8);

// openapi-fetch does not read parameter styles from the description; `filter` is a
// form-exploded object (each property its own query key), which this option says.
const client = (token: string) =>
  createClient<paths>({
    baseUrl,
    headers: { Authorization: `Bearer ${token}` },
    querySerializer: { object: { style: "form", explode: true } },
  });
const gable = client(key);

test("create a property, then list leases with a filter, a fieldset and a cursor", async () => {
  const made = await gable.POST("/v1/properties", {
    body: { name: `Generated Court ${run}`, kind: "residential", address: { line1: "1 Generated Way", city: "Portland", country: "US" } },
    params: { header: { "Idempotency-Key": randomUUID() } },
  });
  assert.equal(made.response.status, 201);
  assert.ok(made.data, JSON.stringify(made.error));
  const property = made.data.data;
  assert.equal(property.name, `Generated Court ${run}`);

  const unit = await gable.POST("/v1/units", { body: { property_id: property.id, number: `G-${run}` } });
  assert.ok(unit.data, JSON.stringify(unit.error));
  const unitId = unit.data.data.id;
  const leases: string[] = [];
  for (const day of [1, 2, 3]) {
    const lease = await gable.POST("/v1/leases", {
      body: { unit_id: unitId, start_date: `2027-01-0${day}`, rent: "1450.00", currency: "USD" },
    });
    assert.ok(lease.data, JSON.stringify(lease.error));
    leases.push(lease.data.data.id);
  }

  const filter: LeaseFilter = { "filter[unit_id]": unitId, "filter[status]": "draft" };
  const first = await gable.GET("/v1/leases", {
    params: { query: { filter, "fields[leases]": ["status", "rent"], sort: ["start_date"], limit: 2 } },
  });
  assert.ok(first.data, JSON.stringify(first.error));
  assert.deepEqual(first.data.data.map((l) => l.id), leases.slice(0, 2));
  assert.deepEqual(Object.keys(first.data.data[0] ?? {}).sort(), ["id", "object", "rent", "status"]);
  assert.equal(first.data.meta.has_more, true);

  const rest = await gable.GET("/v1/leases", {
    params: {
      query: { filter, "fields[leases]": ["status", "rent"], sort: ["start_date"], limit: 2, cursor: first.data.meta.next_cursor ?? undefined },
    },
  });
  assert.ok(rest.data, JSON.stringify(rest.error));
  assert.deepEqual(rest.data.data.map((l) => l.id), leases.slice(2));
  assert.equal(rest.data.meta.has_more, false);

  // An operator taking a list: `in` takes the values comma-separated.
  const some = await gable.GET("/v1/leases", {
    params: { query: { filter: { "filter[unit_id]": unitId, "filter[status][in]": "active,signed" } } },
  });
  assert.ok(some.data, JSON.stringify(some.error));
  assert.deepEqual(some.data.data, [], "no active or signed lease on this unit");
});

test("errors arrive typed", async () => {
  const missing = await gable.GET("/v1/units/{id}", { params: { path: { id: randomUUID() } } });
  assert.equal(missing.response.status, 404);
  assert.equal(missing.error?.error.code, "not_found");
  assert.ok(missing.error?.error.request_id);

  const bad = await gable.GET("/v1/leases", { params: { query: { limit: 0 } } });
  assert.equal(bad.response.status, 400);
  assert.equal(bad.error?.error.param, "limit");

  const stranger = await client(`gbl_test_${"x".repeat(43)}`).GET("/v1/leases");
  assert.equal(stranger.response.status, 401);
  assert.equal(stranger.error?.error.code, "unauthenticated");
});
