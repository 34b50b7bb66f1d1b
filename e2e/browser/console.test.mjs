// Browser test of the web admin console against a real `relayd cluster`
// (4 nodes, a full mesh of channels, a 2 s closure period): log in (a wrong
// token first), see the greeting, run `address`, complete a command, send a
// 0-hop message to node 2 and see it in node 2's console, see a message full
// of terminal and HTML control sequences shown inertly, see a long message
// with reply blocks in the inbox pane and answer it, open a session to node 2
// in the sessions pane and close it (or, on a node without its session
// gateway, see the pane say it opens none), close and reopen a
// channel through the confirm dialog, redeem tickets, and see the whole
// channel graph (channels between the other nodes too), the charts of the node's history
// (hour and day), an alert raised and cleared through the settings pane (alertChannelBalance above
// every channel), the open form refusing a peer with a channel and a bad amount before any
// dialog, and "Finalize close" offered only once the closure period ended; at 390×844 a page
// opened late shows the past in its charts, nothing scrolls sideways and the channels are cards;
// at both sizes the graph is explored from the keyboard (Tab, arrows, Enter, Escape) and read as
// tables, no label covers a node or another label, and the aliases (add, refuse, remove, markup
// as text), withdraw (a bad address, a mistyped checksum and too much refused before the dialog, then mined) and send panes (the node's
// relayers, 0 hops, a relayer named; each reaching node 2) work;
// node 2 killed with SIGKILL and restarted by the cluster on its data still draws the history
// it sampled before; alerts are raised and cleared by what they watch: a channel drained by
// the node's own messages (autoFund, on again, clears it) and the chain provider shut off
// (the cluster's --chainDrill: SIGUSR1, then SIGUSR2), /readyz not ready meanwhile;
// axe-core checks the login page and the console at 1280×800 and 390×844 with no serious or
// critical violation. Every request the page makes must stay on
// the node's own ports, and the page must raise no error (a CSP violation
// included).
//
// Run by scripts/browser-test.sh, which starts the cluster and exports its
// env file (RELAY_API_TOKEN, RELAY_NODE_N_API_URL, _WS_URL, _PEER_ID). Uses
// Debian's /usr/bin/chromium through playwright-core. Screenshots go to
// artifacts/console-*.png.
import { before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const artifacts = join(dirname(fileURLToPath(import.meta.url)), 'artifacts');
const token = process.env.RELAY_API_TOKEN;

// node returns what the cluster's env file says about node i.
function node(i) {
  const p = `RELAY_NODE_${i}_`;
  const ws = process.env[p + 'WS_URL'];
  return {
    api: process.env[p + 'API_URL'],
    ws,
    peer: process.env[p + 'PEER_ID'],
    address: process.env[p + 'NATIVE_ADDRESS'],
    console: ws && ws.replace(/^ws:/, 'http:') + '/',
  };
}
const n1 = node(1);
const n2 = node(2);

let browser;
let axeSource;

before(async () => {
  assert.ok(token && n1.api && n1.ws && n1.peer && n2.peer, 'the cluster env (RELAY_API_TOKEN, RELAY_NODE_1_…) must be set');
  await mkdir(artifacts, { recursive: true });
  axeSource = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

after(() => browser?.close());

// rest calls a node's REST API directly, to set up and to check.
async function rest(n, method, path, body) {
  const init = { method, headers: { 'x-auth-token': token } };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const r = await fetch(`${n.api}/api/v2${path}`, init);
  const text = await r.text();
  assert.ok(r.ok, `${method} ${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

// until polls cond (async) every 200 ms until it returns a truthy value, at
// most timeout ms; it fails with what it was waiting for.
async function until(what, cond, timeout = 20_000) {
  const end = Date.now() + timeout;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > end) assert.fail(`timed out after ${timeout} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// open loads a node's console in a fresh context and records the page's
// errors, its dialogs (an alert would be an injected script), console
// errors (CSP violations among them) and any request off the node's ports.
async function open(n, name, viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const seen = { errors: [], dialogs: [], foreign: [], tokenInURL: [] };
  page.on('pageerror', (err) => seen.errors.push(`${name}: ${err.message}`));
  page.on('console', (m) => { if (m.type() === 'error') seen.errors.push(`${name} console: ${m.text()}`); });
  page.on('dialog', (d) => { seen.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  const own = [new URL(n.console).host, new URL(n.api).host];
  page.on('request', (req) => {
    const u = new URL(req.url());
    if (!own.includes(u.host)) seen.foreign.push(req.url());
    // Only the WebSocket's own request (not an HTTP request) may carry it.
    const forms = [token, encodeURIComponent(token), new URLSearchParams({ t: token }).toString().slice(2)];
    if (forms.some((f) => req.url().includes(f))) seen.tokenInURL.push(req.url());
  });
  const resp = await page.goto(n.console);
  assert.equal(resp.status(), 200);
  assert.match(resp.headers()['content-security-policy'], /default-src 'none'/);
  await page.locator('#login-form').waitFor();
  return { context, page, seen };
}

// login fills the form; the REST port is filled in only when the node did
// not say it (a node that passes its API port to the admin server fills it).
async function login(page, n, tok) {
  await page.locator('#login-token').fill(tok);
  if (!(await page.locator('#login-api-port').inputValue())) {
    await page.locator('#login-api-port').fill(new URL(n.api).port);
  }
  await page.locator('#login-submit').click();
}

// run types a command line and waits for the reply's last line to show.
async function run(page, line) {
  const replies = page.locator('#stream .row.reply');
  const before = await replies.count();
  await page.locator('#cmd').fill(line);
  await page.locator('#cmd').press('Enter');
  await page.waitForFunction((n) => document.querySelectorAll('#stream .row.reply').length >= n + 2, before);
}

// confirm answers the confirm dialog with its OK button (or Cancel).
async function confirm(page, ok = true) {
  const d = page.locator('dialog#confirm');
  await d.waitFor({ state: 'visible' });
  await d.locator(ok ? '#confirm-ok' : '#confirm-cancel').click();
  await d.waitFor({ state: 'hidden' });
}

// axe runs axe-core on the page (evaluated through the DevTools protocol,
// which the page's CSP does not govern) and returns the serious and
// critical violations.
async function axe(page) {
  await page.evaluate(axeSource);
  const res = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return res.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((x) => x.target.join(' ')).join(', ')}`);
}

function clean(seen) {
  assert.deepEqual(seen.errors, [], 'page errors');
  assert.deepEqual(seen.dialogs, [], 'dialogs (an alert would be injected script)');
  assert.deepEqual(seen.foreign, [], 'requests off the node');
  assert.deepEqual(seen.tokenInURL, [], 'the token in an HTTP request\'s URL');
}

test('a wrong token shows the node\'s refusal and stays out of the address', { timeout: 60_000 }, async () => {
  const { context, page, seen } = await open(n1, 'n1');
  try {
    assert.deepEqual(await axe(page), [], 'axe on the login page');
    await login(page, n1, 'not-the-token');
    await page.locator('#login-error').filter({ hasText: 'authentication failed' }).waitFor();
    assert.match(await page.locator('#login-error').innerText(), /The node refused the token: authentication failed/);
    assert.equal(await page.locator('#app-view').isVisible(), false);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('relayd.console.token')), null);
    assert.ok(!page.url().includes('not-the-token'));
    await page.screenshot({ path: join(artifacts, 'console-refused.png') });
    clean(seen);
  } finally {
    await context.close();
  }
});

// setSetting changes a setting through the settings pane: the value, Save, the dialog.
async function setSetting(page, name, value) {
  const row = page.locator(`#settings tbody tr[data-setting="${name}"]`);
  await row.locator('input, select').first().fill(value);
  await row.locator('button', { hasText: 'Save' }).click();
  await confirm(page);
  await page.locator('#status').filter({ hasText: new RegExp(`${name} is now ${value}[ .]`) }).waitFor();
}

test('the console against two nodes: greeting, commands, messages, channels, tickets, graph', { timeout: 300_000 }, async () => {
  const a = await open(n1, 'n1');
  const b = await open(n2, 'n2');
  const page = a.page;
  try {
    await login(page, n1, token);
    await login(b.page, n2, token);

    // The greeting, the last frame of the replayed history.
    await page.locator('#stream .row').filter({ hasText: 'ws client connected [ authentication ENABLED ]' }).first().waitFor();
    assert.ok(await page.locator('#stream .row.replay').count() > 0, 'the replayed history is marked');
    assert.equal(new URL(page.url()).search, '', 'no token in the address');
    assert.ok(!page.url().includes(token));
    assert.equal(await page.evaluate(() => sessionStorage.getItem('relayd.console.token')), token);
    await page.locator('#whoami').filter({ hasText: n1.peer }).waitFor();
    await page.locator('#node-info dd').filter({ hasText: /^free routes$/ }).waitFor(); // the cluster's network routes freely

    // address, typed with completion: "addr" + Tab gives the common
    // prefix of address and addresses.
    await page.locator('#cmd').fill('addr');
    await page.locator('#cmd').press('Tab');
    assert.equal(await page.locator('#cmd').inputValue(), 'address');
    await page.locator('#cmd-hint').filter({ hasText: 'addresses' }).waitFor();
    await page.locator('#cmd').press('Enter');
    await page.locator('#stream .row.reply').filter({ hasText: n1.peer }).first().waitFor();
    await page.locator('#cmd').fill('redeemT');
    await page.locator('#cmd').press('Tab');
    assert.equal(await page.locator('#cmd').inputValue(), 'redeemTickets ');
    await page.locator('#cmd').fill('');
    await page.screenshot({ path: join(artifacts, 'console-address.png') });

    // A 0-hop message from node 1's console reaches node 2's console.
    const hello = `hello from the console ${Date.now()}`;
    await run(page, `send ,${n2.peer} ${hello}`);
    await b.page.locator('#stream .row.message').filter({ hasText: hello }).waitFor();
    await b.page.screenshot({ path: join(artifacts, 'console-node2-message.png') });

    // A message carrying terminal and HTML control sequences, sent paid
    // over the REST API of node 2, is shown as text with the escape visible.
    const nasty = `\x1b[31m<img src=x onerror=alert(1)>\u202e${Date.now()}`;
    await rest(n2, 'POST', '/messages', { body: nasty, recipient: n1.peer });
    const shown = '\u241b[31m<img src=x onerror=alert(1)>\u27e8U+202E\u27e9' + nasty.slice(-13);
    const row = page.locator('#stream .row.message').filter({ hasText: shown });
    await row.waitFor();
    assert.ok(await row.isVisible());
    assert.equal(await page.locator('img').count(), 0, 'no img element');
    assert.equal(await row.locator('.ctl').first().innerText(), '\u241b');

    // The inbox pane: a long message with reply blocks, sent over node 2's REST API, shows in
    // node 1's inbox with its text inert; the answer typed in its reply box reaches node 2's
    // inbox as a reply to it; Remove takes it out. A node without its courier says it keeps no
    // inbox and asks nothing.
    if ((await rest(n1, 'GET', '/node/info')).inbox) {
      const stamp = String(Date.now());
      const long = `${'\x1b[31m<i>long</i> '.repeat(40)}${stamp}`;
      const id = await rest(n2, 'POST', '/messages', { body: long, recipient: n1.peer, replies: 2 });
      assert.match(id, /^0x[0-9a-f]{32}$/);
      const row = page.locator('#inbox tbody tr').filter({ hasText: '\u241b[31m<i>long</i>' }).filter({ hasText: stamp });
      await row.waitFor({ timeout: 60_000 });
      assert.equal(await page.locator('i').count(), 0, 'no i element');
      assert.match(await row.innerText(), /2 replies left/);
      await page.locator('section[aria-labelledby="inbox-title"]').screenshot({ path: join(artifacts, 'console-inbox.png') });
      await row.locator('input').fill('thanks from the console');
      await row.locator('button', { hasText: 'Reply' }).click();
      await page.locator('#status').filter({ hasText: /Answer 0x[0-9a-f]{32} sent/ }).waitFor();
      await until('the answer to reach node 2', async () => (await rest(n2, 'GET', '/messages?limit=1000'))
        .some((m) => m.reply && m.inReplyTo === id && m.body === 'thanks from the console'), 60_000);
      await until('node 2\'s message to be delivered', async () => (await rest(n2, 'GET', `/messages/${id}`)).state === 'delivered', 60_000);
      await row.locator('button', { hasText: 'Remove' }).click();
      await confirm(page);
      await row.waitFor({ state: 'detached' });
    } else {
      await page.locator('#inbox-note').filter({ hasText: 'keeps no inbox' }).waitFor();
    }

    // The sessions pane: a session to node 2 opened with the form (through the confirm dialog)
    // listens on a loopback port and shows in the table; Close ends it. A node without its
    // session gateway says it opens none and asks nothing.
    if ((await rest(n1, 'GET', '/node/info')).sessions) {
      await page.locator('#session-dest').fill(n2.peer);
      await page.locator('#session-protocol').selectOption('tcp');
      await page.locator('#session-target').fill('service:web');
      await page.locator('#session-form button[type=submit]').click();
      await confirm(page);
      await page.locator('#status').filter({ hasText: /Session [0-9a-f]{16} open/ }).waitFor({ timeout: 30_000 });
      const [opened] = await until('the session to be listed', async () => (await rest(n1, 'GET', '/sessions'))
        .filter((x) => x.destination === n2.peer && x.service === 'web'));
      assert.match(opened.listen, /^127\.0\.0\.1:[1-9][0-9]*$/);
      const srow = page.locator(`#sessions tbody tr[data-id="${opened.id}"]`);
      await srow.filter({ hasText: 'service:web' }).waitFor();
      assert.match(await srow.innerText(), /0 B\/s \(0 B\)/);
      await page.locator('section[aria-labelledby="sessions-title"]').screenshot({ path: join(artifacts, 'console-sessions.png') });
      await srow.locator('button', { hasText: 'Close' }).click();
      await confirm(page);
      await srow.waitFor({ state: 'detached' });
      assert.ok(!(await rest(n1, 'GET', '/sessions')).some((x) => x.id === opened.id));
    } else {
      await page.locator('#sessions-note').filter({ hasText: 'opens no sessions' }).waitFor();
      assert.ok(await page.locator('#session-form').isHidden());
    }

    // Close the outgoing channel to node 2: Cancel leaves it, Confirm
    // initiates the closure, and after the closure period Finalize closes it.
    const out2 = page.locator(`#channels tbody tr[data-direction="outgoing"][data-peer="${n2.peer}"]`);
    await out2.filter({ has: page.locator('button') }).waitFor();
    await out2.locator('button').click();
    await confirm(page, false);
    assert.equal(await out2.getAttribute('data-status'), 'Open');
    // The open form refuses a peer that has a channel, before any dialog.
    await page.locator('#open-peer').fill(n2.peer);
    await page.locator('#open-amount').fill('1');
    await page.locator('#open-form button[type=submit]').click();
    await page.locator('#open-error').filter({ hasText: 'open channel to' }).waitFor();
    assert.equal(await page.locator('dialog#confirm').isVisible(), false, 'no dialog for a refused form');
    assert.equal(await page.locator('#open-peer').getAttribute('aria-invalid'), 'true');
    await out2.locator('button').click();
    await page.screenshot({ path: join(artifacts, 'console-confirm.png') });
    assert.deepEqual(await axe(page), [], 'axe with the confirm dialog open');
    await confirm(page);
    await page.locator(`#channels tbody tr[data-direction="outgoing"][data-peer="${n2.peer}"][data-status="PendingToClose"]`).waitFor();
    const closing = await until('the channel to node 2 to be closing', async () => {
      const ch = await rest(n1, 'GET', '/channels');
      return ch.outgoing.find((c) => c.peerId === n2.peer && c.status === 'PendingToClose');
    });
    // Before the closure time, the row offers no Finalize (the contract would refuse it).
    const closingRow = page.locator(`#channels tbody tr[data-direction="outgoing"][data-peer="${n2.peer}"][data-status="PendingToClose"]`);
    await closingRow.waitFor();
    if (Date.now() < Date.parse(closing.closureTime) - 500) {
      assert.equal(await closingRow.locator('button').count(), 0, 'no Finalize before the closure time');
      assert.match(await closingRow.innerText(), /waiting for the closure period/);
    }
    // The dev chain's clock runs ahead of the wall clock by about a second per block sealed in a
    // burst (the cluster's setup seals some 30): the closure time can be that far ahead.
    await until('the closure period to pass', async () => Date.now() > Date.parse(closing.closureTime) + 1000, 90_000);
    await out2.locator('button', { hasText: 'Finalize close' }).click();
    await confirm(page);
    await until('the channel to node 2 to be closed', async () => {
      const ch = await rest(n1, 'GET', '/channels');
      return !ch.outgoing.some((c) => c.peerId === n2.peer && c.status !== 'Closed');
    });

    // Open it again with the form, through the confirm dialog, once the console shows it closed;
    // an amount that is no amount is refused first.
    await page.waitForFunction((peer) => ![...document.querySelectorAll('#channels tbody tr[data-direction="outgoing"]')]
      .some((tr) => tr.dataset.peer === peer && tr.dataset.status !== 'Closed'), n2.peer);
    await page.locator('#open-peer').fill(n2.peer);
    await page.locator('#open-amount').fill('0');
    await page.locator('#open-form button[type=submit]').click();
    await page.locator('#open-error').filter({ hasText: 'more than 0' }).waitFor();
    assert.equal(await page.locator('dialog#confirm').isVisible(), false, 'no dialog for a zero amount');
    await page.locator('#open-amount').fill('2.5');
    await page.locator('#open-form button[type=submit]').click();
    await confirm(page);
    await page.locator('#status').filter({ hasText: 'Successfully opened channel' }).waitFor({ timeout: 30_000 });
    await page.locator(`#channels tbody tr[data-direction="outgoing"][data-peer="${n2.peer}"][data-status="Open"]`).filter({ hasText: '2.5' }).waitFor();

    // Redeem: node 1 relays the cluster's cover traffic, so it holds tickets.
    await until('node 1 to hold an unredeemed ticket', async () => (await rest(n1, 'GET', '/tickets/statistics')).unredeemed > 0, 60_000);
    await page.locator('#redeem').click();
    await confirm(page);
    await page.locator('#status').filter({ hasText: 'Redeemed' }).waitFor({ timeout: 60_000 });
    assert.ok((await rest(n1, 'GET', '/tickets/statistics')).redeemed > 0);

    // The graph: this node and its three peers, and the whole mesh the node
    // indexed (GET /node/graph): its own 6 channels and the 6 between the
    // other three nodes, drawn as edges from one node to another.
    await page.waitForFunction(() => Number(document.getElementById('graph').dataset.edges) >= 12);
    assert.equal(await page.locator('#graph').getAttribute('data-from'), 'graph');
    assert.equal(await page.locator('#graph').getAttribute('data-nodes'), '4');
    assert.equal(await page.locator('#graph .node.self').count(), 1);
    assert.equal(await page.locator('#graph .node.peer').count(), 3);
    assert.equal(await page.locator('#graph path.edge.out').count(), 3);
    assert.equal(await page.locator('#graph path.edge.in').count(), 3);
    assert.equal(await page.locator('#graph').getAttribute('data-remote'), '6');
    const remote = await page.locator('#graph path.edge.remote').evaluateAll((ps) => ps.map((p) => [p.dataset.source, p.dataset.destination]));
    assert.equal(remote.length, 6);
    const drawn = new Set(await page.locator('#graph .node').evaluateAll((gs) => gs.map((g) => g.dataset.id)));
    const pairs = new Set();
    for (const [src, dst] of remote) {
      assert.ok(src !== n1.peer && dst !== n1.peer && src !== dst, `a channel between other nodes: ${src} → ${dst}`);
      assert.ok(drawn.has(src) && drawn.has(dst), `both ends of ${src} → ${dst} are drawn`);
      pairs.add(`${src} ${dst}`);
    }
    assert.equal(pairs.size, 6, 'every ordered pair of the other three nodes once');
    assert.match(await page.locator('#graph-desc').textContent(), /3 other nodes and 12 channels \(\d+ open, 6 between other nodes\)/);
    // The same channels as the REST answer the console drew from.
    const graph = await rest(n1, 'GET', '/node/graph');
    const others = graph.channels.filter((c) => c.source !== n1.peer && c.destination !== n1.peer).map((c) => `${c.source} ${c.destination}`);
    assert.deepEqual([...pairs].sort(), others.sort());
    assert.equal(graph.nodes[0].peerId, n1.peer);
    assert.equal(graph.nodes[0].self, true);
    await page.locator('.graph-pane').screenshot({ path: join(artifacts, 'console-graph.png') });
    await page.locator('.chart-pane').screenshot({ path: join(artifacts, 'console-charts.png') });

    // The history charts: the node's own series (GET /node/history), six charts, balances drawn,
    // per-peer traffic (node 1 relays the cluster's cover); the Day button switches the window.
    const charts = page.locator('#charts');
    await until('the history charts to be drawn', async () => (await charts.getAttribute('data-state')) === 'drawn'
      && Number(await charts.getAttribute('data-points')) > 0);
    assert.equal(await page.locator('#charts figure').count(), 6);
    assert.ok(await page.locator('#chart-token-balance path.series').count() >= 1, 'the token balance is drawn');
    await until('per-peer traffic in the history', async () => Number(await page.locator('#chart-traffic').getAttribute('data-lines')) >= 1, 60_000);
    const hist = await rest(n1, 'GET', '/node/history?resolution=hour');
    assert.ok(hist.peers.length >= 1 && hist.times.length >= 1);
    await page.locator('button.res[data-resolution="day"]').click();
    assert.equal(await page.locator('button.res[data-resolution="day"]').getAttribute('aria-pressed'), 'true');
    await page.locator('#history-note').filter({ hasText: 'the last day, one point every 5 min' }).waitFor();
    await page.locator('.chart-pane').screenshot({ path: join(artifacts, 'console-history-day.png') });
    await page.locator('button.res[data-resolution="hour"]').click();
    await page.locator('#history-note').filter({ hasText: 'the last hour' }).waitFor();

    // The settings pane lists every setting with what it does; a value out of range is refused
    // inline (no dialog); a threshold above every channel raises channelDepleted in the alerts
    // panel, and one below every channel clears it.
    const settings = await rest(n1, 'GET', '/settings');
    await until('the settings pane', async () => (await page.locator('#settings tbody tr').count()) === Object.keys(settings).length);
    assert.match(await page.locator('#setting-alertIndexerLag-doc').innerText(), /indexerBehind.*\(1 to 1000000\)/);
    await page.locator('#setting-alertHoldSeconds').fill('99999');
    await page.locator('tr[data-setting="alertHoldSeconds"] button').click();
    await page.locator('#setting-alertHoldSeconds-error').filter({ hasText: 'from 0 to 3600' }).waitFor();
    assert.equal(await page.locator('dialog#confirm').isVisible(), false, 'no dialog for a value out of range');
    await setSetting(page, 'alertHoldSeconds', '0');
    assert.equal((await rest(n1, 'GET', '/settings')).alertHoldSeconds, 0);
    await setSetting(page, 'alertChannelBalance', '1000000');
    assert.equal((await rest(n1, 'GET', '/settings')).alertChannelBalance, '1000000000000000000000000');
    const depleted = page.locator('#alerts-list li.alert[data-id="channelDepleted"]');
    await depleted.waitFor({ timeout: 60_000 });
    assert.match(await depleted.locator('.severity').innerText(), /warning/i);
    assert.match(await depleted.locator('.alert-detail').innerText(), /open outgoing channels can pay less than 1000000 tokens/);
    assert.ok((await rest(n1, 'GET', '/node/alerts')).alerts.some((x) => x.id === 'channelDepleted'));
    await page.locator('#alerts-pane').screenshot({ path: join(artifacts, 'console-alerts.png') });
    await page.locator('section[aria-labelledby="settings-title"]').screenshot({ path: join(artifacts, 'console-settings.png') });
    // A threshold far below every channel (auto-funded) clears it; then the settings as they were.
    await setSetting(page, 'alertChannelBalance', '0.000001');
    await depleted.waitFor({ state: 'detached', timeout: 60_000 });
    await rest(n1, 'PUT', '/settings', { alertHoldSeconds: settings.alertHoldSeconds, alertChannelBalance: settings.alertChannelBalance });

    // Pause holds frames back; Resume shows them.
    await page.locator('#stream-pause').click();
    await run(b.page, `send ,${n1.peer} while paused`).catch(() => {});
    await page.locator('#stream-paused').filter({ hasText: /[1-9]\d* new frame/ }).waitFor();
    assert.equal(await page.locator('#stream .row.message').filter({ hasText: 'while paused' }).count(), 0);
    await page.locator('#stream-pause').click();
    await page.locator('#stream .row.message').filter({ hasText: 'while paused' }).waitFor();

    // The filter shows only matching rows.
    await page.locator('#stream-filter').fill('while paused');
    const visibleRows = await page.locator('#stream .row:visible').allInnerTexts();
    assert.ok(visibleRows.length > 0 && visibleRows.every((t) => t.includes('while paused')), visibleRows.join('\n'));
    await page.locator('#stream-filter').fill('');

    await page.screenshot({ path: join(artifacts, 'console.png'), fullPage: true });
    assert.deepEqual(await axe(page), [], 'axe on the console');
    assert.equal(await page.locator('img').count(), 0, 'no img element');
    clean(a.seen);
    clean(b.seen);
  } finally {
    await a.context.close();
    await b.context.close();
  }
});

test('at 390×844: the past in the charts of a page opened now, no sideways scrolling, channels as cards, axe', { timeout: 90_000 }, async () => {
  const { context, page, seen } = await open(n1, 'n1 at 390', { width: 390, height: 844 });
  try {
    const opened = Date.now();
    await login(page, n1, token);
    await page.locator('#channels tbody tr[data-peer]').first().waitFor();
    await until('the history charts to be drawn', async () => (await page.locator('#charts').getAttribute('data-state')) === 'drawn');
    const first = await page.locator('#charts').getAttribute('data-first');
    assert.ok(Date.parse(first) < opened - 30_000, `the charts start before the page opened (${first})`);
    await until('the settings pane', async () => (await page.locator('#settings tbody tr').count()) > 10);
    const width = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
    assert.ok(width.scroll <= width.inner, `no horizontal scrolling: ${JSON.stringify(width)}`);
    const row = page.locator('#channels tbody tr[data-peer]').first();
    assert.equal(await row.evaluate((tr) => getComputedStyle(tr).display), 'block', 'a channel is a card');
    // A PeerId wraps as a block of text, not a column a few characters wide.
    const id = await row.locator('.peer-id').boundingBox();
    assert.ok(id.width > 150, `the peer id is ${id.width} px wide`);
    await page.screenshot({ path: join(artifacts, 'console-390.png'), fullPage: true });
    await page.locator('section[aria-labelledby="channels-title"]').screenshot({ path: join(artifacts, 'console-390-channels.png') });
    assert.deepEqual(await axe(page), [], 'axe at 390×844');
    await row.locator('button').first().click();
    assert.deepEqual(await axe(page), [], 'axe at 390×844 with the dialog open');
    await confirm(page, false);
    clean(seen);
  } finally {
    await context.close();
  }
});

// labelsClear reports the graph's labels that cover a node or another label (their boxes in the
// drawing's coordinates; a node's own name may touch its own circle's box).
async function labelsClear(page) {
  return page.evaluate(() => {
    const box = (e) => { const b = e.getBBox(); return { x0: b.x, y0: b.y, x1: b.x + b.width, y1: b.y + b.height }; };
    const hit = (a, b) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
    const nodes = [...document.querySelectorAll('#graph g.node')].map((g) => ({ id: g.dataset.id, circle: box(g.querySelector('circle')), label: box(g.querySelector('text')) }));
    const edges = [...document.querySelectorAll('#graph .edge-label')].map((t) => ({ text: t.textContent, b: box(t) }));
    const bad = [];
    const labels = [...nodes.map((n) => ({ name: n.id, b: n.label, own: n.id })), ...edges.map((e) => ({ name: `edge ${e.text}`, b: e.b, own: '' }))];
    labels.forEach((l, i) => {
      labels.forEach((o, j) => { if (j > i && hit(l.b, o.b)) bad.push(`${l.name} covers ${o.name}`); });
      for (const n of nodes) if (n.id !== l.own && hit(l.b, n.circle)) bad.push(`${l.name} covers node ${n.id}`);
    });
    return { bad, names: nodes.length, edgeLabels: edges.length };
  });
}

// The graph from the keyboard and as tables, and the aliases, withdraw and send panes, at both
// sizes; axe with the graph's details and tables open.
for (const [size, viewport] of [['1280×800', { width: 1280, height: 800 }], ['390×844', { width: 390, height: 844 }]]) {
  const tag = viewport.width;
  test(`at ${size}: the graph from the keyboard and as tables, aliases, withdraw, send`, { timeout: 240_000 }, async () => {
    const n3 = node(3);
    const { context, page, seen } = await open(n1, `n1 panes at ${size}`, viewport);
    try {
      await login(page, n1, token);
      await page.waitForFunction(() => Number(document.getElementById('graph').dataset.edges) >= 12);

      // The graph: Tab from the command line's button reaches this node; the arrows move to the
      // next node; Enter shows its details and highlights its 6 channels; Escape hides them.
      await page.locator('#cmd-form button[type=submit]').focus();
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement.dataset?.id), n1.peer, 'Tab reaches this node in the graph');
      await page.keyboard.press('ArrowRight');
      const next = await page.evaluate(() => document.activeElement.dataset?.id);
      assert.ok(next && next !== n1.peer, 'ArrowRight moves to another node');
      assert.equal(await page.locator('#graph g.node[tabindex="0"]').count(), 1, 'one Tab stop');
      await page.keyboard.press('Enter');
      const details = page.locator('#graph-details');
      await details.filter({ hasText: next }).waitFor();
      assert.equal(await details.locator('.graph-channels li').count(), 6, 'a peer of the mesh has 6 channels');
      assert.equal(await page.locator('#graph path.edge.hl').count(), 6);
      assert.equal(await page.locator(`#graph g.node[data-id="${next}"]`).getAttribute('aria-pressed'), 'true');
      // A redraw (every 5 s) keeps the focus and the details.
      const draws = Number(await page.locator('#graph').getAttribute('data-draws'));
      await page.waitForFunction((n) => Number(document.getElementById('graph').dataset.draws) > n, draws);
      assert.equal(await page.evaluate(() => document.activeElement.dataset?.id), next, 'the focus stays across a redraw');
      assert.ok(await details.isVisible());
      await page.screenshot({ path: join(artifacts, `console-${tag}-graph-keyboard.png`), fullPage: false });
      await page.locator('.graph-pane').screenshot({ path: join(artifacts, `console-${tag}-graph.png`) });
      // No label covers a node or another label.
      const labels = await labelsClear(page);
      assert.deepEqual(labels.bad, [], 'labels over names');
      assert.equal(labels.names, 4);
      // The same graph as tables.
      await page.locator('.graph-tables summary').click();
      await until('the graph\'s tables', async () => (await page.locator('#graph-nodes tbody tr').count()) === 4
        && (await page.locator('#graph-channels tbody tr').count()) >= 12);
      assert.match(await page.locator(`#graph-nodes tbody tr[data-id="${n1.peer}"]`).innerText(), /this node/);
      assert.deepEqual(await axe(page), [], `axe at ${size} with the graph's details and tables`);
      await page.locator('.graph-pane').screenshot({ path: join(artifacts, `console-${tag}-graph-tables.png`) });
      await page.keyboard.press('Escape');
      await page.locator(`#graph g.node[data-id="${next}"]`).focus();
      await page.keyboard.press('Escape');
      await details.waitFor({ state: 'hidden' });

      // Aliases: a bad alias is refused under the form, no dialog; a good one is listed and
      // stored; one set by REST with markup shows as text; Remove (after the dialog) removes it.
      const alias = `c${tag}-${Date.now() % 100000}`;
      await page.locator('#alias-name').fill('me');
      await page.locator('#alias-peer').fill(n2.peer);
      await page.locator('#alias-form button[type=submit]').click();
      await page.locator('#alias-error').filter({ hasText: 'this node' }).waitFor();
      assert.equal(await page.locator('dialog#confirm').isVisible(), false);
      await page.locator('#alias-name').fill(alias);
      await page.locator('#alias-form button[type=submit]').click();
      const arow = page.locator(`#aliases tbody tr[data-alias="${alias}"]`);
      await arow.filter({ hasText: n2.peer }).waitFor();
      assert.equal((await rest(n1, 'GET', '/aliases'))[alias], n2.peer);
      const markup = `<b>bold${tag}</b>`;
      await rest(n1, 'POST', '/aliases', { alias: markup, peerId: n3.peer });
      await page.locator('#aliases tbody tr').filter({ hasText: markup }).waitFor({ timeout: 30_000 });
      assert.equal(await page.locator('#aliases b').count(), 0, 'no b element');
      await page.locator('section[aria-labelledby="aliases-title"]').screenshot({ path: join(artifacts, `console-${tag}-aliases.png`) });
      await arow.locator('button', { hasText: 'Remove' }).click();
      await confirm(page);
      await arow.waitFor({ state: 'detached' });
      assert.equal((await rest(n1, 'GET', '/aliases'))[alias], undefined);
      await rest(n1, 'DELETE', `/aliases/${encodeURIComponent(markup)}`);

      // Withdraw: a bad address and an amount above the balance are refused before any dialog;
      // a good one goes out after the dialog and names its transaction.
      const to = (await rest(n2, 'GET', '/account/addresses')).nativeAddress;
      const currency = tag === 390 ? 'native' : 'token';
      await page.locator('#withdraw-currency').selectOption(currency);
      await page.locator('#withdraw-amount').fill('0.01');
      await page.locator('#withdraw-to').fill('0x12');
      await page.locator('#withdraw-form button[type=submit]').click();
      await page.locator('#withdraw-error').filter({ hasText: '40 hexadecimal digits' }).waitFor();
      // One letter of node 2's EIP-55 address in the wrong case: a mistyped address, refused
      // before any dialog.
      const at = [...to].findIndex((c, i) => i > 1 && /[a-fA-F]/.test(c));
      const mistyped = to.slice(0, at) + (to[at] === to[at].toLowerCase() ? to[at].toUpperCase() : to[at].toLowerCase()) + to.slice(at + 1);
      await page.locator('#withdraw-to').fill(mistyped);
      await page.locator('#withdraw-form button[type=submit]').click();
      await page.locator('#withdraw-error').filter({ hasText: 'EIP-55 checksum' }).waitFor();
      assert.equal(await page.locator('dialog#confirm').isVisible(), false, 'no dialog for a mistyped address');
      await page.locator('#withdraw-amount').fill('100000000');
      await page.locator('#withdraw-to').fill(to);
      await page.locator('#withdraw-form button[type=submit]').click();
      await page.locator('#withdraw-error').filter({ hasText: 'balance' }).waitFor();
      assert.equal(await page.locator('dialog#confirm').isVisible(), false, 'no dialog for a refused withdrawal');
      assert.equal(await page.locator('#withdraw-amount').getAttribute('aria-invalid'), 'true');
      await page.locator('#withdraw-amount').fill('0.01');
      await page.locator('#withdraw-form button[type=submit]').click();
      await confirm(page);
      await page.locator('#withdraw-note').filter({ hasText: /transaction 0x[0-9a-f]{64}/ }).waitFor({ timeout: 60_000 });
      await page.locator('section[aria-labelledby="withdraw-title"]').screenshot({ path: join(artifacts, `console-${tag}-withdraw.png`) });

      // Send: to this node is refused; over the node's relayers (REST), directly and through a
      // relayer named (node 3), each message reaches node 2.
      const inbox = (await rest(n2, 'GET', '/node/info')).inbox;
      const received = async (text) => !inbox || (await rest(n2, 'GET', '/messages?limit=1000')).some((m) => m.body.endsWith(text));
      await page.locator('#send-to').fill('me');
      await page.locator('#send-body').fill('x');
      await page.locator('#send-form button[type=submit]').click();
      await page.locator('#send-error').filter({ hasText: 'itself' }).waitFor();
      for (const [path, extra] of [['auto', ''], ['direct', ''], ['named', n3.peer]]) {
        const text = `console ${path} ${tag} ${Date.now()}`;
        await page.locator(`#send-path input[value="${path}"]`).check();
        if (extra) await page.locator('#send-relayers').fill(extra);
        await page.locator('#send-to').fill(n2.peer);
        await page.locator('#send-body').fill(text);
        await page.locator('#send-form button[type=submit]').click();
        await page.locator('#send-note').filter({ hasText: path === 'auto' ? /Sent to|Accepted as message/ : /Message sent to/ }).waitFor({ timeout: 60_000 });
        assert.equal(await page.locator('#send-error').innerText(), '');
        await until(`the ${path} message to reach node 2`, () => received(text), 60_000);
      }
      // Reply blocks need the path the node picks: refused before anything goes out.
      await page.locator('#send-path input[value="direct"]').check();
      assert.ok(await page.locator('#send-replies').isDisabled(), 'reply blocks are off for a path of one\'s own');
      await page.locator('section[aria-labelledby="send-title"]').screenshot({ path: join(artifacts, `console-${tag}-send.png`) });

      await page.screenshot({ path: join(artifacts, `console-${tag}-panes.png`), fullPage: true });
      const width = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth, inner: window.innerWidth,
        wide: [...document.querySelectorAll('#app-view *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
          .slice(0, 5).map((e) => `${e.tagName.toLowerCase()}#${e.id}.${[...e.classList].join('.')}`),
      }));
      assert.ok(width.scroll <= width.inner, `no horizontal scrolling: ${JSON.stringify(width)}`);
      assert.deepEqual(await axe(page), [], `axe at ${size} with the new panes`);
      clean(seen);
    } finally {
      await context.close();
    }
  });
}

// The last tests change the cluster for good: they run after every other.
//
// History that survives a restart: node 2 is killed (SIGKILL) and the cluster restarts it on its
// data (--restartNodes); its console, opened again, draws the points it sampled before.
test('history survives a kill -9 of the node: the console draws the points sampled before', { timeout: 180_000 }, async () => {
  const before = await rest(n2, 'GET', '/node/history?resolution=hour');
  assert.ok(before.times.length >= 2, `node 2 sampled its history (${before.times.length} points)`);
  const port = new URL(n2.api).port;
  const pid = Number(execFileSync('pgrep', ['-f', '--', `--apiPort ${port}( |$)`], { encoding: 'utf8' }).trim().split('\n')[0]);
  assert.ok(pid > 1, 'node 2\'s process');
  const killed = Date.now();
  process.kill(pid, 'SIGKILL');
  await until('node 2 to be down', async () => !(await fetch(`${n2.api}/api/v2/node/version`, { headers: { 'x-auth-token': token } }).then((r) => r.ok, () => false)));
  await until('node 2 to serve again on its data', async () => fetch(`${n2.api}/api/v2/node/version`, { headers: { 'x-auth-token': token } })
    .then((r) => r.ok, () => false), 90_000);
  const after = await rest(n2, 'GET', '/node/history?resolution=hour');
  assert.equal(after.times[0], before.times[0], 'the first point is still there');
  assert.ok(after.times.length >= before.times.length, `${after.times.length} points after, ${before.times.length} before`);

  const { context, page, seen } = await open(n2, 'n2 restarted');
  try {
    await login(page, n2, token);
    const charts = page.locator('#charts');
    await until('the history charts to be drawn', async () => (await charts.getAttribute('data-state')) === 'drawn');
    const first = Date.parse(await charts.getAttribute('data-first'));
    assert.ok(first < killed - 30_000, `the charts start before the kill (${new Date(first).toISOString()})`);
    assert.ok(Number(await charts.getAttribute('data-points')) >= before.times.length, 'every point sampled before the kill is drawn');
    assert.ok(await page.locator('#chart-token-balance path.series').count() >= 1, 'the token balance is drawn');
    await page.locator('.chart-pane').screenshot({ path: join(artifacts, 'console-history-after-restart.png') });
    clean(seen);
  } finally {
    await context.close();
  }
});

// setChoice changes a true/false or choice setting through the settings pane.
async function setChoice(page, name, value) {
  const row = page.locator(`#settings tbody tr[data-setting="${name}"]`);
  await row.locator('select').selectOption(value);
  await row.locator('button', { hasText: 'Save' }).click();
  await confirm(page);
  await page.locator('#status').filter({ hasText: new RegExp(`${name} is now ${value}[ .]`) }).waitFor();
}

// Alerts raised and cleared by what they watch: a channel drained by the node's own messages
// (channelDepleted; autoFund, turned on again in the settings pane, clears it), and the chain
// provider gone (providerDown, critical: /readyz not ready; the cluster's --chainDrill gate
// shut with SIGUSR1 and opened with SIGUSR2).
test('alerts raised and cleared: a drained channel, the chain provider down', { timeout: 300_000 }, async () => {
  const n3 = node(3);
  const n4 = node(4);
  const clusterPid = Number(process.env.RELAY_CLUSTER_PID);
  assert.ok(clusterPid > 1, 'RELAY_CLUSTER_PID names the cluster (scripts/browser-test.sh)');
  const settings = await rest(n1, 'GET', '/settings');
  const { context, page, seen } = await open(n1, 'n1 alerts');
  try {
    await login(page, n1, token);
    await until('the settings pane', async () => (await page.locator('#settings tbody tr').count()) === Object.keys(settings).length);
    await setSetting(page, 'alertHoldSeconds', '0');
    await setChoice(page, 'autoFund', 'false');

    // A small channel to node 3 (the one there is closed first): 1.2 tokens against the
    // threshold of 1.
    const channel3 = async () => (await rest(n1, 'GET', '/channels')).outgoing.find((c) => c.peerId === n3.peer && c.status !== 'Closed');
    const was = await channel3();
    if (was) {
      await rest(n1, 'DELETE', `/channels/${n3.peer}/outgoing`);
      const closing = await until('the channel to node 3 to be closing', async () => {
        const c = await channel3();
        return c && c.status === 'PendingToClose' && c;
      });
      await until('its closure period to pass', async () => Date.now() > Date.parse(closing.closureTime) + 1000, 90_000);
      await rest(n1, 'DELETE', `/channels/${n3.peer}/outgoing`);
      await until('the channel to node 3 to be closed', async () => !(await channel3()), 60_000);
    }
    await setSetting(page, 'alertChannelBalance', '1');
    await rest(n1, 'POST', '/channels', { peerId: n3.peer, amount: '1200000000000000000' });
    await until('the small channel to be open', async () => (await channel3())?.status === 'Open', 60_000);
    const depleted = page.locator('#alerts-list li.alert[data-id="channelDepleted"]');
    assert.equal(await depleted.count(), 0, 'no alert while the channel holds 1.2');

    // Drain it: messages whose first relayer is node 3 each sign it a ticket worth 0.02 tokens
    // or more, which the channel can no longer pay (the alert counts them before node 3 redeems
    // them); the alerts are evaluated every 15 s.
    for (let i = 0; i < 60 && (await depleted.count()) === 0; i++) {
      await run(page, `send ${n3.peer},${n4.peer},${n2.peer} drain ${i}`);
    }
    await depleted.waitFor({ timeout: 60_000 });
    assert.match(await depleted.locator('.alert-detail').innerText(), /open outgoing channels can pay less than 1 token/);
    assert.ok((await rest(n1, 'GET', '/node/alerts')).alerts.some((x) => x.id === 'channelDepleted' && x.subjects.includes(n3.address)),
      'the alert names node 3');
    await page.locator('#alerts-pane').screenshot({ path: join(artifacts, 'console-alert-drained.png') });
    // autoFund on again: the strategy tops the channel up, and the alert clears.
    await setChoice(page, 'autoFund', 'true');
    await depleted.waitFor({ state: 'detached', timeout: 120_000 });
    assert.ok(BigInt((await channel3()).balance) > 10n ** 18n, 'the channel was topped up');

    // The chain provider goes away and comes back.
    const down = page.locator('#alerts-list li.alert[data-id="providerDown"]');
    process.kill(clusterPid, 'SIGUSR1');
    try {
      await down.waitFor({ timeout: 90_000 });
      assert.match(await down.locator('.severity').innerText(), /critical/i);
      const ready = await fetch(`${n1.api}/readyz`);
      assert.equal(ready.status, 503, '/readyz is not ready while a critical alert holds');
      assert.match(await ready.text(), /alerts/);
      await page.locator('#alerts-pane').screenshot({ path: join(artifacts, 'console-alert-provider-down.png') });
    } finally {
      process.kill(clusterPid, 'SIGUSR2');
    }
    await down.waitFor({ state: 'detached', timeout: 90_000 });
    await until('/readyz to be ready again', async () => (await fetch(`${n1.api}/readyz`)).status === 200, 90_000);
    // While the chain was away the node answered the console's chain reads (balances) with
    // 503, which Chromium logs as failed loads: the node's honest answer, not a page error.
    seen.errors = seen.errors.filter((e) => !/Failed to load resource: the server responded with a status of 503/.test(e));
    clean(seen);
  } finally {
    await context.close();
    await rest(n1, 'PUT', '/settings', { alertHoldSeconds: settings.alertHoldSeconds, alertChannelBalance: settings.alertChannelBalance, autoFund: settings.autoFund });
  }
});
