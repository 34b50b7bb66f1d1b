// The live frame stream: one row per frame, coloured by kind (log line,
// received message, reply to this page's command, replayed history), with
// a text filter, a kind filter and a pause that holds new frames back until
// it is lifted. Frames are rendered as text only (text.js).
import { el, textInto, visible } from './text.js';

const MAX_ROWS = 2000;

// kindOf names what a frame is for the colours and the kind filter.
export function kindOf(f) {
  if (f.reply) return 'reply';
  if (f.type === 'message') return 'message';
  return 'log';
}

function clock(ts) {
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return visible(ts);
  return d.toLocaleTimeString([], { hour12: false }) + '.' + String(d.getMilliseconds()).padStart(3, '0');
}

export class Stream {
  constructor({ list, filter, kind, pause, clear, pausedNote }) {
    this.list = list;
    this.filter = filter;
    this.kind = kind;
    this.pauseBtn = pause;
    this.pausedNote = pausedNote;
    this.held = [];
    this.paused = false;
    // follow: the list is scrolled to its end, so new rows keep it there;
    // an operator who scrolled up to read stays where they are.
    this.follow = true;
    list.addEventListener('scroll', () => {
      this.follow = list.scrollTop + list.clientHeight >= list.scrollHeight - 8;
    });
    filter.addEventListener('input', () => this.refilter());
    kind.addEventListener('change', () => this.refilter());
    pause.addEventListener('click', () => this.setPaused(!this.paused));
    clear.addEventListener('click', () => { list.replaceChildren(); this.follow = true; });
  }

  setPaused(p) {
    this.paused = p;
    this.pauseBtn.setAttribute('aria-pressed', String(p));
    this.pauseBtn.textContent = p ? 'Resume' : 'Pause';
    if (!p) {
      const held = this.held.splice(0);
      for (const f of held) this.append(f);
    }
    this.note();
  }

  note() {
    this.pausedNote.hidden = !this.paused;
    this.pausedNote.textContent = `Paused: ${this.held.length} new frame${this.held.length === 1 ? '' : 's'} held back.`;
  }

  // add shows a frame, or holds it while paused.
  add(f) {
    if (this.paused) {
      this.held.push(f);
      if (this.held.length > MAX_ROWS) this.held.shift();
      this.note();
      return;
    }
    this.append(f);
  }

  append(f) {
    const kind = kindOf(f);
    // A node log line says its level first (level=WARN …): warnings and
    // errors stand out.
    const level = kind === 'log' ? (/^level=(WARN|ERROR)\b/.exec(f.msg)?.[1] || '').toLowerCase() : '';
    const row = el('div', undefined, { class: `row ${kind}${level ? ' ' + level : ''}${f.replay ? ' replay' : ''}${f.reply === 'echo' ? ' echo' : ''}` });
    row.dataset.kind = kind;
    row.append(el('time', clock(f.ts), { class: 'ts', datetime: visible(f.ts) }));
    let tag = kind === 'reply' ? 'command' : kind;
    if (f.replay) tag = 'history';
    row.append(el('span', tag, { class: 'tag' }));
    // A log frame's text was escaped by the node already; a message's is
    // the sender's exact text. Either way it goes in as text, control
    // characters shown.
    row.append(textInto(el('span', undefined, { class: 'msg' }), f.msg));
    row.hidden = !this.matches(row);
    this.list.append(row);
    while (this.list.childElementCount > MAX_ROWS) this.list.firstElementChild.remove();
    this.stick();
  }

  // stick scrolls to the end when following; the list may have been hidden
  // (before login) when the rows came, so it is also called on show.
  stick() {
    if (this.follow) this.list.scrollTop = this.list.scrollHeight;
  }

  matches(row) {
    const k = this.kind.value;
    if (k !== 'all' && row.dataset.kind !== k) return false;
    const q = this.filter.value.trim().toLowerCase();
    return q === '' || row.textContent.toLowerCase().includes(q);
  }

  refilter() {
    for (const row of this.list.children) row.hidden = !this.matches(row);
    this.stick();
  }
}
