// The node's REST API, with the token in the x-auth-token header. Errors
// carry the node's own text: the 403 body's message, or an error
// envelope's error.

export class ApiError extends Error {
  constructor(status, text) {
    super(text);
    this.status = status;
  }
}

export class Api {
  // base is the scheme, host and port of the REST API (without /api/v2).
  constructor(base, token) {
    this.base = base;
    this.token = token;
  }

  async call(method, path, body) {
    return (await this.fetch(method, path, body)).data;
  }

  // fetch makes the call and returns the answer's JSON (null when it has
  // none) and its headers.
  async fetch(method, path, body) {
    const init = { method, headers: { 'x-auth-token': this.token }, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let resp;
    try {
      resp = await fetch(`${this.base}/api/v2${path}`, init);
    } catch (err) {
      throw new ApiError(0, `the REST API at ${this.base} did not answer (${err.message})`);
    }
    const text = await resp.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!resp.ok) {
      const msg = (data && (data.error || data.message)) || `HTTP ${resp.status}`;
      throw new ApiError(resp.status, String(msg));
    }
    return { data, headers: resp.headers };
  }

  get(path) {
    return this.call('GET', path);
  }
}
