// Rendering of untrusted text. Everything the page shows that came from the
// node or from a remote peer (message text, aliases, log lines quoting
// them) goes through visible() into text nodes: never through HTML parsing,
// and with every character a terminal or a bidirectional renderer could
// interpret replaced by a visible stand-in.

// Format, bidirectional and separator characters that could reorder or hide
// the text around them.
const INVISIBLE = /[\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/;

// stand-in returns what is shown for one character that must not be
// rendered as itself, or "" when it may be.
function standIn(ch) {
  const c = ch.codePointAt(0);
  if (c < 0x20) return String.fromCodePoint(0x2400 + c); // ␀ … ␟, ␛ for ESC
  if (c === 0x7f) return '\u2421'; // ␡
  if (c >= 0x80 && c <= 0x9f) return `\u27e8U+${c.toString(16).toUpperCase().padStart(4, '0')}\u27e9`;
  if (INVISIBLE.test(ch)) return `\u27e8U+${c.toString(16).toUpperCase().padStart(4, '0')}\u27e9`;
  if (c >= 0xd800 && c <= 0xdfff) return '\ufffd'; // a lone surrogate
  return '';
}

// visibleParts splits s into runs: {text, ctl} where ctl runs are stand-ins
// for control characters.
export function visibleParts(s) {
  const parts = [];
  let plain = '';
  for (const ch of String(s)) {
    const v = standIn(ch);
    if (v === '') {
      plain += ch;
      continue;
    }
    if (plain) parts.push({ text: plain, ctl: false });
    plain = '';
    parts.push({ text: v, ctl: true });
  }
  if (plain) parts.push({ text: plain, ctl: false });
  return parts;
}

// visible returns s with every control character replaced by its stand-in.
export function visible(s) {
  return visibleParts(s).map((p) => p.text).join('');
}

// textInto appends s to el as text nodes, the stand-ins in spans of class
// "ctl" so that they stand out.
export function textInto(el, s) {
  for (const p of visibleParts(s)) {
    if (p.ctl) {
      const span = document.createElement('span');
      span.className = 'ctl';
      span.textContent = p.text;
      el.append(span);
    } else {
      el.append(document.createTextNode(p.text));
    }
  }
  return el;
}

// el builds an element with text content (made visible) and attributes.
export function el(tag, text, attrs = {}) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else e.setAttribute(k, v);
  }
  if (text !== undefined && text !== null) textInto(e, String(text));
  return e;
}

const WEI = 10n ** 18n;

// tokens formats a decimal string of wei as whole tokens with up to
// digits decimals ("1.5", "0.0001"); "?" when it is not a number.
export function tokens(wei, digits = 4) {
  let v;
  try {
    v = BigInt(wei);
  } catch {
    return '?';
  }
  const neg = v < 0n;
  if (neg) v = -v;
  const whole = v / WEI;
  let frac = (v % WEI).toString().padStart(18, '0').slice(0, digits).replace(/0+$/, '');
  if (frac === '' && whole === 0n && v !== 0n) return (neg ? '>-' : '<') + '0.' + '0'.repeat(digits - 1) + '1'; // not "0"
  return (neg ? '-' : '') + whole.toString() + (frac ? '.' + frac : '');
}

// shortId abbreviates a PeerId or address for narrow places: the first 8
// and last 4 characters.
export function shortId(id) {
  const s = String(id);
  return s.length > 16 ? `${s.slice(0, 8)}…${s.slice(-4)}` : s;
}

// ago says how long before now a time in ms was, coarsely.
export function ago(ms, now = Date.now()) {
  if (!ms) return 'never';
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

// topologyText describes the network's layers and this node's place in them (GET /node/info's
// topology; absent: free routes).
export function topologyText(t) {
  if (!t) return 'free routes';
  const shape = `${t.layers} layers of up to ${t.width} relayers, epochs of ${t.epochBlocks} blocks`;
  if (t.epoch === null) return `${shape}; not drawn yet (no path until then)`;
  const place = t.layer ? `this node relays in layer ${t.layer}` : 'this node relays in none';
  const grace = t.grace ? ", the previous epoch's channels kept for a grace" : '';
  return `${shape}; epoch ${t.epoch} (${t.relayers} relayers drawn, next draw at block ${t.nextEpochBlock}): ${place}${grace}`;
}
