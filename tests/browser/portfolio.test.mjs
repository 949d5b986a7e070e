// Browser tests of the console's portfolio, as staff use it: a real headless Chromium (Debian's,
// driven by playwright-core) signs an owner up and, from the pages alone, creates a property, a
// unit and a lease; sends the lease, signs it and sees the tenancy start; bills a charge on an
// invoice, records a payment against it and sees the ledger; opens, starts and completes a work
// order; filters, searches, sorts and pages a list whose whole state is in the address (Back
// works); and reads every page before the WebAssembly loads. A read-only teammate sees no
// controls and is refused when posting to the server functions directly.
//
// Run through tests/browser/run.sh (see console.test.mjs for the environment it exports).
// Screenshots of every page go to $GABLE_SCREENSHOTS/portfolio/NN-<what>.png.

import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { session } from './lib.mjs';

const sess = session({ shotsSubdir: 'portfolio', stepLabel: 'portfolio step' });
const { consoleUrl: CONSOLE, backend: BACKEND, shotsDir: SHOTS } = sess;
const { shot, watch, newContext, settle, expectVisible, goto, postFromPage, csrfOf, signUp, signIn, addTeammate, step, pageErrors, screenshots } = sess;

const RUN = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const password = (word) => `${word}-${randomBytes(9).toString('hex')}`;
const owner = { company: `Oak Lettings ${RUN}`, name: 'Petra Manager', email: `petra.${RUN}@example.com`, password: password('Oak-owner') };
const viewer = { name: 'Val Viewer', email: `val.${RUN}@example.com`, password: password('Oak-viewer') };
const PROPERTY = `Oak Court ${RUN}`;

let ctx;
let page;
const ids = {}; // collection -> the id this run made

/** The id at the end of the page's address (a record's page). */
function idOf(p) {
  const parts = new URL(p.url()).pathname.split('/');
  return parts[parts.length - 1];
}

/** Waits for a record's page of `collection` and returns its id. */
async function onRecordPage(p, collection, what) {
  await p.waitForURL((u) => new RegExp(`^/console/${collection}/[0-9a-f-]{36}$`).test(new URL(u).pathname), { timeout: 30_000 }).catch(async () => {
    const alerts = await p.locator('[role=alert]:not(:empty), .form-error').allTextContents();
    assert.fail(`${what}: no ${collection} page after saving (at ${p.url()}; the page says ${JSON.stringify(alerts)})`);
  });
  await expectVisible(p, p.locator('#record-title'), `${what}: the record's title`);
  return idOf(p);
}

/** Fills a generated form: `values` maps field names to text (selects by value). */
async function fill(p, values) {
  for (const [name, value] of Object.entries(values)) {
    const input = p.locator(`#field-${name}`);
    const tag = await input.evaluate((e) => e.tagName.toLowerCase());
    if (tag === 'select') await input.selectOption(value);
    else await input.fill(value);
  }
}

/** The status badge of the record page shown. */
async function status(p) {
  return (await p.locator('#record-status').innerText()).trim();
}

/** Runs a workflow action from the record's page and waits for the status it leads to. */
async function act(p, action, expected, what) {
  const summary = p.locator(`summary#action-${action}`);
  if (await summary.count()) {
    await summary.click();
    await p.click(`#confirm-${action}`);
  } else {
    await p.click(`#action-${action}`);
  }
  await expectVisible(p, p.locator('#record-status', { hasText: expected }), `${what}: the status after ${action}`);
}

/** Opens "New" of a related list on a record's page (the reference filled in). */
async function newRelated(p, collection, what) {
  await p.locator(`#related-${collection} a.button`, { hasText: 'New' }).click();
  await expectVisible(p, p.locator('#form-title'), `${what}: the new ${collection} form`);
  await settle(p, what);
}

describe(`Gable console portfolio in Chromium (${BACKEND})`, { concurrency: false }, () => {
  before(async () => {
    assert.ok(CONSOLE, 'GABLE_CONSOLE_URL is not set: run the browser tests through tests/browser/run.sh');
    fs.mkdirSync(SHOTS, { recursive: true });
    await sess.launch();
    ctx = await newContext({ viewport: { width: 1280, height: 900 } });
    page = watch(await ctx.newPage(), 'owner');
  });

  after(async () => {
    await sess.close();
    if (screenshots.length) console.log(`portfolio screenshots (${BACKEND}):\n  ${screenshots.join('\n  ')}`);
  });

  step('the areas are in the navigation, and a list starts empty', async () => {
    await signUp(page, owner, 'owner sign-up');
    const nav = page.locator('#areas-nav');
    await expectVisible(page, nav, 'the areas navigation');
    for (const area of ['Portfolio', 'Leasing', 'Stays', 'Money', 'Maintenance', 'Records']) {
      await expectVisible(page, nav.getByRole('heading', { name: area }), `the ${area} area`);
    }
    await nav.getByRole('link', { name: 'Properties' }).click();
    await expectVisible(page, page.locator('#list-title', { hasText: 'Properties' }), 'the properties list');
    await expectVisible(page, page.locator('#empty-list'), 'the empty state');
    await shot(page, 'properties-empty');
  });

  step('a property is created from its form', async () => {
    await page.click('#new-record');
    await expectVisible(page, page.locator('#form-title', { hasText: 'New property' }), 'the new property form');
    await settle(page, 'the new property form');
    await fill(page, { name: PROPERTY, kind: 'residential', 'address-line1': '1 Oak St', 'address-city': 'Portland', 'address-region': 'OR', 'address-country': 'US' });
    await shot(page, 'property-form');
    await page.click('#save-record');
    ids.properties = await onRecordPage(page, 'properties', 'the new property');
    assert.equal((await page.locator('#record-name').innerText()).trim(), PROPERTY);
    assert.match(await page.locator('#record-fields [data-field=address]').innerText(), /1 Oak St, Portland, OR, US/);
    await shot(page, 'property-page');
  });

  step('a unit is created from the property page, the property filled in', async () => {
    await newRelated(page, 'units', 'the property page');
    assert.equal(await page.locator('#field-property_id').inputValue(), ids.properties, 'the property is filled in');
    await fill(page, { number: '4B', bedrooms: '2', bathrooms: '1', market_rent: '1450', currency: 'USD' });
    await page.click('#save-record');
    ids.units = await onRecordPage(page, 'units', 'the new unit');
    // The reference reads as the property's name, linking to it.
    const link = page.locator('#record-fields [data-field=property_id] a');
    assert.equal((await link.innerText()).trim(), PROPERTY);
    assert.equal(await link.getAttribute('href'), `/console/properties/${ids.properties}`);
    assert.match(await page.locator('#record-fields [data-field=market_rent]').innerText(), /1,450\.00 USD/);
    await shot(page, 'unit-page');
  });

  step('a lease: the refusal shows next to its field, then it is sent, signed and the tenancy starts', async () => {
    await newRelated(page, 'leases', 'the unit page');
    await fill(page, { start_date: '2027-01-01', end_date: '2027-12-31', rent: '1450.125', currency: 'USD' });
    await page.click('#save-record');
    await expectVisible(page, page.locator('#field-rent-error:not(:empty)'), 'the rent refusal next to its field');
    assert.match(await page.locator('#field-rent-error').innerText(), /decimals/);
    assert.equal(await page.locator('#field-rent').getAttribute('aria-invalid'), 'true');
    await shot(page, 'lease-form-refused');
    await fill(page, { rent: '1450' });
    await page.click('#save-record');
    ids.leases = await onRecordPage(page, 'leases', 'the new lease');
    assert.equal(await status(page), 'draft');
    await act(page, 'send', 'sent', 'the lease');
    await newRelated(page, 'signatures', 'the lease page');
    await fill(page, { signer_name: 'Lee Resident', signer_email: 'lee@example.com' });
    await page.click('#save-record');
    ids.signatures = await onRecordPage(page, 'signatures', 'the new signature');
    await act(page, 'sign', 'signed', 'the signature');
    await page.locator('#record-fields [data-field=lease_id] a').click();
    await expectVisible(page, page.locator('#record-status', { hasText: 'signed' }), 'the lease, signed by its last signature');
    await settle(page, 'the lease page');
    await act(page, 'activate', 'active', 'the lease');
    await expectVisible(page, page.locator('#related-tenancies .badge', { hasText: 'current' }), 'the tenancy, started');
    await expectVisible(page, page.locator('#record-history code', { hasText: 'lease.signed' }), 'the history of the lease');
    await shot(page, 'lease-active');
  });

  step('a payment against an invoice, and the ledger it posts', async () => {
    await newRelated(page, 'charges', 'the lease page');
    await fill(page, { kind: 'rent', amount: '1450', currency: 'USD', due_date: '2027-01-01' });
    await page.click('#save-record');
    ids.charges = await onRecordPage(page, 'charges', 'the new charge');
    await page.goto(`${CONSOLE}/console/leases/${ids.leases}`);
    await settle(page, 'the lease page');
    await newRelated(page, 'invoices', 'the lease page');
    await fill(page, { charge_ids: ids.charges, amount_due: '1450', currency: 'USD', due_date: '2027-01-01' });
    await page.click('#save-record');
    ids.invoices = await onRecordPage(page, 'invoices', 'the new invoice');
    await act(page, 'open', 'open', 'the invoice');
    await newRelated(page, 'payments', 'the invoice page');
    await fill(page, { amount: '1450', currency: 'USD', scenario: 'succeeded', method: 'bank_transfer' });
    await page.click('#save-record');
    ids.payments = await onRecordPage(page, 'payments', 'the new payment');
    assert.equal(await status(page), 'succeeded');
    await expectVisible(page, page.locator('#record-ledger td', { hasText: '1,450.00 USD' }), 'the payment\'s ledger lines');
    await shot(page, 'payment-ledger');
    await page.locator('#record-fields [data-field=invoice_id] a').click();
    await expectVisible(page, page.locator('#record-status', { hasText: 'paid' }), 'the invoice, paid');
    await expectVisible(page, page.locator('#record-ledger'), 'the invoice\'s ledger');
    await shot(page, 'invoice-paid');
  });

  step('a work order is opened, started and completed', async () => {
    await page.goto(`${CONSOLE}/console/units/${ids.units}`);
    await settle(page, 'the unit page');
    await newRelated(page, 'workorders', 'the unit page');
    assert.equal(await page.locator('#field-unit_id').inputValue(), ids.units);
    await fill(page, { property_id: ids.properties, title: 'Leaking tap', priority: 'high' });
    await page.click('#save-record');
    ids.workorders = await onRecordPage(page, 'workorders', 'the new work order');
    assert.equal(await status(page), 'open');
    await act(page, 'start', 'in_progress', 'the work order');
    await act(page, 'complete', 'completed', 'the work order');
    assert.equal(await page.locator('#record-actions').count(), 0, 'nothing follows completion');
    await shot(page, 'workorder-completed');
  });

  step('a unit is edited: only what changed is sent, and the page says who changed it', async () => {
    await goto(page, `/console/units/${ids.units}`, 'the unit page');
    await page.click('#edit-record');
    await expectVisible(page, page.locator('#form-title', { hasText: 'Edit 4B' }), 'the edit form');
    await settle(page, 'the edit form');
    assert.equal(await page.locator('#field-market_rent').inputValue(), '1450.00', 'the form starts from the record');
    assert.equal(await page.locator('#field-property_id').count(), 0, 'a unit never moves: its property is not offered');
    await fill(page, { market_rent: '1,525.50' });
    await shot(page, 'unit-edit-form');
    await page.click('#save-record');
    await onRecordPage(page, 'units', 'the edited unit');
    await expectVisible(page, page.locator('#record-fields [data-field=market_rent]', { hasText: '1,525.50 USD' }), 'the new rent');
    await expectVisible(page, page.locator('#record-activity li', { hasText: 'changed market rent' }), 'who changed it');
    assert.match(await page.locator('#record-activity').innerText(), /Petra Manager changed market rent/);
    await shot(page, 'unit-edited');
  });

  step('a list is filtered, searched, sorted and paged, its state in the address', async () => {
    for (const n of ['1A', '1B', '2A', '2B', 'PH']) {
      await page.goto(`${CONSOLE}/console/units/new?property_id=${ids.properties}`);
      await settle(page, 'the new unit form');
      await fill(page, { number: n, bedrooms: n === 'PH' ? '4' : n[0] });
      await page.click('#save-record');
      await onRecordPage(page, 'units', `unit ${n}`);
    }
    await goto(page, '/console/units?sort=number&limit=3', 'the units list');
    const titles = async () => page.locator('#records tbody th').allInnerTexts();
    assert.deepEqual(await titles(), ['1A', '1B', '2A']);
    await page.click('#next-page');
    await expectVisible(page, page.locator('#records tbody th', { hasText: '2B' }), 'the second page');
    assert.deepEqual(await titles(), ['2B', '4B', 'PH']);
    await page.goBack();
    await expectVisible(page, page.locator('#records tbody th', { hasText: '1A' }), 'Back: the first page again');
    // A filter from the form becomes a chip; the address carries it.
    await page.click('.add-filter summary');
    await page.selectOption('#add-field', 'bedrooms');
    await page.selectOption('#add-op', 'gte');
    await page.fill('#add-value', '2');
    await page.click('#add-filter button[type=submit]');
    await expectVisible(page, page.locator('#filter-chips .chip', { hasText: 'Bedrooms ≥ 2' }), 'the filter chip');
    assert.deepEqual(await titles(), ['2A', '2B', '4B']);
    assert.match(decodeURIComponent(page.url()), /add_field=bedrooms|filter\[bedrooms\]\[gte\]=2/);
    await shot(page, 'units-filtered');
    // Sorting by a column's header, then the other way.
    await page.click('#records th a.sort[data-column=number]');
    await expectVisible(page, page.locator('#records th[aria-sort=descending]'), 'sorted by number, descending');
    assert.deepEqual(await titles(), ['PH', '4B', '2B']);
    // The quick search; then the chips come off one by one.
    await page.fill('#quick-search input[name=q]', 'b');
    await page.click('#quick-search button[type=submit]');
    await expectVisible(page, page.locator('#filter-chips .chip', { hasText: 'contains' }), 'the search chip');
    assert.deepEqual(await titles(), ['4B', '2B']);
    await page.locator('#filter-chips .chip', { hasText: 'Bedrooms' }).locator('a.chip-remove').click();
    await expectVisible(page, page.locator('#records tbody th', { hasText: '1B' }), 'the filter removed');
    assert.deepEqual(await titles(), ['4B', '2B', '1B']);
    // A shared link opens the same page in another browser.
    const shared = page.url();
    const other = await ctx.newPage();
    await other.goto(shared);
    assert.deepEqual(await other.locator('#records tbody th').allInnerTexts(), ['4B', '2B', '1B']);
    await other.close();
    await shot(page, 'units-searched');
    // A filter the API refuses says why.
    await goto(page, '/console/units?filter[bedrooms]=many', 'a bad filter');
    await expectVisible(page, page.locator('#list-problem'), 'the refusal of a bad filter');
  });

  step('pages read before the WebAssembly loads', async () => {
    const bare = await ctx.browser().newContext({ javaScriptEnabled: false, viewport: { width: 820, height: 1180 } });
    const cookies = await ctx.cookies();
    await bare.addCookies(cookies);
    const p = await bare.newPage();
    for (const path of [`/console/leases/${ids.leases}`, '/console/units?sort=-number', `/console/invoices/${ids.invoices}`]) {
      await p.goto(`${CONSOLE}${path}`);
      await p.locator('#record-title, #list-title').first().waitFor();
      // A tablet's width holds the page; a wide table scrolls inside its own box.
      const width = await p.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 821, `${path} is ${width}px wide on an 820px tablet`);
    }
    assert.equal((await p.locator('#record-status').innerText()).trim(), 'paid');
    await shot(p, 'tablet-no-javascript');
    await bare.close();
  });

  step('a read-only teammate sees no controls and is refused at the server', async () => {
    await addTeammate(page, viewer, 'Read-only staff');
    const vctx = await newContext({ viewport: { width: 1280, height: 900 } });
    const v = watch(await vctx.newPage(), 'viewer');
    await signIn(v, viewer, 'viewer sign-in');
    await goto(v, `/console/workorders/${ids.workorders}`, 'the work order, as a viewer');
    await expectVisible(v, v.locator('#read-only-note'), 'the note that the role can look only');
    assert.equal(await v.locator('#edit-record, #record-actions, #delete-record').count(), 0, 'no edit, action or delete controls');
    await goto(v, '/console/leases', 'the leases list, as a viewer');
    assert.equal(await v.locator('#new-record').count(), 0, 'no New button');
    await shot(v, 'viewer-leases');
    const csrf = await csrfOf(v);
    const once = `forged-${RUN}`;
    const forged = [
      ['create_record', { csrf, collection: 'units', once, 'values[property_id]': ids.properties, 'values[number]': 'X1' }],
      ['update_record', { csrf, collection: 'leases', id: ids.leases, once: `${once}-u`, 'values[rent_due_day]': '9' }],
      ['act_on_record', { csrf, collection: 'leases', id: ids.leases, action: 'end', once: `${once}-a` }],
      ['delete_record', { csrf, collection: 'workorders', id: ids.workorders }],
    ];
    for (const [endpoint, fields] of forged) {
      const res = await postFromPage(v, endpoint, fields);
      assert.ok(!res.ok, `${endpoint} as a viewer must be refused: ${res.status} ${res.text}`);
      assert.match(res.text, /does not allow changing/, `${endpoint}: the refusal names the permission: ${res.text}`);
    }
    await vctx.close();
    // Nothing changed.
    await goto(page, `/console/leases/${ids.leases}`, 'the lease, as the owner');
    assert.equal(await status(page), 'active');
    await goto(page, '/console/units?filter[number]=X1', 'no forged unit');
    await expectVisible(page, page.locator('#empty-list'), 'no unit X1');
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the pages');
  });
});
