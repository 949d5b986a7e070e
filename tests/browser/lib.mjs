// What the browser tests (console.test.mjs, webhooks.test.mjs, sandbox.test.mjs) share: one
// factory, `session()`, which reads the settings run.sh exports and returns the state a test
// file's steps share (the browser once launched, the page a failing step is screenshotted from,
// the uncaught errors seen, the screenshots taken) with the helpers bound to it.
//
// Not a test file: `node --test tests/browser/` runs only the *.test.mjs files.

import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// playwright-core lives in .tools/node/node_modules (NODE_PATH, exported by .ci/env).
// ESM `import` ignores NODE_PATH, CommonJS `require` honours it.
function loadPlaywright() {
  const require = createRequire(import.meta.url);
  try {
    return require('playwright-core');
  } catch {
    return require(path.join(ROOT, '.tools', 'node', 'node_modules', 'playwright-core'));
  }
}
const { chromium } = loadPlaywright();

const trimSlash = (u) => (u || '').replace(/\/+$/, '');

const pathIs = (p) => (url) => new URL(url).pathname === p;

function slug(s) {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60);
}

/**
 * Marks the moment the console's WebAssembly is instantiated. Leptos hydrates right after
 * (in the same task's microtasks), so `window.__gableHydrated` (set one task later) means
 * "hydrated". Installed on every context before any page loads (it runs in the page).
 */
function markHydration() {
  for (const fn of ['instantiateStreaming', 'instantiate']) {
    const original = WebAssembly[fn];
    if (typeof original !== 'function') continue;
    WebAssembly[fn] = function (...args) {
      return original.apply(this, args).then((result) => {
        setTimeout(() => {
          window.__gableHydrated = true;
        }, 0);
        return result;
      });
    };
  }
}

/**
 * One test file's browser session. Settings come from the environment run.sh exports
 * (GABLE_CONSOLE_URL, GABLE_SANDBOX_URL, GABLE_LIVE_API_URL, GABLE_BACKEND, GABLE_SERVER_LOG,
 * GABLE_SCREENSHOTS, GABLE_CHROMIUM); screenshots go to `shotsSubdir` of $GABLE_SCREENSHOTS,
 * and a failing step's message starts with `[<backend>] <stepLabel> "<name>": `.
 *
 * `activePage` (the page a failing step is screenshotted from) is set by `watch`; a test sets
 * it back (`s.activePage = page`) when it closes another page. `browser` is set by `launch`.
 */
export function session({ shotsSubdir = '', stepLabel = 'step', env = process.env } = {}) {
  const consoleUrl = trimSlash(env.GABLE_CONSOLE_URL);
  const backend = env.GABLE_BACKEND || 'unknown-backend';
  const shotsDir = path.join(
    path.resolve(ROOT, env.GABLE_SCREENSHOTS || path.join('tests', 'artifacts', 'screenshots', backend)),
    shotsSubdir,
  );
  const chromiumPath = env.GABLE_CHROMIUM || '/usr/bin/chromium';

  const s = {
    root: ROOT,
    consoleUrl,
    sandboxUrl: trimSlash(env.GABLE_SANDBOX_URL),
    liveApiUrl: trimSlash(env.GABLE_LIVE_API_URL || (consoleUrl && `${consoleUrl}/v1`)),
    backend,
    serverLog: env.GABLE_SERVER_LOG,
    shotsDir,
    browser: undefined,
    activePage: undefined,
    pageErrors: [],
    screenshots: [],
    pathIs,
    slug,
  };
  let shotNo = 0;
  let broken = null;

  /** Starts the browser (Debian's Chromium, headless); `s.browser` from then on. */
  s.launch = async () => {
    s.browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    return s.browser;
  };

  s.close = async () => {
    if (s.browser) await s.browser.close();
  };

  /** A full-page screenshot named after what it shows, numbered in the order visited. */
  s.shot = async (p, name, dir = shotsDir) => {
    shotNo += 1;
    const file = path.join(dir, `${String(shotNo).padStart(2, '0')}-${name}.png`);
    fs.mkdirSync(dir, { recursive: true });
    await p.screenshot({ path: file, fullPage: true });
    s.screenshots.push(path.relative(ROOT, file));
    return file;
  };

  /** Watches a page for uncaught errors (a WASM panic ends in one) and Rust panics. */
  s.watch = (p, who) => {
    p.setDefaultTimeout(20_000);
    p.setDefaultNavigationTimeout(60_000);
    p.on('pageerror', (e) => s.pageErrors.push(`${who} at ${p.url()}: ${e.message}`));
    p.on('console', (m) => {
      if (m.type() === 'error' && /panicked/.test(m.text())) s.pageErrors.push(`${who} at ${p.url()}: ${m.text()}`);
    });
    s.activePage = p;
    return p;
  };

  /** A new browser context whose pages mark when they are hydrated (see markHydration). */
  s.newContext = async (options = {}) => {
    const ctx = await s.browser.newContext(options);
    await ctx.addInitScript(markHydration);
    return ctx;
  };

  /** Waits until a freshly loaded page is hydrated and its data requests are done. */
  s.settle = async (p, what) => {
    await p.waitForLoadState('networkidle');
    try {
      await p.waitForFunction(() => window.__gableHydrated === true, null, { timeout: 30_000 });
    } catch {
      assert.fail(`${what}: the page never hydrated (the console's WebAssembly at /pkg/*.wasm did not start) at ${p.url()}`);
    }
    await p.waitForTimeout(100);
  };

  /** Waits for `locator`; on timeout fails with the page's error messages, if any. */
  s.expectVisible = async (p, locator, what, timeout = 20_000) => {
    try {
      await locator.first().waitFor({ state: 'visible', timeout });
    } catch {
      const alerts = await p
        .locator('[role=alert], .form-error')
        .allTextContents()
        .catch(() => []);
      assert.fail(
        `${what}: not shown within ${timeout / 1000} s at ${p.url()}` +
          (alerts.length ? `; the page says: ${alerts.map((a) => JSON.stringify(a.trim())).join(', ')}` : ''),
      );
    }
  };

  /** Loads a console page (`pathname` on the console's origin) and waits until it is settled. */
  s.goto = async (p, pathname, what) => {
    await p.goto(`${consoleUrl}${pathname}`);
    await s.settle(p, what);
  };

  /** POSTs a form to a server function from inside the page: same origin, the page's cookies. */
  s.postFromPage = async (p, endpoint, fields) =>
    p.evaluate(
      async ({ endpoint, fields }) => {
        const res = await fetch(`/api/${endpoint}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(fields).toString(),
        });
        return { status: res.status, ok: res.ok, text: await res.text() };
      },
      { endpoint, fields },
    );

  /** The page's CSRF token (its first hidden input[name=csrf]). */
  s.csrfOf = async (p) => {
    const csrf = await p.locator('input[name=csrf]').first().inputValue();
    assert.ok(csrf && csrf.length >= 16, `the page at ${p.url()} has no CSRF token in a hidden input[name=csrf]`);
    return csrf;
  };

  // Submits the open sign-in or sign-up form and waits for the overview.
  const submitToConsole = async (p, user, what, doing) => {
    await p.click('form button[type=submit]');
    try {
      await p.waitForURL(pathIs('/console'), { timeout: 60_000 });
    } catch {
      const alerts = await p.locator('[role=alert], .form-error').allTextContents();
      assert.fail(`${what}: ${doing} as ${user.email} did not lead to /console (at ${p.url()}; page says ${JSON.stringify(alerts)})`);
    }
    await s.expectVisible(p, p.getByRole('heading', { name: /Welcome/ }), `${what}: the overview after ${doing}`, 30_000);
  };

  /** Signs `user` ({ email, password }) in on /sign-in; fails unless it lands on the overview. */
  s.signIn = async (p, user, what) => {
    await s.goto(p, '/sign-in', `${what}: the sign-in page`);
    await p.fill('input[name=email]', user.email);
    await p.fill('input[name=password]', user.password);
    await submitToConsole(p, user, what, 'signing in');
  };

  /** Signs `user` ({ company, name, email, password }) up on /sign-up; fails unless it lands on the overview. */
  s.signUp = async (p, user, what) => {
    await s.goto(p, '/sign-up', `${what}: the sign-up page`);
    await p.fill('input[name=company]', user.company);
    await p.fill('input[name=name]', user.name);
    await p.fill('input[name=email]', user.email);
    await p.fill('input[name=password]', user.password);
    await submitToConsole(p, user, what, 'signing up');
  };

  /** Adds a teammate ({ name, email, password }) with `role` on the Team page; waits until they are listed. */
  s.addTeammate = async (p, user, role) => {
    await s.goto(p, '/console/team', 'the team page');
    await p.fill('input[name=name]', user.name);
    await p.fill('input[name=email]', user.email);
    await p.selectOption('select[name=role_id]', { label: role });
    await p.fill('input[name=password]', user.password);
    await p.click('form button[type=submit]:has-text("Add")');
    await s.expectVisible(p, p.locator('#users li', { hasText: user.email }), 'the new teammate');
  };

  /**
   * One test step. If a step fails, later steps are skipped (they depend on its state),
   * except those marked `always`; a FAILED-<step>.png of the active page is saved. Failure
   * messages name the backend and the step.
   */
  s.step = (name, fn, { always = false } = {}) => {
    it(name, { timeout: 240_000 }, async (t) => {
      if (broken && !always) {
        t.skip(`an earlier step failed: ${broken}`);
        return;
      }
      try {
        await fn(t);
      } catch (e) {
        if (!always) broken = name;
        if (s.activePage && !s.activePage.isClosed()) {
          const file = path.join(shotsDir, `FAILED-${slug(name)}.png`);
          await s.activePage.screenshot({ path: file, fullPage: true }).catch(() => {});
          s.screenshots.push(`${path.relative(ROOT, file)} (at ${s.activePage.url()})`);
        }
        if (e && typeof e.message === 'string') e.message = `[${backend}] ${stepLabel} "${name}": ${e.message}`;
        throw e;
      }
    });
  };

  return s;
}
