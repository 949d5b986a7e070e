/**
 * The kit against a real Gable (started by sdks/run.sh, which exports GABLE_SANDBOX_URL and
 * GABLE_TEST_KEY: a sandbox key with every scope).
 */

import assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { before, describe, it } from "node:test";
import { promisify } from "node:util";

import {
  AuthenticationError,
  Collection,
  ConflictError,
  Gable,
  GableError,
  IdempotencyError,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
  SignatureVerificationError,
  verify,
  type Expandable,
  type GableOptions,
  type GableRecord,
} from "@gable/sdk";

const BASE_URL = required("GABLE_SANDBOX_URL");
const KEY = required("GABLE_TEST_KEY");
const RUN = randomUUID().slice(0, 8);
const ADDRESS = { line1: "1 Kit Street", city: "Portland", country: "US" };

interface Unit extends GableRecord {
  property_id: string;
  number: string;
  bedrooms: number;
}

interface Property extends GableRecord {
  name: string;
}

interface ExpandableUnit extends GableRecord {
  number: string;
  property_id: Expandable<Property>;
}

interface Lease extends GableRecord {
  rent: number;
  unit_id: Expandable<ExpandableUnit>;
  property_id: Expandable<Property>;
}

/** A lease asked with `expand: ["unit", "unit.property"]`. */
type LeaseWithUnit = Lease & { unit_id: ExpandableUnit & { property_id: Property } };

/** The reference as the record it was expanded into (a failure when it is still an id). */
function expanded<T extends GableRecord>(ref: Expandable<T>, what: string): T {
  assert.equal(typeof ref, "object", `${what}: the record, not the id ${JSON.stringify(ref)}`);
  return ref as T;
}

interface Invoice extends GableRecord {
  status: string;
  amount_paid: number;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this suite through sdks/run.sh`);
  return value;
}

const client = (options: GableOptions = {}) => Gable.sandbox(KEY, { baseUrl: BASE_URL, ...options });

/** Ends a child process: Ctrl-C (SIGINT), then SIGKILL when it is still there after 10 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGINT");
  const ended = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
  if (!ended) {
    child.kill("SIGKILL");
    await exited;
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

describe("against Gable", () => {
  const gable = client();
  let property: GableRecord;

  before(async () => {
    property = await gable.properties.create({ name: `Kit Court ${RUN}`, kind: "residential", address: ADDRESS });
  });

  it("has an accessor for each collection of the served description, and for no other", async () => {
    // Every collection has a record path, /v1/{name}/{id}; nothing else has one.
    const doc = await gable.request<{ paths: Record<string, unknown> }>("GET", "/openapi.json");
    const described = Object.keys(doc.paths).flatMap((p) => /^\/v1\/([a-z-]+)\/\{id\}$/.exec(p)?.[1] ?? []);
    assert.ok(described.length > 0, "the description has collections");
    const accessors = Object.entries(gable).filter((e): e is [string, Collection] => e[1] instanceof Collection);
    assert.deepEqual(accessors.map(([, c]) => c.name).sort(), [...described].sort(), "run `make generate`");
    for (const [property, c] of accessors) {
      assert.equal(property, c.name.replace(/-(.)/g, (_, l: string) => l.toUpperCase()), c.name);
    }
    assert.ok(gable.payments instanceof Collection && gable.purchaseOrders.name === "purchase-orders");
  });

  describe("create, list, filters", () => {
    let own: GableRecord;
    let made: Unit[];

    before(async () => {
      own = await gable.properties.create({ name: `Paging Court ${RUN}`, kind: "residential", address: ADDRESS });
      made = [];
      for (let i = 0; i < 5; i++) {
        made.push(await gable.units.create<Unit>({ property_id: own.id, number: `${RUN}-${i}`, bedrooms: i % 2 }));
      }
    });

    it("creates records and reads one back, typed", async () => {
      assert.equal(made.length, 5);
      const first = made[0]!;
      assert.equal(first.object, "unit");
      const again = await gable.units.get<Unit>(first.id);
      assert.deepEqual([again.id, again.number, again.property_id], [first.id, `${RUN}-0`, own.id]);
    });

    it("auto-paginates over several pages, in order", async () => {
      const seen = await collect(gable.units.list({ filters: { property_id: own.id }, limit: 2, sort: "number" }));
      assert.deepEqual(
        seen.map((u) => u.id),
        made.map((u) => u.id),
        "three pages of two, in order",
      );
    });

    it("filters and picks fields", async () => {
      const twoBeds = await collect(gable.units.list({ filters: { property_id: own.id, bedrooms: 1 }, fields: ["id", "bedrooms"] }));
      assert.equal(twoBeds.length, 2);
      for (const unit of twoBeds) {
        assert.ok(Object.keys(unit).every((k) => ["id", "bedrooms", "object"].includes(k)), JSON.stringify(unit));
        assert.equal(unit.bedrooms, 1);
      }
      const many = await collect(gable.units.list({ filters: { property_id: own.id, bedrooms: { gte: 1 } } }));
      assert.equal(many.length, 2, "an operator filter");
    });

    it("returns one page with data and meta", async () => {
      const page = await gable.units.page({ filters: { property_id: own.id }, limit: 2 });
      assert.equal(page.data.length, 2);
      assert.equal(page.meta.has_more, true);
      assert.ok(page.meta.next_cursor);
      const next = await gable.units.page({ filters: { property_id: own.id }, limit: 2, cursor: page.meta.next_cursor! });
      assert.notEqual(next.data[0]!.id, page.data[0]!.id);
    });
  });

  describe("actions and typed errors", () => {
    it("runs an action; the same action again is a 409 invalid_state_transition", async () => {
      const unit = await gable.units.create({ property_id: property.id, number: `${RUN}-L` });
      const listing = await gable.listings.create({ unit_id: unit.id, title: "Bright", rent: "1450.00", currency: "USD" });
      assert.equal((await gable.listings.action(listing.id, "publish")).status, "published");
      await assert.rejects(gable.listings.action(listing.id, "publish"), (e: unknown) => {
        assert.ok(e instanceof ConflictError);
        assert.deepEqual([e.status, e.code], [409, "invalid_state_transition"]);
        assert.ok(e.requestId, "a request id");
        return true;
      });
    });

    it("a missing record is a 404 NotFoundError", async () => {
      await assert.rejects(gable.units.get(randomUUID()), (e: unknown) => {
        assert.ok(e instanceof NotFoundError);
        assert.equal(e.status, 404);
        return true;
      });
    });

    it("an invalid field is a 400 InvalidRequestError naming its param", async () => {
      const invalid = gable.units.create({ property_id: property.id, number: `${RUN}-X`, bedrooms: -1 });
      await assert.rejects(invalid, (e: unknown) => {
        assert.ok(e instanceof InvalidRequestError);
        assert.deepEqual([e.status, e.param], [400, "bedrooms"]);
        return true;
      });
    });

    it("a bogus key is a 401 AuthenticationError", async () => {
      const bogus = Gable.sandbox(`gbl_test_${"x".repeat(43)}`, { baseUrl: BASE_URL });
      await assert.rejects(bogus.units.page(), (e: unknown) => {
        assert.ok(e instanceof AuthenticationError);
        assert.equal(e.status, 401);
        return true;
      });
    });
  });

  it("expands references on get, list (every page), create, update and actions", async () => {
    const own = await gable.properties.create<Property>({ name: `Expand Court ${RUN}`, kind: "residential", address: ADDRESS });
    const unit = await gable.units.create({ property_id: own.id, number: `${RUN}-E` });
    const terms = { unit_id: unit.id, rent: "100.00", currency: "USD" };
    const lease = await gable.leases.create<Lease>({ ...terms, start_date: "2027-01-01" }, { expand: ["unit"] });
    const created = expanded(lease.unit_id, "create's unit_id");
    assert.deepEqual([created.object, created.id], ["unit", unit.id]);
    assert.equal(lease.property_id, own.id, "what was not asked for stays an id");
    const second = await gable.leases.create<Lease>({ ...terms, start_date: "2027-02-01" });
    assert.equal(second.unit_id, unit.id, "without expand, an id");

    const got = await gable.leases.get<LeaseWithUnit>(lease.id, { expand: ["unit", "unit.property"] });
    assert.equal(got.unit_id.object, "unit");
    assert.equal(got.unit_id.number, `${RUN}-E`);
    assert.equal(got.unit_id.property_id.object, "property");
    assert.equal(got.unit_id.property_id.name, `Expand Court ${RUN}`);

    // Two pages of one: the second page must be asked with expand[] too.
    const listed = await collect(gable.leases.list<Lease>({ filters: { unit_id: unit.id }, sort: "start_date", limit: 1, expand: ["unit"] }));
    assert.deepEqual(listed.map((l) => l.id), [lease.id, second.id]);
    listed.forEach((l, i) => {
      const u = expanded(l.unit_id, `page ${i + 1}'s unit_id`);
      assert.deepEqual([u.object, u.number], ["unit", `${RUN}-E`]);
    });
    const page = await gable.leases.page<Lease>({ filters: { unit_id: unit.id }, limit: 1, expand: ["unit"] });
    assert.equal(expanded(page.data[0]!.unit_id, "page's unit_id").id, unit.id);

    // Fieldsets of the expanded collections; an update and an action answer expanded too.
    const trimmed = await gable.leases.get<Lease>(lease.id, { expand: ["unit"], fields: { leases: ["rent"], units: ["number"] } });
    assert.deepEqual(Object.keys(trimmed).sort(), ["id", "object", "rent", "unit_id"], "the expanded reference is shown");
    assert.deepEqual(Object.keys(expanded(trimmed.unit_id, "trimmed")).sort(), ["id", "number", "object"]);
    const updated = await gable.leases.update<LeaseWithUnit>(lease.id, { rent: "120.00" }, { expand: ["unit.property"] });
    assert.equal(updated.rent, 120);
    assert.equal(updated.unit_id.property_id.id, own.id);
    const invoice = await gable.invoices.create({ lease_id: lease.id, amount_due: "120.00", currency: "USD", due_date: "2027-01-01" });
    const opened = await gable.invoices.action<Invoice & { lease_id: Lease }>(invoice.id, "open", undefined, { expand: ["lease.unit"] });
    assert.equal(opened.status, "open");
    assert.equal(expanded(opened.lease_id.unit_id, "the action's lease.unit").number, `${RUN}-E`);

    await assert.rejects(gable.leases.get(lease.id, { expand: ["unit", "nope"] }), (e: unknown) => {
      assert.ok(e instanceof InvalidRequestError, `an InvalidRequestError, not ${String(e)}`);
      assert.deepEqual([e.status, e.code, e.param], [400, "invalid_parameter", "expand[]"]);
      return true;
    });
  });

  it("a retried test payment pays once", async () => {
    // A test invoice paid safely twice: only an open invoice takes payments.
    const unit = await gable.units.create({ property_id: property.id, number: `${RUN}-P` });
    const lease = await gable.leases.create({ unit_id: unit.id, start_date: "2027-01-01", rent: "100.00", currency: "USD" });
    const invoice = await gable.invoices.create<Invoice>({ lease_id: lease.id, amount_due: "100.00", currency: "USD", due_date: "2027-01-01" });
    assert.equal(invoice.status, "draft");
    assert.equal((await gable.invoices.action<Invoice>(invoice.id, "open")).status, "open");

    const count = async () => (await collect(gable.payments.list({ limit: 100 }))).length;
    const before = await count();
    const idempotencyKey = randomUUID();
    const pay = { invoice_id: invoice.id };
    const first = await gable.payments.createTestPayment("succeeded", "100.00", "USD", pay, { idempotencyKey });
    const again = await gable.payments.createTestPayment("succeeded", "100.00", "USD", pay, { idempotencyKey });
    assert.equal(again.id, first.id);
    assert.deepEqual([first.status, again.status], ["succeeded", "succeeded"]);
    assert.equal(await count(), before + 1, "one payment for the retried request");
    const paid = await gable.invoices.get<Invoice>(invoice.id);
    assert.equal(paid.status, "paid");
    assert.equal(typeof paid.amount_paid, "number", "amounts are JSON numbers");
    assert.equal(paid.amount_paid, 100);
    const other = await gable.payments.createTestPayment("failed", 3, "USD");
    assert.notEqual(other.id, first.id);
    assert.equal(other.status, "failed");
  });

  it("a reused idempotency key with another amount is a 422 IdempotencyError", async () => {
    const idempotencyKey = randomUUID();
    const first = await gable.payments.createTestPayment("succeeded", "21.00", "USD", {}, { idempotencyKey });
    const count = async () => (await collect(gable.payments.list({ limit: 100 }))).length;
    const before = await count();
    await assert.rejects(gable.payments.createTestPayment("succeeded", "22.00", "USD", {}, { idempotencyKey }), (e: unknown) => {
      assert.ok(e instanceof IdempotencyError, `an IdempotencyError, not ${String(e)}`);
      assert.ok(e instanceof GableError);
      assert.ok(!(e instanceof ConflictError), "not a ConflictError");
      assert.deepEqual([e.status, e.code], [422, "idempotency_key_reused"]);
      assert.ok(e.requestId, "a request id");
      return true;
    });
    assert.deepEqual(await gable.payments.get(first.id), first, "the first payment is unchanged");
    assert.equal(await count(), before, "no second payment");
  });

  it("429 is raised without retries, and a burst is absorbed with them (Retry-After)", async () => {
    // The server runs with a low sandbox rate limit (sdks/run.sh); this burst exceeds it.
    const impatient = client({ maxRetries: 0 });
    await assert.rejects(async () => {
      for (let i = 0; i < 400; i++) await impatient.units.page({ limit: 1 }); // stops at the first 429
    }, RateLimitError);
    const patient = client({ maxRetries: 5 });
    const started = performance.now();
    for (let i = 0; i < 20; i++) await patient.units.page({ limit: 1 });
    assert.ok(performance.now() - started > 500, "the burst had to wait for Retry-After");
  });

  it("verifies a real webhook delivery; refuses tampered, wrong-secret and stale ones", async () => {
    const received: { body: Buffer; headers: IncomingHttpHeaders }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ body: Buffer.concat(chunks), headers: req.headers });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const hook = await gable.webhooks.create({ url: `http://127.0.0.1:${port}/hook`, events: ["lead.created"] });
      const secret = hook.secret as string;
      assert.match(secret, /^whsec_/);
      await gable.leads.create({ name: "Lee", email: `lee.${RUN}@example.com` });
      const deadline = Date.now() + 30_000;
      while (received.length === 0 && Date.now() < deadline) await sleep(200);
      const delivery = received[0];
      assert.ok(delivery, "Gable delivered the event");
      const { body, headers } = delivery;

      const event = verify(body, headers, secret);
      assert.equal(event.type, "lead.created");
      assert.equal(event.data.object.email, `lee.${RUN}@example.com`);

      const tampered = Buffer.from(body.toString().replace("Lee", "Eve"));
      assert.notDeepEqual(tampered, body);
      assert.throws(() => verify(tampered, headers, secret), SignatureVerificationError, "tampered body");
      assert.throws(() => verify(body, headers, "whsec_wrong"), SignatureVerificationError, "wrong secret");
      assert.throws(() => verify(body, headers, secret, { now: Date.now() / 1000 + 3600 }), SignatureVerificationError, "stale");
      await gable.webhooks.delete(hook.id);
    } finally {
      server.close();
    }
  });

  it("verifies a `gable listen` forward with the secret it prints; refuses a tampered one", async (t) => {
    // `gable listen --forward-to` signs each event as a delivery, under the secret that
    // `gable listen --print-secret` prints: what a developer configures in their app.
    const bin = process.env.GABLE_BIN;
    if (!bin) {
      t.skip("GABLE_BIN (the gable binary) is not set: sdks/run.sh sets it to run `gable listen`");
      return;
    }
    const received: { url: string; body: Buffer; headers: IncomingHttpHeaders }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ url: req.url ?? "", body: Buffer.concat(chunks), headers: req.headers });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const home = await mkdtemp(join(tmpdir(), "gable-cli-home-"));
    let listen: ChildProcess | undefined;
    try {
      const { port } = server.address() as AddressInfo;
      const env = { ...process.env, GABLE_API_URL: BASE_URL, GABLE_API_KEY: KEY, GABLE_CLI_HOME: home };

      const printed = await promisify(execFile)(bin, ["listen", "--print-secret"], { env, timeout: 20_000 });
      const secret = printed.stdout.trim();
      assert.match(secret, /^whsec_/);

      const child = spawn(bin, ["listen", "--forward-to", `http://127.0.0.1:${port}/webhooks`, "--events", "lead.created"], {
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      listen = child;
      let out = "";
      let err = "";
      child.on("error", (e) => (err += `${e}\n`));
      child.stdout.setEncoding("utf8").on("data", (s: string) => (out += s));
      child.stderr.setEncoding("utf8").on("data", (s: string) => (err += s));
      const ready = () => err.split("\n").some((line) => line.includes("Forwarding each event to"));
      const readyBy = Date.now() + 20_000;
      while (!ready() && child.exitCode === null && Date.now() < readyBy) await sleep(100);
      assert.ok(ready(), `\`gable listen\` was not forwarding within 20 s (exit ${child.exitCode}): ${err}${out}`);

      const lead = await gable.leads.create({ name: "Lee Listen", email: `lee.listen.${RUN}@example.com` });
      const about = (r: { body: Buffer }) => (JSON.parse(r.body.toString()) as { data: { object: { id: string } } }).data.object.id;
      const deadline = Date.now() + 30_000;
      while (!received.some((r) => about(r) === lead.id) && Date.now() < deadline) await sleep(100);
      const forwarded = received.find((r) => about(r) === lead.id);
      assert.ok(forwarded, `\`gable listen\` forwarded no lead.created about ${lead.id} within 30 s: ${err}${out}`);
      assert.deepEqual(new Set(received.map((r) => r.url)), new Set(["/webhooks"]));
      const { body, headers } = forwarded;

      const event = verify(body, headers, secret);
      assert.equal(event.type, "lead.created");
      assert.equal(headers["gable-event-id"], event.id, "Gable-Event-Id is the event's id");
      const tampered = Buffer.from(body.toString().replace("Lee Listen", "Eve Listen"));
      assert.notDeepEqual(tampered, body);
      assert.throws(() => verify(tampered, headers, secret), SignatureVerificationError, "tampered body");
    } finally {
      if (listen) await stop(listen);
      server.close();
      await rm(home, { recursive: true, force: true });
    }
  });
});
