// Browser tests of Gable's signed-in console: a real headless Chromium (Debian's, driven by
// playwright-core) signs up, signs in, creates a service account and a key, reads the
// once-shown secret from the page and calls /v1 with it, revokes it, disables the account,
// adds a read-only teammate whom the server refuses, and checks that a cross-site form post,
// another tenant's session and the server log cannot get at anything they should not.
//
// Run through tests/browser/run.sh, which starts the server and exports:
//   GABLE_CONSOLE_URL   http://127.0.0.1:PORT        (the console and the live /v1)
//   GABLE_SANDBOX_URL   http://127.0.0.1:PORT/v1     (the sandbox API)
//   GABLE_LIVE_API_URL  http://127.0.0.1:PORT/v1     (the live API)
//   GABLE_BACKEND       sqlite | postgres            (for messages and screenshot names)
//   GABLE_SERVER_LOG    the file the server's stderr (its log) goes to
//   GABLE_SCREENSHOTS   where screenshots are saved
//   GABLE_CHROMIUM      the browser (default /usr/bin/chromium)
//
// The steps run in order and share one browser; when a step fails, the steps that depend
// on it are skipped (the ones marked `always` still run), and a FAILED-*.png screenshot of
// the page at that moment is saved next to the others.

import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { session } from './lib.mjs';

// The browser, the state the steps share and the helpers: lib.mjs.
const sess = session();
const { root: ROOT, consoleUrl: CONSOLE, sandboxUrl: SANDBOX, liveApiUrl: LIVE_API, backend: BACKEND, serverLog: SERVER_LOG, shotsDir: SHOTS } = sess;
const { pathIs, shot, watch, newContext, settle, expectVisible, goto, postFromPage, csrfOf, signIn, signUp, step, pageErrors, screenshots } = sess;

// Unique per run, so the tests never collide with data of an earlier run.
const RUN = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
// Passwords of letters, digits and '-' only: their form-encoded and raw forms are the same,
// so searching the log for the raw value also finds a logged request body.
const password = (word) => `${word}-${randomBytes(9).toString('hex')}`;

const owner = {
  company: `Harbour Lettings ${RUN}`,
  name: `Olivia Owner`,
  email: `olivia.${RUN}@example.com`,
  password: password('Harbour-owner'),
};
const readonly = {
  name: `Rita Readonly`,
  email: `rita.${RUN}@example.com`,
  password: password('First-password'),
};
const other = {
  company: `Other Estates ${RUN}`,
  name: `Mallory Other`,
  email: `mallory.${RUN}@example.com`,
  password: password('Other-tenant'),
};
const ACCOUNT_NAME = 'Company website';

// Everything secret seen during the run; step 8 searches the server log for each.
const secrets = new Map(); // label -> value
const remember = (label, value) => {
  if (value) secrets.set(label, value);
};
remember("the owner's password", owner.password);
remember("the read-only teammate's password", readonly.password);
remember("the other tenant's password", other.password);

// State shared by the steps (the browser, the active page, errors and screenshots: `sess`).
let ownerCtx;
let page; // the owner's (and, in step 6, the teammate's) tab
let serviceAccountId;
let key1; // { secret, prefix }
let key2; // { secret, prefix, id }
let evilServer;

// ---------------------------------------------------------------------------------------
// Helpers (the shared ones are in lib.mjs)

/** Calls the API with a key, from Node (not the browser). */
async function callApi(base, secret, resource = 'properties') {
  const res = await fetch(`${base}/${resource}`, { headers: { authorization: `Bearer ${secret}` } });
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body, code: body && body.error && body.error.code };
}

async function sessionCookie(ctx) {
  const cookies = await ctx.cookies(CONSOLE);
  return cookies.find((c) => c.name === 'gable_session');
}

async function signOut(p, what) {
  await p.getByRole('button', { name: 'Sign out' }).click();
  try {
    await p.waitForURL(pathIs('/sign-in'), { timeout: 30_000 });
  } catch {
    assert.fail(`${what}: "Sign out" did not lead to /sign-in (still at ${p.url()})`);
  }
}

/** Opens a console page through the navigation, as a person would. */
async function navigate(p, linkName, pathname, what) {
  await p.locator('nav.mainnav a', { hasText: linkName }).click();
  await p.waitForURL(pathIs(pathname), { timeout: 30_000 }).catch(() => {
    assert.fail(`${what}: the "${linkName}" link did not lead to ${pathname} (at ${p.url()})`);
  });
}

async function openServiceAccount(p, what) {
  await goto(p, `/console/service-accounts/${serviceAccountId}`, what);
  await expectVisible(p, p.locator('#service-account-name'), `${what}: the service account's name`);
}

async function keyRow(p, prefix) {
  return p.locator('#keys tbody tr', { has: p.locator('code', { hasText: prefix }) });
}

/** Creates an "everything" test key on the open service-account page; returns { secret, prefix }. */
async function createTestKey(p, what) {
  await expectVisible(p, p.locator('#create-key-form'), `${what}: the "Create a key" form`);
  const before = (await p.locator('#new-key-secret').count()) ? await p.locator('#new-key-secret').textContent() : null;
  await p.check('#create-key-form input[name=environment][value=test]');
  await p.check('#create-key-form input[name=access][value=full]');
  await p.click('#create-key-form button[type=submit]');
  await expectVisible(p, p.locator('#new-key-secret'), `${what}: the new key's secret (#new-key-secret)`, 30_000);
  if (before) {
    await p.waitForFunction((old) => document.querySelector('#new-key-secret')?.textContent.trim() !== old.trim(), before);
  }
  const secret = (await p.locator('#new-key-secret').textContent()).trim();
  assert.match(secret, /^gbl_test_[A-Za-z0-9_-]{16,}$/, `${what}: the secret shown should be a test key (gbl_test_…), got ${JSON.stringify(secret.slice(0, 12))}…`);
  remember(`the API key secret ${secret.slice(0, 13)}…`, secret);
  const prefix = secret.slice(0, 13);
  return { secret, prefix };
}

// ---------------------------------------------------------------------------------------
// The steps

// One `step` per test: see lib.mjs (a failing step skips the later ones, except `always`).

describe(`Gable console in Chromium (${BACKEND})`, { concurrency: false }, () => {
  before(async () => {
    assert.ok(CONSOLE, 'GABLE_CONSOLE_URL is not set: run the browser tests through tests/browser/run.sh');
    assert.ok(SANDBOX, 'GABLE_SANDBOX_URL is not set: run the browser tests through tests/browser/run.sh');
    fs.mkdirSync(SHOTS, { recursive: true });

    // The page must ask for the WebAssembly file the build wrote. A server binary compiled
    // without LEPTOS_OUTPUT_NAME (.cargo/config.toml sets it for every cargo command) asks
    // for /pkg/gable_bg.wasm, which does not exist, and no page ever hydrates; say so instead
    // of failing step by step.
    const html = await (await fetch(`${CONSOLE}/sign-in`)).text();
    const wasm = /<link[^>]+href="([^"]+\.wasm)"/.exec(html)?.[1];
    assert.ok(wasm, `${CONSOLE}/sign-in does not load any WebAssembly: the console is not being served by this server`);
    const wasmStatus = (await fetch(new URL(wasm, CONSOLE))).status;
    assert.equal(
      wasmStatus,
      200,
      `the console asks for ${wasm}, which answers ${wasmStatus}: the server binary and target/site are from different builds ` +
        '(was the server compiled without .cargo/config.toml\'s LEPTOS_OUTPUT_NAME, or target/site left from another build?)',
    );

    await sess.launch();
    ownerCtx = await newContext({ permissions: ['clipboard-read', 'clipboard-write'], viewport: { width: 1280, height: 900 } });
    page = watch(await ownerCtx.newPage(), 'owner');
  });

  after(async () => {
    await sess.close();
    if (evilServer) {
      evilServer.closeAllConnections(); // else close() waits for the browser's keep-alive sockets
      await new Promise((resolve) => evilServer.close(resolve));
    }
    if (screenshots.length) {
      console.log(`screenshots (${BACKEND}):\n  ${screenshots.join('\n  ')}`);
    }
  });

  step('1. the start page leads to sign-up; signing up lands on /console with a test-data banner', async () => {
    await page.goto(`${CONSOLE}/`);
    await settle(page, 'the start page');
    await shot(page, 'start-page');
    assert.ok((await page.locator('a[href="/sign-in"]').count()) > 0, 'the start page has no link to /sign-in');
    assert.ok((await page.locator('a[href="/sign-up"]').count()) > 0, 'the start page has no link to /sign-up');

    await page.locator('a[href="/sign-up"]').first().click();
    await page.waitForURL(pathIs('/sign-up'));
    await expectVisible(page, page.locator('input[name=company]'), 'the sign-up form');
    await shot(page, 'sign-up');
    await page.fill('input[name=company]', owner.company);
    await page.fill('input[name=name]', owner.name);
    await page.fill('input[name=email]', owner.email);
    await page.fill('input[name=password]', owner.password);
    await page.click('form button[type=submit]');
    try {
      await page.waitForURL(pathIs('/console'), { timeout: 60_000 });
    } catch {
      const alerts = await page.locator('[role=alert], .form-error').allTextContents();
      assert.fail(`signing up did not lead to /console (at ${page.url()}; the page says ${JSON.stringify(alerts)})`);
    }
    await expectVisible(page, page.getByRole('heading', { name: /Welcome/ }), 'the overview after signing up', 30_000);
    const body = await page.locator('body').innerText();
    assert.ok(body.includes(owner.name), `the console does not show the user's name "${owner.name}"`);
    const banner = page.locator('.env-banner');
    await expectVisible(page, banner, 'the environment banner');
    assert.match(await banner.innerText(), /test/i, 'the environment banner should say the console shows test data');
    assert.ok(await banner.evaluate((el) => el.classList.contains('test')), 'the environment banner should be the test one (class "test")');
    await shot(page, 'console-overview-after-sign-up');
    remember("the owner's session cookie (sign-up)", (await sessionCookie(ownerCtx))?.value);
  });

  step('2. sign out; a wrong password gets an error in words; the right one signs in', async () => {
    const before = await sessionCookie(ownerCtx);
    assert.ok(before, 'no gable_session cookie after signing up');
    await signOut(page, 'signing out');
    await settle(page, 'the sign-in page after signing out');
    const after = await sessionCookie(ownerCtx);
    assert.ok(!after || !after.value, 'the gable_session cookie is still set after signing out');
    await shot(page, 'sign-in');

    // The old session is over on the server, not only in this browser.
    const res = await fetch(`${CONSOLE}/api/get_me`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `gable_session=${before.value}` },
      body: '',
    });
    const me = await res.text();
    assert.ok(!me.includes(owner.email), `the session ended by signing out still works on the server: /api/get_me answered ${res.status} with the user`);

    await page.fill('input[name=email]', owner.email);
    await page.fill('input[name=password]', `${owner.password}-wrong`);
    await page.click('form button[type=submit]');
    await expectVisible(page, page.locator('[role=alert], .form-error'), 'an error after a wrong password', 30_000);
    const error = (await page.locator('[role=alert], .form-error').first().innerText()).trim();
    assert.ok(pathIs('/sign-in')(page.url()), `a wrong password should stay on /sign-in, got ${page.url()}`);
    assert.match(error, /(email|password)/i, `the wrong-password message should speak of email/password, got ${JSON.stringify(error)}`);
    assert.doesNotMatch(error, /ServerFnError|ServerError|server function|\|/, `the wrong-password message should be in words, got ${JSON.stringify(error)}`);
    await shot(page, 'sign-in-wrong-password');

    await page.fill('input[name=password]', owner.password);
    await page.click('form button[type=submit]');
    await page.waitForURL(pathIs('/console'), { timeout: 60_000 }).catch(() => assert.fail(`signing in with the right password did not lead to /console (at ${page.url()})`));
    await expectVisible(page, page.getByRole('heading', { name: /Welcome/ }), 'the overview after signing in', 30_000);
    const cookie = await sessionCookie(ownerCtx);
    assert.ok(cookie && cookie.value, 'no gable_session cookie after signing in');
    assert.notEqual(cookie.value, before.value, 'signing in should start a new session (a new cookie value)');
    remember("the owner's session cookie (sign-in)", cookie.value);
  });

  step('9. the session cookie is HttpOnly and SameSite=Lax', async () => {
    const cookie = await sessionCookie(ownerCtx);
    assert.ok(cookie, 'no gable_session cookie');
    assert.equal(cookie.httpOnly, true, 'the gable_session cookie must be HttpOnly');
    assert.equal(cookie.sameSite, 'Lax', 'the gable_session cookie must be SameSite=Lax');
    assert.equal(cookie.path, '/', 'the gable_session cookie should be for the whole site (Path=/)');
    const visible = await page.evaluate(() => document.cookie);
    assert.ok(!visible.includes('gable_session'), 'page scripts can read the gable_session cookie (document.cookie)');
  });

  step('1b. the live/test switch changes the banner, and back', async () => {
    await page.goto(`${CONSOLE}/console`);
    await settle(page, 'the overview');
    await page.getByRole('button', { name: /Switch to live/ }).click();
    await expectVisible(page, page.locator('.env-banner.live'), 'the live banner after "Switch to live"', 30_000);
    assert.match(await page.locator('.env-banner').innerText(), /live/i, 'the live banner should say "live"');
    await shot(page, 'console-overview-live-data');
    await page.getByRole('button', { name: /Switch to test/ }).click();
    await expectVisible(page, page.locator('.env-banner.test'), 'the test banner after "Switch to test"', 30_000);
  });

  step('3. create a service account and a test key; the secret is shown once and works on the sandbox only', async () => {
    await navigate(page, 'API access', '/console/service-accounts', 'opening API access');
    await expectVisible(page, page.getByLabel('New service account'), 'the "New service account" form');
    const empty = page.locator('.empty');
    await expectVisible(page, empty, 'the empty state of API access');
    assert.match(await empty.innerText(), /create/i, 'the empty state should say what to do next');
    await shot(page, 'api-access-empty');

    await page.getByLabel('New service account').fill(ACCOUNT_NAME);
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await expectVisible(page, page.locator('#service-accounts li', { hasText: ACCOUNT_NAME }), `"${ACCOUNT_NAME}" in #service-accounts`, 30_000);
    await shot(page, 'api-access-with-service-account');

    await page.locator('#service-accounts a', { hasText: ACCOUNT_NAME }).click();
    await page.waitForURL((u) => /^\/console\/service-accounts\/[^/]+$/.test(new URL(u).pathname), { timeout: 30_000 });
    serviceAccountId = new URL(page.url()).pathname.split('/').pop();
    await expectVisible(page, page.locator('#service-account-name'), "the service account's page");
    assert.equal((await page.locator('#service-account-name').innerText()).trim(), ACCOUNT_NAME, "the service account's page shows another name");
    await expectVisible(page, page.locator('#create-key-form'), 'the "Create a key" form');
    await shot(page, 'service-account-no-keys');

    key1 = await createTestKey(page, 'creating the first key');
    const warning = await page.locator('.secret').innerText();
    assert.match(warning, /(not be able to see it again|only once|shown once)/i, 'the new secret should come with a warning that it is shown once');
    await shot(page, 'service-account-new-key-secret-shown-once');

    // The copy button puts the secret on the clipboard.
    await page.click('#copy-key');
    await expectVisible(page, page.locator('#copy-key', { hasText: 'Copied' }), 'the copy button saying "Copied"', 10_000);
    const clipboard = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(clipboard, key1.secret, 'the copy button should put the secret on the clipboard');

    const sandbox = await callApi(SANDBOX, key1.secret);
    assert.equal(sandbox.status, 200, `the new test key against ${SANDBOX}/properties: expected 200, got ${sandbox.status} ${JSON.stringify(sandbox.body)}`);
    const live = await callApi(LIVE_API, key1.secret);
    assert.equal(live.status, 401, `the test key against the live API ${LIVE_API}/properties: expected 401, got ${live.status}`);
    assert.equal(live.code, 'key_environment_mismatch', `the test key against the live API: expected code key_environment_mismatch, got ${JSON.stringify(live.body)}`);

    // Reloaded, the page no longer has the secret anywhere; the table shows a short prefix.
    let lastUsed = 'never';
    for (let i = 0; i < 6; i++) {
      await page.reload();
      await settle(page, 'the service account page, reloaded');
      await expectVisible(page, page.locator('#keys'), 'the keys table (#keys) after reloading');
      const html = await page.content();
      assert.ok(!html.includes(key1.secret), 'after a reload the page still contains the key secret');
      assert.equal(await page.locator('#new-key-secret').count(), 0, 'after a reload the page still shows #new-key-secret');
      const row = await keyRow(page, key1.prefix);
      lastUsed = (await row.locator('td').nth(4).innerText().catch(() => 'never')).trim();
      if (lastUsed !== 'never') break;
      await page.waitForTimeout(500);
    }
    const codes = (await page.locator('#keys tbody code').allInnerTexts()).map((c) => c.replace('…', '').trim());
    assert.equal(codes.length, 1, `the keys table should list 1 key, lists ${codes.length}`);
    const shown = codes[0];
    assert.ok(key1.secret.startsWith(shown), `the keys table should show a prefix of the secret, shows ${JSON.stringify(shown)}`);
    assert.ok(shown.startsWith('gbl_test_') && shown.length < key1.secret.length && shown.length <= 20, `the prefix shown should be short (gbl_test_ and a few characters), shows ${JSON.stringify(shown)}`);
    key1.prefix = shown;
    assert.notEqual(lastUsed, 'never', 'the keys table should show when the key was last used (it was just used against /v1)');
    await shot(page, 'service-account-key-listed-after-reload');
  });

  step('4. revoking the key in the table refuses it at once', async () => {
    const row = await keyRow(page, key1.prefix);
    await row.getByRole('button', { name: 'Revoke' }).click();
    await expectVisible(page, (await keyRow(page, key1.prefix)).locator('td', { hasText: /^revoked$/ }), 'the key marked "revoked" in the table', 30_000);
    const res = await callApi(SANDBOX, key1.secret);
    assert.equal(res.status, 401, `a revoked key should be refused at once, got ${res.status} ${JSON.stringify(res.body)}`);
    assert.equal(await (await keyRow(page, key1.prefix)).getByRole('button', { name: 'Revoke' }).count(), 0, 'a revoked key still has a Revoke button');
    await shot(page, 'service-account-key-revoked');
  });

  step('5. disabling the service account refuses its keys; enabling restores them', async () => {
    key2 = await createTestKey(page, 'creating a second key');
    const ok = await callApi(SANDBOX, key2.secret);
    assert.equal(ok.status, 200, `the second key before disabling: expected 200, got ${ok.status} ${JSON.stringify(ok.body)}`);
    await expectVisible(page, await keyRow(page, key2.prefix), 'the second key in the keys table', 30_000);
    key2.id = await (await keyRow(page, key2.prefix)).locator('input[name=key_id]').inputValue();
    assert.ok(key2.id, "the second key's row has no revoke form with its id");

    await expectVisible(page, page.locator('#toggle-account', { hasText: 'Disable' }), 'the "Disable" button (#toggle-account)');
    await page.click('#toggle-account');
    await expectVisible(page, page.locator('#toggle-account', { hasText: 'Enable' }), 'the "Enable" button after disabling', 30_000);
    const refused = await callApi(SANDBOX, key2.secret);
    assert.equal(refused.status, 401, `a key of a disabled service account should be refused, got ${refused.status} ${JSON.stringify(refused.body)}`);
    await shot(page, 'service-account-disabled');

    await page.click('#toggle-account');
    await expectVisible(page, page.locator('#toggle-account', { hasText: 'Disable' }), 'the "Disable" button after enabling', 30_000);
    const again = await callApi(SANDBOX, key2.secret);
    assert.equal(again.status, 200, `after enabling the service account its key should work again, got ${again.status} ${JSON.stringify(again.body)}`);
    const revoked = await callApi(SANDBOX, key1.secret);
    assert.equal(revoked.status, 401, `enabling the service account must not bring back its revoked key, got ${revoked.status}`);
    await shot(page, 'service-account-enabled-again');
  });

  step('6. a read-only teammate sees no create form, and the server refuses their posts', async () => {
    await navigate(page, 'Team', '/console/team', 'opening Team');
    await expectVisible(page, page.locator('#users'), 'the team list (#users)');
    // Options of a closed <select> are not "visible" to Playwright; being there is enough.
    await page
      .locator('select[name=role_id] option', { hasText: 'Read-only staff' })
      .first()
      .waitFor({ state: 'attached', timeout: 30_000 })
      .catch(() => assert.fail('the add-teammate form offers no role "Read-only staff"'));
    await shot(page, 'team');
    await page.fill('form input[name=name]', readonly.name);
    await page.fill('form input[name=email]', readonly.email);
    await page.selectOption('select[name=role_id]', { label: 'Read-only staff' });
    await page.fill('form input[name=password]', readonly.password);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const member = page.locator('#users li', { hasText: readonly.email });
    await expectVisible(page, member, `the new teammate ${readonly.email} in #users`, 30_000);
    assert.match(await member.innerText(), /Read-only staff/, 'the new teammate should be listed with the role "Read-only staff"');
    await shot(page, 'team-with-read-only-teammate');

    await signOut(page, 'the owner signing out');
    await signIn(page, readonly, 'the read-only teammate signing in');
    remember("the read-only teammate's session cookie", (await sessionCookie(ownerCtx))?.value);
    await shot(page, 'console-overview-read-only');

    await navigate(page, 'API access', '/console/service-accounts', 'the read-only teammate opening API access');
    await expectVisible(page, page.locator('#service-accounts li', { hasText: ACCOUNT_NAME }), `the read-only teammate seeing "${ACCOUNT_NAME}"`, 30_000);
    assert.equal(await page.getByLabel('New service account').count(), 0, 'a read-only user is shown the "New service account" form');
    const notice = page.locator('.notice');
    await expectVisible(page, notice, 'a notice for the read-only user on API access');
    assert.match(await notice.innerText(), /owners and admins/i, 'the notice should say that owners and admins manage API access');
    await shot(page, 'api-access-read-only');

    // The server refuses too, whatever the page shows.
    const csrf = await csrfOf(page);
    const before = await page.locator('#service-accounts li').count();
    const forged = `Read-only attempt ${RUN}`;
    const res = await postFromPage(page, 'create_service_account', { csrf, name: forged });
    assert.ok(!res.ok, `the server accepted create_service_account from a read-only user: ${res.status} ${res.text.slice(0, 200)}`);
    assert.match(res.text, /owners and admins/i, `the refusal should say that owners and admins can do this, got ${res.status} ${JSON.stringify(res.text.slice(0, 200))}`);

    const createKey = await postFromPage(page, 'create_key', { csrf, service_account_id: serviceAccountId, environment: 'test', access: 'full' });
    assert.ok(!createKey.ok, `the server accepted create_key from a read-only user: ${createKey.status} ${createKey.text.slice(0, 120)}`);
    assert.ok(!/gbl_(test|live)_/.test(createKey.text), 'create_key from a read-only user returned a key secret');
    const revoke = await postFromPage(page, 'revoke_key', { csrf, key_id: key2.id });
    assert.ok(!revoke.ok, `the server accepted revoke_key from a read-only user: ${revoke.status} ${revoke.text.slice(0, 120)}`);
    const disable = await postFromPage(page, 'set_service_account_active', { csrf, id: serviceAccountId, active: 'false' });
    assert.ok(!disable.ok, `the server accepted set_service_account_active from a read-only user: ${disable.status} ${disable.text.slice(0, 120)}`);
    const still = await callApi(SANDBOX, key2.secret);
    assert.equal(still.status, 200, `after the read-only user's refused revoke/disable the key should still work, got ${still.status}`);

    await page.reload();
    await settle(page, 'API access, reloaded by the read-only user');
    await expectVisible(page, page.locator('#service-accounts li', { hasText: ACCOUNT_NAME }), 'the service account list after the refused post');
    assert.equal(await page.locator('#service-accounts li').count(), before, 'the service account list changed after a refused create_service_account');
    assert.equal(await page.locator('#service-accounts li', { hasText: forged }).count(), 0, 'the read-only user created a service account');

    await openServiceAccount(page, "the read-only user opening the service account's page");
    await expectVisible(page, page.locator('#keys'), 'the keys table for the read-only user');
    assert.equal(await page.locator('#create-key-form').count(), 0, 'a read-only user is shown the "Create a key" form');
    assert.equal(await page.locator('#toggle-account').count(), 0, 'a read-only user is shown the Disable/Enable button');
    assert.equal(await page.locator('#keys').getByRole('button', { name: 'Revoke' }).count(), 0, 'a read-only user is shown Revoke buttons');
    await shot(page, 'service-account-read-only');

    await signOut(page, 'the read-only teammate signing out');
    await signIn(page, owner, 'the owner signing in again');
    remember("the owner's session cookie (second sign-in)", (await sessionCookie(ownerCtx))?.value);
  });

  step('7. a cross-site form post with the owner\'s cookies is refused with 403', async () => {
    const csrf = await csrfOf(page); // the real token: the origin check must hold even if it leaked
    const attempts = [];
    evilServer = http.createServer((req, res) => {
      const u = new URL(req.url, 'http://evil.invalid');
      const name = u.searchParams.get('name') || 'forged';
      const token = u.searchParams.get('csrf') || 'not-a-token';
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
      res.end(`<!doctype html><html><body><h1>You won a prize!</h1>
<form id="f" method="post" action="${CONSOLE}/api/create_service_account">
<input type="hidden" name="csrf" value="${token}"><input type="hidden" name="name" value="${name}">
</form><script>document.getElementById('f').submit();</script></body></html>`);
    });
    await new Promise((resolve) => evilServer.listen(0, resolve)); // all addresses, IPv4 and IPv6
    const port = evilServer.address().port;

    const cases = [
      { origin: `http://127.0.0.1:${port}`, token: null, what: 'another origin (same host, other port), no CSRF token' },
      { origin: `http://127.0.0.1:${port}`, token: csrf, what: "another origin with the owner's real CSRF token" },
      { origin: `http://localhost:${port}`, token: null, what: 'another site (localhost)' },
    ];
    for (const [i, c] of cases.entries()) {
      const name = `Forged ${i + 1} ${RUN}`;
      attempts.push(name);
      const url = `${c.origin}/?name=${encodeURIComponent(name)}${c.token ? `&csrf=${encodeURIComponent(c.token)}` : ''}`;
      const response = page.waitForResponse((r) => r.url() === `${CONSOLE}/api/create_service_account` && r.request().method() === 'POST', { timeout: 30_000 });
      await page.goto(url);
      const res = await response.catch(() => assert.fail(`the forged form from ${c.what} never reached the console`));
      assert.equal(res.status(), 403, `a cross-site form post from ${c.what} should get 403, got ${res.status()}`);
      await page.waitForLoadState('load');
      if (i === 0) await shot(page, 'cross-site-form-post-refused');
    }

    await page.goto(`${CONSOLE}/console/service-accounts`);
    await settle(page, 'API access after the forged posts');
    await expectVisible(page, page.locator('#service-accounts li', { hasText: ACCOUNT_NAME }), 'the service account list');
    const names = await page.locator('#service-accounts li').allInnerTexts();
    for (const name of attempts) {
      assert.ok(!names.some((n) => n.includes(name)), `the forged service account "${name}" exists`);
    }
    assert.ok(!names.some((n) => /forged/i.test(n)), `a forged service account exists: ${JSON.stringify(names)}`);
  });

  step('7b. a session of another tenant cannot reach this tenant\'s data', async () => {
    const ctx = await newContext({ viewport: { width: 1280, height: 900 } });
    const p = watch(await ctx.newPage(), 'other tenant');
    try {
      await signUp(p, other, 'signing up a second tenant');
      remember("the other tenant's session cookie", (await sessionCookie(ctx))?.value);

      await p.goto(`${CONSOLE}/console/service-accounts`);
      await settle(p, "the other tenant's API access");
      await expectVisible(p, p.locator('.empty'), "the other tenant's empty API access page");
      assert.equal(await p.locator('#service-accounts li').count(), 0, "the other tenant's API access page lists service accounts");

      await p.goto(`${CONSOLE}/console/service-accounts/${serviceAccountId}`);
      await settle(p, "the first tenant's service account page, opened by the other tenant");
      await expectVisible(p, p.locator('.form-error'), "an error on the first tenant's service account page opened by the other tenant");
      assert.equal(await p.locator('#service-account-name').count(), 0, "the other tenant can open the first tenant's service account page");
      assert.equal(await p.locator('#keys').count(), 0, "the other tenant sees a keys table on the first tenant's service account page");
      const html = await p.content();
      assert.ok(!html.includes(key2.prefix), "the other tenant sees the first tenant's keys");
      assert.ok(!html.includes(owner.company), "the other tenant sees the first tenant's company name");
      await shot(p, 'other-tenant-opening-foreign-service-account');

      const csrf = await csrfOf(p);
      const list = await postFromPage(p, 'list_service_accounts', {});
      assert.ok(!list.text.includes(serviceAccountId) && !list.text.includes(ACCOUNT_NAME), 'list_service_accounts of the other tenant includes the first tenant\'s account');
      const get = await postFromPage(p, 'get_service_account', { id: serviceAccountId });
      assert.ok(!get.ok && !get.text.includes(ACCOUNT_NAME), `get_service_account of a foreign id should fail, got ${get.status} ${get.text.slice(0, 120)}`);
      const keys = await postFromPage(p, 'list_keys', { service_account_id: serviceAccountId });
      assert.ok(!keys.text.includes(key2.prefix) && !keys.text.includes(key2.id), `list_keys of a foreign service account lists its keys: ${keys.status}`);
      const users = await postFromPage(p, 'list_users', {});
      assert.ok(!users.text.includes(owner.email) && !users.text.includes(readonly.email), "list_users of the other tenant includes the first tenant's users");

      const revoke = await postFromPage(p, 'revoke_key', { csrf, key_id: key2.id });
      const disable = await postFromPage(p, 'set_service_account_active', { csrf, id: serviceAccountId, active: 'false' });
      const rename = await postFromPage(p, 'rename_service_account', { csrf, id: serviceAccountId, name: `Renamed by other ${RUN}` });
      const del = await postFromPage(p, 'delete_service_account', { csrf, id: serviceAccountId });
      const still = await callApi(SANDBOX, key2.secret);
      assert.equal(
        still.status,
        200,
        `after the other tenant's revoke/disable/delete attempts (answered ${revoke.status}/${disable.status}/${del.status}) the first tenant's key should still work, got ${still.status}`,
      );
      assert.ok(!rename.ok, `rename_service_account of a foreign id should fail, got ${rename.status}`);
    } catch (e) {
      await p.screenshot({ path: path.join(SHOTS, 'FAILED-other-tenant.png'), fullPage: true }).catch(() => {});
      screenshots.push(`${path.relative(ROOT, path.join(SHOTS, 'FAILED-other-tenant.png'))} (at ${p.url()})`);
      throw e;
    } finally {
      await ctx.close();
      sess.activePage = page;
    }
    await openServiceAccount(page, "the owner's service account after the other tenant's attempts");
    assert.equal((await page.locator('#service-account-name').innerText()).trim(), ACCOUNT_NAME, 'the other tenant renamed the service account');
    await expectVisible(page, page.locator('#toggle-account', { hasText: 'Disable' }), 'the service account still active');
  });

  step('phone width (390x844): the main pages fit the screen', async () => {
    const dir = path.join(SHOTS, 'phone');
    const phone = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 1 };
    const overflow = async (p) =>
      p.evaluate(() => {
        const width = 390;
        const doc = document.documentElement.scrollWidth;
        const wide = [...document.querySelectorAll('body *')]
          .filter((el) => el.getBoundingClientRect().right > width + 1 && !el.closest('.table-wrap'))
          .slice(0, 3)
          .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className ? `.${String(el.className).split(' ').join('.')}` : ''}`);
        return { doc, wide };
      });
    const problems = [];

    const anon = await newContext(phone);
    try {
      const p = watch(await anon.newPage(), 'phone (signed out)');
      for (const [url, name] of [
        ['/', 'phone-start-page'],
        ['/sign-in', 'phone-sign-in'],
        ['/sign-up', 'phone-sign-up'],
      ]) {
        await p.goto(`${CONSOLE}${url}`);
        await settle(p, `${url} on a phone`);
        await shot(p, name, dir);
        const o = await overflow(p);
        if (o.doc > 391) problems.push(`${url}: page is ${o.doc}px wide (${o.wide.join(', ')})`);
      }
    } finally {
      await anon.close();
    }

    const signed = await newContext({ ...phone, storageState: await ownerCtx.storageState() });
    try {
      const p = watch(await signed.newPage(), 'phone (owner)');
      for (const [url, name, ready] of [
        ['/console', 'phone-console-overview', 'h1'],
        ['/console/service-accounts', 'phone-api-access', '#service-accounts'],
        [`/console/service-accounts/${serviceAccountId}`, 'phone-service-account', '#keys'],
        ['/console/team', 'phone-team', '#users'],
      ]) {
        await p.goto(`${CONSOLE}${url}`);
        await settle(p, `${url} on a phone`);
        await expectVisible(p, p.locator(ready), `${url} on a phone (${ready})`);
        await shot(p, name, dir);
        const o = await overflow(p);
        if (o.doc > 391) problems.push(`${url}: page is ${o.doc}px wide (${o.wide.join(', ')})`);
      }
    } finally {
      await signed.close();
      sess.activePage = page;
    }
    assert.deepEqual(problems, [], `pages wider than a 390px phone screen:\n  ${problems.join('\n  ')}`);
  });

  step(
    '8. no secret seen in this run appears in the server log',
    async () => {
      assert.ok(SERVER_LOG, 'GABLE_SERVER_LOG is not set: run the browser tests through tests/browser/run.sh');
      remember("the owner's current session cookie", (await sessionCookie(ownerCtx))?.value);
      await new Promise((r) => setTimeout(r, 500)); // let the server flush its last lines
      const log = fs.readFileSync(SERVER_LOG, 'utf8');
      assert.ok(log.length > 0, `the server log ${SERVER_LOG} is empty: the log was not captured`);
      const found = [...secrets].filter(([, value]) => log.includes(value)).map(([label]) => label);
      assert.deepEqual(found, [], `the server log ${SERVER_LOG} contains: ${found.join('; ')}`);
      console.log(`searched the server log (${log.length} bytes) for ${secrets.size} secrets: ${[...secrets.keys()].join('; ')}`);
    },
    { always: true },
  );

  step(
    'no uncaught errors or panics in the browser',
    async () => {
      assert.deepEqual(pageErrors, [], `errors in the browser:\n  ${pageErrors.join('\n  ')}`);
    },
    { always: true },
  );
});
