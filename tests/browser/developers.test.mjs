// Browser tests of the console's Developers area, as an integrator debugging a misbehaving
// integration uses it: a real headless Chromium (Debian's, driven by playwright-core) against
// the real server. An owner's key makes a failing call and a write that causes an event, which
// a real HTTP receiver (this file's) takes. The failing call shows in Logs (filtered by chips)
// with its body, as curl, and in Errors; the write's page links its event to its delivery; the
// live tail shows a new call as it is recorded; a request id pasted in the top bar opens its call.
// Pages read before the WebAssembly loads. A teammate whose role cannot read the request log
// sees no Developers area and is refused every page and the tail's stream; another tenant's
// owner finds none of these calls.
//
// Run through tests/browser/run.sh (see console.test.mjs for the environment it exports).
// Screenshots of every page go to $GABLE_SCREENSHOTS/developers/NN-<what>.png.

import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { session } from './lib.mjs';

const sess = session({ shotsSubdir: 'developers', stepLabel: 'developers step' });
const { consoleUrl: CONSOLE, sandboxUrl: SANDBOX, liveApiUrl: LIVE, backend: BACKEND, shotsDir: SHOTS } = sess;
const { shot, watch, newContext, settle, expectVisible, goto, postFromPage, csrfOf, signUp, signIn, addTeammate, step, pageErrors, screenshots } = sess;

const RUN = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const password = (word) => `${word}-${randomBytes(9).toString('hex')}`;
const owner = { company: `Birch Homes ${RUN}`, name: 'Dana Developer', email: `dana.${RUN}@example.com`, password: password('Birch-owner') };
const support = { name: 'Sam Support', email: `sam.${RUN}@example.com`, password: password('Birch-support') };
const stranger = { company: `Elm Estates ${RUN}`, name: 'Eve Elm', email: `eve.${RUN}@example.com`, password: password('Elm-owner') };

let ctx;
let page;
let apiKey;
let liveKey;
let receiver;
const received = [];
const calls = {}; // what -> request id

/** A call of the sandbox API with the owner's key; returns { status, body, requestId }. */
async function api(method, path, body) {
  const res = await fetch(`${SANDBOX}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': `dev-${RUN}-${randomBytes(6).toString('hex')}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, requestId: res.headers.get('request-id') };
}

/** Waits until `check()` is true, polling; fails naming `what` after `ms`. */
async function until(check, what, ms = 10_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`${what}: not within ${ms / 1000} s`);
}

/**
 * Waits until the call `id` is in the request log. It looks with a list (a 200), not with
 * `GET /request-logs/{id}`: that answers 404 until the call is written, and each 404 would
 * be one more 4xx call, written while the next step's page renders.
 */
async function logged(id, ms = 15_000) {
  await until(async () => ((await api('GET', '/request-logs?limit=100')).body?.data ?? []).some((c) => c.id === id), `call ${id} in the request log`, ms);
}

describe(`Gable console Developers area in Chromium (${BACKEND})`, { concurrency: false }, () => {
  before(async () => {
    assert.ok(CONSOLE, 'GABLE_CONSOLE_URL is not set: run the browser tests through tests/browser/run.sh');
    fs.mkdirSync(SHOTS, { recursive: true });
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        received.push(JSON.parse(body));
        res.writeHead(200).end('ok');
      });
    });
    await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
    await sess.launch();
    ctx = await newContext({ permissions: ['clipboard-read', 'clipboard-write'], viewport: { width: 1280, height: 900 } });
    page = watch(await ctx.newPage(), 'owner');
  });

  after(async () => {
    await sess.close();
    receiver?.close();
    if (screenshots.length) console.log(`developers screenshots (${BACKEND}):\n  ${screenshots.join('\n  ')}`);
  });

  step('an integration makes a failing call and a write that causes a delivered event', async () => {
    await signUp(page, owner, 'owner sign-up');
    const csrf = await csrfOf(page);
    const sa = await postFromPage(page, 'create_service_account', { csrf, name: `Integration ${RUN}` });
    assert.ok(sa.ok, `creating a service account: ${sa.status} ${sa.text}`);
    const key = await postFromPage(page, 'create_key', { csrf, service_account_id: JSON.parse(sa.text).id, environment: 'test', access: 'full' });
    assert.ok(key.ok, `creating a key: ${key.status} ${key.text}`);
    apiKey = JSON.parse(key.text).secret;
    // Roles are the live `roles` collection: a live key makes one later.
    const live = await postFromPage(page, 'create_key', { csrf, service_account_id: JSON.parse(sa.text).id, environment: 'live', access: 'full' });
    assert.ok(live.ok, `creating a live key: ${live.status} ${live.text}`);
    liveKey = JSON.parse(live.text).secret;
    const hook = await api('POST', '/webhooks', { url: `http://127.0.0.1:${receiver.address().port}/hook`, events: ['workorder.created'] });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const refused = await api('POST', '/properties', { name: 'No kind', address: { line1: '1 Birch St', city: 'Leeds', country: 'GB' } });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.error.request_id, refused.requestId);
    calls.refused = refused.requestId;
    const property = await api('POST', '/properties', { name: `Birch Court ${RUN}`, kind: 'residential', address: { line1: '1 Birch St', city: 'Leeds', country: 'GB' } });
    assert.equal(property.status, 201, JSON.stringify(property.body));
    const order = await api('POST', '/workorders', { property_id: property.body.data.id, title: 'Broken boiler', priority: 'high' });
    assert.equal(order.status, 201, JSON.stringify(order.body));
    calls.workorder = order.requestId;
    await until(() => received.some((e) => e.type === 'workorder.created'), 'the workorder.created delivery at the receiver');
    // The log is written off the request path, within a second.
    for (const id of [calls.refused, calls.workorder]) await logged(id);
  });

  step('Logs: the failing call is in the list, found by a filter chip, with its bodies and as curl', async () => {
    await goto(page, '/console/request-logs?filter[status_class]=4xx', 'the request log, errors only');
    await expectVisible(page, page.locator('#developers-nav'), 'the Developers tabs');
    await expectVisible(page, page.locator('#filter-chips .chip'), 'the status class chip');
    await expectVisible(page, page.locator(`#records a[href="/console/request-logs/${calls.refused}"]`), 'the failing call in the list');
    assert.equal(await page.locator(`#records a[href="/console/request-logs/${calls.workorder}"]`).count(), 0, 'a 201 is no 4xx');
    await shot(page, 'logs-4xx');
    await page.locator(`#records a[href="/console/request-logs/${calls.refused}"]`).first().click();
    await expectVisible(page, page.locator('#call'), "the call's panel");
    await settle(page, "the call's page");
    assert.match(await page.locator('#call-request').innerText(), /"name": "No kind"/, 'the request body, pretty-printed');
    assert.match(await page.locator('#call-response').innerText(), /"code": "validation_failed"/, 'the error answered');
    assert.equal((await page.locator('#call-status').innerText()).trim(), '400');
    const curl = await page.locator('#call-curl').innerText();
    assert.match(curl, /^curl -X POST '.*\/v1\/properties'/, curl);
    assert.match(curl, /Authorization: Bearer \$GABLE_KEY/);
    assert.ok(!curl.includes(apiKey.slice(13)), 'the key is not in the curl command');
    assert.match(curl, /--data-raw '\{"name":"No kind"/);
    await page.click('#copy-curl');
    await until(async () => (await page.evaluate(() => navigator.clipboard.readText())).startsWith('curl -X POST'), 'the curl command on the clipboard');
    await shot(page, 'call-refused');
  });

  step('Logs: a call written between the render and the hydration changes nothing until the next read', async () => {
    // The page's HTML is rendered, then the WebAssembly is held back while a new failing
    // call is made and written; hydrated, the list must reuse the rows the server rendered
    // (no second read of the list), so nothing can differ from the HTML it takes over.
    let release;
    const held = new Promise((r) => { release = r; });
    const wasm = '**/pkg/*.wasm';
    await page.route(wasm, async (route) => { await held; await route.continue(); });
    const reads = [];
    const onRequest = (r) => { if (r.url().includes('/api/list_records')) reads.push(r.url()); };
    page.on('request', onRequest);
    try {
      await page.goto(`${CONSOLE}/console/request-logs?filter[status_class]=4xx`);
      await expectVisible(page, page.locator(`#records a[href="/console/request-logs/${calls.refused}"]`), 'the server-rendered list');
      // Another code and route than the refused create's, which the Errors step counts.
      const late = await api('GET', `/properties/${randomUUID()}`);
      assert.equal(late.status, 404);
      await logged(late.requestId);
      release();
      await settle(page, 'the list hydrated after a new call was written');
      assert.deepEqual(reads, [], 'hydration reads the list again instead of taking over the rendered rows');
      assert.deepEqual(pageErrors, [], 'no panic while hydrating');
      assert.equal(await page.locator(`#records a[href="/console/request-logs/${late.requestId}"]`).count(), 0, 'the rendered rows stay');
      // The page works: following a link reads the list again, with the new call.
      await page.locator('#filter-chips .chip-remove').first().click();
      await page.waitForURL((u) => !u.search.includes('status_class'));
      await page.goBack();
      await expectVisible(page, page.locator(`#records a[href="/console/request-logs/${late.requestId}"]`), 'the new call, read again');
      assert.deepEqual(pageErrors, []);
    } finally {
      release();
      page.off('request', onRequest);
      await page.unroute(wasm);
    }
  });

  step('Errors: the failing call is counted under its code and route, linked to its calls', async () => {
    await goto(page, '/console/developers/errors', 'the errors overview');
    const row = page.locator('#error-groups tr[data-code=validation_failed]');
    await expectVisible(page, row, 'the validation_failed group');
    assert.match(await row.innerText(), /\/v1\/\{resource\}[\s\S]*400[\s\S]*1/);
    await shot(page, 'errors-24h');
    await row.locator('a.see-calls').click();
    await page.waitForURL((u) => new URL(u).pathname === '/console/request-logs', { timeout: 30_000 });
    await expectVisible(page, page.locator(`#records a[href="/console/request-logs/${calls.refused}"]`), 'the group\'s calls in Logs');
    assert.ok((await page.locator('#filter-chips .chip').count()) >= 2, 'the group is the list\'s filters');
    await goto(page, '/console/developers/errors?window=7d', 'the errors of the week');
    await expectVisible(page, page.locator('#window-7d[aria-current=page]'), 'the 7 days tab');
  });

  step("a write's page links its event to the delivery the receiver got", async () => {
    await goto(page, `/console/request-logs/${calls.workorder}`, "the work order call's page");
    const event = page.locator('#call-events li[data-event]', { hasText: 'workorder.created' });
    await expectVisible(page, event, 'the event the call caused');
    await expectVisible(page, event.locator('.deliveries .badge', { hasText: 'succeeded' }), 'its delivery, succeeded');
    const delivered = received.find((e) => e.type === 'workorder.created');
    assert.equal(await event.getAttribute('data-event'), delivered.id, 'the event delivered is the one shown');
    assert.match(await event.locator('.deliveries a').innerText(), new RegExp(`127\\.0\\.0\\.1:${receiver.address().port}/hook`));
    await shot(page, 'call-events');
    await event.locator('a', { hasText: 'workorder.created' }).click();
    await page.waitForURL((u) => new URL(u).pathname === `/console/events/${delivered.id}`, { timeout: 30_000 });
    await expectVisible(page, page.locator('#record-fields [data-field=request_id]', { hasText: calls.workorder }), 'the event names its call');
    await expectVisible(page, page.locator('#related-webhook-deliveries'), "the event's deliveries");
    await shot(page, 'event-page');
  });

  step("an event's page resends it to its subscriptions, and the receiver gets it again", async () => {
    const delivered = received.find((e) => e.type === 'workorder.created');
    const before = received.filter((e) => e.id === delivered.id).length;
    await goto(page, `/console/events/${delivered.id}`, "the event's page");
    await settle(page, "the event's page");
    await page.locator('#resend-event').click();
    await expectVisible(page, page.locator('#resent', { hasText: 'Queued 1 new attempt' }), 'the resend queued');
    await expectVisible(page, page.locator('#resent .deliveries a', { hasText: `127.0.0.1:${receiver.address().port}/hook` }), 'the new attempt, linked');
    await until(() => received.filter((e) => e.id === delivered.id).length === before + 1, 'the same event at the receiver again');
    await shot(page, 'event-resent');
    await page.locator('#resent .deliveries a').first().click();
    await expectVisible(page, page.locator('#delivery-status'), "the new attempt's page");
    assert.match(await page.locator('body').innerText(), /replay/, 'the new attempt is a replay');
  });

  // How soon is the benchmarks' to measure: the log's writer runs at the lowest CPU
  // priority and waits for a core while the rest of the suite runs beside this file.
  step('the live tail shows a new call as it is recorded', async () => {
    await goto(page, '/console/developers/tail', 'the live tail');
    await expectVisible(page, page.locator('#tail-state', { hasText: 'Live' }), 'the live connection');
    const r = await api('GET', '/properties?limit=1');
    assert.equal(r.status, 200);
    await expectVisible(page, page.locator(`#tail tr[data-id="${r.requestId}"]`), 'the new call in the tail', 15_000);
    await shot(page, 'tail');
  });

  step('a request id pasted in the top bar opens its call; anything else says what one looks like', async () => {
    await goto(page, '/console', 'the overview');
    await page.fill('#find-request-id', calls.refused);
    await page.press('#find-request-id', 'Enter');
    await page.waitForURL((u) => new URL(u).pathname === `/console/request-logs/${calls.refused}`, { timeout: 30_000 });
    await expectVisible(page, page.locator('#call'), "the pasted id's call");
    await page.fill('#find-request-id', 'not-an-id');
    await page.press('#find-request-id', 'Enter');
    await expectVisible(page, page.locator('#find-problem'), 'what a request id looks like');
    await shot(page, 'find-refused');
  });

  step('the pages read before the WebAssembly loads', async () => {
    const still = await newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
    const cookies = await ctx.cookies();
    await still.addCookies(cookies);
    const p = await still.newPage();
    await p.goto(`${CONSOLE}/console/request-logs/${calls.refused}`);
    assert.match(await p.locator('#call-request').innerText(), /No kind/);
    await p.goto(`${CONSOLE}/console/developers/errors`);
    await p.locator('#error-groups').waitFor();
    await p.goto(`${CONSOLE}/console/developers/tail`);
    await p.locator(`#tail tr`).first().waitFor();
    await shot(p, 'tail-without-wasm');
    await still.close();
  });

  step('a role that cannot read the request log sees no Developers area and is refused', async () => {
    const role = await fetch(`${LIVE}/roles`, {
      method: 'POST',
      headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Support ${RUN}`, permissions: ['properties:read', 'workorders:write'] }),
    });
    assert.equal(role.status, 201, await role.text());
    await addTeammate(page, support, `Support ${RUN}`);
    const other = await newContext({ viewport: { width: 1280, height: 900 } });
    const p = watch(await other.newPage(), 'support');
    await signIn(p, support, 'support sign-in');
    await expectVisible(p, p.locator('#areas-nav'), 'the areas navigation');
    assert.equal(await p.locator('#areas-nav').getByRole('heading', { name: 'Developers' }).count(), 0, 'no Developers area');
    assert.equal(await p.locator('#find-request').count(), 0, 'no request id box');
    await goto(p, '/console/request-logs', 'the request log, refused');
    assert.match(await p.locator('#list-error').innerText(), /request-logs:read/);
    await goto(p, `/console/request-logs/${calls.refused}`, 'a call, refused');
    assert.match(await p.locator('#record-error').innerText(), /request-logs:read/);
    await goto(p, '/console/developers/errors', 'the errors, refused');
    assert.match(await p.locator('#errors-error').innerText(), /request-logs:read/);
    const stream = await p.evaluate(async () => (await fetch('/console/developers/tail/stream')).status);
    assert.equal(stream, 403, 'the tail stream is refused');
    const fn = await postFromPage(p, 'api_call', { id: calls.refused });
    assert.ok(!fn.ok && /request-logs:read/.test(fn.text), `the server function is refused: ${fn.status} ${fn.text}`);
    const event = received.find((e) => e.type === 'workorder.created').id;
    const resend = await postFromPage(p, 'resend_event', { csrf: await csrfOf(p), id: event });
    assert.ok(!resend.ok && /owners and admins/.test(resend.text), `a resend is refused: ${resend.status} ${resend.text}`);
    await shot(p, 'support-refused');
    await other.close();
    sess.activePage = page;
  });

  step("another tenant's owner finds none of these calls", async () => {
    const other = await newContext({ viewport: { width: 1280, height: 900 } });
    const p = watch(await other.newPage(), 'stranger');
    await signUp(p, stranger, 'stranger sign-up');
    await goto(p, `/console/request-logs/${calls.refused}`, "the other tenant's call");
    assert.match(await p.locator('#record-error').innerText(), /not found/i);
    await goto(p, `/console/developers/find?id=${calls.workorder}`, "finding the other tenant's call");
    await expectVisible(p, p.locator('#record-error'), 'not found');
    await goto(p, '/console/developers/errors', "the stranger's errors");
    await expectVisible(p, p.locator('#no-errors'), 'no errors of another tenant');
    const event = received.find((e) => e.type === 'workorder.created').id;
    const resend = await postFromPage(p, 'resend_event', { csrf: await csrfOf(p), id: event });
    assert.ok(!resend.ok && /not found/i.test(resend.text), `another tenant's event is not found: ${resend.status} ${resend.text}`);
    await shot(p, 'stranger-finds-nothing');
    await other.close();
    sess.activePage = page;
  });

  step('no page had an uncaught error', async () => {
    assert.deepEqual(pageErrors, []);
  }, { always: true });
});
