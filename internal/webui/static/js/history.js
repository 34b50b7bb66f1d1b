// The history pane: the charts of what the node kept of itself (GET
// /api/v2/node/history) over the last hour, day or week, so that a page
// opened now shows the past. The resolution buttons switch the window; the
// pane reads the history again every 15 s (a point's step at the hour
// resolution). A node that keeps no history (503) is said so.
import { el } from './text.js';
import { svgEl } from './svg.js';
import { historyCharts, drawLines } from './chart.js';
import { ApiError } from './api.js';

const RES_KEY = 'relayd.console.resolution';
export const RESOLUTIONS = { hour: 'the last hour', day: 'the last day', week: 'the last week' };

export class History {
  // box holds the charts, note says what is shown, buttons are the
  // resolution buttons (data-resolution); api() the REST API or null;
  // symbol() the token's symbol; name(peerId) a peer's name.
  constructor({ box, note, buttons, api, symbol, name }) {
    Object.assign(this, { box, note, buttons, api, symbol, name });
    this.resolution = sessionStorage.getItem(RES_KEY) || 'hour';
    if (!RESOLUTIONS[this.resolution]) this.resolution = 'hour';
    this.figures = new Map(); // chart id -> {fig, caption, svg, legend}
    this.busy = false;
    this.last = 0;
    for (const b of buttons) {
      b.addEventListener('click', () => this.switch(b.dataset.resolution));
    }
    this.mark();
  }

  mark() {
    for (const b of this.buttons) b.setAttribute('aria-pressed', String(b.dataset.resolution === this.resolution));
    this.box.dataset.resolution = this.resolution;
  }

  switch(res) {
    if (!RESOLUTIONS[res]) return;
    this.resolution = res;
    sessionStorage.setItem(RES_KEY, res);
    this.mark();
    this.refresh(true);
  }

  reset() {
    this.figures.clear();
    this.box.replaceChildren();
    this.note.textContent = '';
    this.last = 0;
  }

  // refresh reads the history when 15 s passed since the last read, or at
  // once when forced.
  async refresh(force = false) {
    const api = this.api();
    if (!api || this.busy || (!force && Date.now() - this.last < 15_000)) return;
    this.busy = true;
    const res = this.resolution;
    try {
      const view = await api.get(`/node/history?resolution=${res}`);
      if (res !== this.resolution) return; // switched meanwhile
      this.last = Date.now();
      this.draw(view);
    } catch (err) {
      this.note.textContent = err instanceof ApiError && err.status === 503
        ? 'This node keeps no history.'
        : `The history could not be read: ${err.message}`;
      this.box.dataset.state = 'failed';
    } finally {
      this.busy = false;
    }
  }

  draw(view) {
    const charts = historyCharts(view, { symbol: this.symbol(), name: this.name });
    const span = (Number(view.spanSeconds) || 3600) * 1000;
    const step = (Number(view.stepSeconds) || 15) * 1000;
    const times = view.times || [];
    // The window ends at the end of the newest step.
    const t1 = Math.max(Date.now(), times.length ? Date.parse(times[times.length - 1]) + step : 0);
    const kept = times.length;
    this.note.textContent = `${RESOLUTIONS[view.resolution] || view.resolution}, one point every ${stepText(view.stepSeconds)}: `
      + (kept ? `${kept} point${kept === 1 ? '' : 's'} kept since ${new Date(times[0]).toLocaleString([], { hour12: false })}.` : 'no point kept yet.');
    for (const c of charts) {
      const f = this.figure(c.id);
      f.caption.replaceChildren(el('span', c.title, { class: 'fig-title' }), el('span', ` · ${c.summary}`, { class: 'muted' }));
      f.desc.textContent = `${c.title} over ${RESOLUTIONS[view.resolution] || view.resolution}: ${c.summary}.`;
      drawLines(f.svg, c, times, span, t1);
      f.legend.replaceChildren(...c.lines.map((l, k) => {
        const li = el('li');
        li.append(el('span', undefined, { class: `swatch line c${k % 6}` }), el('span', l.name, { class: l.peer ? 'peer-id' : '' }));
        if (l.peer) li.title = l.peer;
        return li;
      }));
      f.legend.hidden = c.lines.length < 2 && !c.rate;
    }
    this.box.dataset.state = 'drawn';
    this.box.dataset.points = String(kept);
    this.box.dataset.first = kept ? String(times[0]) : '';
  }

  figure(id) {
    let f = this.figures.get(id);
    if (f) return f;
    const fig = el('figure', undefined, { class: 'chart-fig', 'data-chart': id });
    const caption = el('figcaption', undefined, { id: `chart-${id}-caption` });
    const svg = svgEl('svg', { id: `chart-${id}`, class: 'chart', viewBox: '0 0 400 150', role: 'img', 'aria-labelledby': `chart-${id}-caption`, 'aria-describedby': `chart-${id}-desc` });
    const desc = svgEl('desc', { id: `chart-${id}-desc` });
    svg.append(desc);
    const legend = el('ul', undefined, { class: 'legend' });
    fig.append(caption, svg, legend);
    this.box.append(fig);
    f = { fig, caption, svg, desc, legend };
    this.figures.set(id, f);
    return f;
  }
}

function stepText(s) {
  const n = Number(s);
  if (n % 3600 === 0) return `${n / 3600} h`;
  if (n % 60 === 0) return `${n / 60} min`;
  return `${n} s`;
}
