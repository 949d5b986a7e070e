// Browser tests of the console's Sandbox page: a real headless Chromium (Debian's, driven by
// playwright-core) signs up an owner, who makes sandbox data (properties, a lead, an advanced
// sandbox clock) and live data through the API with keys created through the console's server
// functions, then resets the sandbox from the page: the first button only opens a confirmation
// step, a wrong word deletes nothing, the confirmed reset deletes the sandbox data and clock and
// nothing else (the live property is still there, the sandbox key still works); a reset with
// the demo portfolio leaves exactly the demo's property. The same two steps work without
// JavaScript. A read-only teammate sees no reset button and is refused when posting directly.
//
// Run through tests/browser/run.sh (see console.test.mjs for the environment it exports).
// Screenshots go to $GABLE_SCREENSHOTS/sandbox/NN-<what>.png.

import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { session } from './lib.mjs';

// The browser, the state the steps share and the helpers: lib.mjs.
const sess = session({ shotsSubdir: 'sandbox', stepLabel: 'sandbox step' });
const { consoleUrl: CONSOLE, sandboxUrl: SANDBOX, liveApiUrl: LIVE_API, backend: BACKEND, serverLog: SERVER_LOG, shotsDir: SHOTS } = sess;
const { pathIs, shot, watch, newContext, settle, expectVisible, goto, postFromPage, csrfOf, signUp, signIn, addTeammate, step, pageErrors, screenshots } = sess;

const RUN = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const password = (word) => `${word}-${randomBytes(9).toString('hex')}`;
const owner = {
  company: `Sandbox Estates ${RUN}`,
  name: 'Sandra Sandbox',
  email: `sandra.${RUN}@example.com`,
  password: password('Sandbox-owner'),
};
const readonly = { name: 'Reggie Readonly', email: `reggie.${RUN}@example.com`, password: password('First-password') };
const LIVE_NAME = `Live House ${RUN}`;
const SANDBOX_NAMES = [`Test Tower ${RUN}`, `Test Terrace ${RUN}`];
const DAY = 24 * 3600 * 1000;

// Every secret seen; the last step searches the server log for each.
const secrets = [owner.password, readonly.password];

let ownerCtx;
let page;
let testKey; // a sandbox key (gbl_test_…), everything
let liveKey; // a live key (gbl_live_…), everything
let liveId; // the live property

// ---------------------------------------------------------------------------------------
// Helpers (the shared ones are in lib.mjs)

/** Calls the API from Node with a key; `body` makes it a POST. Returns { status, body, text }. */
async function api(base, key, resource, body) {
  const res = await fetch(`${base}/${resource}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text };
}

/** The names in a list answer, after checking it is a 200. */
async function names(base, key, resource, what) {
  const res = await api(base, key, `${resource}?limit=100`);
  assert.equal(res.status, 200, `${what}: GET ${resource} answered ${res.status}: ${res.text}`);
  return res.body.data.map((r) => r.name);
}

/** The types of the sandbox's events. */
async function sandboxEvents(what) {
  const res = await api(SANDBOX, testKey, 'events?limit=100');
  assert.equal(res.status, 200, `${what}: GET events answered ${res.status}: ${res.text}`);
  return res.body.data.map((e) => e.type);
}

/** How far the sandbox clock runs ahead of real time, in days. */
async function clockAhead(what) {
  const res = await api(SANDBOX, testKey, 'sandbox/clock');
  assert.equal(res.status, 200, `${what}: GET sandbox/clock answered ${res.status}: ${res.text}`);
  return (Date.parse(res.body.data.now) - Date.now()) / DAY;
}

function property(name) {
  return { name, kind: 'residential', address: { line1: '1 Test St', city: 'Portland', country: 'US' } };
}

/** The rows-deleted number in the result note. */
async function rowsDeleted(p) {
  const text = await p.locator('#reset-result').innerText();
  const m = text.match(/(\d+) rows? of sandbox data/);
  assert.ok(m, `the result should say how many rows were deleted: ${JSON.stringify(text)}`);
  return Number(m[1]);
}

/** The second step's form, for a page that shows it; types `word` and presses the button. */
async function confirmWith(p, word) {
  await p.fill('#confirm-word', word);
  await p.click('#confirm-reset-button');
}

// ---------------------------------------------------------------------------------------
// The steps

describe(`Gable console sandbox reset in Chromium (${BACKEND})`, { concurrency: false }, () => {
  before(async () => {
    assert.ok(CONSOLE && SANDBOX, 'GABLE_CONSOLE_URL / GABLE_SANDBOX_URL are not set: run the browser tests through tests/browser/run.sh');
    fs.mkdirSync(SHOTS, { recursive: true });
    await sess.launch();
    ownerCtx = await newContext({ viewport: { width: 1280, height: 900 } });
    page = watch(await ownerCtx.newPage(), 'owner');
  });

  after(async () => {
    await sess.close();
    if (screenshots.length) console.log(`sandbox screenshots (${BACKEND}):\n  ${screenshots.join('\n  ')}`);
  });

  step('S1. an owner makes sandbox data (and a clock ahead) and live data through the API', async () => {
    await signUp(page, owner, 'signing up the owner');
    const csrf = await csrfOf(page);
    const sa = await postFromPage(page, 'create_service_account', { csrf, name: `Sandbox test ${RUN}` });
    assert.ok(sa.ok, `creating a service account: ${sa.status} ${sa.text}`);
    const saId = JSON.parse(sa.text).id;
    for (const environment of ['test', 'live']) {
      const key = await postFromPage(page, 'create_key', { csrf, service_account_id: saId, environment, access: 'full' });
      assert.ok(key.ok, `creating a ${environment} key: ${key.status} ${key.text}`);
      const secret = JSON.parse(key.text).secret;
      secrets.push(secret);
      if (environment === 'test') testKey = secret;
      else liveKey = secret;
    }
    assert.match(testKey, /^gbl_test_/);
    assert.match(liveKey, /^gbl_live_/);

    for (const name of SANDBOX_NAMES) {
      const res = await api(SANDBOX, testKey, 'properties', property(name));
      assert.equal(res.status, 201, `creating sandbox property ${name}: ${res.text}`);
    }
    const lead = await api(SANDBOX, testKey, 'leads', { name: 'Lena Lead', email: `lena.${RUN}@example.com` });
    assert.equal(lead.status, 201, `creating a sandbox lead: ${lead.text}`);
    const live = await api(LIVE_API, liveKey, 'properties', property(LIVE_NAME));
    assert.equal(live.status, 201, `creating the live property: ${live.text}`);
    liveId = live.body.data?.id ?? live.body.id;
    // The sandbox clock 40 days ahead: a reset puts it back on real time.
    const advanced = await api(SANDBOX, testKey, 'sandbox/clock/advance', { to: new Date(Date.now() + 40 * DAY).toISOString() });
    assert.equal(advanced.status, 200, `advancing the sandbox clock: ${advanced.text}`);

    assert.deepEqual((await names(SANDBOX, testKey, 'properties', 'the sandbox')).sort(), [...SANDBOX_NAMES].sort());
    assert.equal((await names(SANDBOX, testKey, 'leads', 'the sandbox')).length, 1);
    assert.ok((await sandboxEvents('before the reset')).includes('lead.created'), 'the lead should have made a lead.created event');
    assert.deepEqual(await names(LIVE_API, liveKey, 'properties', 'live'), [LIVE_NAME]);
    assert.ok((await clockAhead('before the reset')) > 39, 'the sandbox clock should be 40 days ahead');
  });

  step('S2. the owner finds Sandbox in the navigation: what a reset does, the demo choice, the button', async () => {
    await page.locator('nav.mainnav a', { hasText: 'Sandbox' }).click();
    await page.waitForURL(pathIs('/console/sandbox'), { timeout: 30_000 });
    await settle(page, 'the sandbox page');
    await expectVisible(page, page.getByRole('heading', { name: 'Sandbox', exact: true }), 'the heading');
    const explained = await page.locator('#reset-explained').innerText();
    for (const words of [/deletes every record in your sandbox/, /clock/, /never touches live data/, /API keys/]) {
      assert.match(explained, words, 'the page should say what a reset does');
    }
    await expectVisible(page, page.locator('#reset-demo'), 'the "then add the demo portfolio" box');
    await expectVisible(page, page.locator('#reset-sandbox'), 'the "Reset sandbox" button');
    assert.equal(await page.locator('#confirm-reset').count(), 0, 'no confirmation step before the button is pressed');
    await shot(page, 'sandbox-page-before');
  });

  step('S3. without confirmation nothing is deleted: the button opens a second step; a wrong word is refused', async () => {
    await page.click('#reset-sandbox');
    await expectVisible(page, page.locator('#confirm-reset'), 'the confirmation step');
    assert.match(page.url(), /step=confirm/);
    assert.match(await page.locator('#confirm-reset').innerText(), /Delete all sandbox data of Sandbox Estates/);
    assert.match(await page.locator('#confirm-reset').innerText(), /empty afterwards/, 'without the demo box the sandbox ends empty');
    await shot(page, 'sandbox-confirm-step');
    // Pressing the button with the box empty: the browser asks for the word, nothing is posted.
    await page.click('#confirm-reset-button');
    await page.waitForTimeout(500);
    assert.equal(await page.locator('#reset-result').count(), 0, 'an empty confirmation must not reset');
    // A wrong word: the server refuses in words.
    await confirmWith(page, 'delete');
    await expectVisible(page, page.locator('#confirm-reset .form-error', { hasText: 'Type reset' }), 'the refusal of a wrong word');
    await shot(page, 'sandbox-confirm-wrong-word');
    // Cancel leaves the page as it was.
    await page.click('#cancel-reset');
    await page.waitForURL((u) => !/step=confirm/.test(u), { timeout: 30_000 });
    await expectVisible(page, page.locator('#reset-sandbox'), 'the first step again after Cancel');
    assert.equal(await page.locator('#confirm-reset').count(), 0);

    assert.equal((await names(SANDBOX, testKey, 'properties', 'after the unconfirmed attempts')).length, 2, 'nothing may be deleted without confirmation');
    assert.equal((await names(SANDBOX, testKey, 'leads', 'after the unconfirmed attempts')).length, 1);
    assert.ok((await clockAhead('after the unconfirmed attempts')) > 39, 'the clock must stay ahead without confirmation');
  });

  step('S4. confirmed: the sandbox data and clock are gone; live data and the sandbox key are untouched', async () => {
    await page.click('#reset-sandbox');
    await expectVisible(page, page.locator('#confirm-reset'), 'the confirmation step');
    await confirmWith(page, 'reset');
    await page.waitForURL(/reset=done/, { timeout: 30_000 });
    await expectVisible(page, page.locator('#reset-result'), 'what the reset did');
    const n = await rowsDeleted(page);
    assert.ok(n >= 4, `at least the two properties, the lead and its event should be counted, the page says ${n}`);
    const result = await page.locator('#reset-result').innerText();
    assert.match(result, /clock is back on real time/);
    assert.match(result, /empty/);
    assert.equal(await page.locator('#confirm-reset').count(), 0, 'the confirmation step closes after the reset');
    await shot(page, 'sandbox-after-reset');

    // The sandbox key still works, and finds nothing.
    assert.deepEqual(await names(SANDBOX, testKey, 'properties', 'the sandbox after the reset'), [], 'sandbox properties should be gone');
    assert.deepEqual(await names(SANDBOX, testKey, 'leads', 'the sandbox after the reset'), [], 'sandbox leads should be gone');
    assert.deepEqual(await sandboxEvents('after the reset'), [], 'sandbox events should be gone');
    assert.ok(Math.abs(await clockAhead('after the reset')) < 0.01, 'the sandbox clock should be back on real time');
    // Live data is untouched.
    assert.deepEqual(await names(LIVE_API, liveKey, 'properties', 'live after the reset'), [LIVE_NAME], 'the live property must survive');
    const one = await api(LIVE_API, liveKey, `properties/${liveId}`);
    assert.equal(one.status, 200, `the live property by id: ${one.text}`);
    // The sandbox works as before: a new record can be made with the same key.
    const again = await api(SANDBOX, testKey, 'properties', property(`After reset ${RUN}`));
    assert.equal(again.status, 201, `the sandbox key after the reset: ${again.text}`);
  });

  step('S5. a reset with the demo portfolio leaves exactly the demo property', async () => {
    await goto(page, '/console/sandbox', 'the sandbox page');
    await page.check('#reset-demo');
    await page.click('#reset-sandbox');
    await expectVisible(page, page.locator('#confirm-reset'), 'the confirmation step');
    assert.match(page.url(), /demo=true/);
    assert.match(await page.locator('#confirm-reset').innerText(), /demo portfolio is added/);
    await confirmWith(page, 'reset');
    await page.waitForURL(/reset=done/, { timeout: 60_000 });
    await expectVisible(page, page.locator('#reset-result', { hasText: 'demo portfolio was added' }), 'the result with the demo');
    assert.ok((await rowsDeleted(page)) >= 1, 'the property made after the first reset was deleted');
    await shot(page, 'sandbox-after-reset-with-demo');

    assert.deepEqual(await names(SANDBOX, testKey, 'properties', 'the sandbox with the demo'), ['Maple Court'], 'only the demo property');
    const units = await api(SANDBOX, testKey, 'units?limit=100');
    assert.equal(units.status, 200);
    assert.equal(units.body.data.length, 3, 'the demo property has three units');
    const invoices = await api(SANDBOX, testKey, 'invoices?filter[status]=open');
    assert.equal(invoices.status, 200);
    assert.ok(invoices.body.data.length >= 1, "the demo lease's rent is invoiced");
    assert.deepEqual(await names(LIVE_API, liveKey, 'properties', 'live after the demo reset'), [LIVE_NAME], 'the live property must survive');
  });

  step('S6. without JavaScript the same two steps work (server-rendered forms)', async () => {
    // The owner's session in a context that runs no scripts at all.
    const ctx = await sess.browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
    await ctx.addCookies(await ownerCtx.cookies(CONSOLE));
    const p = watch(await ctx.newPage(), 'owner without JavaScript');
    try {
      await p.goto(`${CONSOLE}/console/sandbox`);
      await expectVisible(p, p.locator('#reset-sandbox'), 'the button, server-rendered');
      await p.click('#reset-sandbox');
      await p.waitForURL(/step=confirm/, { timeout: 30_000 });
      await expectVisible(p, p.locator('#confirm-reset'), 'the confirmation step, server-rendered');
      await confirmWith(p, 'nope');
      await p.waitForURL(/__err=/, { timeout: 30_000 }); // a plain form post's error comes back in the URL
      await expectVisible(p, p.locator('#confirm-reset .form-error', { hasText: 'Type reset' }), 'the refusal of a wrong word, server-rendered');
      assert.deepEqual(await names(SANDBOX, testKey, 'properties', 'after a refused reset without JS'), ['Maple Court']);
      await confirmWith(p, 'reset');
      await p.waitForURL(/reset=done/, { timeout: 60_000 });
      await expectVisible(p, p.locator('#reset-result'), 'what the reset did, server-rendered');
      assert.match(await p.locator('#reset-result').innerText(), /empty/);
      assert.equal(await p.locator('#confirm-reset').count(), 0);
      await shot(p, 'sandbox-after-reset-without-js');
      assert.deepEqual(await names(SANDBOX, testKey, 'properties', 'after the reset without JS'), []);
      assert.deepEqual(await names(LIVE_API, liveKey, 'properties', 'live after the reset without JS'), [LIVE_NAME]);
    } finally {
      await ctx.close();
      sess.activePage = page;
    }
  });

  step('S7. read-only staff see what a reset is, but no button, and the server refuses them', async () => {
    const made = await api(SANDBOX, testKey, 'properties', property(`Kept ${RUN}`));
    assert.equal(made.status, 201, made.text);
    await addTeammate(page, readonly, 'Read-only staff');

    const ctx = await newContext({ viewport: { width: 1280, height: 900 } });
    const ro = watch(await ctx.newPage(), 'read-only');
    try {
      await signIn(ro, readonly, 'the read-only teammate');
      await ro.locator('nav.mainnav a', { hasText: 'Sandbox' }).click();
      await ro.waitForURL(pathIs('/console/sandbox'), { timeout: 30_000 });
      await settle(ro, 'the sandbox page (read-only)');
      await expectVisible(ro, ro.locator('#reset-explained'), 'what a reset does');
      await expectVisible(ro, ro.locator('.notice', { hasText: 'Only owners and admins' }), 'the notice');
      assert.equal(await ro.locator('#reset-sandbox, #reset-sandbox-form, #reset-demo').count(), 0, 'read-only staff should not see the reset button');
      await goto(ro, '/console/sandbox?step=confirm', 'the confirmation step by URL (read-only)');
      assert.equal(await ro.locator('#confirm-reset, #confirm-reset-button').count(), 0, 'nor the confirmation step');
      await shot(ro, 'sandbox-page-read-only');

      const csrf = await csrfOf(ro);
      for (const demo of ['false', 'true']) {
        const res = await postFromPage(ro, 'reset_sandbox', { csrf, demo, confirm: 'reset' });
        assert.ok(!res.ok, `read-only staff's POST /api/reset_sandbox should be refused, got ${res.status} ${res.text}`);
        assert.match(res.text, /owners and admins/i, 'the refusal should say who may');
      }
    } finally {
      await ctx.close();
      sess.activePage = page;
    }
    assert.deepEqual(await names(SANDBOX, testKey, 'properties', 'after the refused resets'), [`Kept ${RUN}`], 'the refused resets changed the sandbox');
  });

  step(
    'S8. the server log holds no key secret or password; no page threw',
    async () => {
      if (SERVER_LOG && fs.existsSync(SERVER_LOG)) {
        const log = fs.readFileSync(SERVER_LOG, 'utf8');
        for (const s of secrets) if (s) assert.ok(!log.includes(s), `the server log contains a secret (${s.slice(0, 10)}…)`);
      }
      assert.deepEqual(pageErrors, [], 'uncaught errors in the pages');
    },
    { always: true },
  );
});
