// Unit tests of the web console's pure modules (no browser): how untrusted
// text is made visible, token amounts, completion, the parsing of the
// node's help, the inbox's rows and the sessions pane's, the history charts' models, the
// alerts' rows, the forms' checks and the settings pane's parsing and validation. The modules are the ones the node embeds
// (internal/webui/static/js), imported as they are served.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { visible, visibleParts, tokens, shortId, ago, topologyText } from '../../internal/webui/static/js/text.js';
import { complete, commonPrefix } from '../../internal/webui/static/js/cmdline.js';
import { parseHelp } from '../../internal/webui/static/js/conn.js';
import { kindOf } from '../../internal/webui/static/js/stream.js';
import { widthOf, graphModel, placeLabels, labelBox, overlaps } from '../../internal/webui/static/js/graph.js';
import { historyCharts, cumulative, total, last, number, PEER_LINES } from '../../internal/webui/static/js/chart.js';
import { alertRow } from '../../internal/webui/static/js/alerts.js';
import { toWei, checkAmount, checkOpen, finalizable, checkAlias, checkWithdraw, checkSend, checksumOK } from '../../internal/webui/static/js/forms.js';
import { parseSettingsLines, schemaOf, kindOf as settingKind, parseValue, shown } from '../../internal/webui/static/js/settings.js';
import { inboxRow, signature } from '../../internal/webui/static/js/inbox.js';
import { byteCount, byteRate, sessionRow, openLine } from '../../internal/webui/static/js/sessions.js';

test('visible: every C0 control, DEL, C1 control and bidi or invisible format character gets a stand-in', () => {
  for (let c = 0; c < 0x20; c++) {
    assert.equal(visible(String.fromCharCode(c)), String.fromCodePoint(0x2400 + c), `U+${c.toString(16)}`);
  }
  assert.equal(visible('\x7f'), '\u2421');
  for (let c = 0x80; c <= 0x9f; c++) {
    assert.match(visible(String.fromCharCode(c)), /^⟨U\+00[89A-F][0-9A-F]⟩$/);
  }
  for (const ch of ['\u200b', '\u200e', '\u200f', '\u2028', '\u2029', '\u202a', '\u202e', '\u2066', '\u2069', '\ufeff', '\u061c', '\u00ad']) {
    const v = visible(ch);
    assert.notEqual(v, ch);
    assert.match(v, /^⟨U\+[0-9A-F]{4}⟩$/);
  }
  assert.equal(visible('\ud800'), '\ufffd', 'a lone surrogate');
});

test('visible: printable text, including HTML and non-Latin scripts, is kept as it is', () => {
  for (const s of ['<img src=x onerror=alert(1)>', 'héllo wörld', '日本語 テキスト', 'emoji 🎉 ok', 'a\\x1b b', '"quotes" & \'apostrophes\'']) {
    assert.equal(visible(s), s);
  }
});

test('visibleParts: the terminal escape of a hostile message is one marked part', () => {
  const parts = visibleParts('\x1b[31m<img src=x onerror=alert(1)>');
  assert.deepEqual(parts, [{ text: '\u241b', ctl: true }, { text: '[31m<img src=x onerror=alert(1)>', ctl: false }]);
});

test('tokens: wei strings in whole tokens', () => {
  assert.equal(tokens('0'), '0');
  assert.equal(tokens('1000000000000000000'), '1');
  assert.equal(tokens('2500000000000000000'), '2.5');
  assert.equal(tokens('100000000000000000000'), '100');
  assert.equal(tokens('12345678900000000'), '0.0123');
  assert.equal(tokens('1'), '<0.0001');
  assert.equal(tokens('98620000000000000000', 2), '98.62');
  assert.equal(tokens('not a number'), '?');
  assert.equal(tokens('-1500000000000000000'), '-1.5');
});

test('shortId and ago', () => {
  assert.equal(shortId('16Uiu2HAmPJEwKTQE7e83p7DsP4uhrSK1mS6onkvSASNA79u552Ar'), '16Uiu2HA…52Ar');
  assert.equal(shortId('me'), 'me');
  assert.equal(ago(0), 'never');
  assert.equal(ago(1_000_000 - 5_000, 1_000_000), '5 s ago');
  assert.equal(ago(1_000_000 - 120_000, 1_000_000), '2 min ago');
});

test('complete: command names first, then peers and aliases, a 0-hop comma kept', () => {
  const names = ['address', 'addresses', 'alias', 'redeemTickets', 'send'];
  const args = ['alice', '16Uiu2HAmA', '16Uiu2HAmB'];
  assert.deepEqual(complete('addr', names, args), { line: 'address', hits: ['address', 'addresses'] });
  assert.deepEqual(complete('red', names, args), { line: 'redeemTickets ', hits: ['redeemTickets'] });
  assert.deepEqual(complete('send al', names, args), { line: 'send alice ', hits: ['alice'] });
  assert.deepEqual(complete('send ,al', names, args), { line: 'send ,alice ', hits: ['alice'] });
  assert.deepEqual(complete('send 16U', names, args), { line: 'send 16Uiu2HAm', hits: ['16Uiu2HAmA', '16Uiu2HAmB'] });
  assert.deepEqual(complete('zzz', names, args), { line: 'zzz', hits: [] });
  assert.equal(commonPrefix(['abc', 'abd', 'ab']), 'ab');
  assert.equal(commonPrefix([]), '');
});

test('parseHelp: the command names of the node\'s help', () => {
  const lines = [
    'Available commands:',
    '  address [relay|native]  Show this node\'s PeerId (relay address) and chain address.',
    '  close <peer> [incoming]  Close the outgoing (or incoming) channel.',
    '  help                    Show the available commands.',
    '  redeemTickets           Redeem every acknowledged ticket on chain.',
  ];
  assert.deepEqual(parseHelp(lines), ['address', 'close', 'help', 'redeemTickets']);
});

test('kindOf: replies, messages and log lines', () => {
  assert.equal(kindOf({ type: 'log', reply: 'echo' }), 'reply');
  assert.equal(kindOf({ type: 'message' }), 'message');
  assert.equal(kindOf({ type: 'log', replay: true }), 'log');
});

test('widthOf: edge widths grow with the balance and stay bounded', () => {
  const w = ['0', '1000000000000000000', '100000000000000000000', '1000000000000000000000000'].map(widthOf);
  assert.equal(w[0], 1.5);
  assert.ok(w[1] < w[2] && w[2] < w[3], w.join(' '));
  assert.equal(w[3], 9);
  assert.equal(widthOf('garbage'), 1.5);
});

test('graphModel: the whole graph from GET /node/graph, channels between other nodes included', () => {
  const graph = {
    nodes: [
      { peerId: 'me', address: '0x1', self: true, announced: true, connected: false },
      { peerId: 'b', address: '0x2', self: false, announced: true, connected: true },
      { peerId: '0x3', address: '0x3', self: false, announced: false, connected: false },
    ],
    channels: [
      { channelId: '0xa', source: 'me', destination: 'b', balance: '1', status: 'Open' },
      { channelId: '0xb', source: 'b', destination: '0x3', balance: '2', status: 'PendingToClose' },
    ],
  };
  const m = graphModel({ self: 'me', peers: { announced: [{ peerId: 'c', connected: false }], connected: [] }, channels: null, graph });
  assert.equal(m.from, 'graph');
  assert.deepEqual([...m.nodes.keys()].sort(), ['0x3', 'b', 'c'], 'this node left out; a peer the graph lacks added');
  assert.equal(m.nodes.get('b').connected, true);
  assert.deepEqual(m.edges.map((e) => `${e.source}>${e.destination}:${e.status}`), ['me>b:Open', 'b>0x3:PendingToClose']);
});

test('graphModel: without the graph, this node\'s own channels from GET /channels, Closed left out', () => {
  const channels = {
    outgoing: [{ peerId: 'b', status: 'Open', balance: '5' }, { peerId: 'c', status: 'Closed', balance: '0' }],
    incoming: [{ peerId: 'c', status: 'Open', balance: '7' }],
  };
  const peers = { announced: [{ peerId: 'b' }, { peerId: 'c' }], connected: [{ peerId: 'c' }] };
  const m = graphModel({ self: 'me', peers, channels, graph: null });
  assert.equal(m.from, 'channels');
  assert.deepEqual(m.edges.map((e) => `${e.source}>${e.destination}:${e.balance}`), ['me>b:5', 'c>me:7']);
  assert.equal(m.nodes.get('c').connected, true);
  assert.equal(m.nodes.get('b').connected, false);
  assert.equal(graphModel({ self: 'me', peers, channels, graph: { error: 'x' } }).from, 'channels', 'a malformed answer falls back too');
});

test('inboxRow: seq, time, the body as given, what it answers and the answers left', () => {
  const r = inboxRow({ seq: 7, id: '0x09', body: '\x1b[31m<b>hi</b>', receivedAt: '2026-11-24T08:00:00.123Z', reply: false, repliesLeft: 2 });
  assert.equal(r.seq, '7');
  assert.equal(r.iso, '2026-11-24T08:00:00.123Z');
  assert.equal(r.body, '\x1b[31m<b>hi</b>', 'made visible when drawn (text.js), not here');
  assert.equal(r.note, '2 replies left');
  assert.equal(r.canReply, true);
  const a = inboxRow({ seq: 8, body: 'yes', receivedAt: 'not a time', reply: true, inReplyTo: '0x5e000000000000000000000000000001', repliesLeft: 0 });
  assert.equal(a.note, 'reply to 0x5e0000…0001');
  assert.equal(a.canReply, false);
  assert.equal(a.when, 'not a time');
  assert.equal(a.iso, '');
  assert.equal(inboxRow({ seq: 9, body: 'x', receivedAt: '2026-11-24T08:00:00Z', repliesLeft: 1 }).note, '1 reply left');
});

test('signature: changes with the messages and their reply blocks, not otherwise', () => {
  const list = [{ seq: 1, repliesLeft: 2, body: 'a' }, { seq: 2, repliesLeft: 0, body: 'b' }];
  assert.equal(signature(list, 2), signature(structuredClone(list), 2));
  assert.notEqual(signature(list, 2), signature([list[0]], 2));
  assert.notEqual(signature(list, 2), signature([{ ...list[0], repliesLeft: 1 }, list[1]], 2));
  assert.notEqual(signature(list, 2), signature(list, 3));
});

test("byteCount and byteRate: SI units as the node's console writes them", () => {
  const cases = [[0, '0 B'], [999, '999 B'], [1000, '1.0 kB'], [5120, '5.1 kB'], [999949, '999.9 kB'], [999950, '1.0 MB'],
    [1048576, '1.0 MB'], [2.5e9, '2.5 GB'], [-1, '0 B'], [NaN, '0 B'], ['x', '0 B'], [undefined, '0 B']];
  for (const [v, want] of cases) assert.equal(byteCount(v), want, String(v));
  assert.equal(byteRate(98304), '98.3 kB/s');
  assert.equal(byteRate(120.5), '121 B/s');
});

test('sessionRow: a session of GET /sessions, its target or service, connections, rates and totals', () => {
  const s = {
    id: '5e0c1f8a9b3d4e5f', destination: '16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT', protocol: 'tcp',
    target: 'example.org:443', listen: '127.0.0.1:40000', opened: '2026-11-26T22:40:00.000Z', active: 1, total: 3,
    bytesOut: 5120, bytesIn: 1048576, rateOut: 120.5, rateIn: 98304, retransmits: 4,
  };
  const r = sessionRow(s);
  assert.equal(r.what, 'example.org:443');
  assert.equal(r.conns, '1 / 3');
  assert.equal(r.out, '121 B/s (5.1 kB)');
  assert.equal(r.in, '98.3 kB/s (1.0 MB)');
  assert.equal(r.retransmits, '4');
  assert.equal(r.iso, '2026-11-26T22:40:00.000Z');
  const svc = sessionRow({ ...s, target: undefined, service: '<img src=x onerror=alert(1)>', opened: 'nonsense', rateIn: null });
  assert.equal(svc.what, 'service:<img src=x onerror=alert(1)>', 'kept as text: the page shows it through text nodes');
  assert.equal(svc.opened, 'nonsense');
  assert.equal(svc.iso, '');
  assert.equal(svc.in, '0 B/s (1.0 MB)');
});

test('openLine: the admin command of the form, or why not', () => {
  assert.deepEqual(openLine({ destination: ' bob ', protocol: 'tcp', target: 'example.org:443', listen: '' }),
    { line: 'session open bob tcp example.org:443' });
  assert.deepEqual(openLine({ destination: 'bob', protocol: 'udp', target: 'service:dns', listen: '[::1]:5353' }),
    { line: 'session open bob udp service:dns [::1]:5353' });
  assert.deepEqual(openLine({ destination: 'bob', protocol: 'tcp', target: '[2001:db8::1]:443' }),
    { line: 'session open bob tcp [2001:db8::1]:443' });
  for (const bad of [
    { destination: '', protocol: 'tcp', target: 'a:1' },
    { destination: 'bob', protocol: 'tcp', target: '' },
    { destination: 'bob alice', protocol: 'tcp', target: 'a:1' },
    { destination: 'bob', protocol: 'tcp', target: 'a:1 ; quit' },
    { destination: 'bob', protocol: 'sctp', target: 'a:1' },
    { destination: 'bob', protocol: 'tcp', target: 'example.org' },
    { destination: 'bob', protocol: 'tcp', target: 'a:1', listen: '127.0.0.1' },
    { destination: 'bob', protocol: 'tcp', target: 'a:1', listen: 'a b:1' },
  ]) {
    const got = openLine(bad);
    assert.equal(got.line, undefined, JSON.stringify(bad));
    assert.match(got.error, /\.$/);
  }
});

test('cumulative, total, last and number: counters over a window, gaps kept', () => {
  assert.deepEqual(cumulative([1, null, 2, 0.5]), [1, null, 3, 3.5]);
  assert.equal(total([1, null, 2]), 3);
  assert.equal(last([1, 2, null]), 2);
  assert.equal(last([null]), null);
  assert.equal(number(0), '0');
  assert.equal(number(412.49), '412.49');
  assert.equal(number(4124.9), '4125');
  assert.equal(number(2.456), '2.46');
  assert.equal(number(0.01234), '0.0123');
  assert.equal(number(null), '—');
});

test('historyCharts: balances as read, counters cumulative, the busiest peers as rates, the rest as other', () => {
  const times = ['2026-11-27T10:00:00.000Z', '2026-11-27T10:00:15.000Z', '2026-11-27T10:00:30.000Z'];
  const peers = [];
  for (let i = 0; i < PEER_LINES + 2; i++) {
    peers.push({ peerId: `peer${i}`, bytesIn: [150 * (i + 1), null, 0], bytesOut: [0, null, 0], quality: [1, null, 1] });
  }
  const view = {
    resolution: 'hour', stepSeconds: 15, spanSeconds: 3600, times, samples: [1, 0, 1],
    series: { tokenBalance: [412.5, null, 412.49], nativeBalance: [0.98, null, 0.97], earned: [0, null, 0.01], spent: [0.02, null, 0.03],
      messagesSent: [0, null, 1], messagesReceived: [1, null, 0], ticketsWon: [1, null, 2], ticketsRedeemed: [0, null, 0] },
    peers, other: { bytesIn: [15, null, 0], bytesOut: [0, null, 0], quality: [null, null, null] },
  };
  const charts = historyCharts(view, { symbol: 'RELAY', name: (id) => `name of ${id}` });
  const by = Object.fromEntries(charts.map((c) => [c.id, c]));
  assert.deepEqual(Object.keys(by), ['token-balance', 'native-balance', 'earnings', 'messages', 'tickets', 'traffic']);
  assert.deepEqual(by['token-balance'].lines[0].values, [412.5, null, 412.49]);
  assert.match(by['token-balance'].summary, /now 412.49 RELAY/);
  assert.deepEqual(by.earnings.lines.map((l) => l.name), ['earned', 'spent']);
  assert.deepEqual(by.earnings.lines[1].values, [0.02, null, 0.05]);
  assert.match(by.earnings.summary, /earned 0\.01, spent 0\.05 RELAY/);
  assert.match(by.messages.summary, /1 sent, 1 received/);
  assert.deepEqual(by.tickets.lines[0].values, [1, null, 3]);
  const t = by.traffic;
  assert.equal(t.lines.length, PEER_LINES + 1, 'the busiest peers and other');
  assert.equal(t.lines[0].peer, `peer${PEER_LINES + 1}`, 'busiest first');
  assert.equal(t.lines[0].name, `name of peer${PEER_LINES + 1}`);
  assert.deepEqual(t.lines[0].values, [150 * (PEER_LINES + 2) / 15, null, 0], 'bytes per second');
  assert.equal(t.lines[PEER_LINES].name, 'other peers');
  assert.deepEqual(t.lines[PEER_LINES].values, [(15 + 150 + 300) / 15, null, 0], 'other sums the node\'s other and the peers left out');
  const empty = historyCharts({ times: [], series: {}, peers: [], other: {} });
  assert.equal(empty.find((c) => c.id === 'traffic').lines.length, 0);
  assert.equal(empty.find((c) => c.id === 'traffic').summary, 'no traffic');
});

test('alertRow: severity, a name, since, the detail as given', () => {
  const r = alertRow({ id: 'channelDepleted', severity: 'warning', since: '2026-11-27T10:00:00.000Z', detail: '<b>x</b>', subjects: ['0xAb'] },
    Date.parse('2026-11-27T10:02:00.000Z'));
  assert.deepEqual(r, { id: 'channelDepleted', severity: 'warning', title: 'Channel depleted', since: 'since 2 min ago',
    iso: '2026-11-27T10:00:00.000Z', detail: '<b>x</b>', subjects: ['0xAb'] });
  assert.equal(alertRow({ id: 'providerDown', severity: 'critical' }).severity, 'critical');
  assert.equal(alertRow({ id: 'x', severity: '<i>' }).severity, 'warning', 'an unknown severity is a warning, not a class name');
  assert.equal(alertRow({ id: 'x', since: 'no' }).since, '');
});

test('toWei and checkAmount: decimal tokens, at most 18 decimals, positive, within the balance', () => {
  assert.equal(toWei('2.5'), 2_500_000_000_000_000_000n);
  assert.equal(toWei('0.000000000000000001'), 1n);
  assert.equal(toWei('1.0000000000000000001'), null);
  for (const bad of ['', '-1', '1e3', '1,5', '.5', 'abc', '1.']) assert.equal(toWei(bad), null, bad);
  assert.equal(checkAmount('1'), '');
  assert.match(checkAmount('0'), /more than 0/);
  assert.match(checkAmount('x'), /number of tokens/);
  assert.match(checkAmount('3', '2000000000000000000'), /balance/);
  assert.equal(checkAmount('2', '2000000000000000000'), '');
});

test('checkOpen: a peer with an open or closing channel is refused before any dialog', () => {
  const channels = { outgoing: [
    { peerId: 'A', status: 'Open' }, { peerId: 'B', status: 'PendingToClose' }, { peerId: 'C', status: 'Closed' },
  ], incoming: [{ peerId: 'D', status: 'Open' }] };
  const aliases = new Map([['alice', 'A'], ['carol', 'C']]);
  const base = { amount: '1', channels, aliases, self: 'S', balance: '10000000000000000000' };
  assert.match(checkOpen({ ...base, peer: 'A' }).error, /open channel to A already/);
  assert.match(checkOpen({ ...base, peer: 'alice' }).error, /open channel to alice already/, 'an alias resolves');
  assert.match(checkOpen({ ...base, peer: 'B' }).error, /closing; finalize/);
  assert.deepEqual(checkOpen({ ...base, peer: 'carol' }), { peerId: 'C' }, 'a closed channel may be reopened');
  assert.deepEqual(checkOpen({ ...base, peer: 'D' }), { peerId: 'D' }, 'an incoming channel is not in the way');
  assert.equal(checkOpen({ ...base, peer: 'S' }).field, 'peer');
  assert.equal(checkOpen({ ...base, peer: '' }).field, 'peer');
  assert.equal(checkOpen({ ...base, peer: 'a b' }).field, 'peer');
  assert.deepEqual(checkOpen({ ...base, peer: 'E', amount: '11' }).field, 'amount');
  assert.deepEqual(checkOpen({ ...base, peer: 'E', amount: '0' }).field, 'amount');
});

test('finalizable: an outgoing closing channel once its closure time passed', () => {
  const c = { type: 'outgoing', status: 'PendingToClose', closureTime: '2026-11-27T10:00:00.000Z' };
  const t = Date.parse(c.closureTime);
  assert.equal(finalizable(c, t - 1), false);
  assert.equal(finalizable(c, t), true);
  assert.equal(finalizable({ ...c, type: 'incoming' }, t + 1), false);
  assert.equal(finalizable({ ...c, status: 'Open' }, t + 1), false);
  assert.equal(finalizable({ ...c, closureTime: undefined }, t + 1), false);
});

test('parseSettingsLines: the admin settings command\'s columns, values with spaces kept', () => {
  const rows = [['strategy', 'passive', 'channel strategy (passive|promiscuous)'],
    ['channelFunding', '100 tokens', 'what each channel is funded with (a positive amount; REST: in the smallest unit, console: in tokens)'],
    ['maxChannels', '8', 'outgoing channels (1 to 100)']];
  const nw = Math.max(...rows.map((r) => r[0].length));
  const vw = Math.max(...rows.map((r) => r[1].length));
  const lines = rows.map(([n, v, d]) => `${n.padEnd(nw)}  ${v.padEnd(vw)}  ${d}`);
  const m = parseSettingsLines(['some other line', ...lines], ['strategy', 'channelFunding', 'maxChannels']);
  assert.deepEqual(m.get('channelFunding'), { text: '100 tokens', doc: rows[1][2] });
  assert.deepEqual(m.get('strategy'), { text: 'passive', doc: rows[0][2] });
  assert.equal(m.size, 3);
});

test('settings: kinds from the value, the OpenAPI schema and the range; values checked before they are sent', () => {
  const doc = { components: { schemas: {
    Settings: { properties: { maxChannels: { type: 'integer', minimum: 1, maximum: 100 }, strategy: { $ref: '#/components/schemas/StrategyName' } } },
    StrategyName: { type: 'string', enum: ['passive', 'promiscuous'] },
  } } };
  const schemas = schemaOf(doc);
  assert.deepEqual(schemas.get('strategy').enum, ['passive', 'promiscuous']);
  const max = settingKind(8, schemas.get('maxChannels'), '1 to 100');
  assert.deepEqual(max, { kind: 'number', integer: true, min: 1, max: 100 });
  assert.deepEqual(parseValue('maxChannels', '10', max), { value: 10 });
  assert.match(parseValue('maxChannels', '101', max).error, /from 1 to 100/);
  assert.match(parseValue('maxChannels', '2.5', max).error, /whole number/);
  assert.match(parseValue('maxChannels', 'x', max).error, /a number/);
  const share = settingKind(0.05, {}, '0 to 1; 0.05: 5 %; 0: no limit');
  assert.deepEqual(parseValue('autoRedeemMaxGasShare', '0.1', share), { value: 0.1 });
  assert.match(parseValue('autoRedeemMaxGasShare', '2', share).error, /from 0 to 1/);
  const strat = settingKind('passive', schemas.get('strategy'), 'passive|promiscuous');
  assert.equal(strat.kind, 'choice');
  assert.match(parseValue('strategy', 'greedy', strat).error, /one of passive, promiscuous/);
  const amount = settingKind('1000000000000000000', {}, 'a positive amount; REST: in the smallest unit, console: in tokens');
  assert.equal(amount.kind, 'amount');
  assert.equal(shown('1500000000000000000', amount), '1.5');
  assert.deepEqual(parseValue('alertChannelBalance', '2.5', amount), { value: '2500000000000000000' });
  assert.match(parseValue('alertChannelBalance', '0', amount).error, /positive/);
  const bool = settingKind(true);
  assert.deepEqual(parseValue('autoRedeem', 'false', bool), { value: false });
  const list = settingKind([], { type: 'array' }, 'REST: a JSON array of rules');
  assert.equal(shown(['a:1', 'b:2'], list), 'a:1, b:2');
  assert.deepEqual(parseValue('exitAllow', 'a:1, *:80', list), { value: ['a:1', '*:80'] });
  assert.deepEqual(parseValue('exitAllow', 'none', list), { value: [] });
  const win = settingKind('min', { type: 'string', pattern: '^(min|[0-9]+(\\.[0-9]+)?)$' }, 'min to follow the network minimum');
  assert.deepEqual(parseValue('winProb', '0.05', win), { value: '0.05' });
  assert.match(parseValue('winProb', 'lots', win).error, /does not take/);
  assert.deepEqual(parseValue('socks5Exit', '', settingKind('', {})), { value: '' }, 'an empty text is the node\'s to judge');
});

test('placeLabels: no name covers a node or another name; a channel label finds a free place or is left out', () => {
  // drawGraph's ring (640 × 440) with 16 other nodes, long names (aliases of 16 characters).
  const nodes = [{ x: 320, y: 220, r: 22, text: 'this node' }];
  for (let i = 0; i < 16; i++) {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / 16;
    nodes.push({ x: 320 + 200 * Math.cos(a), y: 220 + 160 * Math.sin(a), r: 16, text: `operator-alias-${i.toString(16)}` });
  }
  const edges = nodes.slice(1).map((n) => ({ text: '12.34', at: [0.5, 0.4, 0.6].map((t) => ({ x: 320 + (n.x - 320) * t, y: 220 + (n.y - 220) * t })) }));
  edges.push({ text: '1', at: [{ x: 320, y: 220 }] }); // only place: on this node
  const got = placeLabels(nodes, edges, 640, 440);
  const boxes = got.nodes.map((p) => labelBox(p.x, p.y, [...p.text].length, 12, p.anchor));
  assert.ok(got.nodes.some((p, i) => p.text === nodes[i].text), 'names that fit are whole');
  const circles = nodes.map((n) => ({ x0: n.x - n.r, y0: n.y - n.r, x1: n.x + n.r, y1: n.y + n.r }));
  boxes.forEach((b, i) => {
    boxes.forEach((o, j) => assert.ok(i === j || !overlaps(b, o), `names ${i} and ${j} overlap`));
    circles.forEach((c, j) => assert.ok(i === j || !overlaps(b, c), `name ${i} covers node ${j}`));
  });
  got.edges.forEach((p, k) => {
    if (!p) return;
    const b = labelBox(p.x, p.y, [...edges[k].text].length, 11);
    for (const o of [...boxes, ...circles]) assert.ok(!overlaps(b, o), `channel label ${k} covers a name or node`);
  });
  assert.equal(got.edges[edges.length - 1], null, 'a label with no free place is left out');
  assert.ok(got.edges.filter(Boolean).length >= 4, 'most channel labels find a place');
});

const P1 = '16Uiu2HAmTwTme7UgiAXsBLz92Dx9EwiKyARKSysBAft79L5DqnRz';
const P2 = '16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT';
const SELF = '16Uiu2HAm6vN5S5ZJ3pvbShNm2F7ZCuGr3D6yjK7uXcdL9RqDqF4b';

test('checkAlias: an alias is one printable word of at most 64 bytes, not me, not a PeerId; the peer a PeerId or a known alias', () => {
  const aliases = new Map([['me', SELF], ['bob', P1]]);
  const ok = checkAlias({ alias: 'carol', peer: P2, aliases, self: SELF });
  assert.deepEqual(ok, { alias: 'carol', peerId: P2, replaces: '' });
  assert.deepEqual(checkAlias({ alias: 'bob2', peer: 'bob', aliases, self: SELF }), { alias: 'bob2', peerId: P1, replaces: '' }, 'an alias names its peer');
  assert.equal(checkAlias({ alias: 'bob', peer: P2, aliases, self: SELF }).replaces, P1, 'replacing is said');
  for (const [alias, peer, field] of [
    ['', P2, 'alias'], ['two words', P2, 'alias'], ['me', P2, 'alias'], [P2, P2, 'alias'], ['é'.repeat(33), P2, 'alias'],
    ['a\u001b', P2, 'alias'], ['x', '', 'peer'], ['x', 'nobody', 'peer'], ['x', '16Uiu2HAmNOPE', 'peer'], ['x', SELF, 'peer'], ['x', 'me', 'peer'],
  ]) {
    const v = checkAlias({ alias: alias.replace('\\u001b', '\u001b'), peer, aliases, self: SELF });
    assert.equal(v.field, field, `${JSON.stringify(alias)} ${peer}: ${JSON.stringify(v)}`);
    assert.ok(v.error);
  }
  assert.equal(checkAlias({ alias: 'é'.repeat(32), peer: P2, aliases, self: SELF }).error, undefined, '64 bytes is allowed');
});

test('checksumOK: the EIP-55 examples pass, any one letter\'s case flipped fails, one-case addresses carry no checksum', () => {
  // The examples of EIP-55 itself.
  const good = ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB', '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb'];
  for (const a of good) {
    assert.ok(checksumOK(a), a);
    assert.ok(checksumOK(a.toLowerCase()), 'all lower case');
    assert.ok(checksumOK('0x' + a.slice(2).toUpperCase()), 'all upper case');
    for (let i = 2; i < 42; i++) {
      if (!/[a-fA-F]/.test(a[i])) continue;
      const c = a[i] === a[i].toLowerCase() ? a[i].toUpperCase() : a[i].toLowerCase();
      const flipped = a.slice(0, i) + c + a.slice(i + 1);
      if (flipped.slice(2) === flipped.slice(2).toLowerCase() || flipped.slice(2) === flipped.slice(2).toUpperCase()) continue;
      assert.ok(!checksumOK(flipped), `${flipped}: letter ${i} flipped`);
    }
  }
  const v = checkWithdraw({ currency: 'token', amount: '1', recipient: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD', balances: null, self: '' });
  assert.equal(v.field, 'recipient');
  assert.match(v.error, /EIP-55 checksum/);
});

test('the vendored keccak is the pinned @noble/hashes, unchanged', async () => {
  const { readFile } = await import('node:fs/promises');
  const pkg = JSON.parse(await readFile(new URL('./node_modules/@noble/hashes/package.json', import.meta.url), 'utf8'));
  const pinned = JSON.parse(await readFile(new URL('./package.json', import.meta.url), 'utf8')).devDependencies['@noble/hashes'];
  assert.equal(pkg.version, pinned, 'npm ci installed the pinned version');
  for (const f of ['sha3.js', '_u64.js', 'utils.js', 'LICENSE']) {
    const dir = f === 'LICENSE' ? 'third_party' : 'static/js/vendor';
    const vendored = await readFile(new URL(`../../internal/webui/${dir}/noble-hashes/${f}`, import.meta.url));
    const upstream = await readFile(new URL(`./node_modules/@noble/hashes/${f}`, import.meta.url));
    assert.ok(vendored.equals(upstream), `${f} differs from @noble/hashes ${pinned}`);
  }
});

test('checkWithdraw: a positive amount within the balance (below it for the native coin), a chain address not this node\'s', () => {
  const balances = { native: '2000000000000000000', relay: '5000000000000000000' };
  const to = '0x035C68d5251AfF759Ea945A05783F2290EA0Accf';
  const self = '0x944dB44066392Aab05E9D71D565f270c0Db4FBcc';
  assert.deepEqual(checkWithdraw({ currency: 'token', amount: '5', recipient: to, balances, self }), { wei: 5n * 10n ** 18n, recipient: to });
  assert.deepEqual(checkWithdraw({ currency: 'native', amount: '1.5', recipient: ` ${to.toLowerCase()} `, balances, self }), { wei: 15n * 10n ** 17n, recipient: to.toLowerCase() });
  for (const [currency, amount, recipient, field] of [
    ['token', '5.000000000000000001', to, 'amount'], ['native', '2', to, 'amount'], ['token', '0', to, 'amount'], ['token', '-1', to, 'amount'],
    ['token', 'abc', to, 'amount'], ['token', '1', '0x12', 'recipient'], ['token', '1', '', 'recipient'],
    ['token', '1', '0x' + '0'.repeat(40), 'recipient'], ['token', '1', self.toLowerCase(), 'recipient'],
  ]) {
    const v = checkWithdraw({ currency, amount, recipient, balances, self });
    assert.equal(v.field, field, `${currency} ${amount} ${recipient}: ${JSON.stringify(v)}`);
  }
  assert.ok(checkWithdraw({ currency: 'token', amount: '1000', recipient: to, balances: null, self }).wei, 'an unknown balance is the node\'s to check');
});

test('checkSend: REST when the node picks the path, the admin send line for 0 hops or named relayers', () => {
  const aliases = new Map([['me', SELF], ['bob', P1], ['r', P2]]);
  const base = { to: 'bob', path: 'auto', relayers: '', replies: '0', reliable: false, body: 'hello\nthere', aliases, self: SELF };
  assert.deepEqual(checkSend(base), { rest: { recipient: 'bob', body: 'hello\nthere' } });
  assert.deepEqual(checkSend({ ...base, replies: '2', reliable: true }), { rest: { recipient: 'bob', body: 'hello\nthere', replies: 2, reliable: true } });
  assert.deepEqual(checkSend({ ...base, path: 'direct' }), { line: 'send ,bob hello\nthere' });
  assert.deepEqual(checkSend({ ...base, path: 'named', relayers: ` r , ${P1}` , to: P2 }), { line: `send r,${P1},${P2} hello\nthere` });
  for (const [patch, field] of [
    [{ to: '' }, 'to'], [{ to: 'me' }, 'to'], [{ to: SELF }, 'to'], [{ to: 'nobody' }, 'to'], [{ to: 'a,b' }, 'to'],
    [{ body: '  ' }, 'body'], [{ replies: '17' }, 'replies'], [{ replies: '1.5' }, 'replies'],
    [{ path: 'direct', replies: '1' }, 'path'], [{ path: 'named', reliable: true, relayers: 'r' }, 'path'],
    [{ path: 'named', relayers: '' }, 'relayers'], [{ path: 'named', relayers: 'r,r,r,r' }, 'relayers'],
    [{ path: 'named', relayers: 'me' }, 'relayers'], [{ path: 'named', relayers: 'ghost' }, 'relayers'],
    [{ path: 'direct', body: 'x'.repeat(4096) }, 'body'],
  ]) {
    const v = checkSend({ ...base, ...patch });
    assert.equal(v.field, field, `${JSON.stringify(patch).slice(0, 80)}: ${JSON.stringify(v).slice(0, 200)}`);
  }
  assert.ok(checkSend({ ...base, body: 'x'.repeat(60000) }).rest, 'a long message over REST is the node\'s to bound (maxMessageBytes)');
});

test('topologyText: free routes, layers not drawn yet, the node\'s layer in the epoch', () => {
  assert.equal(topologyText(undefined), 'free routes');
  const shape = { layers: 3, width: 4, epochBlocks: 100, epoch: null, nextEpochBlock: null, relayers: 0, layer: null, grace: false };
  assert.equal(topologyText(shape), '3 layers of up to 4 relayers, epochs of 100 blocks; not drawn yet (no path until then)');
  const drawn = { ...shape, epoch: 7, nextEpochBlock: 800, relayers: 12, layer: 2 };
  assert.equal(topologyText(drawn), '3 layers of up to 4 relayers, epochs of 100 blocks; epoch 7 (12 relayers drawn, next draw at block 800): this node relays in layer 2');
  assert.equal(topologyText({ ...drawn, layer: null, grace: true }),
    "3 layers of up to 4 relayers, epochs of 100 blocks; epoch 7 (12 relayers drawn, next draw at block 800): this node relays in none, the previous epoch's channels kept for a grace");
});
