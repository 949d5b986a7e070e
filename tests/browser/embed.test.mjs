// Browser tests of the four embeddable flows (docs/embed.md): a website on another
// origin (a tiny Node server on 127.0.0.1) embeds each flow with the README's two lines and
// a fresh flow token, and a real headless Chromium (Debian's, driven by playwright-core)
// completes it the way a visitor would; the records and events it made are checked through
// the sandbox API. Then what must not work: the token is in the iframe address's fragment,
// never its query; the same token on a third origin shows nothing (the flow compares its
// token's origin with the host page's, which frame-ancestors vouches for) and the flow API
// refuses that origin; an expired, an unknown and a revoked token end in gable:error. And
// how it behaves: the iframe follows the content's height, an
// element added later mounts too, spoofed messages are ignored, every step passes axe-core
// (no serious or critical violation), a payment can be made with the keyboard only, 320 px
// wide flows do not overflow, and the budgets hold (WASM ≤ 200 KB gz, loader ≤ 4 KB gz,
// iframe creation to gable:ready ≤ 500 ms, median of 10).
//
// Run through tests/browser/run.sh (it builds target/site/embed/ with embed/build.sh and
// exports GABLE_CONSOLE_URL, GABLE_SANDBOX_URL, GABLE_SCREENSHOTS …; see console.test.mjs).
// Screenshots go to $GABLE_SCREENSHOTS/embed/NN-<flow>-<what>.png: the host page with the
// flow in it, one per step.

import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { session } from './lib.mjs';

// The browser, the state the steps share and the helpers: lib.mjs.
const sess = session({ shotsSubdir: 'embed', stepLabel: 'embed step' });
const { sandboxUrl: SANDBOX, backend: BACKEND, serverLog: SERVER_LOG, shotsDir: SHOTS, root: ROOT } = sess;
const { shot, watch, newContext, postFromPage, csrfOf, signUp, step, pageErrors, screenshots } = sess;
// Gable's sandbox origin: where /embed.js, the flow pages and the flow API live.
const GABLE = SANDBOX ? new URL(SANDBOX).origin : '';

const RUN = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const owner = {
  company: `Embed Estates ${RUN}`,
  name: 'Emma Embed',
  email: `emma.${RUN}@example.com`,
  password: `Embed-owner-${randomBytes(9).toString('hex')}`,
};

// The budgets (docs/embed.md, "Budgets"): the suite fails when one is exceeded.
const BUDGET = { wasmGz: 200 * 1024, loaderGz: 4 * 1024, readyMedianMs: 500 };

const FLOWS = ['rental-application', 'booking', 'payment', 'tenant-portal'];
const SERIOUS = ['serious', 'critical'];
const DAY = 24 * 3600 * 1000;

// axe-core lives in .tools/node/node_modules (NODE_PATH, exported by .ci/env), like playwright-core.
function axeSource() {
  const require = createRequire(import.meta.url);
  let file;
  try {
    file = require.resolve('axe-core/axe.min.js');
  } catch {
    file = path.join(ROOT, '.tools', 'node', 'node_modules', 'axe-core', 'axe.min.js');
  }
  return fs.readFileSync(file, 'utf8');
}

// Every secret seen (the secret key, the password, every flow token): the last step
// searches the server log for each (the access log must never record a token).
const secrets = [owner.password];
// Console messages of type error in any page or frame: CSP violations inside the flows fail
// the last step; the others are shown when a step fails.
const consoleErrors = [];

let ctx; // the visitor's browser context (1280 × 900)
let page; // the visitor's page
let consolePage; // the owner's console page (sign-up, key)
let testKey; // a sandbox secret key (gbl_test_…), everything
let hostA; // the website the tokens are made for
let hostB; // a third origin (another port)
let hostC; // a third origin (the same server as A, as localhost)
let today; // the sandbox's date, YYYY-MM-DD
const ids = {}; // the records the setup made
let setupDone = false; // E1 passed

// ---------------------------------------------------------------------------------------
// The websites: Node's http on 127.0.0.1, serving pages registered by the steps.

/** Collects the loader's events and the iframes' insertions, in the host page (no CSP there). */
function collector() {
  window.__events = [];
  window.__inserted = [];
  for (const type of ['ready', 'resize', 'completed', 'error']) {
    document.addEventListener(`gable:${type}`, (e) => {
      const el = e.target;
      window.__events.push({
        type,
        at: performance.now(),
        token: el.getAttribute && el.getAttribute('data-token'),
        detail: JSON.parse(JSON.stringify(e.detail || null)),
        // The iframe's height when the event arrived (the loader sizes it first).
        frameHeight: el.querySelector ? el.querySelector('iframe')?.clientHeight ?? null : null,
      });
    });
  }
  // When each flow's iframe is inserted: the start of the ready-time budget.
  new MutationObserver((records) => {
    for (const r of records) {
      for (const n of r.addedNodes) {
        if (n.nodeName === 'IFRAME' && n.parentElement && n.parentElement.hasAttribute('data-flow')) {
          window.__inserted.push({ at: performance.now(), token: n.parentElement.getAttribute('data-token'), src: n.src });
        }
      }
    }
  }).observe(document, { childList: true, subtree: true });
}

const attr = (s) => String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** A property website's page: a heading, the collector, and the README's two lines per flow. */
function hostHtml(embeds, title) {
  const divs = embeds.map(({ flow, token }) => `<div data-flow="${attr(flow)}" data-token="${attr(token)}"></div>`).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${attr(title)}</title>
<script>(${collector.toString()})();</script>
<style>body{font-family:sans-serif;margin:8px;color:#222}header{border-bottom:1px solid #ccc;margin-bottom:12px}</style>
</head><body>
<header><h1>${attr(title)}</h1><p>Riverside Apartments, 12 Test Street</p></header>
<main>
<script src="${GABLE}/embed.js" async></script>
${divs}
</main>
</body></html>
`;
}

const pages = new Map(); // path -> html, shared by every host

/** Starts one website (all addresses, so `localhost` reaches it too). */
async function startHost() {
  const server = http.createServer((req, res) => {
    const html = pages.get(new URL(req.url, 'http://host.invalid').pathname);
    if (req.url === '/favicon.ico') {
      res.writeHead(204);
      res.end();
      return;
    }
    if (!html) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(html);
  });
  await new Promise((resolve) => server.listen(0, resolve));
  const port = server.address().port;
  return { server, port, origin: `http://127.0.0.1:${port}` };
}

/** Registers a host page with these embeds; returns its path. */
function hostPage(embeds, title = 'Riverside Apartments') {
  const p = `/p/${pages.size + 1}-${randomBytes(4).toString('hex')}`;
  pages.set(p, hostHtml(embeds, title));
  return p;
}

// ---------------------------------------------------------------------------------------
// The API (Node's fetch, the sandbox secret key)

/** Calls the sandbox API; a POST carries a fresh Idempotency-Key. Retries a 429 after Retry-After. */
async function api(resource, body, { method, key = testKey, headers = {} } = {}) {
  const m = method || (body === undefined ? 'GET' : 'POST');
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${SANDBOX}/${resource}`, {
      method: m,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(m === 'POST' ? { 'idempotency-key': randomUUID() } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status === 429 && attempt < 5) {
      await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') || 1)));
      continue;
    }
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, body: json, text, headers: res.headers };
  }
}

/** The record of a call that must answer `status`. */
async function must(status, what, resource, body, options) {
  const res = await api(resource, body, options);
  assert.equal(res.status, status, `${what}: ${options?.method || (body === undefined ? 'GET' : 'POST')} /v1/${resource} answered ${res.status}: ${res.text}`);
  return res.body?.data;
}

const get = (resource, what) => must(200, what, resource);
const create = (resource, body, what) => must(201, what || `creating a ${resource} record`, resource, body);
const act = (resource, id, action, body = {}) => must(200, `${resource}/${id}/${action}`, `${resource}/${id}/${action}`, body);

/** The events of `type` about `id` (the record's events list, docs/workflows.md "Events"). */
async function eventsOf(type, id) {
  const q = new URLSearchParams({ 'filter[type]': type, 'filter[related_object_id]': id, limit: '100' });
  return get(`events?${q}`, `the ${type} events of ${id}`);
}

async function expectEvent(type, id, what) {
  const list = await eventsOf(type, id);
  assert.equal(list.length, 1, `${what}: there should be exactly one ${type} event about ${id}, there are ${list.length}`);
  assert.equal(list[0].type, type);
  assert.equal(list[0].data?.object?.id, id, `${what}: the ${type} event's data.object should be the record`);
  return list[0];
}

/** A fresh flow token for the website `origin` (default: host A). */
async function flowToken(flow, subject, origin = hostA.origin) {
  const data = await create('flow-tokens', { flow, origin, ...subject }, `a ${flow} flow token`);
  assert.match(data.token || '', /^gft_[A-Za-z0-9]{20,}$/, `the ${flow} flow token`);
  assert.equal(data.flow, flow);
  assert.equal(data.origin, origin);
  secrets.push(data.token);
  return data.token;
}

/** The sandbox's time now. */
async function sandboxNow() {
  const clock = await get('sandbox/clock', 'the sandbox clock');
  return new Date(clock.now);
}

const isoDate = (d) => d.toISOString().slice(0, 10);
const addDays = (date, n) => isoDate(new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY));
/** The first day of the month after `date`'s. */
function nextMonth(date) {
  const d = new Date(`${date}T00:00:00Z`);
  return isoDate(new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)));
}

/** An open invoice of the lease for one fee charge of `amount` (USD). */
async function openInvoice(amount, description) {
  const charge = await create('charges', { lease_id: ids.lease, kind: 'fee', amount, currency: 'USD', due_date: addDays(today, 7), description });
  const inv = await create('invoices', { lease_id: ids.lease, charge_ids: [charge.id], amount_due: amount, currency: 'USD', due_date: addDays(today, 7) });
  const opened = await act('invoices', inv.id, 'open');
  assert.equal(opened.status, 'open');
  return inv.id;
}

const money = (v) => Number(v);

/** What the lease's open invoices still ask for, in dollars. */
async function openBalance() {
  const open = await get(`invoices?filter[lease_id]=${ids.lease}&filter[status]=open&limit=100`, "the lease's open invoices");
  return open.reduce((sum, i) => sum + Math.round(money(i.amount_due) * 100) - Math.round(money(i.amount_paid) * 100), 0) / 100;
}

// ---------------------------------------------------------------------------------------
// The flows in the page

const iframeOf = (p, token) => p.locator(`[data-token="${token}"] iframe`);
const flowOf = (p, token) => p.frameLocator(`[data-token="${token}"] iframe`);

/** The events the element of `token` got so far. */
const eventsFor = async (p, token) => (await p.evaluate(() => window.__events).catch(() => [])).filter((e) => e.token === token);

/** What the flow says in its alerts (for failure messages). */
async function alertsIn(p, token) {
  return flowOf(p, token)
    .locator('[role=alert]')
    .allInnerTexts()
    .catch(() => []);
}

/** What a failing step should show: the element's events, the flow's alerts, recent console errors. */
async function context(p, token) {
  const events = (await eventsFor(p, token)).map((e) => ({ type: e.type, ...e.detail }));
  const alerts = await alertsIn(p, token);
  const errors = consoleErrors.slice(-5).map((e) => `${e.url}: ${e.text}`);
  return `; the element got ${JSON.stringify(events)}; the flow's alerts: ${JSON.stringify(alerts)}; last console errors: ${JSON.stringify(errors)}`;
}

/** Waits for the `index`-th (from 0) gable:<type> event of the element of `token`. */
async function waitEvent(p, token, type, what, { timeout = 20_000, index = 0 } = {}) {
  try {
    const h = await p.waitForFunction(
      ({ token, type, index }) => window.__events.filter((e) => e.token === token && e.type === type)[index] || null,
      { token, type, index },
      { timeout, polling: 25 },
    );
    return await h.jsonValue();
  } catch {
    assert.fail(`${what}: no gable:${type} (#${index + 1}) on the element within ${timeout / 1000} s${await context(p, token)}`);
  }
}

/** Waits for `locator` in a flow; on timeout fails with what the flow and the element said. */
async function visible(p, token, locator, what, timeout = 20_000) {
  try {
    await locator.first().waitFor({ state: 'visible', timeout });
  } catch {
    assert.fail(`${what}: not shown within ${timeout / 1000} s${await context(p, token)}`);
  }
}

/** The Frame object of a flow's iframe. */
async function frameOf(p, token) {
  const handle = await iframeOf(p, token).elementHandle({ timeout: 20_000 });
  const f = await handle.contentFrame();
  assert.ok(f, 'the flow iframe has no frame');
  return f;
}

/**
 * Loads a host page embedding `flow` with `token` on `host` and waits for gable:ready.
 * Returns the frame locator, the Frame and the ready event.
 */
async function mount(p, flow, token, what, { host = hostA } = {}) {
  await p.goto(`${host.origin}${hostPage([{ flow, token }])}`);
  const ready = await waitEvent(p, token, 'ready', `${what}: the ${flow} flow`);
  assert.equal(ready.detail.flow, flow, `${what}: gable:ready names the flow`);
  const src = new URL(await iframeOf(p, token).getAttribute('src'));
  assert.equal(src.origin, GABLE, `${what}: the iframe is served by Gable`);
  assert.equal(src.pathname, `/embed/${flow}`);
  assert.equal(ready.detail.frame, src.searchParams.get('frame'), `${what}: gable:ready's detail.frame is the iframe's frame id`);
  tokenOnlyInFragment(src, token, what);
  const frame = await frameOf(p, token);
  // The flow has taken the token out of its own address (history.replaceState).
  assert.ok(!frame.url().includes(token) && !frame.url().includes('#'), `${what}: the flow's address still holds the token: ${frame.url()}`);
  return { fl: flowOf(p, token), frame, ready };
}

/**
 * The loader hands the token over in the iframe address's fragment, which the browser never
 * sends to a server (no proxy or CDN logs it): never in its query.
 */
function tokenOnlyInFragment(src, token, what) {
  assert.equal(src.searchParams.get('token'), null, `${what}: the iframe's query has a token: ${src.search}`);
  assert.ok(!src.search.includes(token), `${what}: the iframe's query holds the token: ${src.search}`);
  assert.equal(new URLSearchParams(src.hash.slice(1)).get('token'), token, `${what}: the token should be in the fragment: ${src.hash.slice(0, 12)}…`);
}

const h2 = (fl, name) => fl.getByRole('heading', { level: 2, name, exact: true });

/**
 * The iframe fits its content: its height is the last one the flow reported (±2 px), and the
 * flow's document has no inner scroll (its content is no taller than the frame). Polls for a
 * second or two: a resize is on its way after every change.
 */
async function fits(p, token, what) {
  let last;
  for (let i = 0; i < 40; i++) {
    const events = await eventsFor(p, token);
    const reported = events.filter((e) => e.detail && typeof e.detail.height === 'number').pop()?.detail.height;
    const frame = await frameOf(p, token);
    const inner = await frame.evaluate(() => ({
      scrollHeight: document.documentElement.scrollHeight,
      innerHeight: window.innerHeight,
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
    }));
    const clientHeight = await iframeOf(p, token).evaluate((f) => f.clientHeight);
    last = { reported, clientHeight, ...inner };
    if (reported !== undefined && Math.abs(clientHeight - reported) <= 2 && inner.scrollHeight <= inner.innerHeight + 2) return last;
    await p.waitForTimeout(100);
  }
  assert.fail(
    `${what}: the iframe does not fit its content: iframe ${last.clientHeight} px high, last reported height ${last.reported} px, ` +
      `the flow's document ${last.scrollHeight} px in a ${last.innerHeight} px viewport${await context(p, token)}`,
  );
}

// ---- axe-core ----------------------------------------------------------------------------

let AXE;
const a11yFindings = [];

/**
 * Runs axe-core in the flow's frame and records serious and critical violations.
 *
 * How axe gets in: the flow page's CSP (`script-src 'self' 'wasm-unsafe-eval'`) blocks
 * `frame.addScriptTag({content})` and `{path}` (both add an inline <script>), and a
 * `bypassCSP` context would test another page than the visitor gets. `frame.evaluate(source)`
 * runs axe's source through the DevTools protocol (Runtime.evaluate), which a page's CSP does
 * not govern; axe itself needs no eval, so it then runs against the real, CSP-locked page.
 */
async function axe(frame, what) {
  AXE ??= axeSource();
  // Colours mid-transition (a day just picked fading to its colour) are not what the visitor
  // reads: wait until the frame's CSS transitions and animations have finished.
  await frame.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running'), null, { timeout: 5000 }).catch(() => {});
  const has = await frame.evaluate(() => typeof window.axe === 'object');
  if (!has) await frame.evaluate(AXE);
  const result = await frame.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  for (const v of result.violations.filter((v) => SERIOUS.includes(v.impact))) {
    a11yFindings.push(`${what}: [${v.impact}] ${v.id} (${v.help}) at ${v.nodes.map((n) => `${JSON.stringify(n.target)} ${n.failureSummary?.split('\n').slice(1).join(' ')}`).join('; ')}`);
  }
  return result.violations.length;
}

/** Fails with every serious or critical violation seen since the last call. */
function assertAccessible(what) {
  const found = a11yFindings.splice(0);
  if (found.length) console.log(`axe findings (${BACKEND}, ${what}):\n  ${found.join('\n  ')}`);
  assert.deepEqual(found, [], `${what}: axe-core found serious or critical violations`);
}

/** A screenshot of the host page with the flow in it (the whole page), NN-<name>.png. */
const snap = (p, name) => shot(p, name);

// ---------------------------------------------------------------------------------------
// The steps

describe(`Gable embeddable flows in Chromium (${BACKEND})`, { concurrency: false }, () => {
  before(async () => {
    assert.ok(sess.consoleUrl && SANDBOX, 'GABLE_CONSOLE_URL / GABLE_SANDBOX_URL are not set: run the browser tests through tests/browser/run.sh');
    fs.mkdirSync(SHOTS, { recursive: true });
    hostA = await startHost();
    hostB = await startHost();
    hostC = { ...hostA, origin: `http://localhost:${hostA.port}` };
    await sess.launch();
    const ownerCtx = await newContext({ viewport: { width: 1280, height: 900 } });
    consolePage = watch(await ownerCtx.newPage(), 'owner');
    ctx = await sess.browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = visitor(await ctx.newPage(), 'visitor');
  });

  after(async () => {
    await sess.close();
    for (const h of [hostA, hostB]) {
      if (!h) continue;
      h.server.closeAllConnections();
      await new Promise((resolve) => h.server.close(resolve));
    }
    if (screenshots.length) console.log(`embed screenshots (${BACKEND}):\n  ${screenshots.join('\n  ')}`);
  });

  /** Watches a visitor's page: uncaught errors and panics (lib.mjs), and every console error. */
  function visitor(p, who) {
    watch(p, who);
    p.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push({ who, url: m.location()?.url || p.url(), text: m.text() });
    });
    return p;
  }

  /**
   * A step of one flow or one property of them: independent of the other such steps (each
   * makes its own tokens and records), so one failing does not skip the others; only a
   * failed setup (E1) does.
   */
  function flowStep(name, fn) {
    step(
      name,
      async (t) => {
        if (!setupDone) {
          t.skip('the setup (E1) failed');
          return;
        }
        await fn(t);
      },
      { always: true },
    );
  }

  step('E1. an owner makes a property, units, listings, a lease with a resident and invoices through the API', async () => {
    await signUp(consolePage, owner, 'signing up the owner');
    const csrf = await csrfOf(consolePage);
    const sa = await postFromPage(consolePage, 'create_service_account', { csrf, name: `Website ${RUN}` });
    assert.ok(sa.ok, `creating a service account: ${sa.status} ${sa.text}`);
    const key = await postFromPage(consolePage, 'create_key', { csrf, service_account_id: JSON.parse(sa.text).id, environment: 'test', access: 'full' });
    assert.ok(key.ok, `creating a test key: ${key.status} ${key.text}`);
    testKey = JSON.parse(key.text).secret;
    assert.match(testKey, /^gbl_test_/);
    secrets.push(testKey);
    today = isoDate(await sandboxNow());

    const property = await create('properties', {
      name: `Riverside ${RUN}`,
      kind: 'mixed',
      address: { line1: '12 Test Street', city: 'Portland', region: 'OR', postal_code: '97201', country: 'US' },
      payment_instructions: 'Pay by bank transfer to Riverside Apartments, account 12345678.',
    });
    ids.property = property.id;
    // A vacant flat with a published listing (the rental application).
    const flat = await create('units', { property_id: property.id, number: '2A', bedrooms: 2, bathrooms: 1, area: 68, currency: 'USD', market_rent: 1450 });
    const listing = await create('listings', {
      unit_id: flat.id,
      title: 'Sunny two-bedroom flat by the river',
      description: 'Two bedrooms, a balcony and a view of the river.',
      rent: 1450,
      deposit: 1450,
      currency: 'USD',
      available_on: addDays(today, 14),
    });
    assert.equal((await act('listings', listing.id, 'publish')).status, 'published');
    ids.flat = flat.id;
    ids.listing = listing.id;
    // A loft let by the night, with a published listing (the booking flow).
    const loft = await create('units', { property_id: property.id, number: 'Loft', bedrooms: 1, bathrooms: 1, currency: 'USD', nightly_rate: 180 });
    const stay = await create('listings', { unit_id: loft.id, title: 'River loft for short stays', rent: 2400, nightly_rate: 180, currency: 'USD' });
    assert.equal((await act('listings', stay.id, 'publish')).status, 'published');
    ids.loft = loft.id;
    ids.stayListing = stay.id;
    // An existing booking of the loft next month, 5th to 8th: its nights are not bookable.
    const m1 = nextMonth(today);
    ids.bookedFrom = addDays(m1, 4);
    ids.bookedTo = addDays(m1, 7);
    const existing = await create('bookings', { unit_id: loft.id, check_in: ids.bookedFrom, check_out: ids.bookedTo, guests_count: 2, total: 540, currency: 'USD' });
    assert.equal((await act('bookings', existing.id, 'confirm')).status, 'confirmed');
    // A lived-in flat: a lease signed by its resident and active (the tenant portal and payments).
    const home = await create('units', { property_id: property.id, number: '3C', bedrooms: 3, bathrooms: 2, currency: 'USD' });
    ids.home = home.id;
    const lease = await create('leases', { unit_id: home.id, start_date: today, end_date: addDays(today, 364), rent: 1450, deposit: 1450, currency: 'USD', rent_due_day: 1 });
    ids.lease = lease.id;
    const sig = await create('signatures', { lease_id: lease.id, signer_name: 'Rita Resident', signer_email: `rita.${RUN}@example.com`, role: 'tenant' });
    assert.equal((await act('leases', lease.id, 'send')).status, 'sent');
    assert.equal((await act('signatures', sig.id, 'sign')).status, 'signed');
    assert.equal((await get(`leases/${lease.id}`, 'the lease')).status, 'signed', 'the lease should be signed once its only signature is');
    assert.equal((await act('leases', lease.id, 'activate')).status, 'active');

    // A flow token: shown once, for 30 minutes of the sandbox's time, bound to its subject.
    const t = await create('flow-tokens', { flow: 'payment', origin: hostA.origin, invoice_id: await openInvoice('12.00', 'Token check') });
    secrets.push(t.token);
    const minutes = (Date.parse(t.expires_at) - (await sandboxNow()).getTime()) / 60_000;
    assert.ok(minutes > 29 && minutes <= 30, `a flow token should live 30 minutes, this one ${minutes.toFixed(1)}`);
    const again = await get(`flow-tokens/${t.id}`, 'the flow token');
    assert.equal(again.token, undefined, 'a flow token is shown by its create response only');
    setupDone = true;
  });

  flowStep('E2. rental application: a visitor on the website applies, step by step; the application is submitted', async () => {
    const token = await flowToken('rental-application', { listing_id: ids.listing });
    const { fl, frame, ready } = await mount(page, 'rental-application', token, 'the rental application');
    assert.ok(ready.detail.height > 0, 'gable:ready carries the height');
    const stage = async (name, shotName) => {
      await visible(page, token, h2(fl, name), `the "${name}" step`);
      await fits(page, token, `the "${name}" step`);
      await axe(frame, `rental application, ${name}`);
      await snap(page, `rental-application-${shotName}`);
    };
    // The listing's summary is shown.
    await visible(page, token, fl.getByText('Sunny two-bedroom flat by the river'), "the listing's title");
    await stage('Applicant', '1-applicant');

    // Inline validation: Continue with an empty name stays on the step and says why.
    await fl.getByRole('button', { name: 'Continue' }).click();
    await visible(page, token, fl.getByRole('alert'), 'the error of an empty "Full name"');
    assert.equal(await fl.getByLabel('Full name').getAttribute('aria-invalid'), 'true', 'an empty "Full name" is marked aria-invalid');
    assert.ok(await h2(fl, 'Applicant').isVisible(), 'the flow must stay on the Applicant step');
    await snap(page, 'rental-application-1b-applicant-invalid');

    await fl.getByLabel('Full name').fill('Alex Applicant');
    await fl.getByLabel('Email').fill(`alex.${RUN}@example.com`);
    await fl.getByLabel('Phone').fill('+1 503 555 0100');
    await fl.getByRole('button', { name: 'Continue' }).click();
    await stage('Household', '2-household');
    // Back keeps what was typed.
    await fl.getByRole('button', { name: 'Back' }).click();
    await visible(page, token, h2(fl, 'Applicant'), 'the Applicant step after Back');
    assert.equal(await fl.getByLabel('Full name').inputValue(), 'Alex Applicant', 'Back must keep the name typed');
    await fl.getByRole('button', { name: 'Continue' }).click();
    await visible(page, token, h2(fl, 'Household'), 'the Household step again');

    await fl.getByLabel('Adults').fill('2');
    await fl.getByLabel('Children').fill('1');
    await fl.getByLabel('Pets').fill('One cat');
    await fl.getByLabel('Desired move-in date').fill(addDays(today, 21));
    await fl.getByRole('button', { name: 'Continue' }).click();
    await stage('Income and employment', '3-income');

    await fl.getByLabel('Employment status').selectOption('employed');
    await fl.getByLabel('Employer').fill('Acme Bridges');
    await fl.getByLabel('Job title').fill('Engineer');
    await fl.getByLabel('Employed since').fill('2021-03-01');
    await fl.getByLabel('Monthly income').fill('5200');
    await fl.getByRole('button', { name: 'Continue' }).click();
    await stage('References', '4-references');

    // Adding a reference makes the content taller: the host page hears of it and the iframe grows.
    const before = await iframeOf(page, token).evaluate((f) => f.clientHeight);
    const resizes = (await eventsFor(page, token)).filter((e) => e.type === 'resize').length;
    await fl.getByRole('button', { name: 'Add a reference' }).click();
    const ref = fl.getByRole('group', { name: 'Reference 1' });
    await visible(page, token, ref, 'the fieldset "Reference 1"');
    let grown;
    for (let i = resizes; ; i++) {
      const e = await waitEvent(page, token, 'resize', 'adding a reference', { index: i, timeout: 10_000 });
      if (e.detail.height > before) {
        grown = e;
        break;
      }
    }
    assert.equal(grown.detail.flow, 'rental-application');
    const fit = await fits(page, token, 'after adding a reference');
    assert.ok(fit.clientHeight > before, `the iframe should grow when a reference is added (${before} px before, ${fit.clientHeight} px after)`);
    await ref.getByLabel('Name').fill('Paula Landlord');
    await ref.getByLabel('Relationship').fill('Previous landlord');
    await ref.getByLabel('Email').fill(`paula.${RUN}@example.com`);
    await ref.getByLabel('Phone').fill('+1 503 555 0199');
    await axe(frame, 'rental application, References with a reference');
    await snap(page, 'rental-application-4b-reference-added');
    await fl.getByRole('button', { name: 'Continue' }).click();
    await stage('Consent', '5-consent');

    await fl.getByLabel('I consent to a background and credit screening').check();
    await fl.getByLabel('I agree to the terms of this application').check();
    await fl.getByLabel('Signature (type your full name)').fill('Alex Applicant');
    await fl.getByRole('button', { name: 'Continue' }).click();
    await stage('Review', '6-review');
    const review = await frame.locator('body').innerText();
    for (const shown of ['Alex Applicant', `alex.${RUN}@example.com`, 'Acme Bridges', 'Paula Landlord']) {
      assert.ok(review.includes(shown), `the review should show ${shown}: ${JSON.stringify(review.slice(0, 600))}`);
    }

    await fl.getByRole('button', { name: 'Submit application' }).click();
    await visible(page, token, fl.getByRole('heading', { name: 'Application submitted' }), 'the done view');
    const done = await waitEvent(page, token, 'completed', 'submitting the application');
    assert.equal(done.detail.object, 'application');
    assert.equal(done.detail.flow, 'rental-application');
    assert.equal(done.detail.status, 'submitted');
    assert.match(done.detail.id, /^[0-9a-f-]{36}$/, 'gable:completed carries the application id');
    await fits(page, token, 'the done view');
    await axe(frame, 'rental application, done');
    await snap(page, 'rental-application-7-submitted');

    // Through the API: the application exists, submitted, with what was typed.
    const app = await get(`applications/${done.detail.id}`, 'the application');
    assert.equal(app.status, 'submitted');
    assert.equal(app.listing_id, ids.listing);
    assert.equal(app.property_id, ids.property);
    assert.ok(app.submitted_at, 'submitted_at is set');
    assert.equal(app.applicants?.[0]?.name, 'Alex Applicant');
    assert.equal(app.applicants?.[0]?.email, `alex.${RUN}@example.com`);
    assert.equal(app.adults, 2);
    assert.equal(app.children, 1);
    assert.equal(app.pets, 'One cat');
    assert.equal(app.desired_move_in, addDays(today, 21));
    assert.equal(app.employment_status, 'employed');
    assert.equal(app.employer, 'Acme Bridges');
    assert.equal(app.job_title, 'Engineer');
    assert.equal(app.employed_since, '2021-03-01');
    assert.equal(money(app.monthly_income), 5200);
    assert.equal(app.reference_contacts?.[0]?.name, 'Paula Landlord');
    assert.equal(app.reference_contacts?.[0]?.relationship, 'Previous landlord');
    assert.equal(app.consent_signature, 'Alex Applicant');
    assert.ok(app.consented_at, 'consented_at is set');
    await expectEvent('application.submitted', app.id, 'the application');

    // One completion per token: the same token, reloaded, shows the flow as done.
    await page.reload();
    await waitEvent(page, token, 'ready', 'the rental application reloaded');
    await visible(page, token, flowOf(page, token).getByRole('heading', { name: 'Application submitted' }), 'the done view after a reload');
    assert.equal((await get(`applications?filter[listing_id]=${ids.listing}`, 'the applications')).length, 1, 'one application only');
    assertAccessible('the rental application');
  });

  flowStep('E3. booking: booked nights are disabled; a guest picks dates and books; the booking is confirmed', async () => {
    const token = await flowToken('booking', { listing_id: ids.stayListing });
    const { fl, frame } = await mount(page, 'booking', token, 'the booking flow');
    const day = (d) => fl.locator(`[data-date="${d}"]`);
    await visible(page, token, fl.locator('[data-date]'), 'the calendar');
    await fits(page, token, 'the calendar');
    await axe(frame, 'booking, calendar');
    await snap(page, 'booking-1-calendar');
    // The past is not bookable (when this month has a yesterday).
    const yesterday = addDays(today, -1);
    if (yesterday.slice(0, 7) === today.slice(0, 7) && (await day(yesterday).count())) {
      assert.ok(await day(yesterday).isDisabled(), `yesterday (${yesterday}) must be disabled`);
    }
    assert.ok(await day(today).isEnabled(), `today (${today}) is bookable`);

    // Next month: the existing booking's nights (5th, 6th, 7th) are disabled, the 4th and its check-out day the 8th are not.
    for (let i = 0; i < 3 && !(await day(ids.bookedFrom).count()); i++) await fl.getByRole('button', { name: 'Next month' }).click();
    await visible(page, token, day(ids.bookedFrom), `the day ${ids.bookedFrom} after "Next month"`);
    for (const d of [ids.bookedFrom, addDays(ids.bookedFrom, 1), addDays(ids.bookedFrom, 2)]) {
      assert.ok(await day(d).isDisabled(), `the booked night ${d} must be disabled`);
    }
    assert.ok(await day(addDays(ids.bookedFrom, -1)).isEnabled(), 'the night before the booking is free');
    assert.ok(await day(ids.bookedTo).isEnabled(), "the booking's check-out day is free for a new check-in");
    await snap(page, 'booking-2-next-month');

    const checkIn = addDays(ids.bookedFrom, 5); // the 10th
    const checkOut = addDays(checkIn, 3);
    await day(checkIn).click();
    await day(checkOut).click();
    assert.equal(await fl.getByLabel('Check-in').inputValue(), checkIn, 'the first click sets the check-in date');
    assert.equal(await fl.getByLabel('Check-out').inputValue(), checkOut, 'the second click sets the check-out date');
    // The price: 3 nights × 180.00.
    await visible(page, token, fl.getByText(/540(\.00)?/), 'the total of 3 nights at 180.00');
    await fl.getByLabel('Guests').fill('2');
    await fl.getByLabel('Full name').fill('Gina Guest');
    await fl.getByLabel('Email').fill(`gina.${RUN}@example.com`);
    await fl.getByLabel('Phone').fill('+1 503 555 0111');
    await fits(page, token, 'the guest details');
    await axe(frame, 'booking, dates and guest');
    await snap(page, 'booking-3-dates-and-guest');

    await fl.getByRole('button', { name: 'Confirm booking' }).click();
    await visible(page, token, fl.getByRole('heading', { name: 'Booking confirmed' }), 'the done view');
    const done = await waitEvent(page, token, 'completed', 'confirming the booking');
    assert.equal(done.detail.object, 'booking');
    assert.equal(done.detail.flow, 'booking');
    assert.equal(done.detail.status, 'confirmed');
    await fits(page, token, 'the done view');
    await axe(frame, 'booking, confirmed');
    await snap(page, 'booking-4-confirmed');

    const booking = await get(`bookings/${done.detail.id}`, 'the booking');
    assert.equal(booking.status, 'confirmed');
    assert.equal(booking.unit_id, ids.loft);
    assert.equal(booking.listing_id, ids.stayListing);
    assert.equal(booking.check_in, checkIn);
    assert.equal(booking.check_out, checkOut);
    assert.equal(booking.guests_count, 2);
    assert.equal(money(booking.total), 540);
    assert.equal(booking.currency, 'USD');
    const guest = await get(`guests/${booking.guest_id}`, "the booking's guest");
    assert.equal(guest.name, 'Gina Guest');
    assert.equal(guest.email, `gina.${RUN}@example.com`);
    await expectEvent('booking.created', booking.id, 'the booking');
    assertAccessible('the booking flow');
  });

  flowStep('E4. payment: the payer sees the invoice, pays it in the sandbox (succeeds); the invoice is paid', async () => {
    const invoice = await openInvoice('85.00', 'Replacement key');
    const token = await flowToken('payment', { invoice_id: invoice });
    const { fl, frame } = await mount(page, 'payment', token, 'the payment flow');
    await visible(page, token, fl.getByText(/85\.00/), 'the amount due');
    await visible(page, token, fl.getByText('Replacement key'), "the invoice's line");
    const scenario = fl.getByRole('group', { name: 'Test scenario' });
    await visible(page, token, scenario, 'the fieldset "Test scenario"');
    await fits(page, token, 'the invoice');
    await axe(frame, 'payment, invoice');
    await snap(page, 'payment-1-invoice');
    await scenario.getByRole('radio', { name: 'Succeeds', exact: true }).check();
    // A double click pays once (the button is busy, the write carries an Idempotency-Key).
    await fl.getByRole('button', { name: /^Pay / }).dblclick();
    await visible(page, token, fl.getByRole('heading', { name: 'Payment succeeded' }), 'the result');
    const done = await waitEvent(page, token, 'completed', 'paying');
    assert.equal(done.detail.object, 'payment');
    assert.equal(done.detail.flow, 'payment');
    assert.equal(done.detail.status, 'succeeded');
    await fits(page, token, 'the result');
    await axe(frame, 'payment, succeeded');
    await snap(page, 'payment-2-succeeded');

    const all = await get(`payments?filter[invoice_id]=${invoice}`, 'the payments of the invoice');
    assert.equal(all.length, 1, `a double click must pay once, there are ${all.length} payments`);
    const payment = await get(`payments/${done.detail.id}`, 'the payment');
    assert.equal(payment.status, 'succeeded');
    assert.equal(payment.invoice_id, invoice);
    assert.equal(payment.lease_id, ids.lease);
    assert.equal(money(payment.amount), 85);
    assert.equal(payment.scenario, 'succeeded');
    const inv = await get(`invoices/${invoice}`, 'the invoice');
    assert.equal(inv.status, 'paid');
    assert.equal(money(inv.amount_paid), 85);
    await expectEvent('payment.succeeded', payment.id, 'the payment');
    assertAccessible('the payment flow');
  });

  flowStep('E5. payment: a declined card says so and emits gable:error card_declined; trying again pays; a reversal shows', async () => {
    const invoice = await openInvoice('95.00', 'Late fee');
    const token = await flowToken('payment', { invoice_id: invoice });
    const { fl, frame } = await mount(page, 'payment', token, 'the payment flow (declined)');
    const scenario = fl.getByRole('group', { name: 'Test scenario' });
    await visible(page, token, scenario, 'the fieldset "Test scenario"');
    await scenario.getByRole('radio', { name: 'Is declined' }).check();
    await fl.getByRole('button', { name: /^Pay / }).click();
    await visible(page, token, fl.getByRole('heading', { name: 'Payment declined' }), 'the declined result');
    const err = await waitEvent(page, token, 'error', 'the declined payment');
    assert.equal(err.detail.code, 'card_declined');
    assert.equal(err.detail.flow, 'payment');
    assert.ok(err.detail.message, 'gable:error carries a message');
    await visible(page, token, fl.getByRole('alert'), 'the decline, in a role="alert"');
    assert.equal((await eventsFor(page, token)).filter((e) => e.type === 'completed').length, 0, 'a decline is no completion');
    await fits(page, token, 'the declined result');
    await axe(frame, 'payment, declined');
    await snap(page, 'payment-3-declined');
    const failed = await get(`payments?filter[invoice_id]=${invoice}`, 'the payments of the invoice');
    assert.equal(failed.length, 1);
    assert.equal(failed[0].status, 'failed');
    assert.equal(failed[0].failure_code, 'card_declined');
    await expectEvent('payment.failed', failed[0].id, 'the declined payment');
    assert.equal((await get(`invoices/${invoice}`, 'the invoice')).status, 'open', 'a decline leaves the invoice open');

    // Try again: the same token pays.
    await fl.getByRole('button', { name: 'Try again' }).click();
    await visible(page, token, scenario, 'the scenarios again after "Try again"');
    await scenario.getByRole('radio', { name: 'Succeeds', exact: true }).check();
    await fl.getByRole('button', { name: /^Pay / }).click();
    await visible(page, token, fl.getByRole('heading', { name: 'Payment succeeded' }), 'the result of the second try');
    const done = await waitEvent(page, token, 'completed', 'the second try');
    assert.equal(done.detail.status, 'succeeded');
    await snap(page, 'payment-4-succeeded-after-decline');
    assert.equal((await get(`invoices/${invoice}`, 'the invoice')).status, 'paid');
    await expectEvent('payment.succeeded', done.detail.id, 'the second try');

    // A reversed payment: settled, then reversed; the invoice is open again.
    const invoice2 = await openInvoice('65.00', 'Parking');
    const token2 = await flowToken('payment', { invoice_id: invoice2 });
    const m = await mount(page, 'payment', token2, 'the payment flow (reversed)');
    await m.fl.getByRole('group', { name: 'Test scenario' }).getByRole('radio', { name: 'Succeeds, then is reversed' }).check();
    await m.fl.getByRole('button', { name: /^Pay / }).click();
    await visible(page, token2, m.fl.getByRole('heading', { name: 'Payment reversed' }), 'the reversed result');
    const rev = await waitEvent(page, token2, 'completed', 'the reversed payment');
    assert.equal(rev.detail.object, 'payment');
    assert.equal(rev.detail.status, 'reversed');
    await axe(m.frame, 'payment, reversed');
    await snap(page, 'payment-5-reversed');
    assert.equal((await get(`payments/${rev.detail.id}`, 'the reversed payment')).status, 'reversed');
    assert.equal((await get(`invoices/${invoice2}`, 'the invoice')).status, 'open', 'a reversal reopens the invoice');
    await expectEvent('payment.succeeded', rev.detail.id, 'the reversed payment');
    await expectEvent('payment.reversed', rev.detail.id, 'the reversed payment');
    assertAccessible('the payment flow (declined, reversed)');
  });

  flowStep('E6. tenant portal: the resident sees the lease, pays an invoice and sends a maintenance request', async () => {
    const invoice = await openInvoice('30.00', 'Bike storage');
    const token = await flowToken('tenant-portal', { lease_id: ids.lease });
    const before0 = await openBalance();
    const { fl, frame } = await mount(page, 'tenant-portal', token, 'the tenant portal');
    for (const name of ['Lease', 'Balance', 'Invoices', 'Payments', 'Maintenance requests']) {
      await visible(page, token, h2(fl, name), `the section "${name}"`);
    }
    // The balance is what the lease's open invoices still ask for (the scheduler may bill a
    // rent period meanwhile: either figure, before or after the mount).
    const balances = [before0, await openBalance()].map((n) => n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }));
    const balanceText = await fl.locator('section', { has: h2(fl, 'Balance') }).last().innerText();
    assert.ok(balances.some((b) => balanceText.includes(b)), `the portal's balance should be ${balances.join(' or ')}: ${JSON.stringify(balanceText)}`);
    await visible(page, token, fl.getByText('Rita Resident'), 'the resident');
    await fits(page, token, 'the portal');
    await axe(frame, 'tenant portal, home');
    await snap(page, 'tenant-portal-1-home');

    // Pay the 30.00 invoice: its Pay button names it, or sits in its row.
    let pay = fl.getByRole('button', { name: /^Pay.*30\.00/ });
    if (!(await pay.count())) pay = fl.locator('li, tr, article, section > div').filter({ hasText: '30.00' }).last().getByRole('button', { name: /^Pay/ });
    await visible(page, token, pay, 'the Pay button of the 30.00 invoice');
    await pay.first().click();
    const scenario = fl.getByRole('group', { name: 'Test scenario' });
    await visible(page, token, scenario, 'the scenarios of the portal payment');
    await axe(frame, 'tenant portal, payment');
    await snap(page, 'tenant-portal-2-pay');
    await scenario.getByRole('radio', { name: 'Succeeds', exact: true }).check();
    await fl.getByRole('button', { name: /^Pay / }).click();
    await visible(page, token, fl.getByRole('heading', { name: 'Payment succeeded' }), 'the portal payment result');
    await snap(page, 'tenant-portal-3-paid');
    const inv = await get(`invoices/${invoice}`, 'the invoice paid from the portal');
    assert.equal(inv.status, 'paid');
    const paid = await get(`payments?filter[invoice_id]=${invoice}`, 'its payments');
    assert.equal(paid.length, 1);
    assert.equal(paid[0].status, 'succeeded');
    assert.equal(paid[0].lease_id, ids.lease);
    await expectEvent('payment.succeeded', paid[0].id, 'the portal payment');
    await fl.getByRole('button', { name: 'Back to your home' }).click();
    await visible(page, token, h2(fl, 'Maintenance requests'), 'the home after "Back to your home"');

    // A maintenance request.
    await fl.getByLabel('Title').fill('Dripping kitchen tap');
    await fl.getByLabel('Description').fill('The kitchen tap drips all night.');
    await fl.getByLabel('Category').selectOption('plumbing');
    await fl.getByLabel('Priority').selectOption('high');
    await axe(frame, 'tenant portal, request form filled');
    await snap(page, 'tenant-portal-4-request');
    const before = (await eventsFor(page, token)).filter((e) => e.type === 'completed').length;
    await fl.getByRole('button', { name: 'Send request' }).click();
    await visible(page, token, fl.getByRole('status').filter({ hasText: 'Request sent' }), 'the "Request sent" status');
    const done = await waitEvent(page, token, 'completed', 'the maintenance request', { index: before });
    assert.equal(done.detail.object, 'workorder');
    assert.equal(done.detail.flow, 'tenant-portal');
    await visible(page, token, fl.getByText('Dripping kitchen tap'), 'the request in the list');
    await fits(page, token, 'the portal after the request');
    await axe(frame, 'tenant portal, request sent');
    await snap(page, 'tenant-portal-5-request-sent');

    const wo = await get(`workorders/${done.detail.id}`, 'the work order');
    assert.equal(wo.lease_id, ids.lease);
    assert.equal(wo.unit_id, ids.home);
    assert.equal(wo.property_id, ids.property);
    assert.equal(wo.title, 'Dripping kitchen tap');
    assert.equal(wo.description, 'The kitchen tap drips all night.');
    assert.equal(wo.category, 'plumbing');
    assert.equal(wo.priority, 'high');
    assert.equal(wo.status, 'open');
    await expectEvent('workorder.created', wo.id, 'the work order');
    assertAccessible('the tenant portal');
  });

  flowStep('E7. the same token on a third origin shows nothing, and the flow API refuses that origin', async () => {
    const token = await flowToken('rental-application', { listing_id: ids.listing });
    // The flow page is framable by the origin the loader names, and nothing of it comes from
    // a token: the same page with and without one in its query (an old loader's).
    for (const claimed of [hostA.origin, hostB.origin]) {
      const plain = await fetch(`${GABLE}/embed/rental-application?${new URLSearchParams({ origin: claimed, frame: 'f1test' })}`);
      const res = await fetch(`${GABLE}/embed/rental-application?${new URLSearchParams({ token, origin: claimed, frame: 'f1test' })}`);
      assert.equal(res.status, 200);
      const csp = res.headers.get('content-security-policy') || '';
      assert.match(csp, new RegExp(`frame-ancestors ${claimed.replace(/[.:/]/g, '\\$&')}(;|$)`), `the flow page's CSP (origin=${claimed}): ${csp}`);
      assert.equal(csp, plain.headers.get('content-security-policy'), 'the CSP must not depend on a token in the query');
      for (const d of ["default-src 'none'", "script-src 'self' 'wasm-unsafe-eval'", "base-uri 'none'", "form-action 'none'"]) assert.ok(csp.includes(d), `the CSP lacks ${d}: ${csp}`);
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
      assert.match(res.headers.get('cache-control') || '', /no-store/);
      const html = await res.text();
      assert.equal(html, await plain.text(), 'the page must not depend on a token in the query');
      assert.ok(!html.includes(token), 'the page must not copy the token into its HTML');
    }

    // In the browser, on two third origins: the loader frames the flow for that origin, and
    // the flow, seeing its token was made for another, shows nothing of it.
    for (const [host, what] of [
      [hostB, 'another port'],
      [hostC, 'localhost'],
    ]) {
      const p = visitor(await ctx.newPage(), `third origin (${what})`);
      try {
        const messages = [];
        p.on('console', (m) => messages.push(m.text()));
        await p.goto(`${host.origin}${hostPage([{ flow: 'rental-application', token }], 'Not the website')}`);
        await iframeOf(p, token).waitFor({ state: 'attached' });
        tokenOnlyInFragment(new URL(await iframeOf(p, token).getAttribute('src')), token, `on ${what}`);
        const err = await waitEvent(p, token, 'error', `on ${what}: the flow's refusal`);
        assert.equal(err.detail.code, 'origin_mismatch', `on ${what}: ${JSON.stringify(err.detail)}`);
        assert.ok(!String(err.detail.message).includes(hostA.origin), `on ${what}: the refusal must not name the token's origin: ${err.detail.message}`);
        const fl = flowOf(p, token);
        const alert = fl.getByRole('alert').filter({ has: fl.getByRole('heading', { name: /This form can.t be shown/ }) });
        await visible(p, token, alert, `on ${what}: the refusal`);
        await p.waitForTimeout(1000);
        const types = (await eventsFor(p, token)).map((e) => e.type);
        assert.ok(!types.includes('ready') && !types.includes('completed'), `on ${what}: the flow must be neither ready nor completed: ${types}`);
        const frame = await frameOf(p, token);
        const inside = await frame.evaluate(() => ({
          text: document.body.innerText,
          fields: document.querySelectorAll('input, select, textarea, button').length,
        }));
        assert.ok(!inside.text.includes('Sunny two-bedroom flat'), `on ${what}: the flow showed its listing: ${JSON.stringify(inside.text)}`);
        assert.equal(inside.fields, 0, `on ${what}: the refusal has no form: ${JSON.stringify(inside)}`);
        assert.ok(!frame.url().includes(token), `on ${what}: the flow's address still holds the token`);
        if (host === hostB) await snap(p, 'third-origin-shows-nothing');

        // A page that claims the website's origin for its frame is refused by frame-ancestors.
        const spoofSrc = `${GABLE}/embed/rental-application?${new URLSearchParams({ origin: hostA.origin, frame: 'spoof' })}#${new URLSearchParams({ token })}`;
        await p.evaluate((src) => {
          const f = document.createElement('iframe');
          f.id = 'spoof';
          f.src = src;
          document.body.append(f);
        }, spoofSrc);
        await p.waitForTimeout(2000);
        const spoof = await (await p.locator('#spoof').elementHandle()).contentFrame();
        const spoofInside = spoof ? await spoof.evaluate(() => (document.querySelector('#gable-flow') ? document.body.innerText : null)).catch(() => null) : null;
        assert.equal(spoofInside, null, `on ${what}: a frame claiming the website's origin rendered: ${JSON.stringify(spoofInside)}`);
        assert.ok(
          messages.some((m) => /frame-ancestors/.test(m)),
          `on ${what}: Chromium should report the frame refused by frame-ancestors; console: ${JSON.stringify(messages)}`,
        );

        // The flow's own call from that page: no CORS, so the page can read nothing.
        const call = await p.evaluate(
          async ({ url, token }) => {
            try {
              const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
              return { status: r.status, text: await r.text() };
            } catch (e) {
              return { error: String(e) };
            }
          },
          { url: `${GABLE}/v1/flow`, token },
        );
        assert.ok(call.error, `on ${what}: fetch(/v1/flow) with the token must fail in the page, got ${JSON.stringify(call)}`);
      } finally {
        await p.close();
        sess.activePage = page;
      }
    }

    // The server itself refuses the flow API to any Origin but Gable's own (403 origin_forbidden).
    const flowCall = (headers) => api('flow', undefined, { key: token, headers });
    for (const [headers, what] of [
      [{ origin: hostB.origin }, 'the third origin'],
      [{ origin: hostA.origin }, "the website's own origin (only the flow page may call)"],
      [{ 'sec-fetch-site': 'cross-site' }, 'a cross-site request without Origin'],
    ]) {
      const res = await flowCall(headers);
      assert.equal(res.status, 403, `GET /v1/flow from ${what}: ${res.status} ${res.text}`);
      assert.equal(res.body?.error?.code, 'origin_forbidden', `GET /v1/flow from ${what}: ${res.text}`);
      assert.equal(res.headers.get('access-control-allow-origin'), null, 'no CORS header');
    }
    const own = await flowCall({ origin: GABLE, 'sec-fetch-site': 'same-origin' });
    assert.equal(own.status, 200, `GET /v1/flow from Gable's own origin: ${own.text}`);
    assert.equal(own.body?.data?.flow, 'rental-application');
    assert.equal(own.body?.data?.origin, hostA.origin);
    assert.equal(own.headers.get('access-control-allow-origin'), null, 'no CORS header');
    // A flow token is no API key: the generic API refuses it.
    const generic = await api('properties', undefined, { key: token });
    assert.equal(generic.status, 403, `GET /v1/properties with a flow token: ${generic.text}`);
    assert.equal(generic.body?.error?.code, 'insufficient_scope');

    // The website's own origin still shows it (the token was fine all along).
    await mount(page, 'rental-application', token, 'the same token on its own origin');
    // A message posted by the host page itself (not from Gable's origin) is ignored.
    const frameId = new URL(await iframeOf(page, token).getAttribute('src')).searchParams.get('frame');
    await page.evaluate((frame) => window.postMessage({ gable: 1, frame, type: 'completed', object: 'application', id: 'spoofed' }, '*'), frameId);
    await page.waitForTimeout(500);
    assert.equal((await eventsFor(page, token)).filter((e) => e.type === 'completed').length, 0, 'a message from the host page itself must not become gable:completed');
  });

  flowStep('E8. an expired token ends in gable:error token_expired, an unknown or revoked one in unauthenticated; the flow says so', async () => {
    // Unknown token.
    const unknown = `gft_${randomBytes(32).toString('hex').slice(0, 43)}`;
    await page.goto(`${hostA.origin}${hostPage([{ flow: 'payment', token: unknown }])}`);
    const e1 = await waitEvent(page, unknown, 'error', 'an unknown token');
    assert.equal(e1.detail.code, 'unauthenticated', `an unknown token: ${JSON.stringify(e1.detail)}`);
    assert.ok(e1.detail.message);
    const fl1 = flowOf(page, unknown);
    const alert1 = fl1.getByRole('alert').filter({ has: fl1.getByRole('heading', { name: /This form can.t be shown/ }) });
    await visible(page, unknown, alert1, 'the error view of an unknown token');
    await fits(page, unknown, 'the error view');
    await axe(await frameOf(page, unknown), 'error view (unknown token)');
    await snap(page, 'error-unknown-token');

    // Expired: made now, then the sandbox's clock runs 31 minutes ahead.
    const token = await flowToken('payment', { invoice_id: await openInvoice('20.00', 'Expired token check') });
    const now = await sandboxNow();
    const adv = await api('sandbox/clock/advance', { to: new Date(now.getTime() + 31 * 60_000).toISOString() });
    assert.equal(adv.status, 200, `advancing the sandbox clock: ${adv.text}`);
    await page.goto(`${hostA.origin}${hostPage([{ flow: 'payment', token }])}`);
    const e2 = await waitEvent(page, token, 'error', 'an expired token');
    assert.equal(e2.detail.code, 'token_expired', `an expired token: ${JSON.stringify(e2.detail)}`);
    assert.equal(e2.detail.flow, 'payment');
    const fl2 = flowOf(page, token);
    const alert2 = fl2.getByRole('alert').filter({ has: fl2.getByRole('heading', { name: /This form can.t be shown/ }) });
    await visible(page, token, alert2, 'the error view of an expired token');
    assert.equal(await fl2.getByRole('button', { name: /^Pay/ }).count(), 0, 'an expired token shows no Pay button');
    assert.equal((await eventsFor(page, token)).filter((e) => e.type === 'ready' || e.type === 'completed').length, 0, 'an expired flow is neither ready nor completed');
    await axe(await frameOf(page, token), 'error view (expired token)');
    await snap(page, 'error-expired-token');

    // Revoked while the flow is open: the next write is refused and ends the flow.
    const revokedInvoice = await openInvoice('25.00', 'Revoked token check');
    const revoked = await flowToken('payment', { invoice_id: revokedInvoice });
    const m = await mount(page, 'payment', revoked, 'the payment flow (to be revoked)');
    const tokenRecord = (await get(`flow-tokens?filter[invoice_id]=${revokedInvoice}`, 'the flow token'))[0];
    const r = await act('flow-tokens', tokenRecord.id, 'revoke');
    assert.equal(r.status, 'revoked');
    await m.fl.getByRole('group', { name: 'Test scenario' }).getByRole('radio', { name: 'Succeeds', exact: true }).check();
    await m.fl.getByRole('button', { name: /^Pay / }).click();
    const e3 = await waitEvent(page, revoked, 'error', 'paying with a revoked token');
    assert.equal(e3.detail.code, 'unauthenticated', `a revoked token: ${JSON.stringify(e3.detail)}`);
    assert.match(e3.detail.message, /revoked/);
    await visible(page, revoked, m.fl.getByRole('alert').filter({ hasText: 'This form has been closed' }), 'the refusal of a revoked token');
    assert.equal((await get(`payments?filter[invoice_id]=${revokedInvoice}`, 'the payments of the invoice')).length, 0, 'a revoked token pays nothing');
    assert.equal((await get(`invoices/${revokedInvoice}`, 'the invoice')).status, 'open');
    await snap(page, 'error-revoked-token');
    // Reloaded: the flow is not shown at all.
    await page.goto(`${hostA.origin}${hostPage([{ flow: 'payment', token: revoked }])}`);
    const e4 = await waitEvent(page, revoked, 'error', 'a revoked token reloaded');
    assert.equal(e4.detail.code, 'unauthenticated');
    assert.equal(await flowOf(page, revoked).getByRole('button', { name: /^Pay/ }).count(), 0, 'a revoked token shows no Pay button');
    assertAccessible('the error views');
  });

  flowStep('E9. an element added later mounts too; messages from another frame are ignored', async () => {
    const first = await flowToken('booking', { unit_id: ids.loft });
    await mount(page, 'booking', first, 'the first element');
    const second = await flowToken('tenant-portal', { lease_id: ids.lease });
    await page.evaluate((token) => {
      const div = document.createElement('div');
      div.setAttribute('data-flow', 'tenant-portal');
      div.setAttribute('data-token', token);
      document.body.append(div);
    }, second);
    const ready = await waitEvent(page, second, 'ready', 'the element added later');
    assert.equal(ready.detail.flow, 'tenant-portal');
    const ids2 = await page.evaluate(() => [...document.querySelectorAll('[data-flow] iframe')].map((f) => new URL(f.src).searchParams.get('frame')));
    assert.equal(ids2.length, 2, 'one iframe per element');
    assert.notEqual(ids2[0], ids2[1], 'each frame has its own id');
    await visible(page, second, h2(flowOf(page, second), 'Lease'), 'the portal added later');
    await fits(page, second, 'the element added later');
    await snap(page, 'second-element-added-later');

    // The first flow's window posts a message naming the second frame: right origin, wrong source.
    const f1 = await frameOf(page, first);
    await f1.evaluate(
      ({ frame, origin }) => window.parent.postMessage({ gable: 1, frame, type: 'completed', object: 'workorder', id: 'spoofed', status: 'open' }, origin),
      { frame: ids2[1], origin: hostA.origin },
    );
    await page.waitForTimeout(500);
    assert.equal((await eventsFor(page, second)).filter((e) => e.type === 'completed').length, 0, "a message from another frame's window must not reach the second element");
  });

  flowStep('E10. keyboard only: a payment with Tab, arrows, Space and Enter, with a visible focus', async () => {
    const invoice = await openInvoice('45.00', 'Keyboard fee');
    const token = await flowToken('payment', { invoice_id: invoice });
    const { fl, frame } = await mount(page, 'payment', token, 'the payment flow (keyboard)');
    await visible(page, token, fl.getByRole('group', { name: 'Test scenario' }), 'the scenarios');
    // Start from the host page's heading: nothing is focused yet.
    await page.locator('h1').click();
    const focused = () =>
      frame.evaluate(() => {
        const a = document.activeElement;
        if (!a || a === document.body || !document.hasFocus()) return null;
        const cs = getComputedStyle(a);
        const label = a.labels?.[0]?.innerText || a.getAttribute('aria-label') || a.innerText || a.value || '';
        return {
          tag: a.tagName.toLowerCase(),
          type: a.getAttribute('type'),
          label: label.trim(),
          checked: !!a.checked,
          focusVisible: a.matches(':focus-visible'),
          outline: `${cs.outlineStyle} ${cs.outlineWidth}`,
          shadow: cs.boxShadow,
        };
      });
    const visibleFocus = (f) => f.focusVisible && ((!f.outline.startsWith('none') && !/ 0px$/.test(f.outline)) || (f.shadow && f.shadow !== 'none'));
    const seen = [];
    const tabTo = async (want, what) => {
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press('Tab');
        const f = await focused();
        if (!f) continue;
        seen.push(f);
        assert.ok(visibleFocus(f), `the focused ${f.tag} "${f.label}" has no visible focus (outline ${f.outline}, box-shadow ${f.shadow}, :focus-visible ${f.focusVisible})`);
        if (want(f)) return f;
      }
      assert.fail(`${what}: not reached with Tab; focus went through ${JSON.stringify(seen.map((f) => `${f.tag}:${f.label}`))}`);
    };
    let radio = await tabTo((f) => f.type === 'radio', 'the scenario radios');
    const succeeds = (f) => /^Succeeds(?!,)/.test(f.label);
    for (let i = 0; i < 3 && !succeeds(radio); i++) {
      await page.keyboard.press('ArrowDown');
      radio = await focused();
    }
    assert.ok(succeeds(radio), `the arrows reach "Succeeds" (at ${JSON.stringify(radio.label)})`);
    await page.keyboard.press('Space');
    assert.ok((await focused()).checked, 'Space checks "Succeeds"');
    await snap(page, 'keyboard-1-scenario-focused');
    await tabTo((f) => f.tag === 'button' && /^Pay /.test(f.label), 'the Pay button');
    await snap(page, 'keyboard-2-pay-focused');
    await page.keyboard.press('Enter');
    await visible(page, token, fl.getByRole('heading', { name: 'Payment succeeded' }), 'the result of a keyboard payment');
    const done = await waitEvent(page, token, 'completed', 'the keyboard payment');
    assert.equal(done.detail.status, 'succeeded');
    assert.equal((await get(`invoices/${invoice}`, 'the invoice paid by keyboard')).status, 'paid');
    await snap(page, 'keyboard-3-paid');
  });

  flowStep('E11. at 320 px the flows do not overflow sideways; at 1280 px they fit too', async () => {
    const subjects = {
      'rental-application': { listing_id: ids.listing },
      booking: { listing_id: ids.stayListing },
      payment: { invoice_id: await openInvoice('15.00', 'Width check') },
      'tenant-portal': { lease_id: ids.lease },
    };
    for (const width of [320, 1280]) {
      const c = await sess.browser.newContext({ viewport: { width, height: 800 } });
      const p = visitor(await c.newPage(), `visitor ${width} px`);
      try {
        for (const flow of FLOWS) {
          const token = await flowToken(flow, subjects[flow]);
          const { frame } = await mount(p, flow, token, `${flow} at ${width} px`);
          const fit = await fits(p, token, `${flow} at ${width} px`);
          assert.ok(fit.scrollWidth <= fit.clientWidth + 1, `${flow} at ${width} px overflows sideways: content ${fit.scrollWidth} px in ${fit.clientWidth} px`);
          const wide = await frame.evaluate(() =>
            [...document.querySelectorAll('body *')]
              .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
              .slice(0, 5)
              .map((e) => `${e.tagName.toLowerCase()}${e.className ? `.${String(e.className).split(' ').join('.')}` : ''} (${Math.round(e.getBoundingClientRect().right)} px)`),
          );
          assert.deepEqual(wide, [], `${flow} at ${width} px: elements reach past the frame's right edge`);
          const host = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
          assert.ok(host <= 0, `${flow} at ${width} px: the host page scrolls sideways by ${host} px`);
          if (width === 320) await snap(p, `${flow}-320px`);
        }
      } finally {
        await c.close();
        sess.activePage = page;
      }
    }
  });

  flowStep('E12. budgets: WASM ≤ 200 KB gz, loader ≤ 4 KB gz; iframe creation to gable:ready measured (≤ 500 ms median of 10 under make bench-embed)', async () => {
    const wasmFile = path.join(ROOT, 'target', 'site', 'embed', 'gable_embed_bg.wasm');
    assert.ok(fs.existsSync(wasmFile), `${wasmFile} is missing: build it with bash embed/build.sh`);
    const wasmGz = zlib.gzipSync(fs.readFileSync(wasmFile), { level: 9 }).length;
    // The bundle served (at the version the flow pages name) is the file measured.
    const shell = await (await fetch(`${GABLE}/embed/payment`)).text();
    const version = shell.match(/\/embed\/assets\/([^/"]+)\/boot\.js/)?.[1];
    assert.ok(version, `the flow page names no bundle version: ${shell}`);
    const served = await fetch(`${GABLE}/embed/assets/${version}/gable_embed_bg.wasm`);
    assert.equal(served.status, 200, 'the served WASM');
    assert.equal((await served.arrayBuffer()).byteLength, fs.statSync(wasmFile).size, 'the WASM served is the one built in target/site/embed/');
    const loaderRes = await fetch(`${GABLE}/embed.js`);
    assert.equal(loaderRes.status, 200, 'GET /embed.js');
    assert.match(loaderRes.headers.get('content-type') || '', /javascript/);
    const loader = Buffer.from(await loaderRes.arrayBuffer());
    const loaderGz = zlib.gzipSync(loader, { level: 9 }).length;
    // postMessage is never addressed to "*" by the loader.
    assert.ok(!/postMessage\([^)]*['"]\*['"]/.test(loader.toString('utf8')), 'the loader posts a message to "*"');

    // Ready time: 10 fresh mounts, each a first page view in a new context (nothing cached),
    // the four flows in turn; measured in the host page from the iframe's insertion (a
    // MutationObserver) to the gable:ready event.
    const subjects = {
      'rental-application': { listing_id: ids.listing },
      booking: { listing_id: ids.stayListing },
      payment: { invoice_id: await openInvoice('10.00', 'Budget check') },
      'tenant-portal': { lease_id: ids.lease },
    };
    const times = [];
    for (let i = 0; i < 10; i++) {
      const flow = FLOWS[i % FLOWS.length];
      const token = await flowToken(flow, subjects[flow]);
      const c = await sess.browser.newContext({ viewport: { width: 1280, height: 900 } });
      const p = visitor(await c.newPage(), `budget mount ${i + 1}`);
      try {
        await p.goto(`${hostA.origin}${hostPage([{ flow, token }])}`);
        const ready = await waitEvent(p, token, 'ready', `budget mount ${i + 1} (${flow})`);
        const inserted = (await p.evaluate(() => window.__inserted)).find((x) => x.token === token);
        assert.ok(inserted, 'the iframe insertion was seen');
        times.push({ flow, ms: ready.at - inserted.at });
      } finally {
        await c.close();
        sess.activePage = page;
      }
    }
    const sorted = times.map((t) => t.ms).sort((a, b) => a - b);
    const median = (sorted[4] + sorted[5]) / 2;
    console.log(`embed budget (${BACKEND}): wasm ${wasmGz} B gz (limit ${BUDGET.wasmGz})`);
    console.log(`embed budget (${BACKEND}): loader ${loaderGz} B gz (limit ${BUDGET.loaderGz})`);
    console.log(
      `embed budget (${BACKEND}): ready median ${median.toFixed(0)} ms of 10 (limit ${BUDGET.readyMedianMs}); ` +
        times.map((t) => `${t.flow} ${t.ms.toFixed(0)}`).join(', '),
    );
    assert.ok(wasmGz <= BUDGET.wasmGz, `the flows' WASM is ${wasmGz} B gzipped, over the budget of ${BUDGET.wasmGz} B`);
    assert.ok(loaderGz <= BUDGET.loaderGz, `the loader is ${loaderGz} B gzipped, over the budget of ${BUDGET.loaderGz} B`);
    // A time is a benchmark's to hold, on a quiet machine (`make bench-embed` sets
    // GABLE_EMBED_READY_BUDGET=1): in CI these tests run beside the other backend's, the
    // kits and the README's commands on two cores, and the median measures that load.
    if (process.env.GABLE_EMBED_READY_BUDGET === '1') {
      assert.ok(median <= BUDGET.readyMedianMs, `iframe creation to gable:ready: median ${median.toFixed(0)} ms, over the budget of ${BUDGET.readyMedianMs} ms`);
    } else {
      console.log(`embed budget (${BACKEND}): the ready median is measured here and held to its budget by make bench-embed`);
    }
  });

  step(
    'E13. no flow broke its own CSP, the server log holds no token or key, no page threw',
    async () => {
      const csp = consoleErrors.filter((e) => /Content Security Policy/i.test(e.text) && !/frame-ancestors/.test(e.text));
      assert.deepEqual(csp, [], 'the flows broke their Content-Security-Policy (a style attribute, an inline script, an external load?)');
      if (SERVER_LOG && fs.existsSync(SERVER_LOG)) {
        const log = fs.readFileSync(SERVER_LOG, 'utf8');
        for (const s of secrets) if (s) assert.ok(!log.includes(s), `the server log contains a secret (${s.slice(0, 10)}…)`);
      }
      assert.deepEqual(pageErrors, [], 'uncaught errors in the pages');
    },
    { always: true },
  );
});
