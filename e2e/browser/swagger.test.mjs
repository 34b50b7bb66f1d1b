// Browser test of the REST API's reference UI: a person opens
// /api/v2/_swagger/ on a running node, authorizes with the API token (with
// either security scheme), and runs "Try it out" on an address operation.
// Run by scripts/browser-test.sh, which starts the node and sets
// RELAYD_API_URL (http://127.0.0.1:<port>, without /api/v2) and
// RELAYD_API_TOKEN. Uses Debian's /usr/bin/chromium through playwright-core:
// no browser is downloaded. Screenshots go to artifacts/.
import { before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const base = process.env.RELAYD_API_URL;
const token = process.env.RELAYD_API_TOKEN;
const artifacts = join(dirname(fileURLToPath(import.meta.url)), 'artifacts');

let browser;
let want; // the node's addresses, asked directly

before(async () => {
  assert.ok(base && token, 'RELAYD_API_URL and RELAYD_API_TOKEN must be set');
  const direct = await fetch(`${base}/api/v2/account/addresses`, { headers: { 'x-auth-token': token } });
  assert.equal(direct.status, 200);
  want = await direct.json();
  assert.match(want.relayAddress, /^16Uiu2HA/);
  await mkdir(artifacts, { recursive: true });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

after(() => browser?.close());

// openUI loads the reference page (no token needed) in a fresh context and
// records the page's errors and its calls to the account operations.
async function openUI() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const seen = { errors: [], calls: [] };
  page.on('pageerror', (err) => seen.errors.push(err.message));
  page.on('request', (req) => {
    if (req.url().startsWith(`${base}/api/v2/account/`)) seen.calls.push({ url: req.url(), headers: req.headers() });
  });
  const resp = await page.goto(`${base}/api/v2/_swagger/`);
  assert.equal(resp.status(), 200);
  await page.locator('.information-container .title').filter({ hasText: 'relayd REST API' }).waitFor();
  return { context, page, seen };
}

// authorize fills one scheme of the Authorize dialog and closes it.
async function authorize(page, schemeName, fill) {
  await page.locator('.scheme-container .btn.authorize').click();
  const scheme = page.locator('.modal-ux .auth-container').filter({ has: page.locator('h4 code', { hasText: schemeName }) });
  await fill(scheme);
  await scheme.locator('button.authorize').click(); // labelled "Apply credentials"
  await scheme.locator('h6').filter({ hasText: 'Authorized' }).waitFor();
  await scheme.locator('button.btn-done').click();
  await page.locator('.modal-ux').waitFor({ state: 'detached' });
}

// tryItOut runs "Try it out" and "Execute" on an operation and returns the
// status and the response body the page shows.
async function tryItOut(page, opId, screenshot) {
  const op = page.locator(`#${opId}`);
  await op.locator('.opblock-summary').first().click();
  await op.locator('.try-out__btn').click();
  await op.locator('.execute').click();
  const live = op.locator('.live-responses-table .response').first();
  await live.waitFor();
  const status = (await live.locator('.response-col_status').innerText()).trim();
  const body = await live.locator('.response-col_description pre').first().innerText();
  await op.screenshot({ path: join(artifacts, `${screenshot}.png`) }); // the operation, legible
  await page.screenshot({ path: join(artifacts, `${screenshot}-full.png`), fullPage: true });
  return { status, body };
}

test('x-auth-token: Try it out on GET /account/addresses shows the node\'s addresses', { timeout: 60_000 }, async () => {
  const { context, page, seen } = await openUI();
  try {
    await authorize(page, 'apiToken', (scheme) => scheme.locator('input').fill(token));
    const { status, body } = await tryItOut(page, 'operations-Account-getAddresses', 'swagger');
    assert.equal(status, '200', `the UI shows status ${status}: ${body}`);
    const got = JSON.parse(body);
    assert.equal(got.relayAddress, want.relayAddress);
    assert.equal(got.relay, want.relayAddress);
    assert.equal(got.nativeAddress, want.nativeAddress);
    assert.equal(seen.calls.length, 1, `calls to the API: ${JSON.stringify(seen.calls)}`);
    assert.equal(seen.calls[0].headers['x-auth-token'], token);
    assert.deepEqual(seen.errors, []);
  } finally {
    await context.close();
  }
});

test('HTTP Basic: Try it out on GET /account/address with the token as user name', { timeout: 60_000 }, async () => {
  const { context, page, seen } = await openUI();
  try {
    await authorize(page, 'basicAuth', (scheme) => scheme.locator('input[name=username]').fill(token));
    const { status, body } = await tryItOut(page, 'operations-Account-getAddress', 'swagger-basic');
    assert.equal(status, '200', `the UI shows status ${status}: ${body}`);
    assert.deepEqual(JSON.parse(body), { nativeAddress: want.nativeAddress, relayAddress: want.relayAddress });
    assert.equal(seen.calls.length, 1, `calls to the API: ${JSON.stringify(seen.calls)}`);
    assert.equal(seen.calls[0].headers.authorization, `Basic ${Buffer.from(`${token}:`).toString('base64')}`);
    assert.deepEqual(seen.errors, []);
  } finally {
    await context.close();
  }
});

test('without authorizing, Try it out gets the 403 body', { timeout: 60_000 }, async () => {
  const { context, page } = await openUI();
  try {
    const { status, body } = await tryItOut(page, 'operations-Account-getAddresses', 'swagger-403');
    assert.equal(status, '403');
    assert.deepEqual(JSON.parse(body), { status: 403, challenge: 'Basic realm=relayd', message: 'You must authenticate to access relayd.' });
  } finally {
    await context.close();
  }
});
