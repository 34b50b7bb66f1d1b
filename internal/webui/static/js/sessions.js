// The sessions pane: the sessions this node opened towards exits (GET
// /api/v2/sessions), oldest first, each with where it listens and goes, its
// connections, what went out and came in (rate over the last 10 s, and
// total) and its retransmissions; a form opens one and a button closes
// one, both as admin commands (`session open …`, `session close <id>`), so
// they show in the stream like a typed command with the node's answer. A
// node without its session gateway says so in GET /node/info
// ("sessions": false): the pane says so and asks nothing (a refused
// request would be an error in the browser's console). Every string
// reaches the page as text (text.js), whoever chose it.
import { el, visible } from './text.js';

// byteCount is a number of bytes in SI units, as the node's console writes
// them: "512 B", "5.1 kB", "1.0 MB".
export function byteCount(v) {
  let n = Number(v);
  if (!Number.isFinite(n) || n < 0) n = 0;
  if (n < 1000) return `${n.toFixed(0)} B`;
  const units = 'kMGTPE';
  let i = -1;
  while (n >= 999.95 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${n.toFixed(1)} ${units[i]}B`;
}

// byteRate is a rate in bytes per second in SI units.
export function byteRate(v) {
  return `${byteCount(v)}/s`;
}

// sessionRow is what the pane shows of one session of GET /sessions.
export function sessionRow(s) {
  const d = new Date(s.opened);
  const ok = !Number.isNaN(d.getTime());
  return {
    id: String(s.id ?? ''),
    protocol: String(s.protocol ?? ''),
    listen: String(s.listen ?? ''),
    destination: String(s.destination ?? ''),
    what: s.service ? `service:${s.service}` : String(s.target ?? ''),
    conns: `${Number(s.active) || 0} / ${Number(s.total) || 0}`,
    out: `${byteRate(s.rateOut)} (${byteCount(s.bytesOut)})`,
    in: `${byteRate(s.rateIn)} (${byteCount(s.bytesIn)})`,
    retransmits: String(Number(s.retransmits) || 0),
    opened: ok ? d.toLocaleTimeString([], { hour12: false }) : String(s.opened ?? ''),
    iso: ok ? d.toISOString() : '',
  };
}

// openLine is the admin command that opens the session the form describes,
// or why it cannot: each field is one word (the command line splits on
// spaces), the protocol tcp or udp, the target host:port or service:NAME,
// the listen address optional.
export function openLine({ destination, protocol, target, listen }) {
  const [dest, proto, what, at] = [destination, protocol, target, listen].map((v) => String(v ?? '').trim());
  if (!dest || !what) return { error: 'A session needs a destination and a target (host:port or service:name).' };
  for (const [name, v] of [['destination', dest], ['target', what], ['listen address', at]]) {
    if (/\s/.test(v)) return { error: `The ${name} must not contain spaces.` };
  }
  if (proto !== 'tcp' && proto !== 'udp') return { error: 'The protocol is tcp or udp.' };
  if (!what.startsWith('service:') && !/^(\[[^\]]+\]|[^:]+):[0-9]+$/.test(what)) {
    return { error: 'The target is host:port (IPv6 in brackets) or service:name.' };
  }
  if (at && !/^(\[[^\]]+\]|[^:]+):[0-9]+$/.test(at)) return { error: 'The listen address is host:port.' };
  return { line: `session open ${dest} ${proto} ${what}${at ? ` ${at}` : ''}` };
}

export class Sessions {
  // table, note, form, fields ({destination, protocol, target, listen}
  // inputs): the pane's elements; api(): the REST client (null when logged
  // out); command(line): runs an admin command; confirm(text, ok): the
  // confirm dialog; say(lines): the status line; nameOf(id): a peer's name.
  constructor({ table, note, form, fields, api, command, confirm, say, nameOf }) {
    Object.assign(this, { table, note, form, fields, api, command, confirm, say, nameOf });
    this.available = undefined; // unknown until GET /node/info tells
    this.busy = false;
    this.again = false;
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.open();
    });
  }

  // reset forgets what the pane showed (a new login).
  reset() {
    this.available = undefined;
    this.table.tBodies[0].replaceChildren();
    this.table.hidden = false;
    this.form.hidden = false;
    this.note.textContent = '';
  }

  // setAvailable takes GET /node/info's sessions flag.
  setAvailable(on) {
    if (on === this.available) return;
    this.available = on;
    this.table.hidden = !on;
    this.form.hidden = !on;
    if (!on) {
      this.table.tBodies[0].replaceChildren();
      this.note.textContent = 'This node opens no sessions: it runs without its session gateway.';
    }
  }

  // refresh reads the sessions again; calls while one runs make one more.
  async refresh() {
    const api = this.api();
    if (!api || !this.available) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    try {
      const { data } = await api.fetch('GET', '/sessions');
      if (this.api() !== api) return; // logged out meanwhile
      const list = Array.isArray(data) ? data : [];
      this.note.textContent = list.length === 0 ? 'No open sessions.'
        : `${list.length} open session${list.length === 1 ? '' : 's'}; rates over the last 10 seconds.`;
      this.render(list);
    } catch (err) {
      this.note.textContent = `The sessions could not be read: ${visible(err.message)}`;
    } finally {
      this.busy = false;
      if (this.again) {
        this.again = false;
        this.refresh();
      }
    }
  }

  // render draws the rows, keeping the focus on a Close button.
  render(list) {
    const body = this.table.tBodies[0];
    const focused = body.contains(document.activeElement) ? document.activeElement.dataset.id : '';
    body.replaceChildren(...list.map((s) => this.row(sessionRow(s))));
    if (focused) body.querySelector(`button[data-id="${CSS.escape(focused)}"]`)?.focus();
  }

  row(r) {
    const tr = el('tr');
    tr.dataset.id = r.id;
    const opened = el('td', r.opened);
    if (r.iso) opened.title = r.iso;
    const close = el('button', 'Close', { type: 'button', class: 'secondary', 'data-id': r.id, 'aria-label': `Close session ${r.id}` });
    close.addEventListener('click', () => this.close(r));
    const act = el('td');
    act.append(close);
    tr.append(el('td', r.id, { class: 'mono' }), el('td', r.protocol), el('td', r.listen, { class: 'mono' }),
      el('td', this.nameOf(r.destination), { class: 'mono' }), el('td', r.what, { class: 'mono' }), el('td', r.conns),
      el('td', r.out), el('td', r.in), el('td', r.retransmits), opened, act);
    return tr;
  }

  async open() {
    const f = this.fields;
    const { line, error } = openLine({
      destination: f.destination.value, protocol: f.protocol.value, target: f.target.value, listen: f.listen.value,
    });
    if (error) {
      this.say([error]);
      return;
    }
    const where = f.listen.value.trim() || 'a free port on 127.0.0.1';
    if (!(await this.confirm(`Open a ${f.protocol.value} session to ${f.destination.value.trim()} for ${f.target.value.trim()}, listening on ${where}? Anyone who can reach that address can use it.`, 'Open session'))) return;
    const out = await this.command(line);
    if (out && out.length && out[0].startsWith('Session ')) f.target.value = '';
    this.refresh();
  }

  async close(r) {
    if (!(await this.confirm(`Close session ${r.id} (${r.protocol} on ${r.listen} to ${r.destination})? Its connections end.`, 'Close session'))) return;
    await this.command(`session close ${r.id}`);
    this.refresh();
  }
}
