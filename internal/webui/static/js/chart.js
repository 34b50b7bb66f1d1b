// The history charts: the series the node keeps of itself (GET
// /api/v2/node/history, docs/COCKPIT.md) at one resolution (the last hour,
// day or week), drawn as small SVG line charts. historyCharts turns the
// answer into chart models (pure, unit-tested); drawLines draws one. A null
// in a series is a point without that value (the node was down, or could
// not read it): the line has a gap there, never a zero.
import { svgEl } from './svg.js';
import { byteCount, byteRate } from './sessions.js';

const W = 400;
const H = 150;
const PAD = { l: 64, r: 8, t: 8, b: 22 };

// Colour classes of the lines, in order (console.css: .series.c0 …).
const COLOURS = 6;

// PEER_LINES is how many peers the traffic chart draws, those with the
// most traffic over the window; the others are summed with the node's
// "other".
export const PEER_LINES = 5;

// number formats a value for an axis or a total: at most 4 significant
// decimals, no exponent for usual magnitudes.
export function number(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const a = Math.abs(v);
  if (a >= 1e6) return `${(v / 1e6).toFixed(2).replace(/\.?0+$/, '')} M`;
  if (a >= 1000) return v.toFixed(0);
  if (a >= 1) return String(Number(v.toFixed(2)));
  if (a === 0) return '0';
  return String(Number(v.toPrecision(3)));
}

// cumulative sums a counter's per-point growth along the window; a null
// point stays null (a gap) and adds nothing.
export function cumulative(values) {
  let sum = 0;
  return values.map((v) => {
    if (v === null || v === undefined || !Number.isFinite(v)) return null;
    sum += v;
    return sum;
  });
}

// total is the sum of the non-null values.
export function total(values) {
  return values.reduce((s, v) => s + (Number.isFinite(v) ? v : 0), 0);
}

// last is the last non-null value, or null.
export function last(values) {
  for (let i = values.length - 1; i >= 0; i--) if (Number.isFinite(values[i])) return values[i];
  return null;
}

function addUp(a, b) {
  if (!Number.isFinite(a) && !Number.isFinite(b)) return null;
  return (Number.isFinite(a) ? a : 0) + (Number.isFinite(b) ? b : 0);
}

// historyCharts turns a GET /node/history answer into the charts' models:
// [{id, title, summary, unit, lines: [{name, values}]}], values aligned with
// view.times. Counters are drawn cumulative over the window (what was
// earned since the window began), balances as read, per-peer traffic as
// bytes per second in each point. name(peerId) names a peer (alias first).
export function historyCharts(view, { symbol = 'tokens', name = (id) => id } = {}) {
  const n = (view?.times || []).length;
  const s = view?.series || {};
  const col = (k) => {
    const v = Array.isArray(s[k]) ? s[k] : [];
    return Array.from({ length: n }, (_, i) => (Number.isFinite(v[i]) ? v[i] : null));
  };
  const step = Number(view?.stepSeconds) || 15;
  const charts = [];
  const tok = col('tokenBalance');
  const nat = col('nativeBalance');
  charts.push({ id: 'token-balance', title: `${symbol} balance`, unit: symbol,
    summary: `now ${number(last(tok))} ${symbol}`, lines: [{ name: symbol, values: tok }] });
  charts.push({ id: 'native-balance', title: 'Native balance (gas)', unit: '',
    summary: `now ${number(last(nat))}`, lines: [{ name: 'native', values: nat }] });
  const earned = col('earned');
  const spent = col('spent');
  charts.push({ id: 'earnings', title: `Earned and spent (${symbol})`, unit: symbol,
    summary: `earned ${number(total(earned))}, spent ${number(total(spent))} ${symbol}`,
    lines: [{ name: 'earned', values: cumulative(earned) }, { name: 'spent', values: cumulative(spent) }] });
  const sent = col('messagesSent');
  const received = col('messagesReceived');
  charts.push({ id: 'messages', title: 'Messages', unit: '',
    summary: `${number(total(sent))} sent, ${number(total(received))} received`,
    lines: [{ name: 'sent', values: cumulative(sent) }, { name: 'received', values: cumulative(received) }] });
  const won = col('ticketsWon');
  const redeemed = col('ticketsRedeemed');
  charts.push({ id: 'tickets', title: 'Tickets', unit: '',
    summary: `${number(total(won))} won, ${number(total(redeemed))} redeemed`,
    lines: [{ name: 'won', values: cumulative(won) }, { name: 'redeemed', values: cumulative(redeemed) }] });

  // Per-peer traffic: the PEER_LINES busiest peers of the window, the rest
  // with "other", in bytes per second.
  const rate = (p) => Array.from({ length: n }, (_, i) => {
    const b = addUp(p?.bytesIn?.[i], p?.bytesOut?.[i]);
    return b === null ? null : b / step;
  });
  const peers = (view?.peers || []).map((p) => ({ id: String(p.peerId ?? ''), values: rate(p), sum: 0 }));
  for (const p of peers) p.sum = total(p.values);
  peers.sort((a, b) => b.sum - a.sum || a.id.localeCompare(b.id));
  const lines = peers.slice(0, PEER_LINES).map((p) => ({ name: name(p.id), peer: p.id, values: p.values }));
  let other = rate(view?.other);
  for (const p of peers.slice(PEER_LINES)) other = other.map((v, i) => addUp(v, p.values[i]));
  if (total(other) > 0) lines.push({ name: 'other peers', values: other });
  const bytes = (peers.reduce((sum, p) => sum + p.sum, 0) + total(rate(view?.other))) * step;
  charts.push({ id: 'traffic', title: 'Traffic per peer (in + out)', unit: 'B/s', rate: true,
    summary: lines.length ? `${byteCount(bytes)} with ${peers.length} peer${peers.length === 1 ? '' : 's'}` : 'no traffic',
    lines });
  return charts;
}

// clock formats a time for the x axis: hours and minutes for a window up
// to a day, the date for a week.
function clock(t, span) {
  const d = new Date(t);
  if (span > 86_400_000) return d.toLocaleDateString([], { month: 'short', day: 'numeric' }) + ' ' + d.toLocaleTimeString([], { hour12: false, hour: '2-digit', minute: '2-digit' });
  return d.toLocaleTimeString([], { hour12: false, hour: '2-digit', minute: '2-digit' });
}

// drawLines draws a chart model into svg (keeping its <title> and <desc>):
// x from t1 − span to t1 (ms), y from 0 (or the least value) to the
// greatest. It sets data-points (points with a value) and data-lines.
export function drawLines(svg, chart, times, span, t1 = Date.now()) {
  const title = svg.querySelector('title');
  const desc = svg.querySelector('desc');
  const kids = [title, desc].filter(Boolean);
  const t0 = t1 - span;
  const ts = times.map((t) => Date.parse(t));
  let vmin = 0;
  let vmax = 0;
  let points = 0;
  for (const l of chart.lines) {
    for (const v of l.values) {
      if (v === null) continue;
      points++;
      vmin = Math.min(vmin, v);
      vmax = Math.max(vmax, v);
    }
  }
  if (vmax === vmin) vmax = vmin + 1;
  const x = (t) => PAD.l + ((t - t0) / (t1 - t0)) * (W - PAD.l - PAD.r);
  const y = (v) => H - PAD.b - ((v - vmin) / (vmax - vmin)) * (H - PAD.t - PAD.b);
  const unit = chart.rate ? byteRate : number;
  kids.push(svgEl('line', { x1: PAD.l, y1: H - PAD.b, x2: W - PAD.r, y2: H - PAD.b, class: 'axis' }));
  kids.push(svgEl('line', { x1: PAD.l, y1: PAD.t, x2: PAD.l, y2: H - PAD.b, class: 'axis' }));
  kids.push(svgEl('line', { x1: PAD.l, y1: y(vmax), x2: W - PAD.r, y2: y(vmax), class: 'grid-line' }));
  kids.push(svgEl('text', { x: PAD.l - 6, y: y(vmax) + 4, class: 'tick y' }, unit(vmax)));
  kids.push(svgEl('text', { x: PAD.l - 6, y: y(vmin) + 4, class: 'tick y' }, unit(vmin)));
  kids.push(svgEl('text', { x: PAD.l, y: H - 6, class: 'tick' }, clock(t0, span)));
  kids.push(svgEl('text', { x: W - PAD.r, y: H - 6, class: 'tick end' }, clock(t1, span)));
  chart.lines.forEach((l, k) => {
    let d = '';
    let pen = false;
    l.values.forEach((v, i) => {
      const t = ts[i];
      if (v === null || Number.isNaN(t) || t < t0) {
        pen = false;
        return;
      }
      if (!pen && (i + 1 >= l.values.length || l.values[i + 1] === null)) {
        // A lone point (the first of a window, or between gaps): a dot.
        kids.push(svgEl('circle', { cx: x(t).toFixed(1), cy: y(v).toFixed(1), r: 2.5, class: `dot c${k % COLOURS}` }));
      }
      d += `${pen ? 'L' : 'M'}${x(t).toFixed(1)},${y(v).toFixed(1)}`;
      pen = true;
    });
    if (d) kids.push(svgEl('path', { d, class: `series c${k % COLOURS}` }));
  });
  svg.replaceChildren(...kids);
  svg.dataset.points = String(points);
  svg.dataset.lines = String(chart.lines.length);
}
