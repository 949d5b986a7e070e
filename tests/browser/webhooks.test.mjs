// Browser tests of the console's webhooks pages: a real headless Chromium (Debian's, driven
// by playwright-core) signs up, adds an endpoint pointing at a receiver this test runs on
// 127.0.0.1 (the server is started with --webhook-allow-cidrs 127.0.0.0/8 by run.sh), reads
// the once-shown signing secret and checks the receiver's signatures with it, sends test
// events, follows a real event (a lead created through the sandbox API) into the delivery
// register, filters it, opens an attempt's detail, replays it, rotates the secret, edits,
// disables and deletes the endpoint, and checks that read-only staff see everything but can
// change nothing (also when posting to the server functions directly).
//
// Run through tests/browser/run.sh (see console.test.mjs for the environment it exports).
// Screenshots go to $GABLE_SCREENSHOTS/webhooks/NN-<what>.png.

import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { session } from './lib.mjs';

// The browser, the state the steps share and the helpers: lib.mjs.
const sess = session({ shotsSubdir: 'webhooks', stepLabel: 'webhooks step' });
const { consoleUrl: CONSOLE, sandboxUrl: SANDBOX, backend: BACKEND, serverLog: SERVER_LOG, shotsDir: SHOTS } = sess;
const { pathIs, shot, watch, newContext, settle, expectVisible, goto, postFromPage, csrfOf, signUp, signIn, addTeammate, step, pageErrors, screenshots } = sess;

const RUN = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const password = (word) => `${word}-${randomBytes(9).toString('hex')}`;
const owner = {
  company: `Webhook Homes ${RUN}`,
  name: 'Wendy Webhooks',
  email: `wendy.${RUN}@example.com`,
  password: password('Webhook-owner'),
};
const readonly = { name: 'Rob Readonly', email: `rob.${RUN}@example.com`, password: password('First-password') };

// The event types the create form's picker offers, in the catalogue's order (domain::events).
// BEGIN GENERATED events: `make generate` writes these from `gable collections`.
const EVENT_TYPES = [
  'listing.published', 'lead.created', 'viewing.booked', 'application.submitted',
  'application.status_changed', 'screening.completed', 'lease.sent', 'lease.signed',
  'tenancy.started', 'rent.due', 'payment.succeeded', 'payment.failed', 'payment.reversed',
  'booking.created', 'booking.cancelled', 'guest.checked_in', 'guest.checked_out',
  'workorder.created', 'workorder.completed', 'inspection.completed', 'document.expiring',
  'lease.expiring', 'import.completed', 'tenant.moved_out',
];
// END GENERATED events

// Every signing secret seen; the last step searches the server log for each.
const secrets = [];

let ownerCtx;
let page;
let receiver;
let receiverUrl;
const received = []; // { path, headers, body, at }
let webhookId;
let secret; // the current signing secret
let oldSecret; // the one before the rotation
let testDeliveryId;

// ---------------------------------------------------------------------------------------
// Helpers (the shared ones are in lib.mjs)

/** Resolves with the receiver's requests once `predicate` holds for one of them. */
async function waitForDelivery(predicate, what, timeout = 30_000) {
  const start = Date.now();
  for (;;) {
    const hit = received.find(predicate);
    if (hit) return hit;
    if (Date.now() - start > timeout) {
      assert.fail(`${what}: the receiver got nothing that matches within ${timeout / 1000} s (it got ${received.length} request(s))`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The receiver's check, from the raw bytes: some `v1=` value is HMAC-SHA256(secret, "<ts>.<body>"). */
function signedWith(req, key) {
  const ts = req.headers['gable-timestamp'];
  const header = req.headers['gable-signature'] || '';
  if (!ts || !key) return false;
  const want = createHmac('sha256', key).update(`${ts}.`).update(req.body).digest();
  return header
    .split(/[ ,]+/)
    .filter((v) => v.startsWith('v1='))
    .some((v) => {
      const got = Buffer.from(v.slice(3), 'hex');
      return got.length === want.length && timingSafeEqual(got, want);
    });
}

/** Reloads the endpoint page until the register's row for `deliveryId` (or the first row) has `status`. */
async function waitForRegister(p, status, what, { deliveryId, timeout = 30_000 } = {}) {
  const start = Date.now();
  const row = () => (deliveryId ? p.locator(`#delivery-${deliveryId}`) : p.locator('#deliveries tbody tr').first());
  for (;;) {
    await goto(p, `/console/webhooks/${webhookId}`, what);
    if ((await row().count()) && (await row().getAttribute('data-status')) === status) return row();
    if (Date.now() - start > timeout) {
      const got = (await row().count()) ? await row().getAttribute('data-status') : 'no row';
      assert.fail(`${what}: the register does not show the attempt as ${status} within ${timeout / 1000} s (it shows ${got})`);
    }
    await p.waitForTimeout(500);
  }
}

async function webhookSecretShown(p, what) {
  await expectVisible(p, p.locator('#new-webhook-secret'), `${what}: the signing secret (#new-webhook-secret)`, 30_000);
  const s = (await p.locator('#new-webhook-secret').textContent()).trim();
  assert.match(s, /^whsec_[A-Za-z0-9_-]{32,}$/, `${what}: the secret shown should be whsec_…`);
  assert.match(await p.locator('.secret .warning').innerText(), /not be able to see it again/, `${what}: no shown-once warning`);
  secrets.push(s);
  return s;
}

// ---------------------------------------------------------------------------------------
// The steps

describe(`Gable console webhooks in Chromium (${BACKEND})`, { concurrency: false }, () => {
  before(async () => {
    assert.ok(CONSOLE, 'GABLE_CONSOLE_URL is not set: run the browser tests through tests/browser/run.sh');
    fs.mkdirSync(SHOTS, { recursive: true });
    receiver = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        received.push({ path: req.url, headers: req.headers, body: Buffer.concat(chunks), at: Date.now() });
        res.writeHead(200, { 'content-type': 'text/plain', 'x-receiver': `browser-test-${RUN}` });
        res.end(`ok ${RUN}`);
      });
    });
    await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${receiver.address().port}/hooks/${RUN}`;
    await sess.launch();
    ownerCtx = await newContext({ permissions: ['clipboard-read', 'clipboard-write'], viewport: { width: 1280, height: 900 } });
    page = watch(await ownerCtx.newPage(), 'owner');
  });

  after(async () => {
    await sess.close();
    if (receiver) {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
    if (screenshots.length) console.log(`webhooks screenshots (${BACKEND}):\n  ${screenshots.join('\n  ')}`);
  });

  step('W1. an owner finds Webhooks in the navigation: the empty state and the create form', async () => {
    await signUp(page, owner, 'signing up the owner');
    await page.locator('nav.mainnav a', { hasText: 'Webhooks' }).click();
    await page.waitForURL(pathIs('/console/webhooks'), { timeout: 30_000 });
    await settle(page, 'the webhooks page');
    await expectVisible(page, page.getByRole('heading', { name: 'No endpoints yet' }), 'the empty state');
    await expectVisible(page, page.locator('#create-webhook-form'), 'the create form');
    const offered = await page.locator('#create-webhook-form input[type=checkbox][name^="events["]').evaluateAll((boxes) => boxes.map((b) => b.name));
    assert.deepEqual(offered, EVENT_TYPES.map((t) => `events[${t}]`), 'the events picker should offer every event type');
    await shot(page, 'webhooks-empty');
  });

  step('W2. refused URLs and empty choices get errors in words; a good one shows its secret once', async () => {
    // A private address outside the allow-list: the SSRF guard's refusal, in words.
    await page.fill('#create-webhook-form input[name=url]', 'http://10.1.2.3/hooks');
    await page.click('#create-webhook-form button[type=submit]');
    await expectVisible(page, page.locator('#create-webhook-form .form-error'), 'the error for a private address');
    assert.match(await page.locator('#create-webhook-form .form-error').innerText(), /URL cannot receive webhooks/, 'the refusal should say why');
    await shot(page, 'webhooks-create-refused-url');
    // "Only the ticked types" with none ticked.
    await page.fill('#create-webhook-form input[name=url]', receiverUrl);
    await page.check('#create-webhook-form input[name=which][value=some]');
    await page.click('#create-webhook-form button[type=submit]');
    await page.waitForFunction(() => /at least one event type/.test(document.querySelector('#create-webhook-form .form-error')?.textContent || ''));

    await page.fill('#create-webhook-form input[name=description]', 'Browser test receiver');
    await page.check('#create-webhook-form input[name="events[lead.created]"]');
    await page.check('#create-webhook-form input[name="events[payment.succeeded]"]');
    await page.click('#create-webhook-form button[type=submit]');
    secret = await webhookSecretShown(page, 'creating the endpoint');
    await page.click('#copy-secret');
    await expectVisible(page, page.locator('#copy-secret', { hasText: 'Copied' }), 'the copy button confirming');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret, 'the copy button should put the secret on the clipboard');
    await expectVisible(page, page.locator('#webhooks li', { hasText: receiverUrl }), 'the new endpoint in the list');
    await shot(page, 'webhooks-created-secret-shown-once');
    const href = await page.locator('#open-new-webhook').getAttribute('href');
    webhookId = href.split('/').pop();

    // Shown once: after a reload the secret is nowhere in the page.
    await page.reload();
    await settle(page, 'the webhooks page after a reload');
    assert.ok(!(await page.content()).includes(secret), 'the signing secret is still in the page after a reload');
    assert.match(await page.locator('#webhooks li').first().innerText(), /2 event types/);
    await shot(page, 'webhooks-list');
  });

  step('W3. a test event reaches the receiver, signed with the secret, and appears in the register', async () => {
    await page.locator('#webhooks a', { hasText: receiverUrl }).click();
    await page.waitForURL(pathIs(`/console/webhooks/${webhookId}`));
    await settle(page, 'the endpoint page');
    await expectVisible(page, page.locator('#webhook-url', { hasText: receiverUrl }), "the endpoint's URL");
    assert.equal((await page.locator('#webhook-status').innerText()).trim(), 'enabled');
    await expectVisible(page, page.locator('#no-deliveries'), 'the empty register');
    await shot(page, 'webhook-endpoint-new');

    await page.selectOption('#test-webhook-form select[name=event_type]', 'payment.succeeded');
    await page.click('#send-test');
    await expectVisible(page, page.locator('#test-queued'), 'the "test event on its way" note');
    const req = await waitForDelivery((r) => JSON.parse(r.body).type === 'payment.succeeded', 'the test event');
    const body = JSON.parse(req.body);
    assert.equal(body.test, true, 'a test event is marked "test": true');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.equal(req.headers['gable-event-id'], body.id);
    assert.ok(signedWith(req, secret), 'the test event is not signed with the secret the console showed');

    const row = await waitForRegister(page, 'succeeded', 'the test event in the register');
    assert.match(await row.innerText(), /payment\.succeeded[\s\S]*test[\s\S]*200/);
    testDeliveryId = (await row.getAttribute('id')).replace('delivery-', '');
    await shot(page, 'webhook-register-test-event');
  });

  step('W4. a real event: a lead created through the sandbox API is delivered and its event shown', async () => {
    const csrf = await csrfOf(page);
    const sa = await postFromPage(page, 'create_service_account', { csrf, name: `Webhook test ${RUN}` });
    assert.ok(sa.ok, `creating a service account: ${sa.status} ${sa.text}`);
    const key = await postFromPage(page, 'create_key', { csrf, service_account_id: JSON.parse(sa.text).id, environment: 'test', access: 'full' });
    assert.ok(key.ok, `creating a key: ${key.status} ${key.text}`);
    const apiKey = JSON.parse(key.text).secret;
    const res = await fetch(`${SANDBOX}/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Lena Lead', email: `lena.${RUN}@example.com` }),
    });
    const text = await res.text();
    assert.equal(res.status, 201, `creating a lead: ${text}`);
    const created = JSON.parse(text);
    const lead = created.data ?? created;
    const req = await waitForDelivery((r) => JSON.parse(r.body).type === 'lead.created', 'the lead.created event');
    assert.ok(signedWith(req, secret), 'the lead.created event is not signed with the secret');
    const eventId = JSON.parse(req.body).id;

    await goto(page, `/console/webhooks/${webhookId}?trigger=event`, 'the register filtered to events');
    const row = page.locator('#deliveries tbody tr').first();
    await expectVisible(page, row, 'the lead.created attempt');
    assert.match(await row.innerText(), /lead\.created/);
    await row.locator('a.details-link').click();
    await page.waitForURL(/\/deliveries\//);
    await settle(page, 'the detail of the event delivery');
    await expectVisible(page, page.locator('#request-body'), 'the request body');
    const shown = await page.locator('#request-body').innerText();
    assert.ok(shown.includes(eventId), 'the detail should show the event JSON (its id)');
    assert.ok(shown.includes('lead.created'), 'the detail should show the event JSON (its type)');
    if (lead && lead.id) assert.ok(shown.includes(lead.id), "the event JSON should carry the lead's id");
    await shot(page, 'webhook-delivery-detail-event');
  });

  step('W5. the register filters by status, event type and trigger', async () => {
    await goto(page, `/console/webhooks/${webhookId}?status=failed`, 'the register filtered to failed');
    await expectVisible(page, page.locator('#no-deliveries'), 'no failed attempts');
    await goto(page, `/console/webhooks/${webhookId}`, 'the register');
    await page.selectOption('#delivery-filters select[name=status]', 'succeeded');
    await page.selectOption('#delivery-filters select[name=event_type]', 'payment.succeeded');
    await page.selectOption('#delivery-filters select[name=trigger]', 'test');
    await page.click('#delivery-filters button[type=submit]');
    await page.waitForURL(/status=succeeded/);
    await settle(page, 'the filtered register');
    const rows = page.locator('#deliveries tbody tr');
    await expectVisible(page, rows, 'the filtered register');
    assert.equal(await rows.count(), 1, 'exactly the test event should match');
    assert.equal(await page.locator('#delivery-filters select[name=trigger]').inputValue(), 'test', 'the filter keeps its value');
    await shot(page, 'webhook-register-filtered');
  });

  step("W6. an attempt's detail shows the request, the response and the timing; Replay sends it again", async () => {
    await goto(page, `/console/webhooks/${webhookId}/deliveries/${testDeliveryId}`, "the test attempt's detail");
    await expectVisible(page, page.locator('#request-headers'), 'the request headers');
    const headers = await page.locator('#request-headers').innerText();
    for (const h of ['Gable-Signature', 'Gable-Timestamp', 'Gable-Event-Id', 'User-Agent']) assert.ok(headers.includes(h), `the request headers should show ${h}`);
    assert.match(await page.locator('#request-body').innerText(), /"test": true/, 'the request body of a test send');
    assert.equal((await page.locator('#response-status').innerText()).trim(), '200');
    assert.ok((await page.locator('#response-body').innerText()).includes(`ok ${RUN}`), "the response's body excerpt");
    assert.ok((await page.locator('#response-headers').innerText()).toLowerCase().includes('x-receiver'), "the response's headers");
    assert.match(await page.locator('#latency').innerText(), /^\d+ ms$/);
    assert.ok(!(await page.content()).includes(secret), 'the detail page must not show the signing secret');
    await shot(page, 'webhook-delivery-detail-test');

    const firstId = JSON.parse(received.find((r) => JSON.parse(r.body).type === 'payment.succeeded').body).id;
    const before = received.length;
    await page.click('#replay');
    await expectVisible(page, page.locator('#replayed'), 'the "queued as attempt" note');
    assert.match(await page.locator('#replayed').innerText(), /attempt 2/);
    const again = await waitForDelivery((r, i) => received.indexOf(r) >= before && JSON.parse(r.body).id === firstId, 'the replay');
    assert.ok(signedWith(again, secret), 'the replay is not signed with the secret');
    await shot(page, 'webhook-delivery-replayed');
    await page.locator('#replayed a').click();
    await page.waitForURL((u) => !u.pathname.endsWith(testDeliveryId));
    await settle(page, 'the replay attempt');
    await expectVisible(page, page.locator('.muted', { hasText: 'attempt 2 · replay' }), 'the new attempt, marked replay');
  });

  step('W7. rotating shows a new secret once; both secrets sign for a while', async () => {
    await goto(page, `/console/webhooks/${webhookId}`, 'the endpoint page');
    await page.click('#rotate-secret');
    oldSecret = secret;
    secret = await webhookSecretShown(page, 'rotating');
    assert.notEqual(secret, oldSecret, 'rotating should give a new secret');
    assert.match(await page.locator('.secret .warning').innerText(), /24 hours/);
    await shot(page, 'webhook-secret-rotated');
    const before = received.length;
    await page.selectOption('#test-webhook-form select[name=event_type]', 'lease.signed');
    await page.click('#send-test');
    const req = await waitForDelivery((r) => received.indexOf(r) >= before && JSON.parse(r.body).type === 'lease.signed', 'a test after rotating');
    assert.ok(signedWith(req, secret), 'not signed with the new secret');
    assert.ok(signedWith(req, oldSecret), 'not signed with the previous secret too (24 h overlap)');
    assert.equal(req.headers['gable-signature'].split(' ').length, 2, 'two v1= values during the overlap');
  });

  step('W8. editing: description and events', async () => {
    await goto(page, `/console/webhooks/${webhookId}`, 'the endpoint page');
    await page.fill('#edit-webhook-form input[name=description]', 'Edited in the browser test');
    await page.check('#edit-webhook-form input[name=which][value=all]');
    await shot(page, 'webhook-edit-form');
    await page.click('#edit-webhook-form button[type=submit]');
    await expectVisible(page, page.locator('#webhook-description', { hasText: 'Edited in the browser test' }), 'the new description');
    await page.waitForFunction(() => /All events/.test(document.body.innerText));
    // A live-mode rule the sandbox does not have is not tested here; an invalid URL is.
    await page.fill('#edit-webhook-form input[name=url]', 'not a url');
    await page.click('#edit-webhook-form button[type=submit]');
    await expectVisible(page, page.locator('#edit-webhook-form .form-error', { hasText: 'The URL' }), 'the error for a bad URL');
  });

  step('W9. disabling stops test sends (said in words); enabling again', async () => {
    await goto(page, `/console/webhooks/${webhookId}`, 'the endpoint page');
    await page.click('#toggle-webhook');
    await expectVisible(page, page.locator('#webhook-status', { hasText: 'disabled' }), 'the disabled badge');
    await page.click('#send-test');
    await expectVisible(page, page.locator('#test-webhook-form + .form-error, #manage-webhook .form-error', { hasText: /disabled/ }), 'the refusal to send to a disabled endpoint');
    await shot(page, 'webhook-disabled');
    await page.click('#toggle-webhook');
    await expectVisible(page, page.locator('#webhook-status', { hasText: 'enabled' }), 'the enabled badge');
  });

  step('W10. read-only staff see the endpoint, its register and details, but no forms, and are refused', async () => {
    await addTeammate(page, readonly, 'Read-only staff');

    const ctx = await newContext({ viewport: { width: 1280, height: 900 } });
    const ro = watch(await ctx.newPage(), 'read-only');
    try {
      await signIn(ro, readonly, 'the read-only teammate');
      await goto(ro, '/console/webhooks', 'the webhooks page (read-only)');
      await expectVisible(ro, ro.locator('#webhooks li', { hasText: receiverUrl }), 'the endpoint in the list');
      assert.equal(await ro.locator('#create-webhook-form').count(), 0, 'read-only staff should not see the create form');
      await expectVisible(ro, ro.locator('.notice', { hasText: 'Only owners and admins' }), 'the notice');
      await shot(ro, 'webhooks-list-read-only');
      await goto(ro, `/console/webhooks/${webhookId}`, 'the endpoint page (read-only)');
      await expectVisible(ro, ro.locator('#deliveries tbody tr'), 'the register');
      assert.equal(await ro.locator('#manage-webhook, #edit-webhook, #delete-webhook-form, #test-webhook-form').count(), 0, 'no management forms');
      await shot(ro, 'webhook-endpoint-read-only');
      await goto(ro, `/console/webhooks/${webhookId}/deliveries/${testDeliveryId}`, 'a detail (read-only)');
      await expectVisible(ro, ro.locator('#request-headers'), 'the request headers');
      assert.equal(await ro.locator('#replay').count(), 0, 'no Replay button');
      await shot(ro, 'webhook-delivery-detail-read-only');

      const csrf = await csrfOf(ro);
      const before = received.length;
      const attempts = [
        ['create_webhook', { csrf, url: receiverUrl, which: 'all' }],
        ['update_webhook', { csrf, id: webhookId, url: receiverUrl, which: 'all', description: 'hijacked' }],
        ['set_webhook_enabled', { csrf, id: webhookId, enabled: 'false' }],
        ['rotate_webhook_secret', { csrf, id: webhookId }],
        ['send_test_webhook', { csrf, id: webhookId, event_type: 'lead.created' }],
        ['replay_webhook_delivery', { csrf, id: testDeliveryId }],
        ['delete_webhook', { csrf, id: webhookId }],
      ];
      for (const [endpoint, fields] of attempts) {
        const res = await postFromPage(ro, endpoint, fields);
        assert.ok(!res.ok, `read-only staff's POST /api/${endpoint} should be refused, got ${res.status}`);
        assert.match(res.text, /owners and admins/i, `the refusal of /api/${endpoint} should say who may`);
        assert.ok(!/whsec_/.test(res.text), 'a refusal must not carry a secret');
      }
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(received.length, before, 'nothing should have been sent for the refused calls');
    } finally {
      await ctx.close();
      sess.activePage = page;
    }
    await goto(page, `/console/webhooks/${webhookId}`, 'the endpoint page (owner)');
    assert.equal((await page.locator('#webhook-status').innerText()).trim(), 'enabled', 'the refused calls changed the endpoint');
    assert.ok(!(await page.locator('#webhook-description').innerText()).includes('hijacked'));
  });

  step('W11. deleting asks for confirmation, then the endpoint is gone', async () => {
    await goto(page, `/console/webhooks/${webhookId}`, 'the endpoint page');
    // The confirmation box is required: without it nothing is posted.
    await page.click('#delete-webhook');
    await page.waitForTimeout(500);
    assert.ok(page.url().endsWith(webhookId), 'deleting without confirming should stay on the page');
    await page.check('#confirm-delete');
    await shot(page, 'webhook-delete-confirm');
    await page.click('#delete-webhook');
    await page.waitForURL(pathIs('/console/webhooks'), { timeout: 30_000 });
    await settle(page, 'the webhooks page after deleting');
    await expectVisible(page, page.getByRole('heading', { name: 'No endpoints yet' }), 'the empty state after deleting');
    await shot(page, 'webhooks-after-delete');
    await goto(page, `/console/webhooks/${webhookId}`, 'the deleted endpoint');
    await expectVisible(page, page.locator('.form-error', { hasText: 'was not found' }), 'not found');
  });

  step(
    'W12. the server log holds no signing secret; no page threw',
    async () => {
      if (SERVER_LOG && fs.existsSync(SERVER_LOG)) {
        const log = fs.readFileSync(SERVER_LOG, 'utf8');
        for (const s of secrets) assert.ok(!log.includes(s), `the server log contains a webhook signing secret (${s.slice(0, 10)}…)`);
      }
      assert.deepEqual(pageErrors, [], 'uncaught errors in the pages');
    },
    { always: true },
  );
});
