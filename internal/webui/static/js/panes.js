// Three panes of operator actions: aliases (GET, POST /aliases, DELETE
// /aliases/{alias}), withdraw (POST /account/withdraw) and send (POST
// /messages when the node picks the path; the admin `send` command for a
// 0-hop message or relayers the operator names). Each form is checked
// (forms.js) before any dialog or request and says why under it; the
// node's own refusals are shown as text. Aliases and PeerIds may come
// from peers: they reach the page as text only (text.js).
import { el, shortId, tokens, visible } from './text.js';
import { checkAlias, checkWithdraw, checkSend } from './forms.js';

// formError shows why a form was refused under it ('' clears), marks the
// field and focuses it.
function formError(box, fields, verdict) {
  for (const f of Object.values(fields)) f?.removeAttribute?.('aria-invalid');
  box.textContent = verdict.error ? visible(verdict.error) : '';
  if (verdict.error) {
    const f = fields[verdict.field];
    if (f) {
      f.setAttribute('aria-invalid', 'true');
      f.focus();
    }
  }
  return !verdict.error;
}

// Aliases lists the node's aliases and adds and removes them.
export class Aliases {
  // table, form, fields {alias, peer}, error: the pane's parts; api(): the
  // REST client; aliases(): alias → PeerId as last read; self(): this
  // node's PeerId; changed(): reads the aliases again (and redraws);
  // confirm, say: the dialog and the status line.
  constructor({ table, form, fields, error, api, aliases, self, changed, confirm, say }) {
    Object.assign(this, { table, form, fields, error, api, aliases, self, changed, confirm, say });
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.add();
    });
  }

  render() {
    const rows = [...this.aliases()].filter(([a]) => a !== 'me').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const sig = JSON.stringify(rows);
    if (sig === this.sig) return; // a redraw would take the focus from a Remove button
    this.sig = sig;
    const body = this.table.tBodies[0];
    body.replaceChildren(...rows.map(([alias, id]) => {
      const tr = el('tr');
      tr.dataset.alias = alias;
      const peer = el('td', undefined, { class: 'peer' });
      peer.append(el('span', id, { class: 'peer-id', title: id }));
      const act = el('td');
      const b = el('button', 'Remove', { type: 'button', class: 'secondary', 'aria-label': `Remove the alias ${visible(alias)}` });
      b.addEventListener('click', () => this.remove(alias, id));
      act.append(b);
      tr.append(el('td', alias, { class: 'mono' }), peer, act);
      return tr;
    }));
    if (!rows.length) {
      const tr = el('tr');
      tr.append(el('td', 'No aliases: name a peer above.', { colspan: '3', class: 'muted' }));
      body.append(tr);
    }
  }

  async add() {
    const api = this.api();
    if (!api) return;
    const v = checkAlias({ alias: this.fields.alias.value, peer: this.fields.peer.value, aliases: this.aliases(), self: this.self() });
    if (!formError(this.error, this.fields, v)) return;
    if (v.replaces && !(await this.confirm(`The alias ${v.alias} names ${v.replaces} now. Make it name ${v.peerId} instead?`, 'Replace alias'))) return;
    try {
      await api.fetch('POST', '/aliases', { alias: v.alias, peerId: v.peerId });
      this.say([`${v.alias} now names ${v.peerId}.`]);
      this.fields.alias.value = '';
      this.fields.peer.value = '';
    } catch (err) {
      this.error.textContent = visible(`The node refused: ${err.message}`);
    }
    await this.changed();
  }

  async remove(alias, id) {
    const api = this.api();
    if (!api || !(await this.confirm(`Remove the alias ${alias} (${shortId(id)})? The peer stays; only its name goes.`, 'Remove alias'))) return;
    try {
      await api.fetch('DELETE', `/aliases/${encodeURIComponent(alias)}`);
      this.say([`The alias ${alias} is removed.`]);
    } catch (err) {
      this.say([`Not removed: ${err.message}`]);
    }
    await this.changed();
  }
}

// Withdraw sends the native coin or the token from the node's account.
export class Withdraw {
  // form, fields {currency, amount, recipient}, error, note: the pane's
  // parts; api(); balances(): GET /account/balances as last read;
  // address(): this node's chain address; symbol(): the token's symbol;
  // done(): refreshes the balances; confirm, say.
  constructor({ form, fields, error, note, api, balances, address, symbol, done, confirm, say }) {
    Object.assign(this, { form, fields, error, note, api, balances, address, symbol, done, confirm, say });
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.submit();
    });
  }

  // setSymbol names the token in the currency list.
  setSymbol(sym) {
    const o = this.fields.currency.querySelector('option[value="token"]');
    if (o && o.textContent !== sym) o.textContent = visible(sym);
  }

  async submit() {
    const api = this.api();
    if (!api) return;
    const native = this.fields.currency.value === 'native';
    const v = checkWithdraw({
      currency: this.fields.currency.value, amount: this.fields.amount.value, recipient: this.fields.recipient.value,
      balances: this.balances(), self: this.address(),
    });
    if (!formError(this.error, this.fields, v)) return;
    const unit = native ? 'native coin' : this.symbol();
    const amount = tokens(v.wei.toString(), 18);
    if (!(await this.confirm(`Send ${amount} ${unit} from this node's account to ${v.recipient}? A chain transaction cannot be undone.`, 'Withdraw'))) return;
    const button = this.form.querySelector('button[type="submit"]');
    button.disabled = true;
    this.note.textContent = 'Sending; the node answers once the transaction is mined…';
    try {
      const { data } = await api.fetch('POST', '/account/withdraw', { amount: v.wei.toString(), currency: native ? 'NATIVE' : this.symbol(), recipient: v.recipient });
      this.note.textContent = visible(`Sent ${amount} ${unit} to ${v.recipient}: transaction ${data?.receipt}.`);
      this.say([`Withdrawn: transaction ${data?.receipt}`]);
      this.fields.amount.value = '';
    } catch (err) {
      this.note.textContent = '';
      this.error.textContent = visible(`The node refused: ${err.message}`);
    } finally {
      button.disabled = false;
    }
    this.done();
  }
}

// Send sends a message: over REST when the node picks the path, else as
// the admin send command (shown in the stream like a typed one).
export class Send {
  // form, fields {to, path (the radios' fieldset), relayers, replies,
  // reliable, body}, error, note: the pane's parts; api(); command(line):
  // runs an admin line and resolves with its output lines (null when not
  // run); aliases(), self().
  constructor({ form, fields, error, note, api, command, aliases, self }) {
    Object.assign(this, { form, fields, error, note, api, command, aliases, self });
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.submit();
    });
    form.addEventListener('change', () => this.sync());
    this.sync();
  }

  path() {
    return this.form.querySelector('input[name="send-path"]:checked')?.value || 'auto';
  }

  // sync enables the fields the chosen path takes.
  sync() {
    const p = this.path();
    this.fields.relayers.disabled = p !== 'named';
    this.fields.replies.disabled = p !== 'auto';
    this.fields.reliable.disabled = p !== 'auto';
  }

  async submit() {
    const api = this.api();
    if (!api) return;
    const f = this.fields;
    const v = checkSend({
      to: f.to.value, path: this.path(), relayers: f.relayers.value, replies: f.replies.disabled ? '' : f.replies.value,
      reliable: !f.reliable.disabled && f.reliable.checked, body: f.body.value, aliases: this.aliases(), self: this.self(),
    });
    if (!formError(this.error, { ...f, path: this.form.querySelector('input[name="send-path"]:checked') }, v)) return;
    const button = this.form.querySelector('button[type="submit"]');
    button.disabled = true;
    this.note.textContent = '';
    try {
      if (v.rest) {
        const { data } = await api.fetch('POST', '/messages', v.rest);
        const id = String(data ?? '');
        this.note.textContent = visible(id.length === 34
          ? `Accepted as message ${id}: the node sends it until it is delivered (the stream says when).`
          : `Sent to ${v.rest.recipient} over relayers the node picked (acknowledgement challenge ${shortId(id)}).`);
        f.body.value = '';
      } else {
        const out = await this.command(v.line);
        if (out?.failed) {
          this.error.textContent = visible(`Not sent: ${out[out.length - 1] || 'the node refused'}`);
        } else if (out) {
          this.note.textContent = visible(out[out.length - 1] || 'Sent.');
          f.body.value = '';
        }
      }
    } catch (err) {
      this.error.textContent = visible(`Not sent: ${err.message}`);
    } finally {
      button.disabled = false;
    }
  }
}
