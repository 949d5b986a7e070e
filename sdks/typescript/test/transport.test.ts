/**
 * What goes on the wire, against a local stand-in for Gable: what the real server cannot show
 * (the headers sent, one Idempotency-Key across retries, network failures).
 */

import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";

import { API_VERSION, Gable, GableError, LIVE_URL, SANDBOX_URL, ServerError } from "@gable/sdk";

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

describe("transport", () => {
  let server: Server;
  let base: string;
  const seen: Seen[] = [];
  // Each request takes the next planned answer; `[status, body, headers]`.
  let plan: [number, unknown, Record<string, string>?][] = [];

  before(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        const [status, answer, headers] = plan.shift() ?? [200, { data: { id: "x", object: "unit" } }];
        res.writeHead(status, { "Content-Type": "application/json", ...headers }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it("adds /v1 to a base URL, and has live and sandbox presets", () => {
    assert.equal(new Gable("k", { baseUrl: "http://example.test/" }).baseUrl, "http://example.test/v1");
    assert.equal(new Gable("k", { baseUrl: "http://example.test/v1/" }).baseUrl, "http://example.test/v1");
    assert.equal(Gable.live("k").baseUrl, LIVE_URL);
    assert.equal(Gable.sandbox("k").baseUrl, SANDBOX_URL);
    assert.equal(new Gable("k").baseUrl, SANDBOX_URL);
    assert.deepEqual([LIVE_URL, SANDBOX_URL], ["http://127.0.0.1:8080/v1", "http://127.0.0.1:8081/v1"]);
  });

  it("sends the pinned headers, and one Idempotency-Key across a POST's retries (after Retry-After)", async () => {
    seen.length = 0;
    plan = [
      [503, { error: { code: "unavailable", message: "busy", request_id: "req_1" } }],
      [429, { error: { code: "rate_limited", message: "slow down", request_id: "req_2" } }, { "Retry-After": "1" }],
    ];
    const gable = new Gable("gbl_test_abc", { baseUrl: base, initialBackoff: 10 });
    const started = performance.now();
    const unit = await gable.units.create({ number: "1A" });
    assert.equal(unit.id, "x");
    assert.ok(performance.now() - started >= 1000, "waited the Retry-After second");
    assert.equal(seen.length, 3);
    for (const s of seen) {
      assert.equal(s.method, "POST");
      assert.equal(s.url, "/v1/units");
      assert.equal(s.headers.authorization, "Bearer gbl_test_abc");
      assert.equal(s.headers["gable-version"], API_VERSION);
      assert.equal(s.headers["user-agent"], "gable-typescript/0.1.0");
      assert.equal(s.headers["content-type"], "application/json");
      assert.deepEqual(JSON.parse(s.body), { number: "1A" });
    }
    const keys = new Set(seen.map((s) => String(s.headers["idempotency-key"])));
    assert.equal(keys.size, 1, "the retries reuse the call's key");
    const [key] = keys;
    assert.match(key!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, "a UUID v4");

    await gable.units.create({ number: "1B" });
    assert.notEqual(seen[3]!.headers["idempotency-key"], key, "a new call, a new key");
    await gable.units.get("u 1");
    assert.equal(seen[4]!.headers["idempotency-key"], undefined, "no key on a GET");
    assert.equal(seen[4]!.url, "/v1/units/u%201");
  });

  it("gives up after maxRetries with the typed error; 0 disables retries", async () => {
    seen.length = 0;
    const failure: [number, unknown] = [502, { error: { code: "bad_gateway", message: "down", request_id: "req_9" } }];
    plan = [failure, failure, failure];
    const gable = new Gable("k", { baseUrl: base, maxRetries: 2, initialBackoff: 1 });
    await assert.rejects(gable.units.page(), (e: unknown) => {
      assert.ok(e instanceof ServerError);
      assert.deepEqual([e.status, e.code, e.message, e.requestId], [502, "bad_gateway", "down", "req_9"]);
      return true;
    });
    assert.equal(seen.length, 3, "one attempt and two retries");
    seen.length = 0;
    plan = [failure];
    await assert.rejects(new Gable("k", { baseUrl: base, maxRetries: 0 }).units.page(), ServerError);
    assert.equal(seen.length, 1);
  });

  it("encodes filters, sort, fields, limit and cursor", async () => {
    seen.length = 0;
    plan = [[200, { data: [], meta: { has_more: false, next_cursor: null } }]];
    const gable = new Gable("k", { baseUrl: base });
    await gable.leases.page({
      filters: { status: "active", rent: { gte: 1000 }, currency: "USD", kind: { in: ["a", "b"] }, signed: true },
      sort: ["-start_date", "number"],
      fields: ["id", "rent"],
      limit: 50,
      cursor: "c1",
    });
    const query = [...new URL(seen[0]!.url, base).searchParams];
    assert.deepEqual(query, [
      ["filter[status]", "active"],
      ["filter[rent][gte]", "1000"],
      ["filter[currency]", "USD"],
      ["filter[kind][in]", "a,b"],
      ["filter[signed]", "true"],
      ["sort", "-start_date,number"],
      ["fields[leases]", "id,rent"],
      ["limit", "50"],
      ["cursor", "c1"],
    ]);
    assert.equal(new URL(seen[0]!.url, base).pathname, "/v1/leases");
    assert.equal(new Gable("k", { baseUrl: base }).purchaseOrders.name, "purchase-orders");
    assert.equal(new Gable("k", { baseUrl: base }).collection("flow-tokens").name, "flow-tokens");
  });

  it("sends expand as repeated expand[] and fieldsets per collection, on every call and every page", async () => {
    seen.length = 0;
    const empty = { data: { id: "x", object: "lease" } };
    plan = [
      [200, { data: [{ id: "a" }], meta: { has_more: true, next_cursor: "c2" } }],
      [200, { data: [{ id: "b" }], meta: { has_more: false, next_cursor: null } }],
      [200, empty],
      [201, empty],
      [200, empty],
      [200, empty],
      [201, { data: { id: "p", object: "payment" } }],
      [200, empty],
    ];
    const gable = new Gable("k", { baseUrl: base });
    const expand = ["unit", "unit.property"];
    const ids: string[] = [];
    for await (const l of gable.leases.list({ filters: { status: "active" }, expand, limit: 1 })) ids.push(l.id);
    assert.deepEqual(ids, ["a", "b"]);
    await gable.leases.get("l 1", { expand, fields: { leases: ["rent"], units: ["number", "bedrooms"] } });
    await gable.leases.create({ rent: 1 }, { expand, idempotencyKey: "k-123456" });
    await gable.leases.update("l1", { rent: 2 }, { expand: ["unit"], fields: ["rent"] });
    await gable.leases.action("l1", "send", undefined, { expand });
    await gable.payments.createTestPayment("succeeded", "1.00", "USD", {}, { expand: ["invoice"] });
    await gable.leases.get("l1");
    const e = "expand%5B%5D=unit&expand%5B%5D=unit.property";
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url}`),
      [
        `GET /v1/leases?filter%5Bstatus%5D=active&${e}&limit=1`,
        `GET /v1/leases?filter%5Bstatus%5D=active&${e}&limit=1&cursor=c2`,
        `GET /v1/leases/l%201?fields%5Bleases%5D=rent&fields%5Bunits%5D=number%2Cbedrooms&${e}`,
        `POST /v1/leases?${e}`,
        "PATCH /v1/leases/l1?fields%5Bleases%5D=rent&expand%5B%5D=unit",
        `POST /v1/leases/l1/send?${e}`,
        "POST /v1/payments?expand%5B%5D=invoice",
        "GET /v1/leases/l1",
      ],
    );
    assert.equal(seen[3]!.headers["idempotency-key"], "k-123456", "the key still goes with expand");
    assert.match(String(seen[6]!.headers["idempotency-key"]), /^[0-9a-f-]{36}$/, "a test payment still gets its key");
  });

  it("a network failure after the retries is a GableError with status 0 and code network_error", async () => {
    // A port nothing listens on: every attempt is refused.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const gable = new Gable("k", { baseUrl: `http://127.0.0.1:${port}`, maxRetries: 1, initialBackoff: 1 });
    await assert.rejects(gable.units.page(), (e: unknown) => {
      assert.ok(e instanceof GableError);
      assert.equal(e.constructor, GableError);
      assert.deepEqual([e.status, e.code], [0, "network_error"]);
      return true;
    });
  });
});
