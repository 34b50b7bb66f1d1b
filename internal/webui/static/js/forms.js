// Checks of what the operator typed, before any confirm dialog: amounts in
// tokens, the open-channel form (a peer that has a channel already is
// refused), and when a closing channel may be finalized. Pure: unit-tested
// without a browser.

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
