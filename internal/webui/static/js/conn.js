// The admin WebSocket: frames in, command lines out. Replies to this
// page's own commands are told apart from the node's other frames by their
// reply mark (echo, output, end), never by their text, and matched to the
// commands in the order they were sent: the node answers one command at a
// time, in order.

// AuthError is the node's refusal of the token; its message is the node's
// own text ("authentication failed").
export class AuthError extends Error {}

export class AdminConn {
  // url is the admin server's WebSocket URL (scheme ws, its host and port); token the API token.
  constructor(url, token) {
    this.url = url;
    this.token = token;
    this.ws = null;
    this.pending = []; // {hidden, lines, resolve, reject}
    this.onframe = () => {};
    this.onclose = () => {};
  }

  // open connects and resolves with the first frame once the node accepted
  // the token; it rejects with an AuthError when the node refused it, or an
  // Error when the connection failed.
  open() {
    // The token goes in the query string of the WebSocket's own request
    // (the interface's way), never in the page's address.
    const u = new URL(this.url);
    u.searchParams.set('apiToken', this.token);
    return new Promise((resolve, reject) => {
      let first = true;
      let ws;
      try {
        ws = new WebSocket(u.href);
      } catch (err) {
        reject(new Error(`cannot connect to the admin WebSocket: ${err.message}`));
        return;
      }
      this.ws = ws;
      ws.onmessage = (ev) => {
        let f;
        try {
          f = JSON.parse(ev.data);
        } catch {
          return; // not a frame: nothing a person could read
        }
        if (typeof f !== 'object' || f === null) return;
        f.msg = typeof f.msg === 'string' ? f.msg : String(f.msg ?? '');
        f.type = typeof f.type === 'string' ? f.type : '';
        if (first) {
          first = false;
          if (f.type === 'auth-failed') {
            reject(new AuthError(f.msg));
            return;
          }
          resolve(f);
        }
        this.dispatch(f);
      };
      ws.onclose = (ev) => {
        const why = ev.reason || (ev.code === 1006 ? 'the connection failed' : `closed (code ${ev.code})`);
        for (const p of this.pending.splice(0)) p.reject(new Error(why));
        if (first) {
          first = false;
          reject(new Error(`the admin WebSocket at ${this.url} closed: ${why}`));
          return;
        }
        this.onclose(why);
      };
    });
  }

  // dispatch hands a frame to the pending command it answers, or to
  // onframe. A hidden command's reply is not shown.
  dispatch(f) {
    const p = f.reply ? this.pending[0] : undefined;
    if (p) {
      if (f.reply !== 'echo') p.lines.push(f.msg);
      if (f.reply === 'end') {
        p.lines.failed = f.error === true; // the node's mark of a failed command
        this.pending.shift();
        p.resolve(p.lines);
      }
      if (p.hidden) return;
    }
    this.onframe(f);
  }

  // run sends a command line and resolves with its output lines (their
  // failed property says whether the node marked the command failed). A hidden
  // command (the page's own, for completion) is not shown in the stream.
  run(line, { hidden = false } = {}) {
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        reject(new Error('not connected to the node'));
        return;
      }
      this.pending.push({ hidden, lines: [], resolve, reject });
      this.ws.send(line);
    });
  }

  close() {
    if (this.ws) {
      this.ws.onclose = null;
      this.ws.onmessage = null;
      this.ws.close(1000, 'bye');
    }
    for (const p of this.pending.splice(0)) p.reject(new Error('logged out'));
  }
}

// parseHelp returns the command names of help's output: each line after
// the first is "  <usage>  <sentence>", the usage starting with the name.
export function parseHelp(lines) {
  const names = [];
  for (const l of lines.slice(1)) {
    const name = l.trim().split(/\s+/)[0];
    if (name && /^[A-Za-z][A-Za-z0-9_-]*$/.test(name)) names.push(name);
  }
  return names;
}
