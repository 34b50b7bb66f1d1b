// The inbox pane: the messages the node keeps for the app (GET
// /api/v2/messages), oldest first, each with its seq, when it arrived, its
// text made visible (it comes from a remote peer: text nodes only, through
// text.js), what it answers, and, while reply blocks are left, a box to
// answer it anonymously (POST /messages/inbox/{seq}/reply); a message can
// be removed (DELETE /messages/inbox/{seq}). A node without its courier
// keeps no inbox: GET /node/info says so, and the pane asks nothing then.
import { el, shortId } from './text.js';

// LISTED is how many messages the pane shows, the oldest first.
export const LISTED = 100;

// inboxRow is what the pane shows of one message of GET /messages: its
// seq, the time it arrived (local clock time, and the whole ISO time), its
// body, a note on what it answers and how many answers it can still get,
// and whether it can be answered.
export function inboxRow(m) {
  const d = new Date(m.receivedAt);
  const ok = !Number.isNaN(d.getTime());
  const notes = [];
  if (m.reply) notes.push(`reply to ${shortId(m.inReplyTo || '')}`);
  const left = Number(m.repliesLeft) || 0;
  if (left > 0) notes.push(`${left} ${left === 1 ? 'reply' : 'replies'} left`);
  return {
    seq: String(m.seq),
    when: ok ? d.toLocaleTimeString([], { hour12: false }) : String(m.receivedAt),
    iso: ok ? d.toISOString() : '',
    body: String(m.body ?? ''),
    note: notes.join(', '),
    canReply: left > 0,
  };
}

// signature is what decides whether the table must be drawn again: the
// messages and their reply blocks left (a redraw would lose an answer
// being typed).
export function signature(list, total) {
  return JSON.stringify([total, list.map((m) => [m.seq, m.repliesLeft])]);
}

export class Inbox {
  // table, note: the pane's table and its note line; api(): the REST
  // client (null when logged out); say(lines): the status line;
  // confirm(text, ok): the confirm dialog.
  constructor({ table, note, api, say, confirm }) {
    this.table = table;
    this.note = note;
    this.api = api;
    this.say = say;
    this.confirm = confirm;
    this.available = undefined; // unknown until GET /node/info tells
    this.sig = '';
    this.busy = false;
    this.again = false;
  }

  // reset forgets what the pane showed (a new login).
  reset() {
    this.available = undefined;
    this.sig = '';
    this.table.tBodies[0].replaceChildren();
    this.note.textContent = '';
  }

  // setAvailable takes GET /node/info's inbox flag.
  setAvailable(on) {
    if (on === this.available) return;
    this.available = on;
    if (!on) {
      this.sig = '';
      this.table.tBodies[0].replaceChildren();
      this.table.hidden = true;
      this.note.textContent = 'This node keeps no inbox: it runs without its courier, so it sends only what one packet carries.';
    } else {
      this.table.hidden = false;
    }
  }

  // refresh reads the inbox again; calls while one runs make one more.
  async refresh() {
    const api = this.api();
    if (!api || !this.available) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    try {
      const { data, headers } = await api.fetch('GET', `/messages?limit=${LISTED}`);
      if (this.api() !== api) return; // logged out meanwhile
      const list = Array.isArray(data) ? data : [];
      const total = Number(headers.get('x-total-count') ?? list.length);
      this.note.textContent = total === 0 ? 'No messages.'
        : total > list.length ? `${total} messages kept; the oldest ${list.length} are shown.`
          : `${total} message${total === 1 ? '' : 's'} kept.`;
      const sig = signature(list, total);
      if (sig !== this.sig) {
        this.sig = sig;
        this.render(list);
      }
    } catch (err) {
      this.note.textContent = `The inbox could not be read: ${err.message}`;
    } finally {
      this.busy = false;
      if (this.again) {
        this.again = false;
        this.refresh();
      }
    }
  }

  // render draws the rows, keeping the answers being typed.
  render(list) {
    const body = this.table.tBodies[0];
    const typed = new Map();
    let focused = '';
    for (const input of body.querySelectorAll('input[data-seq]')) {
      if (input.value) typed.set(input.dataset.seq, input.value);
      if (document.activeElement === input) focused = input.dataset.seq;
    }
    body.replaceChildren(...list.map((m) => this.row(inboxRow(m), typed)));
    if (focused) body.querySelector(`input[data-seq="${CSS.escape(focused)}"]`)?.focus();
  }

  row(r, typed) {
    const tr = el('tr');
    tr.dataset.seq = r.seq;
    const when = el('td', r.when);
    if (r.iso) when.title = r.iso;
    const text = el('td');
    text.append(el('div', r.body, { class: 'inbox-body' }));
    if (r.note) text.append(el('div', r.note, { class: 'muted inbox-note' }));
    const act = el('td');
    if (r.canReply) {
      const form = el('form', undefined, { class: 'inline-form inbox-reply', autocomplete: 'off' });
      const input = el('input', undefined, { 'data-seq': r.seq, 'aria-label': `Answer to message ${r.seq}`, required: '', spellcheck: 'false' });
      input.value = typed.get(r.seq) || '';
      form.append(input, el('button', 'Reply', { type: 'submit' }));
      form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        this.reply(r.seq, input, form);
      });
      act.append(form);
    }
    const del = el('button', 'Remove', { type: 'button', class: 'secondary', 'aria-label': `Remove message ${r.seq} from the inbox` });
    del.addEventListener('click', () => this.remove(r.seq));
    act.append(del);
    tr.append(el('td', r.seq, { class: 'mono' }), when, text, act);
    return tr;
  }

  async reply(seq, input, form) {
    const api = this.api();
    const text = input.value;
    if (!api || !text) return;
    for (const b of form.querySelectorAll('button')) b.disabled = true;
    try {
      const { data } = await api.fetch('POST', `/messages/inbox/${encodeURIComponent(seq)}/reply`, { body: text });
      input.value = '';
      this.say([`Answer ${data.id} sent on message ${seq}'s reply blocks; ${data.repliesLeft} left.`]);
    } catch (err) {
      this.say([`Not answered: ${err.message}`]);
    } finally {
      for (const b of form.querySelectorAll('button')) b.disabled = false;
    }
    this.refresh();
  }

  async remove(seq) {
    const api = this.api();
    if (!api || !(await this.confirm(`Remove message ${seq} from the inbox? Its unused reply blocks go with it.`, 'Remove'))) return;
    try {
      await api.fetch('DELETE', `/messages/inbox/${encodeURIComponent(seq)}`);
      this.say([`Message ${seq} removed from the inbox.`]);
    } catch (err) {
      this.say([`Not removed: ${err.message}`]);
    }
    this.refresh();
  }
}
