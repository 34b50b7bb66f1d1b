// Checks of what the operator typed, before any confirm dialog: amounts in
// tokens, the open-channel form (a peer that has a channel already is
// refused), chain addresses with their EIP-55 checksum, and when a closing
// channel may be finalized. Pure: unit-tested without a browser.

// keccak_256 is the vendored @noble/hashes (its version is pinned in
// e2e/browser/package.json, and the unit tests check the copy is unchanged).
import { keccak_256 } from './vendor/noble-hashes/sha3.js';

const DECIMALS = 18;

// toWei turns a decimal amount of whole tokens ("2.5") into wei (a BigInt),
// or null when it is not a plain non-negative decimal with at most 18
// decimals.
export function toWei(text) {
  const s = String(text ?? '').trim();
  const m = /^([0-9]+)(?:\.([0-9]+))?$/.exec(s);
  if (!m || (m[2] && m[2].length > DECIMALS)) return null;
  return BigInt(m[1]) * 10n ** BigInt(DECIMALS) + BigInt((m[2] || '').padEnd(DECIMALS, '0'));
}

// checkAmount says why an amount of tokens cannot be used ('' when it can):
// a positive decimal, at most max wei (a decimal string or BigInt) when
// max is known.
export function checkAmount(text, max) {
  const wei = toWei(text);
  if (wei === null) return 'The amount must be a number of tokens such as 2.5 (at most 18 decimals).';
  if (wei <= 0n) return 'The amount must be more than 0.';
  if (max !== undefined && max !== null) {
    let m;
    try {
      m = BigInt(max);
    } catch {
      return '';
    }
    if (wei > m) return 'The amount is more than the node\'s token balance.';
  }
  return '';
}

// resolvePeer turns what the operator typed into the PeerId it names: an
// alias the node knows, or the text itself.
export function resolvePeer(text, aliases) {
  const s = String(text ?? '').trim();
  return aliases?.get?.(s) || s;
}

// checkOpen checks the open-channel form: {peer, amount} as typed, the
// GET /channels answer, the aliases (alias → PeerId), this node's PeerId
// and its token balance in wei. It returns {peerId} or {field, error}.
export function checkOpen({ peer, amount, channels, aliases, self, balance }) {
  const typed = String(peer ?? '').trim();
  if (!typed) return { field: 'peer', error: 'Name the peer to open a channel to.' };
  if (/\s/.test(typed)) return { field: 'peer', error: 'A peer is one word: a PeerId, a chain address or an alias.' };
  const peerId = resolvePeer(typed, aliases);
  if (peerId === self || typed === 'me') return { field: 'peer', error: 'A channel needs another node than this one.' };
  const has = (channels?.outgoing || []).find((c) => c.peerId === peerId && c.status !== 'Closed');
  if (has) {
    return {
      field: 'peer',
      error: has.status === 'Open'
        ? `There is an open channel to ${typed} already; close it first, or let autoFund top it up.`
        : `The channel to ${typed} is closing; finalize its closure before opening a new one.`,
    };
  }
  const why = checkAmount(amount, balance);
  if (why) return { field: 'amount', error: why };
  return { peerId };
}

// finalizable reports whether a channel's closure may be finalized at now
// (ms): an outgoing PendingToClose channel whose closureTime has passed.
export function finalizable(c, now = Date.now()) {
  if (c?.status !== 'PendingToClose' || c?.type !== 'outgoing') return false;
  const t = Date.parse(c.closureTime);
  return !Number.isNaN(t) && now >= t;
}

// PEER_ID is the form of a secp256k1 PeerId (the OpenAPI document's
// PeerId pattern).
export const PEER_ID = /^16Uiu2HA[1-9A-HJ-NP-Za-km-z]{45}$/;

// utf8Length is how many bytes s takes in UTF-8.
export function utf8Length(s) {
  return new TextEncoder().encode(String(s)).length;
}

// checkAlias checks the alias form: {alias, peer} as typed, the aliases
// (alias → PeerId) and this node's PeerId. An alias is 1 to 64 bytes of
// printable characters without spaces, not `me`, not a PeerId; the peer is
// a PeerId or an alias the node knows. It returns {alias, peerId,
// replaces} (replaces: the PeerId the alias names now, or '') or {field,
// error}. Pure.
export function checkAlias({ alias, peer, aliases, self }) {
  const a = String(alias ?? '');
  if (a.trim() === '') return { field: 'alias', error: 'Name the alias.' };
  if (/\s/.test(a)) return { field: 'alias', error: 'An alias is one word: no spaces.' };
  if (/[\u0000-\u001f\u007f-\u009f]/.test(a)) return { field: 'alias', error: 'An alias holds printable characters only.' };
  if (utf8Length(a) > 64) return { field: 'alias', error: 'An alias is at most 64 bytes.' };
  if (a === 'me') return { field: 'alias', error: '"me" is this node\'s own name.' };
  if (PEER_ID.test(a)) return { field: 'alias', error: 'An alias cannot be a PeerId.' };
  const typed = String(peer ?? '').trim();
  if (!typed) return { field: 'peer', error: 'Name the peer: its PeerId, or an alias it has.' };
  const peerId = PEER_ID.test(typed) ? typed : aliases?.get?.(typed);
  if (!peerId) return { field: 'peer', error: 'The peer must be a PeerId (16Uiu2HA…, 53 characters) or an alias the node knows.' };
  if (peerId === self) return { field: 'peer', error: 'This node is "me" already.' };
  const now = aliases?.get?.(a) || '';
  return { alias: a, peerId, replaces: now && now !== peerId ? now : '' };
}

// ADDRESS is the form of a chain address.
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

// checksumOK reports whether a chain address (0x and 40 hexadecimal digits)
// passes EIP-55: all lower case or all upper case carries no checksum;
// mixed case must capitalise exactly the letters whose nibble in the
// keccak-256 of the lower-case hex digits is 8 or more.
export function checksumOK(address) {
  const hex = String(address).slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
  const lower = hex.toLowerCase();
  const hash = keccak_256(new TextEncoder().encode(lower));
  for (let i = 0; i < 40; i++) {
    const c = hex[i];
    if (c >= '0' && c <= '9') continue;
    const nibble = (hash[i >> 1] >> (i % 2 ? 0 : 4)) & 0x0f;
    if ((nibble >= 8) !== (c !== lower[i])) return false;
  }
  return true;
}

// checkWithdraw checks the withdraw form: {currency ('native' or 'token'),
// amount in whole units, recipient} as typed, the balances (GET
// /account/balances: {native, relay} in wei) and this node's chain address.
// The amount must be positive and within the balance (for the native coin
// below it: the node pays the gas from it too); the recipient a chain
// address other than the zero address and this node's own, whose EIP-55
// checksum holds when it is written in mixed case (a mistyped letter). It returns {wei, recipient} or {field,
// error}. Pure.
export function checkWithdraw({ currency, amount, recipient, balances, self }) {
  const native = currency === 'native';
  const why = checkAmount(amount, undefined);
  if (why) return { field: 'amount', error: why };
  const wei = toWei(amount);
  let have = null;
  try {
    have = BigInt(native ? balances?.native : balances?.relay);
  } catch {
    have = null;
  }
  if (have !== null) {
    if (native && wei >= have) return { field: 'amount', error: 'The amount must be less than the native balance: the node pays the gas from it.' };
    if (!native && wei > have) return { field: 'amount', error: 'The amount is more than the node\'s token balance.' };
  }
  const to = String(recipient ?? '').trim();
  if (!ADDRESS.test(to)) return { field: 'recipient', error: 'The recipient must be a chain address: 0x and 40 hexadecimal digits.' };
  if (!checksumOK(to)) return { field: 'recipient', error: 'The address\'s mixed case does not match its EIP-55 checksum: a character is mistyped (or write it all in lower case).' };
  if (/^0x0{40}$/.test(to)) return { field: 'recipient', error: 'The zero address burns what it receives.' };
  if (self && to.toLowerCase() === String(self).toLowerCase()) return { field: 'recipient', error: 'That is this node\'s own address.' };
  return { wei, recipient: to };
}

// MAX_LINE is the longest admin command line (ws.MaxLineBytes).
export const MAX_LINE = 4096;

// checkSend checks the send form: {to, path ('auto', 'direct' or
// 'named'), relayers (comma-separated, for 'named'), replies, reliable,
// body} as typed, the aliases and this node's PeerId. The node picks the
// relayers over REST (POST /messages, with replies and reliable); a path
// of the operator's goes as the admin command `send ,<peer> <text>` (0
// hops) or `send <r1>,…,<peer> <text>` (1 to 3 relayers), one command line
// of at most 4096 bytes, without replies or reliable. It returns {rest:
// {recipient, body, replies?, reliable?}} or {line} or {field, error}.
// Pure.
export function checkSend({ to, path, relayers, replies, reliable, body, aliases, self }) {
  const peer = String(to ?? '').trim();
  const isSelf = (p) => p === 'me' || p === self || aliases?.get?.(p) === self;
  if (!peer) return { field: 'to', error: 'Name the recipient: a PeerId or an alias.' };
  if (/[\s,]/.test(peer)) return { field: 'to', error: 'The recipient is one PeerId or alias.' };
  if (isSelf(peer)) return { field: 'to', error: 'A node cannot send a message to itself.' };
  if (!PEER_ID.test(peer) && !aliases?.get?.(peer)) return { field: 'to', error: 'The recipient must be a PeerId (16Uiu2HA…) or an alias the node knows.' };
  const text = String(body ?? '');
  if (text.trim() === '') return { field: 'body', error: 'Write the message.' };
  const r = String(replies ?? '').trim();
  const n = r === '' ? 0 : Number(r);
  if (!Number.isInteger(n) || n < 0 || n > 16) return { field: 'replies', error: 'Reply blocks: a whole number from 0 to 16.' };
  if (path === 'auto') {
    const rest = { recipient: peer, body: text };
    if (n > 0) rest.replies = n;
    if (reliable) rest.reliable = true;
    return { rest };
  }
  if (n > 0 || reliable) return { field: 'path', error: 'Reply blocks and reliable delivery need the path the node picks.' };
  let hops = [];
  if (path === 'named') {
    hops = String(relayers ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
    if (hops.length < 1 || hops.length > 3) return { field: 'relayers', error: 'Name 1 to 3 relayers, separated by commas.' };
    for (const h of hops) {
      if (/\s/.test(h)) return { field: 'relayers', error: 'A relayer is one PeerId or alias.' };
      if (isSelf(h)) return { field: 'relayers', error: 'This node cannot relay its own message.' };
      if (!PEER_ID.test(h) && !aliases?.get?.(h)) return { field: 'relayers', error: `${h} is neither a PeerId nor an alias the node knows.` };
    }
  } else if (path !== 'direct') {
    return { field: 'path', error: 'Choose a path.' };
  }
  const line = `send ${path === 'direct' ? ',' : hops.map((h) => h + ',').join('')}${peer} ${text}`;
  if (utf8Length(line) > MAX_LINE) return { field: 'body', error: `A message over a path you choose goes as one command line: at most ${MAX_LINE} bytes with the path; this one is ${utf8Length(line)}.` };
  return { line };
}
