// Browser tests of bulk import in the console, as an operations team uses it: a real headless
// Chromium (Debian's, driven by playwright-core) signs an owner up and, from the pages alone,
// downloads a template, uploads a spreadsheet whose own headers are mapped to fields (matched by
// name, one changed by hand), sees every row checked, imports it and watches it end; uploads a
// file with a bad row, sees the error by line, is refused until it leaves the row out; uploads
// and is refused without WebAssembly too; and from the attacker's side, a read-only teammate
// reaches nothing.
//
// Run through tests/browser/run.sh (see console.test.mjs for the environment it exports).
// Screenshots go to $GABLE_SCREENSHOTS/imports/NN-<what>.png.

import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { session } from './lib.mjs';

const sess = session({ shotsSubdir: 'imports', stepLabel: 'imports step' });
const { consoleUrl: CONSOLE, backend: BACKEND, shotsDir: SHOTS } = sess;
const { shot, watch, newContext, settle, expectVisible, goto, postFromPage, csrfOf, signUp, signIn, addTeammate, step, pageErrors, screenshots } = sess;

const RUN = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const password = (word) => `${word}-${randomBytes(9).toString('hex')}`;
const owner = { company: `Birch Homes ${RUN}`, name: 'Ines Importer', email: `ines.${RUN}@example.com`, password: password('Birch-owner') };
const viewer = { name: 'Vic Viewer', email: `vic.${RUN}@example.com`, password: password('Birch-viewer') };

// An export from another system: its own headers, one the matcher cannot place.
const PROPERTIES = [
  'Property ID,Name,Kind,Street,City,ZIP,Country,Notes',
  'OLD-P1,Birch Court,residential,1 Birch St,Portland,97201,US,corner lot',
  'OLD-P2,Alder House,residential,2 Alder Rd,Portland,97202,US,',
].join('\n');
// Units by the API's names, one with a bad cell.
const UNITS = ['external_id,property_id.external_id,number,bedrooms', 'U-1,OLD-P1,1A,2', 'U-2,OLD-P1,1B,two', 'U-3,OLD-P2,2A,1'].join('\n');

let ctx;
let page;
let pending; // an import checked and not committed, for the attacker's steps

const csv = (name, text) => ({ name, mimeType: 'text/csv', buffer: Buffer.from(`${text}\n`) });

/** Waits for an import's page and returns its id. */
async function onImportPage(p, what) {
  await p.waitForURL((u) => /^\/console\/imports\/[0-9a-f-]{36}$/.test(new URL(u).pathname), { timeout: 60_000 }).catch(async () => {
    const alerts = await p.locator('[role=alert]:not(:empty), .form-error').allTextContents();
    assert.fail(`${what}: no import page after uploading (at ${p.url()}; the page says ${JSON.stringify(alerts)})`);
  });
  await expectVisible(p, p.locator('#import-title'), `${what}: the import's title`);
  return new URL(p.url()).pathname.split('/').pop();
}

// axe-core lives in .tools/node/node_modules (NODE_PATH, exported by .ci/env), like playwright-core.
function axeFile() {
  try {
    return createRequire(import.meta.url).resolve('axe-core/axe.min.js');
  } catch {
    return path.join(sess.root, '.tools', 'node', 'node_modules', 'axe-core', 'axe.min.js');
  }
}

/** Runs axe-core on the page shown; fails on serious or critical violations. */
async function accessible(p, what) {
  await p.addScriptTag({ path: axeFile() });
  const found = await p.evaluate(async () => {
    const { violations } = await window.axe.run(document, { resultTypes: ['violations'] });
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
  });
  assert.deepEqual(found, [], `${what}: axe-core's serious and critical findings`);
}

async function count(p, name) {
  return (await p.locator(`[data-count=${name}]`).first().innerText()).trim();
}

describe(`Gable console imports in Chromium (${BACKEND})`, { concurrency: false }, () => {
  before(async () => {
    assert.ok(CONSOLE, 'GABLE_CONSOLE_URL is not set: run the browser tests through tests/browser/run.sh');
    fs.mkdirSync(SHOTS, { recursive: true });
    await sess.launch();
    ctx = await newContext({ viewport: { width: 1280, height: 900 } });
    page = watch(await ctx.newPage(), 'owner');
  });

  after(async () => {
    await sess.close();
    if (screenshots.length) console.log(`imports screenshots (${BACKEND}):\n  ${screenshots.join('\n  ')}`);
  });

  step('the imports page starts empty and leads to the form, with a template per collection', async () => {
    await signUp(page, owner, 'owner sign-up');
    await page.locator('nav.mainnav').getByRole('link', { name: 'Imports' }).click();
    await expectVisible(page, page.locator('.empty', { hasText: 'No imports yet' }), 'the empty imports page');
    await shot(page, 'imports-empty');
    await page.click('#new-import');
    await expectVisible(page, page.locator('#choose-collection'), 'the collection choice');
    await settle(page, 'the new import page');
    await page.selectOption('#import-collection', 'properties');
    await page.click('#choose-collection button[type=submit]');
    await expectVisible(page, page.locator('#import-columns'), 'the columns of a properties file');
    await settle(page, 'the properties import form');
    const link = page.locator('#template-download');
    assert.equal(await link.getAttribute('download'), 'properties-template.csv');
    const href = decodeURIComponent((await link.getAttribute('href')) || '');
    assert.match(href, /^data:text\/csv;charset=utf-8,external_id,name,/, `the template's header: ${href.slice(0, 120)}`);
    await shot(page, 'new-import-properties');
  });

  step("a spreadsheet's own headers are matched, one is changed by hand, and it is imported", async () => {
    await page.setInputFiles('#import-file', csv('old-system-properties.csv', PROPERTIES));
    const mapping = page.locator('#column-mapping');
    await expectVisible(page, mapping, 'the column mapping (read in the browser)');
    const expected = { 0: 'external_id', 1: 'name', 2: 'kind', 3: 'address.line1', 4: 'address.city', 5: 'address.postal_code', 6: 'address.country' };
    for (const [at, value] of Object.entries(expected)) {
      assert.equal(await page.locator(`#map-${at}`).inputValue(), value, `column ${at} is matched to ${value}`);
    }
    assert.equal(await page.locator('#map-7').inputValue(), '', 'Notes matches nothing: left out');
    await expectVisible(page, mapping.locator('tr[data-column=Notes] .badge', { hasText: 'not matched' }), 'Notes marked as not matched');
    // Keyboard: the select is reached and changed without a mouse.
    await page.focus('#map-7');
    await page.selectOption('#map-7', 'metadata.Notes');
    await shot(page, 'column-mapping');
    await accessible(page, 'the upload form with its mapping');
    await page.click('#upload-import');
    const id = await onImportPage(page, 'the properties upload');
    assert.equal((await page.locator('#import-status').innerText()).trim(), 'validated');
    assert.equal(await count(page, 'total'), '2');
    assert.equal(await count(page, 'invalid'), '0');
    await shot(page, 'properties-checked');
    await page.click('#commit-import');
    // The page follows the import by itself until it ends.
    await expectVisible(page, page.locator('#import-status', { hasText: 'completed' }), 'the import completed', 60_000);
    assert.equal(await count(page, 'created'), '2');
    await shot(page, 'properties-imported');
    await page.locator('#import-result a', { hasText: 'See properties' }).click();
    await expectVisible(page, page.locator('#list-title', { hasText: 'Properties' }), 'the properties list');
    await expectVisible(page, page.locator('table.records', { hasText: 'Birch Court' }), 'an imported property');
    const res = await page.evaluate(async (id) => (await fetch(`/console/imports/${id}`)).status, id);
    assert.equal(res, 200);
  });

  step('a bad row is shown by its line, and the rest is imported only when it is left out', async () => {
    await goto(page, '/console/units', 'the units list');
    await page.click('#import-records');
    await expectVisible(page, page.locator('#import-columns'), 'the units import form, from the list');
    await settle(page, 'the units import form');
    await page.setInputFiles('#import-file', csv('units.csv', UNITS));
    await expectVisible(page, page.locator('#column-mapping'), 'the mapping of a file named as the API names');
    await page.click('#upload-import');
    await onImportPage(page, 'the units upload');
    assert.equal(await count(page, 'invalid'), '1');
    const bad = page.locator('#import-errors tr[data-line="3"]');
    await expectVisible(page, bad, 'the bad row, by its line');
    assert.match(await bad.innerText(), /U-2[\s\S]*bedrooms[\s\S]*two/);
    await shot(page, 'units-errors');
    await accessible(page, "an import's page with its errors");
    await settle(page, 'the units import');
    await page.click('#commit-import');
    await expectVisible(page, page.locator('#commit-error'), 'the refusal to import rows with errors unasked');
    assert.match(await page.locator('#commit-error').innerText(), /Leave out the rows with errors/);
    // The page reads the import again after the refusal; tick the box on what it then shows.
    await page.waitForLoadState('networkidle');
    await page.waitForTimeout(300);
    await page.check('#skip-invalid');
    await page.click('#commit-import');
    await expectVisible(page, page.locator('#import-status', { hasText: 'completed' }), 'the units import completed', 60_000);
    assert.equal(await count(page, 'created'), '2');
    assert.equal(await count(page, 'skipped'), '1');
    await shot(page, 'units-imported');
  });

  step('without WebAssembly: the upload is matched by name on the server, and a refusal says why', async () => {
    const bare = await ctx.browser().newContext({ javaScriptEnabled: false, viewport: { width: 820, height: 1180 } });
    await bare.addCookies(await ctx.cookies());
    const p = await bare.newPage();
    await p.goto(`${CONSOLE}/console/imports/new?collection=units`);
    await p.locator('#upload-form').waitFor();
    await p.setInputFiles('#import-file', csv('more-units.csv', 'Unit number,Property,Bedrooms\n3A,OLD-P2,3\n3B,OLD-P2,2'));
    await p.click('#upload-import');
    pending = await onImportPage(p, 'the upload without WebAssembly');
    assert.equal((await p.locator('#import-status').innerText()).trim(), 'validated');
    assert.equal(await count(p, 'valid'), '2');
    await shot(p, 'no-javascript-checked');
    await p.goto(`${CONSOLE}/console/imports/new?collection=units`);
    await p.setInputFiles('#import-file', csv('wrong.csv', 'number,floors\n4A,2'));
    await p.click('#upload-import');
    await p.locator('#upload-error').waitFor();
    assert.match(await p.locator('#upload-error').innerText(), /floors/);
    const width = await p.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 821, `the import form is ${width}px wide on an 820px tablet`);
    await shot(p, 'no-javascript-refused');
    await bare.close();
  });

  // Another tenant is the Rust tests' (console::imports): one more sign-up here would pass the
  // server's sign-ups per address that all the browser files share (README, Pitfalls).
  step('a read-only teammate reaches nothing', async () => {
    await addTeammate(page, viewer, 'Read-only staff');
    const vctx = await newContext({ viewport: { width: 1280, height: 900 } });
    const v = watch(await vctx.newPage(), 'viewer');
    await signIn(v, viewer, 'viewer sign-in');
    await goto(v, '/console/imports/new', 'the import form, as a viewer');
    await expectVisible(v, v.locator('#cannot-import'), 'the note that the role cannot import');
    await goto(v, `/console/imports/${pending}`, 'a checked import, as a viewer');
    await expectVisible(v, v.locator('#read-only-note'), 'the note that the role can look only');
    assert.equal(await v.locator('#commit-import, #cancel-import').count(), 0, 'no commit or cancel controls');
    const csrf = await csrfOf(v);
    for (const [endpoint, fields] of [
      ['commit_import', { csrf, id: pending, once: `forged-${RUN}` }],
      ['cancel_import', { csrf, id: pending, once: `forged-${RUN}-c` }],
    ]) {
      const res = await postFromPage(v, endpoint, fields);
      assert.ok(!res.ok, `${endpoint} as a viewer must be refused: ${res.status} ${res.text}`);
      assert.match(res.text, /does not allow/, `${endpoint}: the refusal names the permission: ${res.text}`);
    }
    // The upload form's post, forged with the viewer's own session and token.
    const landed = await v.evaluate(async (csrf) => {
      const form = new FormData();
      form.append('csrf', csrf);
      form.append('collection', 'units');
      form.append('file', new Blob(['number,property_id.external_id\n9Z,OLD-P1\n'], { type: 'text/csv' }), 'forged.csv');
      return (await fetch('/console/imports/upload', { method: 'POST', body: form })).url;
    }, csrf);
    assert.match(decodeURIComponent(landed), /refused=.*imports:write/, `the forged upload is refused: ${landed}`);
    await vctx.close();
    sess.activePage = page;

    // Nothing changed: the checked import is still waiting, and no unit 9Z exists.
    await goto(page, `/console/imports/${pending}`, 'the checked import, as the owner');
    assert.equal((await page.locator('#import-status').innerText()).trim(), 'validated');
    await goto(page, '/console/units?filter[number]=9Z', 'no forged unit');
    await expectVisible(page, page.locator('#empty-list'), 'no unit 9Z');
  });

  step('no uncaught errors in the pages', async () => {
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the pages');
  }, { always: true });
});
