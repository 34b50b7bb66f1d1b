import { visible } from './text.js';

// The command line: history (↑, ↓) and Tab completion of command names,
// then peers and aliases as arguments, the lists coming from the node.

// commonPrefix returns the longest prefix all of words share.
export function commonPrefix(words) {
  if (words.length === 0) return '';
  let p = words[0];
  for (const w of words.slice(1)) {
    while (!w.startsWith(p)) p = p.slice(0, -1);
  }
  return p;
}

// complete returns the completion of line: the new line and the candidates
// considered. The first word completes from names, the others from args;
// a word starting with "," (a 0-hop send) completes after the comma.
export function complete(line, names, args) {
  const words = line.split(' ');
  const last = words[words.length - 1];
  const first = words.length === 1;
  const pool = first ? names : args;
  const lead = !first && last.startsWith(',') ? ',' : '';
  const stem = last.slice(lead.length);
  const hits = [...new Set(pool)].filter((w) => w.startsWith(stem)).sort();
  if (hits.length === 0) return { line, hits };
  let word = hits.length === 1 ? hits[0] + ' ' : commonPrefix(hits);
  if (word.length < stem.length) word = stem;
  words[words.length - 1] = lead + word;
  return { line: words.join(' '), hits };
}

export class CommandLine {
  // run(line) runs a command; lists() returns {names, args} for completion.
  constructor({ form, input, hint, run, lists }) {
    this.input = input;
    this.hint = hint;
    this.history = [];
    this.pos = 0;
    this.draft = '';
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const line = input.value.trim();
      if (!line) return;
      if (this.history[this.history.length - 1] !== line) this.history.push(line);
      if (this.history.length > 200) this.history.shift();
      this.pos = this.history.length;
      input.value = '';
      run(line);
    });
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Tab' && !ev.shiftKey && input.value.trim() !== '') {
        ev.preventDefault();
        const { names, args } = lists();
        const { line, hits } = complete(input.value, names, args);
        input.value = line;
        hint.textContent = hits.length > 1 ? visible(`Candidates: ${hits.slice(0, 12).join('  ')}${hits.length > 12 ? ' …' : ''}`) : '';
      } else if (ev.key === 'ArrowUp') {
        if (this.pos === 0) return;
        ev.preventDefault();
        if (this.pos === this.history.length) this.draft = input.value;
        this.pos--;
        input.value = this.history[this.pos];
      } else if (ev.key === 'ArrowDown') {
        if (this.pos >= this.history.length) return;
        ev.preventDefault();
        this.pos++;
        input.value = this.pos === this.history.length ? this.draft : this.history[this.pos];
      }
    });
  }
}
