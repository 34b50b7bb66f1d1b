// The settings pane: every operator setting (GET /api/v2/settings) with its
// value, what it does and which values it takes, and an inline editor that
// checks the value before it asks (the confirm dialog) and changes it with
// PUT /api/v2/settings. What a setting does and its range are the node's
// own documentation (the admin `settings` command, which reads the same
// definitions as docs/SETTINGS.md), asked hidden from the stream; its type
// and bounds come from the OpenAPI document the node serves
// (/api/v2/_swagger/openapi.json, no token). Amounts are typed and shown in
// whole tokens and sent in wei.
import { el, tokens } from './text.js';
import { toWei } from './forms.js';

// parseSettingsLines reads the admin `settings` command's lines ("name
// value doc", the first two columns padded) into name → {text, doc}, for
// the names given.
export function parseSettingsLines(lines, names) {
  const known = new Set(names);
  const rows = lines.filter((l) => known.has(l.split(' ')[0]));
  const out = new Map();
  if (!rows.length) return out;
  const nameWidth = Math.max(...rows.map((l) => l.split(' ')[0].length));
  // The doc column starts where every line has two spaces and then text.
  const longest = Math.max(...rows.map((l) => l.length));
  let col = -1;
  for (let c = nameWidth + 3; c < longest && col < 0; c++) {
    if (rows.every((l) => l.slice(c - 2, c) === '  ' && l[c] && l[c] !== ' ')) col = c;
  }
  for (const l of rows) {
    const name = l.split(' ')[0];
    if (col < 0) {
      out.set(name, { text: '', doc: l.slice(name.length).trim() });
    } else {
      out.set(name, { text: l.slice(nameWidth + 2, col).trim(), doc: l.slice(col).trim() });
    }
  }
  return out;
}

// schemaOf returns the OpenAPI schema of each setting of the Settings
// schema (one $ref followed), by name.
export function schemaOf(doc) {
  const schemas = doc?.components?.schemas || {};
  const deref = (s) => {
    const ref = s?.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) return { ...schemas[ref.slice(21)], ...s, $ref: undefined };
    return s || {};
  };
  const out = new Map();
  for (const [name, s] of Object.entries(schemas.Settings?.properties || {})) out.set(name, deref(s));
  return out;
}

// kindOf says how a setting is edited: 'bool', 'choice' (options),
// 'amount' (tokens), 'number' (min, max, integer), 'list' (exitAllow: a
// JSON array, typed comma-separated) or 'text'.
export function kindOf(value, schema = {}, range = '') {
  if (typeof value === 'boolean' || schema.type === 'boolean') return { kind: 'bool' };
  if (Array.isArray(schema.enum)) return { kind: 'choice', options: schema.enum.map(String) };
  if (/^[a-z]+(\|[a-z]+)+$/i.test(range)) return { kind: 'choice', options: range.split('|') };
  if (/^a positive amount/.test(range) || (typeof value === 'string' && /^[0-9]{6,}$/.test(value) && /amount|wei/i.test(`${schema.description || ''} ${range}`))) return { kind: 'amount' };
  if (Array.isArray(value) || schema.type === 'array') return { kind: 'list' };
  if (typeof value === 'number' || schema.type === 'integer' || schema.type === 'number') {
    const m = /^(-?[0-9.]+) to ([0-9.]+)/.exec(range);
    return {
      kind: 'number',
      integer: schema.type === 'integer',
      min: Number.isFinite(schema.minimum) ? schema.minimum : m ? Number(m[1]) : undefined,
      max: Number.isFinite(schema.maximum) ? schema.maximum : m ? Number(m[2]) : undefined,
    };
  }
  return { kind: 'text', pattern: schema.pattern };
}

// shown is a setting's value as the pane writes it (and its editor starts
// from).
export function shown(value, kind) {
  if (kind.kind === 'amount') return tokens(value, 18);
  if (kind.kind === 'list') return (value || []).join(', ');
  return String(value);
}

// parseValue turns what the operator typed into the setting's JSON value,
// or {error} saying why it cannot be.
export function parseValue(name, text, kind) {
  const s = String(text ?? '').trim();
  switch (kind.kind) {
    case 'bool':
      if (s === 'true' || s === 'false') return { value: s === 'true' };
      return { error: `${name} is true or false.` };
    case 'choice':
      if (kind.options.includes(s)) return { value: s };
      return { error: `${name} is one of ${kind.options.join(', ')}.` };
    case 'amount': {
      const wei = toWei(s);
      if (wei === null || wei <= 0n) return { error: `${name} is a positive number of tokens such as 0.5 (at most 18 decimals).` };
      return { value: wei.toString() };
    }
    case 'number': {
      if (!/^-?[0-9]+(\.[0-9]+)?$/.test(s)) return { error: `${name} is a number.` };
      const v = Number(s);
      if (kind.integer && !Number.isInteger(v)) return { error: `${name} is a whole number.` };
      if ((kind.min !== undefined && v < kind.min) || (kind.max !== undefined && v > kind.max)) {
        return { error: `${name} is from ${kind.min ?? '−∞'} to ${kind.max ?? '∞'}.` };
      }
      return { value: v };
    }
    case 'list': {
      if (s === '' || s === 'none') return { value: [] };
      const rules = s.split(',').map((r) => r.trim()).filter(Boolean);
      if (rules.some((r) => /\s/.test(r))) return { error: `${name}: a rule has no spaces; separate rules with commas.` };
      return { value: rules };
    }
    default:
      // An empty text is a value too (socks5Exit's none); the pattern, or else the node, says.
      if (kind.pattern) {
        try {
          if (!new RegExp(kind.pattern).test(s)) return { error: `${name} does not take "${s}": see what it takes below.` };
        } catch {
          // a pattern this browser cannot read: the node checks
        }
      }
      return { value: s };
  }
}

export class Settings {
  // table is the settings table, note a line for the pane's state; api()
  // the REST API, command(line, {hidden}) runs an admin command hidden,
  // confirm(text, ok) the dialog, say(lines) the status bar.
  constructor({ table, note, reload, api, run, confirm, say }) {
    Object.assign(this, { table, note, api, run, confirm, say });
    this.docs = new Map();
    this.schemas = null;
    this.last = 0;
    reload.addEventListener('click', () => this.refresh());
  }

  // refreshIdle reads the settings again when 30 s passed since the last
  // read and nobody is changing one (a field focused or typed into), so a
  // change made elsewhere (the REST API, another console) shows.
  refreshIdle() {
    if (Date.now() - this.last < 30_000) return;
    if (this.busy()) return;
    this.refresh({ idle: true });
  }

  // busy reports whether the operator is changing a setting.
  busy() {
    return this.table.contains(document.activeElement) || this.table.querySelector('tr[data-dirty]') !== null;
  }

  reset() {
    this.last = 0;
    this.docs = new Map();
    this.table.tBodies[0].replaceChildren();
    this.note.textContent = '';
  }

  async refresh({ idle = false } = {}) {
    const api = this.api();
    if (!api) return;
    this.last = Date.now();
    let values;
    try {
      values = await api.get('/settings');
    } catch (err) {
      this.note.textContent = `The settings could not be read: ${err.message}`;
      return;
    }
    let names = Object.keys(values || {});
    if (this.schemas === null) {
      try {
        const r = await fetch(`${api.base}/api/v2/_swagger/openapi.json`, { cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' });
        this.schemas = r.ok ? schemaOf(await r.json()) : new Map();
      } catch {
        this.schemas = new Map();
      }
    }
    try {
      this.docs = parseSettingsLines(await this.run('settings'), names);
    } catch {
      // no docs: the OpenAPI descriptions stand in
    }
    // In the node's own order (the command's), any it did not list last.
    names = [...[...this.docs.keys()].filter((n) => names.includes(n)), ...names.filter((n) => !this.docs.has(n))];
    if (idle && this.busy()) return; // typing began meanwhile: keep what is typed
    this.note.textContent = `${names.length} settings, stored by the node and live: a change applies while it runs.`;
    this.table.tBodies[0].replaceChildren(...names.map((n) => this.row(n, values[n])));
  }

  row(name, value) {
    const schema = this.schemas?.get(name) || {};
    const doc = this.docs.get(name);
    const m = /\(([^()]*(?:\([^()]*\)[^()]*)*)\)$/.exec(doc?.doc || '');
    const range = m ? m[1] : '';
    const kind = kindOf(value, schema, range);
    const tr = el('tr', undefined, { 'data-setting': name });
    const id = `setting-${name}`;
    const errId = `${id}-error`;
    const nameCell = el('td');
    nameCell.append(el('label', name, { for: id, class: 'mono' }));
    // The node's own text of the value (amounts in tokens) when it said it.
    const valueText = doc?.text || (kind.kind === 'amount' ? `${shown(value, kind)} tokens` : shown(value, kind));
    const valueCell = el('td', valueText, { class: 'mono setting-value' });
    const edit = el('td');
    let input;
    if (kind.kind === 'bool' || kind.kind === 'choice') {
      input = el('select', undefined, { id });
      for (const o of kind.kind === 'bool' ? ['true', 'false'] : kind.options) input.append(el('option', o, { value: o }));
      input.value = String(value);
    } else {
      input = el('input', undefined, { id, spellcheck: 'false', autocomplete: 'off' });
      if (kind.kind === 'number' || kind.kind === 'amount') input.setAttribute('inputmode', 'decimal');
      input.value = shown(value, kind);
    }
    input.setAttribute('aria-describedby', `${errId} ${id}-doc`);
    const save = el('button', 'Save', { type: 'button', class: 'secondary', 'aria-label': `Save ${name}` });
    const error = el('p', '', { id: errId, class: 'error setting-error', 'aria-live': 'polite' });
    const form = el('div', undefined, { class: 'setting-edit' });
    form.append(input, save);
    if (kind.kind === 'amount') form.append(el('span', 'tokens', { class: 'muted' }));
    edit.append(form, error);
    const docText = doc?.doc || schema.description || '';
    const docCell = el('td', docText.trim(), { id: `${id}-doc`, class: 'setting-doc' });
    const submit = async () => {
      const p = parseValue(name, input.value, kind);
      if (p.error) {
        error.textContent = p.error;
        input.setAttribute('aria-invalid', 'true');
        input.focus();
        return;
      }
      error.textContent = '';
      input.removeAttribute('aria-invalid');
      const t = tokens(p.value, 18);
      const text = kind.kind === 'amount' ? `${t} token${t === '1' ? '' : 's'}` : shown(p.value, kind);
      if (!(await this.confirm(`Set ${name} to ${text}?`, 'Change setting'))) return;
      try {
        await this.api().call('PUT', '/settings', { [name]: p.value });
        this.say([`${name} is now ${text}.`]);
        await this.refresh();
      } catch (err) {
        error.textContent = `The node refused: ${err.message}`;
        input.setAttribute('aria-invalid', 'true');
      }
    };
    save.addEventListener('click', submit);
    input.addEventListener('input', () => { tr.dataset.dirty = ''; });
    input.addEventListener('change', () => { tr.dataset.dirty = ''; });
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        ev.preventDefault();
        submit();
      }
    });
    tr.append(nameCell, valueCell, edit, docCell);
    return tr;
  }
}
