// Browser tests of Gable's OAuth 2.1 authorization server (docs/oauth.md) in a real headless
// Chromium: a property manager registers a confidential app on "OAuth apps"; a signed-out
// browser follows an authorization request to the console's sign-in, back to the consent
// page, unticks a scope and allows; the app's redirect URI (a small HTTP server here)
// receives code, state and iss; the code is exchanged with PKCE for a token that reads
// /v1/properties but not /v1/leases; a second request is denied; "Connected apps" lists and
// revokes the authorization and the token stops working; the consent page's checkboxes are
// labelled and its Allow button is reachable with Tab.
//
// Run through tests/browser/run.sh (GABLE_BROWSER_FILES=oauth runs only this file), which
// starts the server and exports GABLE_CONSOLE_URL, GABLE_BACKEND, GABLE_SCREENSHOTS, ….

import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { session } from './lib.mjs';

const sess = session({ shotsSubdir: 'oauth' });
const { consoleUrl: CONSOLE, backend: BACKEND, shotsDir: SHOTS } = sess;
const { pathIs, shot, watch, newContext, settle, expectVisible, goto, signUp, step, pageErrors, screenshots } = sess;

const RUN = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const manager = {
  company: `Quayside Lettings ${RUN}`,
  name: 'Maya Manager',
  email: `maya.${RUN}@example.com`,
  password: `Quayside-${randomBytes(9).toString('hex')}`,
};
const APP_NAME = `Ledger Sync ${RUN}`;

// The app's redirect URI: a server on 127.0.0.1 that records each query it receives.
let callbackServer;
let redirectUri;
const callbacks = []; // URLSearchParams, in order received
let callbackWaiters = [];

function startCallbackServer() {
  return new Promise((resolve) => {
    callbackServer = http.createServer((req, res) => {
      const url = new URL(req.url, 'http://127.0.0.1');
      if (url.pathname === '/callback') {
        callbacks.push(url.searchParams);
        const waiters = callbackWaiters;
        callbackWaiters = [];
        for (const w of waiters) w();
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
    callbackServer.listen(0, '127.0.0.1', () => resolve(callbackServer.address().port));
  });
}

/** Waits until the callback server has received more than `count` requests; returns the newest. */
async function nextCallback(count, what, timeout = 30_000) {
  if (callbacks.length <= count) {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what}: the app's redirect URI received nothing within ${timeout / 1000} s`)), timeout);
      callbackWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  return callbacks[callbacks.length - 1];
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

function authorizeUrl({ clientId, scope, state, challenge }) {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  return `${CONSOLE}/oauth/authorize?${q.toString().replace(/\+/g, '%20')}`;
}

async function callApi(path, token) {
  const res = await fetch(`${CONSOLE}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, text, wwwAuthenticate: res.headers.get('www-authenticate') };
}

// State shared by the steps.
let managerCtx; // the manager's console tab (signed up)
let page;
let appCtx; // the browser that follows the authorization request (starts signed out)
let authPage;
let clientId;
let clientSecret;
let accessToken;

async function expectConsent(p, what) {
  try {
    await p.waitForURL(pathIs('/oauth/authorize'), { timeout: 60_000 });
  } catch {
    assert.fail(`${what}: did not reach the consent page /oauth/authorize (at ${p.url()})`);
  }
  await expectVisible(p, p.getByRole('heading', { name: `Connect ${APP_NAME}` }), `${what}: the heading "Connect ${APP_NAME}"`);
}

describe(`Gable OAuth in Chromium (${BACKEND})`, { concurrency: false }, () => {
  before(async () => {
    assert.ok(CONSOLE, 'GABLE_CONSOLE_URL is not set: run the browser tests through tests/browser/run.sh');
    fs.mkdirSync(SHOTS, { recursive: true });
    const port = await startCallbackServer();
    redirectUri = `http://127.0.0.1:${port}/callback`;
    await sess.launch();
    managerCtx = await newContext({ viewport: { width: 1280, height: 900 } });
    page = watch(await managerCtx.newPage(), 'manager');
  });

  after(async () => {
    await sess.close();
    if (callbackServer) {
      callbackServer.closeAllConnections();
      await new Promise((resolve) => callbackServer.close(resolve));
    }
    if (screenshots.length) console.log(`screenshots (${BACKEND}):\n  ${screenshots.join('\n  ')}`);
  });

  step('1. a manager signs up and registers a confidential app; its client ID and secret are shown once', async () => {
    await signUp(page, manager, 'signing up the manager');
    // The app acts on the environment the console shows: live, so its tokens work on {console}/v1.
    await page.getByRole('button', { name: /Switch to live/ }).click();
    await expectVisible(page, page.locator('.env-banner.live'), 'the live banner after "Switch to live"', 30_000);

    await goto(page, '/console/oauth-apps', 'the OAuth apps page');
    await expectVisible(page, page.getByRole('heading', { name: 'Register an app' }), 'the "Register an app" form');
    await page.getByLabel('App name').fill(APP_NAME);
    await page.locator('#create-oauth-app-form textarea[name=redirect_uris]').fill(redirectUri);
    assert.equal(await page.locator('#create-oauth-app-form input[name=public]').isChecked(), false, 'the "Public client" box should start unticked');
    await page.getByRole('button', { name: 'Register app' }).click();
    await expectVisible(page, page.locator('#new-client-id'), 'the new client ID (#new-client-id)', 30_000);
    await expectVisible(page, page.locator('#new-client-secret'), 'the client secret shown once (#new-client-secret)');
    clientId = (await page.locator('#new-client-id').textContent()).trim();
    clientSecret = (await page.locator('#new-client-secret').textContent()).trim();
    assert.match(clientId, /^gci_\S+$/, `the client ID should be gci_…, got ${JSON.stringify(clientId)}`);
    assert.match(clientSecret, /^gcs_\S+$/, `the client secret should be gcs_…, got ${JSON.stringify(clientSecret.slice(0, 8))}…`);
    const item = page.locator('#oauth-apps li', { hasText: APP_NAME });
    await expectVisible(page, item, 'the new app in the list');
    const itemText = await item.innerText();
    assert.match(itemText, /Confidential client/, `the app should be listed as a confidential client: ${JSON.stringify(itemText)}`);
    assert.match(itemText, /live/, `the app should be listed as live: ${JSON.stringify(itemText)}`);
    assert.ok(itemText.includes(clientId), 'the list does not show the client ID');
    await shot(page, 'oauth-app-registered');
  });

  step('2. signed out, an authorization request goes to sign-in, then consent; Allow without leases:read; the code buys a properties:read token', async () => {
    appCtx = await newContext({ viewport: { width: 1280, height: 900 } });
    authPage = watch(await appCtx.newPage(), 'app user');
    const { verifier, challenge } = pkce();
    const before = callbacks.length;

    await authPage.goto(authorizeUrl({ clientId, scope: 'properties:read leases:read', state: 's1', challenge }));
    await authPage.waitForURL(pathIs('/sign-in'), { timeout: 60_000 }).catch(() => assert.fail(`a signed-out authorization request should go to /sign-in (at ${authPage.url()})`));
    const next = new URL(authPage.url()).searchParams.get('next');
    assert.ok(next && next.startsWith('/oauth/authorize?'), `/sign-in should carry next=/oauth/authorize?…, got ${JSON.stringify(next)}`);
    await settle(authPage, 'the sign-in page');
    assert.equal(await authPage.locator('input[type=hidden][name=next]').count(), 1, 'the sign-in form has no hidden "next" field');
    await shot(authPage, 'oauth-sign-in');
    await authPage.fill('input[name=email]', manager.email);
    await authPage.fill('input[name=password]', manager.password);
    await authPage.click('form button[type=submit]');
    await expectConsent(authPage, 'after signing in');

    const body = await authPage.locator('body').innerText();
    assert.ok(body.includes(manager.email), `the consent page should say who is signed in (${manager.email})`);
    assert.ok(body.includes(manager.company), `the consent page should name the tenant (${manager.company})`);
    const grants = authPage.locator('input[type=checkbox][name=grant]');
    assert.deepEqual(
      (await grants.evaluateAll((els) => els.map((e) => e.value))).sort(),
      ['leases:read', 'properties:read'],
      'the consent page should offer a checkbox for each scope asked',
    );
    const leases = authPage.getByLabel(/leases:read/);
    const properties = authPage.getByLabel(/properties:read/);
    assert.equal(await leases.isChecked(), true, 'leases:read should start ticked');
    await leases.uncheck();
    assert.equal(await leases.isChecked(), false, 'leases:read did not untick');
    assert.equal(await properties.isChecked(), true, 'properties:read should stay ticked');
    await shot(authPage, 'oauth-consent');

    await authPage.getByRole('button', { name: 'Allow' }).click();
    const q = await nextCallback(before, 'after Allow');
    await authPage.waitForURL((u) => u.toString().startsWith(redirectUri), { timeout: 30_000 }).catch(() => assert.fail(`Allow did not send the browser to ${redirectUri} (at ${authPage.url()})`));
    await expectVisible(authPage, authPage.getByText('ok'), "the app's callback page");
    await shot(authPage, 'oauth-callback-allowed');
    assert.equal(q.get('error'), null, `the callback got an error: ${q.toString()}`);
    const code = q.get('code');
    assert.match(code || '', /^gac_\S+$/, `the callback should get code=gac_…, got ${q.toString()}`);
    assert.equal(q.get('state'), 's1', 'the callback should get state=s1');
    assert.equal(q.get('iss'), CONSOLE, `the callback should get iss=${CONSOLE}`);

    const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier });
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
    const res = await fetch(`${CONSOLE}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
      body: form.toString(),
    });
    const text = await res.text();
    assert.equal(res.status, 200, `POST /oauth/token answered ${res.status}: ${text}`);
    const tok = JSON.parse(text);
    assert.match(tok.access_token || '', /^gat_\S+$/, `the token answer has no access_token gat_…: ${text.replace(/g[ar]t_\S+?"/g, 'g?t_…"')}`);
    assert.equal(tok.token_type, 'Bearer', 'token_type should be Bearer');
    assert.equal(tok.scope, 'properties:read', `the token's scope should be only what was ticked, got ${JSON.stringify(tok.scope)}`);
    accessToken = tok.access_token;

    const props = await callApi('/v1/properties', accessToken);
    assert.equal(props.status, 200, `GET /v1/properties with the access token answered ${props.status}: ${props.text.slice(0, 300)}`);
    const leasesRes = await callApi('/v1/leases', accessToken);
    assert.equal(leasesRes.status, 403, `GET /v1/leases (scope not granted) should be 403, got ${leasesRes.status}: ${leasesRes.text.slice(0, 300)}`);
    assert.match(leasesRes.wwwAuthenticate || '', /insufficient_scope/, `the 403 should carry WWW-Authenticate with insufficient_scope, got ${JSON.stringify(leasesRes.wwwAuthenticate)}`);
  });

  step('3. Deny answers the app with error=access_denied and its state', async () => {
    const { challenge } = pkce();
    const before = callbacks.length;
    await authPage.goto(authorizeUrl({ clientId, scope: 'properties:read', state: 's2-deny', challenge }));
    await expectConsent(authPage, 'a second request while signed in');
    await authPage.getByRole('button', { name: 'Deny' }).click();
    const q = await nextCallback(before, 'after Deny');
    await authPage.waitForURL((u) => u.toString().startsWith(redirectUri), { timeout: 30_000 }).catch(() => assert.fail(`Deny did not send the browser to ${redirectUri} (at ${authPage.url()})`));
    await shot(authPage, 'oauth-callback-denied');
    assert.equal(q.get('error'), 'access_denied', `Deny should answer error=access_denied, got ${q.toString()}`);
    assert.equal(q.get('state'), 's2-deny', 'Deny should answer the request\'s state');
    assert.equal(q.get('iss'), CONSOLE, `Deny should answer iss=${CONSOLE}`);
    assert.equal(q.get('code'), null, 'Deny must not answer a code');
  });

  step('4. "Connected apps" lists the authorization; revoking it empties the list and the token stops working', async () => {
    await goto(page, '/console/connected-apps', 'the connected apps page');
    const item = page.locator('#connected-apps li', { hasText: APP_NAME });
    await expectVisible(page, item, 'the authorized app on "Connected apps"');
    assert.equal(await page.locator('#connected-apps li').count(), 1, 'exactly one authorization should be listed (Deny must not add one)');
    const text = await item.innerText();
    assert.ok(text.includes(manager.email), `the authorization should name the manager (${manager.email}): ${JSON.stringify(text)}`);
    assert.deepEqual(await item.locator('code.scope').allTextContents(), ['properties:read'], 'the authorization should list only properties:read');
    await shot(page, 'connected-apps');

    await page.getByRole('button', { name: `Revoke ${APP_NAME}` }).click();
    await expectVisible(page, page.getByRole('heading', { name: 'No connected apps' }), 'the empty list after revoking', 30_000);
    assert.equal(await page.locator('#connected-apps li').count(), 0, 'the list still has an authorization after revoking');
    await shot(page, 'connected-apps-revoked');

    const after = await callApi('/v1/properties', accessToken);
    assert.equal(after.status, 401, `the revoked access token should get 401, got ${after.status}: ${after.text.slice(0, 300)}`);
    assert.match(after.wwwAuthenticate || '', /invalid_token/, `the 401 should carry WWW-Authenticate with invalid_token, got ${JSON.stringify(after.wwwAuthenticate)}`);
  });

  step('5. the consent page: each checkbox has a label, and Allow is reachable with Tab', async () => {
    const { challenge } = pkce();
    await authPage.goto(authorizeUrl({ clientId, scope: 'properties:read leases:read', state: 's3', challenge }));
    await expectConsent(authPage, 'a third request');
    for (const scope of ['properties:read', 'leases:read']) {
      const box = authPage.getByLabel(new RegExp(scope));
      assert.equal(await box.count(), 1, `no single control labelled "${scope}"`);
      assert.equal(await box.getAttribute('type'), 'checkbox', `the control labelled "${scope}" is not a checkbox`);
      assert.equal(await box.getAttribute('value'), scope, `the checkbox labelled "${scope}" has another value`);
    }
    await authPage.locator('body').click({ position: { x: 1, y: 1 } });
    let reached = false;
    const seen = [];
    for (let i = 0; i < 20 && !reached; i++) {
      await authPage.keyboard.press('Tab');
      const focused = await authPage.evaluate(() => {
        const el = document.activeElement;
        return el ? `${el.tagName.toLowerCase()}${el.name ? `[name=${el.name}]` : ''}:${(el.value || el.textContent || '').trim().slice(0, 20)}` : '';
      });
      seen.push(focused);
      reached = focused === 'button[name=decision]:allow';
    }
    assert.ok(reached, `Tab never reached the Allow button; focus went: ${seen.join(' → ')}`);
    await shot(authPage, 'oauth-consent-allow-focused');
  });

  step('6. no uncaught errors in the pages', async () => {
    assert.deepEqual(pageErrors, [], `uncaught errors in the pages: ${pageErrors.join('; ')}`);
  }, { always: true });
});
