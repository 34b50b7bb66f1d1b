// Line charts over time: messages received and tickets earned, cumulative
// since the console opened (messages include the replayed history).
import { svgEl } from './svg.js';

const W = 640;
const H = 150;
const PAD = { l: 48, r: 12, t: 22, b: 24 };

function hhmm(t) {
  return new Date(t).toLocaleTimeString([], { hour12: false, hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

// drawChart renders points [{t (ms), v}] as a step line into svg, keeping
// its <title>; label names the series.
export function drawChart(svg, points, label, cls) {
  const title = svg.querySelector('title');
  const kids = [title];
  const now = Date.now();
  const pts = points.length ? points : [{ t: now, v: 0 }];
  const t0 = Math.min(pts[0].t, now - 60_000);
  const t1 = Math.max(pts[pts.length - 1].t, now);
  const vmax = Math.max(1, ...pts.map((p) => p.v));
  const x = (t) => PAD.l + ((t - t0) / (t1 - t0 || 1)) * (W - PAD.l - PAD.r);
  const y = (v) => H - PAD.b - (v / vmax) * (H - PAD.t - PAD.b);
  kids.push(svgEl('text', { x: PAD.l, y: 14, class: 'chart-title' }, `${label}: ${pts[pts.length - 1].v}`));
  kids.push(svgEl('line', { x1: PAD.l, y1: H - PAD.b, x2: W - PAD.r, y2: H - PAD.b, class: 'axis' }));
  kids.push(svgEl('line', { x1: PAD.l, y1: PAD.t, x2: PAD.l, y2: H - PAD.b, class: 'axis' }));
  kids.push(svgEl('text', { x: PAD.l - 6, y: y(vmax) + 4, class: 'tick y' }, String(vmax)));
  kids.push(svgEl('text', { x: PAD.l - 6, y: y(0) + 4, class: 'tick y' }, '0'));
  kids.push(svgEl('text', { x: PAD.l, y: H - 6, class: 'tick' }, hhmm(t0)));
  kids.push(svgEl('text', { x: W - PAD.r, y: H - 6, class: 'tick end' }, hhmm(t1)));
  let d = `M${x(t0).toFixed(1)},${y(0).toFixed(1)}`;
  let last = 0;
  for (const p of pts) {
    d += ` H${x(p.t).toFixed(1)} V${y(p.v).toFixed(1)}`;
    last = p.v;
  }
  d += ` H${x(t1).toFixed(1)} V${y(last).toFixed(1)}`;
  kids.push(svgEl('path', { d, class: `series ${cls}` }));
  svg.replaceChildren(...kids);
  svg.dataset.last = String(last);
}

// Series is a cumulative count over time, at most max points.
export class Series {
  constructor(max = 2000) {
    this.points = [];
    this.max = max;
    this.dropped = 0; // events counted in points trimmed away
  }

  // add counts one event at time t (ms); events may come a little out of
  // order (replayed history), so the point goes where it belongs.
  add(t) {
    this.points.push({ t, v: 0 });
    this.points.sort((a, b) => a.t - b.t);
    this.points.forEach((p, i) => { p.v = this.dropped + i + 1; });
    this.dropped += this.trim();
  }

  // set records the value v at time t when it changed.
  set(t, v) {
    const last = this.points[this.points.length - 1];
    if (last && last.v === v) return;
    this.points.push({ t, v });
    this.trim();
  }

  // trim drops the oldest points beyond max and returns how many.
  trim() {
    const n = Math.max(0, this.points.length - this.max);
    this.points.splice(0, n);
    return n;
  }
}
