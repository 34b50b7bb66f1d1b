// The alerts panel: what the node raised (GET /api/v2/node/alerts,
// docs/COCKPIT.md), critical first, each with its severity, since when, its
// detail and its subjects, read again with the tables. The detail and the
// subjects are shown as text (text.js), never as HTML. A node that
// evaluates no alerts (503) is said so.
import { el, ago, shortId } from './text.js';
import { ApiError } from './api.js';

// NAMES says in words what each alert id means.
export const NAMES = {
  providerDown: 'Chain provider down',
  indexerBehind: 'Indexer behind the chain',
  nativeBalanceLow: 'Native balance low (gas)',
  channelDepleted: 'Channel depleted',
  channelPeersUnreachable: 'Channel peers unreachable',
};

// alertRow is what the panel shows of one alert of GET /node/alerts.
export function alertRow(a, now = Date.now()) {
  const id = String(a?.id ?? '');
  const severity = a?.severity === 'critical' ? 'critical' : 'warning';
  const since = Date.parse(a?.since);
  return {
    id,
    severity,
    title: NAMES[id] || id,
    since: Number.isNaN(since) ? '' : `since ${ago(since, now)}`,
    iso: Number.isNaN(since) ? '' : new Date(since).toISOString(),
    detail: String(a?.detail ?? ''),
    subjects: Array.isArray(a?.subjects) ? a.subjects.map(String) : [],
  };
}

export class Alerts {
  // pane is the section (hidden while nothing is raised? no: it says so),
  // list the <ul>, summary the heading's count; api() the REST API;
  // name(id) names a subject.
  constructor({ pane, list, summary, api, name }) {
    Object.assign(this, { pane, list, summary, api, name });
  }

  reset() {
    this.list.replaceChildren();
    this.summary.textContent = '';
    this.pane.dataset.state = '';
  }

  async refresh() {
    const api = this.api();
    if (!api) return;
    let answer;
    try {
      answer = await api.get('/node/alerts');
    } catch (err) {
      this.pane.dataset.state = 'failed';
      this.pane.dataset.count = '0';
      this.summary.textContent = err instanceof ApiError && err.status === 503
        ? 'this node evaluates no alerts' : `not read: ${err.message}`;
      this.list.replaceChildren();
      return;
    }
    const rows = (answer?.alerts || []).map((a) => alertRow(a));
    const crit = rows.filter((r) => r.severity === 'critical').length;
    this.pane.dataset.state = rows.length ? (crit ? 'critical' : 'warning') : 'clear';
    this.pane.dataset.count = String(rows.length);
    this.summary.textContent = rows.length
      ? `${crit} critical, ${rows.length - crit} warning${rows.length - crit === 1 ? '' : 's'}`
      : 'none raised';
    this.list.replaceChildren(...rows.map((r) => {
      const li = el('li', undefined, { class: `alert ${r.severity}`, 'data-id': r.id });
      const head = el('p', undefined, { class: 'alert-head' });
      head.append(el('span', r.severity, { class: 'severity' }), el('strong', ` ${r.title} `), el('code', r.id));
      const when = el('span', ` ${r.since}`, { class: 'muted' });
      if (r.iso) when.title = r.iso;
      head.append(when);
      li.append(head, el('p', r.detail, { class: 'alert-detail' }));
      if (r.subjects.length) {
        const s = el('p', 'Concerns: ', { class: 'alert-subjects muted' });
        r.subjects.forEach((id, i) => {
          if (i) s.append(document.createTextNode(', '));
          const span = el('span', this.name ? this.name(id) : shortId(id), { class: 'peer-id' });
          span.title = id;
          s.append(span);
        });
        li.append(s);
      }
      return li;
    }));
  }
}
