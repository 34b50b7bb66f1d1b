// Browser test of the REST API's reference UI: a person opens
// /api/v2/_swagger/ on a running node, authorizes with the API token, and
// runs "Try it out" on GET /account/addresses. Run by
// scripts/browser-test.sh, which starts the node and sets
// RELAYD_API_URL (http://127.0.0.1:<port>, without /api/v2) and
// RELAYD_API_TOKEN. Uses Debian's /usr/bin/chromium through playwright-core:
// no browser is downloaded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const base = process.env.RELAYD_API_URL;
const token = process.env.RELAYD_API_TOKEN;
const artifacts = join(dirname(fileURLToPath(import.meta.url)), 'artifacts');

test('Swagger UI authorizes with the token and runs GET /account/addresses on the node', { timeout: 120_000 }, async (t) => {
  assert.ok(base && token, 'RELAYD_API_URL and RELAYD_API_TOKEN must be set');

  // What the node answers, asked directly: the UI must show the same.
  const direct = await fetch(`${base}/api/v2/account/addresses`, { headers: { 'x-auth-token': token } });
  assert.equal(direct.status, 200);
  const want = await direct.json();
  assert.match(want.relayAddress, /^16Uiu2HA/);

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(20_000);
  const pageErrors = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  // Every call the page makes to the API, with the headers it sent.
  const apiCalls = [];
  page.on('request', (req) => {
    if (req.url().startsWith(`${base}/api/v2/account/`)) apiCalls.push({ url: req.url(), headers: req.headers() });
  });

  // The page and its document load without a token.
  const resp = await page.goto(`${base}/api/v2/_swagger/`);
  assert.equal(resp.status(), 200);
  await page.locator('.information-container .title').filter({ hasText: 'relayd REST API' }).waitFor();

  // Authorize with the x-auth-token scheme.
  await page.locator('.scheme-container .btn.authorize').click();
  const scheme = page.locator('.modal-ux .auth-container').filter({ hasText: 'x-auth-token' });
  await scheme.locator('input').fill(token);
  await scheme.locator('button.authorize').click(); // labelled "Apply credentials"
  await scheme.locator('h6').filter({ hasText: 'Authorized' }).waitFor();
  await scheme.locator('button.btn-done').click();
  await page.locator('.modal-ux').waitFor({ state: 'detached' });

  // Try it out on GET /account/addresses.
  const op = page.locator('#operations-Account-getAddresses');
  await op.locator('.opblock-summary').first().click();
  await op.locator('.try-out__btn').click();
  await op.locator('.execute').click();
  const live = op.locator('.live-responses-table .response');
  await live.first().waitFor();
  const status = (await live.first().locator('.response-col_status').innerText()).trim();
  const shown = await op.locator('.live-responses-table .response-col_description pre').first().innerText();

  await mkdir(artifacts, { recursive: true });
  await op.screenshot({ path: join(artifacts, 'swagger.png') }); // the operation, legible
  await page.screenshot({ path: join(artifacts, 'swagger-full.png'), fullPage: true });

  assert.equal(status, '200', `the UI shows status ${status}: ${shown}`);
  const got = JSON.parse(shown);
  assert.equal(got.relayAddress, want.relayAddress);
  assert.equal(got.nativeAddress, want.nativeAddress);
  assert.equal(apiCalls.length, 1, `calls to the API: ${JSON.stringify(apiCalls)}`);
  assert.equal(apiCalls[0].headers['x-auth-token'], token);
  assert.deepEqual(pageErrors, []);
});
