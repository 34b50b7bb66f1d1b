// The console's entry point: login, then the panes. The token lives in this
// tab's sessionStorage only (never in the page's address, never in a
// cookie); the admin WebSocket carries the stream and the commands, the
// REST API the tables.
import { AdminConn, AuthError, parseHelp } from './conn.js';
import { Api, ApiError } from './api.js';
import { Stream } from './stream.js';
import { CommandLine } from './cmdline.js';
import { GraphView } from './graph.js';
import { History } from './history.js';
import { Alerts } from './alerts.js';
import { Settings } from './settings.js';
import { checkOpen, finalizable } from './forms.js';
import { Inbox } from './inbox.js';
import { Sessions } from './sessions.js';
import { Aliases, Withdraw, Send } from './panes.js';
import { el, tokens, shortId, ago, visible, topologyText } from './text.js';

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = 'relayd.console.token';
const PORT_KEY = 'relayd.console.apiPort';
const POLL_MS = 5000;

const state = {
  conn: null,
  api: null,
  self: '',
  names: [], // command names, from help
  aliases: new Map(), // alias -> PeerId
  aliasOf: new Map(), // PeerId -> alias
  peerIds: [],
  timer: 0,
  channels: null, // the last GET /channels answer
  balance: null, // the last GET /account/balances answer
  symbol: 'RELAY',
};

let stream;
let inbox;
let sessions;
let history;
let alerts;
let settings;
let graphView;
let aliasesPane;
let withdrawPane;

// ---- login ----------------------------------------------------------------

async function pageConfig() {
  try {
    const r = await fetch('/console-config.json', { cache: 'no-store' });
    if (r.ok) return await r.json();
  } catch {
    // fall through: the form asks
  }
  return {};
}

function adminURL() {
  const u = new URL('/', location.href);
  u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.href;
}

function apiBase(port) {
  const host = location.hostname.includes(':') ? `[${location.hostname}]` : location.hostname;
  return `${location.protocol}//${host}:${port}`;
}

function showLogin(message) {
  $('app-view').hidden = true;
  $('logout').hidden = true;
  $('whoami').hidden = true;
  $('login-view').hidden = false;
  $('login-error').textContent = message ? visible(message) : '';
  $('login-token').focus();
}

async function login(token, port) {
  $('login-submit').disabled = true;
  $('login-error').textContent = '';
  const conn = new AdminConn(adminURL(), token);
  conn.onframe = (f) => onFrame(f);
  stream.list.replaceChildren(); // a reconnection replays the history again
  inbox.reset();
  sessions.reset();
  history.reset();
  alerts.reset();
  settings.reset();
  try {
    await conn.open();
  } catch (err) {
    sessionStorage.removeItem(TOKEN_KEY);
    $('login-submit').disabled = false;
    showLogin(err instanceof AuthError ? `The node refused the token: ${err.message}` : err.message);
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  sessionStorage.setItem(PORT_KEY, String(port));
  $('login-submit').disabled = false;
  $('login-token').value = '';
  state.conn = conn;
  state.api = new Api(apiBase(port), token);
  conn.onclose = (why) => {
    const b = $('banner');
    b.hidden = false;
    b.replaceChildren(el('span', `Disconnected from the node: ${why}. `), reconnectButton());
    clearInterval(state.timer);
  };
  $('login-view').hidden = true;
  $('app-view').hidden = false;
  $('logout').hidden = false;
  $('banner').hidden = true;
  stream.follow = true;
  stream.stick();
  $('cmd').focus();
  startApp();
}

function reconnectButton() {
  const b = el('button', 'Reconnect', { type: 'button' });
  b.addEventListener('click', () => {
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) login(token, sessionStorage.getItem(PORT_KEY));
    else showLogin('');
  });
  return b;
}

function logout() {
  clearInterval(state.timer);
  state.conn?.close();
  state.conn = null;
  sessionStorage.removeItem(TOKEN_KEY);
  $('stream').replaceChildren();
  showLogin('');
}

// ---- frames and commands --------------------------------------------------

function onFrame(f) {
  stream.add(f);
  if (f.type === 'message' && !f.reply && !f.replay) inbox.refresh(); // a message arrived: the inbox keeps it
}

function say(lines) {
  $('status').textContent = visible(lines.join(' '));
}

// command runs a line for the operator (shown in the stream) and says its
// last line in the status bar.
async function command(line) {
  try {
    const out = await state.conn.run(line);
    say(out.length ? [out[out.length - 1]] : []);
    return out;
  } catch (err) {
    say([`Not run: ${err.message}`]);
    return null;
  }
}

async function operatorLine(line) {
  const name = line.split(/\s+/)[0];
  if (name === 'quit' && !(await confirmAction('quit stops the node. Stop it?', 'Stop the node'))) {
    say(['Not stopped.']);
    return;
  }
  await command(line);
  if (name === 'alias') await refreshAliases();
  if (['open', 'close', 'redeemTickets', 'alias', 'withdraw'].includes(name)) refresh();
  if (name === 'session') sessions.refresh();
  if (name === 'settings') settings.refresh();
}

// confirmAction shows the modal dialog and resolves with the choice.
function confirmAction(text, ok = 'Confirm') {
  const d = $('confirm');
  $('confirm-text').textContent = visible(text);
  $('confirm-ok').textContent = ok;
  d.returnValue = '';
  d.showModal();
  $('confirm-cancel').focus();
  return new Promise((resolve) => {
    d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true });
  });
}

// ---- tables ---------------------------------------------------------------

function nameOf(id) {
  const a = state.aliasOf.get(id);
  return a ? `${a} (${shortId(id)})` : id;
}

// peerCell is a table cell naming a peer: its name in a monospace span
// that wraps anywhere (a PeerId has no spaces), the full id on hover.
function peerCell(id) {
  const td = el('td', undefined, { class: 'peer' });
  const span = el('span', nameOf(id), { class: 'peer-id' });
  span.title = id;
  td.append(span);
  return td;
}

function fact(dl, term, value) {
  dl.append(el('dt', term), el('dd', value));
}

async function refreshAliases() {
  try {
    const al = await state.api.get('/aliases');
    state.aliases = new Map(Object.entries(al || {}));
    state.aliasOf = new Map();
    for (const [a, id] of state.aliases) if (a !== 'me') state.aliasOf.set(id, a);
    aliasesPane.render();
  } catch {
    // the tables say what is wrong
  }
}

function renderPeers(peers) {
  const byId = new Map();
  for (const p of peers.announced || []) byId.set(p.peerId, p);
  for (const p of peers.connected || []) byId.set(p.peerId, p);
  byId.delete(state.self);
  const rows = [...byId.values()].sort((a, b) => b.quality - a.quality || a.peerId.localeCompare(b.peerId));
  state.peerIds = rows.map((p) => p.peerId);
  const body = $('peers').tBodies[0];
  body.replaceChildren(...rows.map((p) => {
    const tr = el('tr');
    tr.append(peerCell(p.peerId), el('td', p.connected ? 'yes' : 'no'));
    const q = el('td');
    const meter = el('meter', undefined, { min: '0', max: '1', value: String(p.quality), 'aria-label': `quality of ${shortId(p.peerId)}` });
    q.append(meter, document.createTextNode(` ${(p.quality * 100).toFixed(0)} %`));
    const seen = el('td', ago(p.lastSeen));
    if (p.lastSeen) seen.title = new Date(p.lastSeen).toISOString();
    tr.append(q, el('td', `${Number(p.latency).toFixed(1)} ms`), seen);
    return tr;
  }));
  if (rows.length === 0) body.append(emptyRow(5, 'No peers yet.'));
  const list = $('peer-list');
  list.replaceChildren(...state.peerIds.map((id) => el('option', undefined, { value: id })));
}

function emptyRow(cols, text) {
  const tr = el('tr');
  tr.append(el('td', text, { colspan: String(cols), class: 'muted' }));
  return tr;
}

function renderChannels(ch) {
  const all = [...(ch.outgoing || []), ...(ch.incoming || [])];
  const body = $('channels').tBodies[0];
  body.replaceChildren(...all.map((c) => {
    const tr = el('tr');
    tr.dataset.peer = c.peerId;
    tr.dataset.direction = c.type;
    tr.dataset.status = c.status;
    let status = c.status;
    if (c.closureTime) status += ` (can be finalized from ${new Date(c.closureTime).toLocaleTimeString([], { hour12: false })})`;
    tr.append(el('td', c.type), peerCell(c.peerId), el('td', status),
      el('td', `${tokens(c.balance)} ${state.symbol}`));
    const act = el('td');
    // Finalize only once the closure period ended (the contract refuses
    // it before); until then the status says from when.
    if (c.status === 'Open' || finalizable(c)) {
      const finalize = c.status === 'PendingToClose';
      const b = el('button', finalize ? 'Finalize close' : 'Close', { type: 'button', class: 'secondary', 'aria-label': `${finalize ? 'Finalize closing' : 'Close'} the ${c.type} channel with ${shortId(c.peerId)}` });
      b.addEventListener('click', async () => {
        const what = finalize ? 'Finalize the closure of' : 'Close';
        if (!(await confirmAction(`${what} the ${c.type} channel with ${c.peerId} (${tokens(c.balance)} ${state.symbol})?`, finalize ? 'Finalize' : 'Close channel'))) return;
        await command(`close ${c.peerId}${c.type === 'incoming' ? ' incoming' : ''}`);
        refresh();
      });
      act.append(b);
    } else if (c.status === 'PendingToClose' && c.type === 'outgoing') {
      act.append(el('span', 'waiting for the closure period', { class: 'muted' }));
    }
    tr.append(act);
    return tr;
  }));
  if (all.length === 0) body.append(emptyRow(5, 'No channels.'));
}

function renderTickets(st) {
  const dl = $('ticket-stats');
  dl.replaceChildren();
  fact(dl, 'Unredeemed', `${st.unredeemed} (${tokens(st.unredeemedValue)} ${state.symbol})`);
  fact(dl, 'Redeemed', `${st.redeemed} (${tokens(st.redeemedValue)} ${state.symbol})`);
  fact(dl, 'Pending', String(st.pending));
  fact(dl, 'Losing', String(st.losingTickets));
  fact(dl, 'Win proportion', `${(Number(st.winProportion) * 100).toFixed(0)} %`);
  fact(dl, 'Neglected', String(st.neglected));
  fact(dl, 'Rejected', `${st.rejected} (${tokens(st.rejectedValue)} ${state.symbol})`);
}

function renderNode(addr, bal, info) {
  const dl = $('node-info');
  dl.replaceChildren();
  if (addr) {
    fact(dl, 'PeerId', addr.relayAddress);
    fact(dl, 'Chain address', addr.nativeAddress);
  }
  if (bal) {
    fact(dl, `${state.symbol} balance`, `${tokens(bal.relay)} ${state.symbol}`);
    fact(dl, 'Native balance', tokens(bal.native));
  }
  if (info) {
    fact(dl, 'Network', info.network);
    fact(dl, 'Chain id', String(info.chainId));
    fact(dl, 'Channels contract', info.channelsContract || '—');
    fact(dl, 'Closure period', `${info.closurePeriod} s`);
    fact(dl, 'Indexed', `${info.channelsIndexed} channels, ${info.peersAnnounced} announced peers, block ${info.indexedBlock}`);
    fact(dl, 'Topology', topologyText(info.topology));
  }
}


// settle turns a failed call into null, and notes the first failure.
async function settle(p, errors) {
  try {
    return await p;
  } catch (err) {
    errors.push(err instanceof ApiError ? err.message : String(err));
    return null;
  }
}

async function refresh() {
  if (!state.api) return;
  const api = state.api;
  const errors = [];
  const [, addr, peers, channels, stats, bal, info, graph] = await Promise.all([
    refreshAliases(),
    state.self ? null : settle(api.get('/account/addresses'), errors),
    settle(api.get('/node/peers'), errors),
    settle(api.get('/channels'), errors),
    settle(api.get('/tickets/statistics'), errors),
    settle(api.get('/account/balances'), errors),
    settle(api.get('/node/info'), errors),
    settle(api.get('/node/graph'), []), // on failure the graph shows this node's channels only
  ]);
  if (state.api !== api) return; // logged out meanwhile
  if (addr) {
    state.self = addr.relayAddress;
    const who = $('whoami');
    who.hidden = false;
    who.textContent = visible(`Node ${addr.relayAddress}`);
  }
  if (info?.tokenSymbol) state.symbol = info.tokenSymbol;
  withdrawPane.setSymbol(state.symbol);
  if (info) inbox.setAvailable(info.inbox === true);
  if (info) sessions.setAvailable(info.sessions === true);
  inbox.refresh();
  sessions.refresh();
  alerts.refresh();
  history.refresh();
  settings.refreshIdle();
  if (bal) state.balance = bal;
  if (channels) state.channels = channels;
  if (peers) renderPeers(peers);
  if (channels) renderChannels(channels);
  if (stats) renderTickets(stats);
  renderNode(addr || state.addr, bal, info);
  if (addr) state.addr = addr;
  if (state.self && (graph || (peers && channels))) {
    graphView.draw({ self: state.self, peers, channels, graph, names: state.aliasOf });
  }
  const b = $('banner');
  if (errors.length) {
    b.hidden = false;
    b.textContent = visible(`The REST API at ${api.base}: ${errors[0]}`);
  } else if (state.conn && b.textContent.startsWith('The REST API')) {
    b.hidden = true;
    b.textContent = '';
  }
}

async function startApp() {
  state.self = '';
  // The page's own questions for completion: hidden from the stream.
  state.conn.run('help', { hidden: true }).then((l) => { state.names = parseHelp(l); }).catch(() => {});
  await refreshAliases();
  await refresh(); // the settings pane reads the settings then too
  clearInterval(state.timer);
  state.timer = setInterval(refresh, POLL_MS);
}

// ---- wiring ---------------------------------------------------------------

async function main() {
  stream = new Stream({
    list: $('stream'), filter: $('stream-filter'), kind: $('stream-kind'),
    pause: $('stream-pause'), clear: $('stream-clear'), pausedNote: $('stream-paused'),
  });
  inbox = new Inbox({
    table: $('inbox'), note: $('inbox-note'), api: () => state.api, say, confirm: confirmAction,
  });
  sessions = new Sessions({
    table: $('sessions'), note: $('sessions-note'), form: $('session-form'),
    fields: { destination: $('session-dest'), protocol: $('session-protocol'), target: $('session-target'), listen: $('session-listen') },
    api: () => state.api, command, confirm: confirmAction, say, nameOf,
  });
  history = new History({
    box: $('charts'), note: $('history-note'), buttons: [...document.querySelectorAll('button.res')],
    api: () => state.api, symbol: () => state.symbol,
    name: (id) => (state.aliasOf.has(id) ? nameOf(id) : shortId(id)), // a legend: short, the full id on hover
  });
  alerts = new Alerts({
    pane: $('alerts-pane'), list: $('alerts-list'), summary: $('alerts-summary'), api: () => state.api, name: nameOf,
  });
  settings = new Settings({
    table: $('settings'), note: $('settings-note'), reload: $('settings-reload'), api: () => state.api,
    run: (line) => state.conn.run(line, { hidden: true }), confirm: confirmAction, say,
  });
  aliasesPane = new Aliases({
    table: $('aliases'), form: $('alias-form'), fields: { alias: $('alias-name'), peer: $('alias-peer') }, error: $('alias-error'),
    api: () => state.api, aliases: () => state.aliases, self: () => state.self,
    changed: async () => { await refreshAliases(); refresh(); }, confirm: confirmAction, say,
  });
  withdrawPane = new Withdraw({
    form: $('withdraw-form'), fields: { currency: $('withdraw-currency'), amount: $('withdraw-amount'), recipient: $('withdraw-to') },
    error: $('withdraw-error'), note: $('withdraw-note'), api: () => state.api, balances: () => state.balance,
    address: () => state.addr?.nativeAddress, symbol: () => state.symbol, done: refresh, confirm: confirmAction, say,
  });
  new Send({
    form: $('send-form'), error: $('send-error'), note: $('send-note'), api: () => state.api, command,
    fields: { to: $('send-to'), relayers: $('send-relayers'), replies: $('send-replies'), reliable: $('send-reliable'), body: $('send-body') },
    aliases: () => state.aliases, self: () => state.self,
  });
  graphView = new GraphView({
    svg: $('graph'), desc: $('graph-desc'), details: $('graph-details'),
    nodesTable: $('graph-nodes'), channelsTable: $('graph-channels'),
  });
  // Narrow screens show the tables as cards: each cell names its column.
  for (const t of document.querySelectorAll('table.cards')) {
    new MutationObserver(() => labelCells(t)).observe(t.tBodies[0], { childList: true });
  }
  new CommandLine({
    form: $('cmd-form'), input: $('cmd'), hint: $('cmd-hint'),
    run: operatorLine,
    lists: () => ({ names: state.names, args: [...state.aliases.keys(), ...state.peerIds] }),
  });
  $('login-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    login($('login-token').value, Number($('login-api-port').value));
  });
  $('logout').addEventListener('click', logout);
  $('open-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const peer = $('open-peer').value.trim();
    const amount = $('open-amount').value.trim();
    // Checked before the dialog, against the channels and the balance the
    // node last said (the node checks again).
    const verdict = checkOpen({ peer, amount, channels: state.channels, aliases: state.aliases, self: state.self, balance: state.balance?.relay });
    for (const f of ['open-peer', 'open-amount']) $(f).removeAttribute('aria-invalid');
    $('open-error').textContent = verdict.error ? visible(verdict.error) : '';
    if (verdict.error) {
      const f = verdict.field === 'peer' ? $('open-peer') : $('open-amount');
      f.setAttribute('aria-invalid', 'true');
      f.focus();
      return;
    }
    if (!(await confirmAction(`Open a channel to ${peer} funded with ${amount} ${state.symbol}?`, 'Open channel'))) return;
    await command(`open ${peer} ${amount}`);
    refresh();
  });
  $('redeem').addEventListener('click', async () => {
    if (!(await confirmAction('Redeem every acknowledged ticket on chain? Each winning ticket is one transaction.', 'Redeem'))) return;
    $('redeem').disabled = true;
    try {
      await command('redeemTickets');
    } finally {
      $('redeem').disabled = false;
    }
    refresh();
  });

  const cfg = await pageConfig();
  const port = sessionStorage.getItem(PORT_KEY) || (cfg.apiPort ? String(cfg.apiPort) : '');
  $('login-api-port').value = port;
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token && port) {
    login(token, Number(port));
  } else {
    showLogin('');
  }
}

// labelCells names each cell of a table by its column's heading
// (data-label), which the narrow layout shows before the cell.
function labelCells(table) {
  const heads = [...table.tHead.rows[0].cells].map((th) => th.textContent);
  for (const tr of table.tBodies[0].rows) {
    [...tr.cells].forEach((td, i) => {
      if (!td.hasAttribute('colspan') && heads[i] && td.dataset.label !== heads[i]) td.dataset.label = heads[i];
    });
  }
}

main();
