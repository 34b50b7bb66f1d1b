// The channel graph the node knows: this node in the middle, every other
// node around it (connected ones highlighted), and the channels as edges
// whose width grows with their balance: this node's outgoing and incoming
// ones in colour, those between two other nodes in grey; the two
// directions between a pair are drawn as two arcs. The data is the REST
// GET /node/graph (the whole graph the node has indexed); when that call
// fails (an older node), this node's own channels and peers.
//
// Keyboard: the nodes are one stop of the Tab order (a roving tabindex);
// the arrow keys move between them (Home: this node, End: the last),
// Enter or Space shows the focused node's details and channels below the
// graph, Escape hides them. The same graph is a pair of tables (nodes,
// channels and balances) for screen readers and for copying. Labels are
// placed where they cover no node and no other label (placeLabels); a
// channel's label that finds no such place is left out (its balance is in
// its tooltip and in the table).
import { svgEl } from './svg.js';
import { el, tokens, shortId, visible } from './text.js';

const W = 640;
const H = 440;

// widthOf maps a balance in wei to a stroke width from 1.5 to 9 (log scale
// around one token).
export function widthOf(wei) {
  let t;
  try {
    t = Number(BigInt(wei) / 10n ** 14n) / 1e4; // tokens, 4 decimals
  } catch {
    return 1.5;
  }
  if (!(t > 0)) return 1.5;
  return Math.max(1.5, Math.min(9, 2 + 1.5 * Math.log10(1 + t)));
}

// graphModel turns the answers into one model: nodes (id -> {connected})
// and the channels that are not Closed as {source, destination, balance,
// status}, ids being PeerIds (or chain addresses of nodes that never
// announced themselves). graph is the GET /node/graph answer, or null to
// fall back to peers (GET /node/peers) and channels (GET /channels), which
// know only this node's own channels. It reports which data it used.
export function graphModel({ self, peers, channels, graph }) {
  const nodes = new Map();
  const edges = [];
  let from;
  if (graph && Array.isArray(graph.nodes) && Array.isArray(graph.channels)) {
    from = 'graph';
    for (const n of graph.nodes) nodes.set(n.peerId, { connected: !!n.connected });
    for (const c of graph.channels) {
      if (c.status === 'Closed') continue;
      edges.push({ source: c.source, destination: c.destination, balance: c.balance, status: c.status });
    }
  } else {
    from = 'channels';
    for (const c of channels?.outgoing || []) {
      if (c.status !== 'Closed') edges.push({ source: self, destination: c.peerId, balance: c.balance, status: c.status });
    }
    for (const c of channels?.incoming || []) {
      if (c.status !== 'Closed') edges.push({ source: c.peerId, destination: self, balance: c.balance, status: c.status });
    }
  }
  // The peers answer adds the nodes the transport knows that the graph has
  // not (a static peer that never announced itself), and who is connected.
  for (const p of peers?.announced || []) if (!nodes.has(p.peerId)) nodes.set(p.peerId, { connected: !!p.connected });
  for (const p of peers?.connected || []) nodes.set(p.peerId, { connected: true });
  for (const e of edges) {
    for (const id of [e.source, e.destination]) if (!nodes.has(id)) nodes.set(id, { connected: false });
  }
  nodes.delete(self);
  return { nodes, edges, from };
}

// drawGraph renders the graph into svg and describes it in desc. self is
// this node's PeerId; graph the GET /node/graph answer or null; peers and
// channels the REST answers the fallback uses; names maps a PeerId to an
// alias. Every node is a focusable button (tabindex -1: GraphView gives
// the tab stop). It returns what GraphView needs: the nodes in their
// keyboard order (this node, then clockwise from the top), the model and
// how a node is named.
export function drawGraph(svg, desc, { self, peers, channels, graph, names }) {
  const { nodes, edges, from: data } = graphModel({ self, peers, channels, graph });
  const ids = [...nodes.keys()].sort();
  const pos = new Map([[self, { x: W / 2, y: H / 2 }]]);
  const r = Math.min(W, H) / 2 - 60;
  ids.forEach((id, i) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / Math.max(1, ids.length);
    pos.set(id, { x: W / 2 + r * Math.cos(a) * 1.25, y: H / 2 + r * Math.sin(a) });
  });
  const name = (id) => (id === self ? 'this node' : names.get(id) || id);
  const order = [self, ...ids];

  const kids = [svg.querySelector('desc')];
  const defs = svgEl('defs');
  for (const [id, colour] of [['arrow-out', '#1f5fbf'], ['arrow-in', '#1b7a3a'], ['arrow-remote', '#555e6e']]) {
    const m = svgEl('marker', { id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 5, markerHeight: 5, orient: 'auto-start-reverse' });
    m.append(svgEl('path', { d: 'M0,0 L10,5 L0,10 z', fill: colour }));
    defs.append(m);
  }
  kids.push(defs);

  // Channels between other nodes first, so this node's own are drawn on top.
  const kind = (e) => (e.source === self ? 'out' : e.destination === self ? 'in' : 'remote');
  const rank = { remote: 0, in: 1, out: 2 };
  const sorted = [...edges].sort((a, b) => rank[kind(a)] - rank[kind(b)]);
  const edgeGroup = svgEl('g', { class: 'edges' });
  const labelled = []; // this node's channels: {text, at}
  for (const e of sorted) {
    const from = pos.get(e.source);
    const to = pos.get(e.destination);
    if (!from || !to) continue;
    const k = kind(e);
    // Bend each direction to its own side so the two arcs do not overlap.
    const mx = (from.x + to.x) / 2;
    const my = (from.y + to.y) / 2;
    const dx = to.x - from.x;
    const dy = to.y - from.y;
    const len = Math.hypot(dx, dy) || 1;
    const bend = 22;
    const c = { x: mx - (dy / len) * bend, y: my + (dx / len) * bend };
    // Stop short of the target's circle.
    const end = { x: to.x - (dx / len) * 22, y: to.y - (dy / len) * 22 };
    const path = svgEl('path', {
      d: `M${from.x.toFixed(1)},${from.y.toFixed(1)} Q${c.x.toFixed(1)},${c.y.toFixed(1)} ${end.x.toFixed(1)},${end.y.toFixed(1)}`,
      class: `edge ${k} ${e.status === 'Open' ? 'open' : 'closing'}`,
      // Channels between other nodes are context: thin, so that this node's stand out and
      // the arrowheads (which scale with the stroke) do not cover the nodes' names.
      'stroke-width': (k === 'remote' ? Math.min(widthOf(e.balance), 1.25) : widthOf(e.balance)).toFixed(2),
      'marker-end': `url(#arrow-${k})`,
      'data-source': e.source,
      'data-destination': e.destination,
    });
    const what = k === 'out' ? `outgoing to ${name(e.destination)}` : k === 'in' ? `incoming from ${name(e.source)}` : `from ${name(e.source)} to ${name(e.destination)}`;
    path.append(svgEl('title', {}, `${what}: ${tokens(e.balance)} tokens, ${e.status}`));
    edgeGroup.append(path);
    // Only this node's channels are labelled: a full mesh's labels would
    // cover each other. The others name their balance on hover. A label
    // sits on its arc, a little off it on the bend's side, where it covers
    // nothing (placeLabels).
    if (k !== 'remote') {
      const nx = -(dy / len) * 8;
      const ny = (dx / len) * 8;
      const at = [];
      for (const t of [0.5, 0.4, 0.6, 0.3, 0.7, 0.25, 0.75]) {
        const p = curvePoint(from, c, end, t);
        at.push({ x: p.x + nx, y: p.y + ny + 4 }, { x: p.x - nx, y: p.y - ny + 4 });
      }
      labelled.push({ text: tokens(e.balance, 2), at });
    }
  }
  kids.push(edgeGroup);

  const circles = order.map((id) => ({ ...pos.get(id), r: id === self ? 22 : 16, text: labelOf(id, self, names) }));
  const placed = placeLabels(circles, labelled, W, H);
  const edgeLabels = svgEl('g', { class: 'edge-labels', 'aria-hidden': 'true' });
  placed.edges.forEach((p, i) => {
    if (p) edgeLabels.append(svgEl('text', { x: p.x.toFixed(1), y: p.y.toFixed(1), class: 'edge-label' }, labelled[i].text));
  });
  kids.push(edgeLabels);

  const g = svgEl('g', { class: 'nodes' });
  order.forEach((id, i) => {
    const p = pos.get(id);
    const isSelf = id === self;
    const cls = isSelf ? 'self' : nodes.get(id).connected ? 'peer' : 'other';
    const mine = edges.filter((e) => e.source === id || e.destination === id).length;
    const state = isSelf ? 'this node' : cls === 'peer' ? 'connected peer' : 'known node';
    const node = svgEl('g', {
      class: `node ${cls}`, 'data-id': id, role: 'button', tabindex: '-1', 'aria-pressed': 'false',
    });
    node.append(svgEl('circle', { cx: p.x.toFixed(1), cy: p.y.toFixed(1), r: circles[i].r }));
    node.append(svgEl('title', {}, `${state} ${id}`));
    const l = placed.nodes[i];
    // The name as drawn comes first (what a voice user says), then the whole name.
    const full = isSelf ? '' : ` (${visible(name(id))})`;
    node.setAttribute('aria-label', `${l.text}${l.text === visible(name(id)) ? '' : full}${isSelf ? '' : `, ${state}`}, ${mine} channel${mine === 1 ? '' : 's'}`);
    node.append(svgEl('text', { x: l.x.toFixed(1), y: l.y.toFixed(1), class: 'node-label', 'text-anchor': l.anchor }, l.text));
    g.append(node);
  });
  kids.push(g);
  svg.replaceChildren(...kids);
  const open = edges.filter((e) => e.status === 'Open').length;
  const remote = edges.filter((e) => kind(e) === 'remote').length;
  const plural = (n, w) => `${n} ${w}${n === 1 ? '' : 's'}`;
  desc.textContent = `This node, ${plural(ids.length, 'other node')} and ${plural(edges.length, 'channel')} (${open} open, ${remote} between other nodes).`;
  if (data !== 'graph') desc.textContent += ' Only this node\'s channels: the node did not list its whole graph.';
  desc.textContent += ' Tab to the nodes, move with the arrow keys, Enter shows a node\'s channels; the tables below say the same.';
  svg.dataset.nodes = String(ids.length + 1);
  svg.dataset.edges = String(edges.length);
  svg.dataset.remote = String(remote);
  svg.dataset.from = data;
  return { order, self, nodes, edges, name };
}

// labelBox is the box a label of n characters in a font of size px takes
// around its anchor (x, baseline y), for anchor 'middle', 'start' or 'end':
// an estimate (0.62 em a character, the monospace and digit width), with a
// margin of 2 px.
export function labelBox(x, y, n, px, anchor = 'middle') {
  const w = n * px * 0.62 + 4;
  const x0 = anchor === 'start' ? x - 2 : anchor === 'end' ? x - w + 2 : x - w / 2;
  return { x0, y0: y - px * 0.9 - 2, x1: x0 + w, y1: y + px * 0.25 + 2 };
}

// overlaps reports whether boxes a and b intersect.
export function overlaps(a, b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

// placeLabels chooses where every label goes so that none covers a node or
// another label, inside a w × h drawing. nodes: [{x, y, r, text}] (the
// circle and its name); edges: [{text, at: [{x, y}, …]}] (a channel's
// label and the points along its arc it may sit at, best first). A node's
// name goes on its side away from center (the drawing's middle), where its
// channels do not run, else on another side, whichever is first free, else shortened to 7 characters and an ellipsis, else
// where it covers least (a name is always drawn: the nodes never sit that
// close in drawGraph's ring); a channel's label goes at its first free
// point, or is left out (null). It returns {nodes: [{x, y, anchor, text}],
// edges: [{x, y} | null]}. Pure.
export function placeLabels(nodes, edges, w, h, { nodePx = 12, edgePx = 11, center = { x: w / 2, y: h / 2 } } = {}) {
  // The four places around a node, the side away from the centre first
  // (where its channels do not run), then the opposite one, then the others.
  const sides = (n, c) => {
    const below = { x: n.x, y: n.y + n.r + nodePx + 1, anchor: 'middle' };
    const above = { x: n.x, y: n.y - n.r - 5, anchor: 'middle' };
    const right = { x: n.x + n.r + 4, y: n.y + nodePx * 0.35, anchor: 'start' };
    const left = { x: n.x - n.r - 4, y: n.y + nodePx * 0.35, anchor: 'end' };
    const dx = n.x - c.x;
    const dy = n.y - c.y;
    if (Math.abs(dy) >= Math.abs(dx) * 0.5) return dy < 0 ? [above, below, right, left] : [below, above, right, left];
    return dx > 0 ? [right, left, below, above] : [left, right, below, above];
  };
  const circles = nodes.map((n) => ({ x0: n.x - n.r - 2, y0: n.y - n.r - 2, x1: n.x + n.r + 2, y1: n.y + n.r + 2 }));
  const taken = [];
  const inside = (b) => b.x0 >= 0 && b.y0 >= 0 && b.x1 <= w && b.y1 <= h;
  const cost = (b, skip) => {
    let c = inside(b) ? 0 : 100;
    circles.forEach((o, i) => { if (i !== skip && overlaps(b, o)) c += 10; });
    for (const o of taken) if (overlaps(b, o)) c += 10;
    return c;
  };
  const placedNodes = nodes.map((n, i) => {
    const full = [...n.text];
    // The whole name first, then its first 7 characters and an ellipsis.
    const texts = full.length > 8 ? [full.join(''), full.slice(0, 7).join('') + '…'] : [full.join('')];
    let best = null;
    for (const text of texts) {
      const len = [...text].length;
      for (const c of sides(n, center)) {
        const b = labelBox(c.x, c.y, len, nodePx, c.anchor);
        const k = cost(b, i);
        if (!best || k < best.k) best = { c: { ...c, text }, b, k };
        if (k === 0) break;
      }
      if (best.k === 0) break;
    }
    taken.push(best.b);
    return best.c;
  });
  const placedEdges = edges.map((e) => {
    const len = [...e.text].length;
    for (const p of e.at) {
      const b = labelBox(p.x, p.y, len, edgePx);
      if (cost(b, -1) === 0) {
        taken.push(b);
        return { x: p.x, y: p.y };
      }
    }
    return null;
  });
  return { nodes: placedNodes, edges: placedEdges };
}

// labelOf is a node's name as the graph writes it: "this node", its alias
// (at most 16 characters) or its short id.
function labelOf(id, self, names) {
  if (id === self) return 'this node';
  const a = names.get(id);
  if (!a) return shortId(id);
  const cs = [...visible(a)];
  return cs.length > 16 ? cs.slice(0, 15).join('') + '…' : cs.join('');
}

// curvePoint is the point at t of the quadratic curve from a over c to b.
function curvePoint(a, c, b, t) {
  const u = 1 - t;
  return { x: u * u * a.x + 2 * u * t * c.x + t * t * b.x, y: u * u * a.y + 2 * u * t * c.y + t * t * b.y };
}

// GraphView draws the graph into an SVG and keeps what the keyboard chose
// across the redraws of each refresh. svg, desc: the drawing and its
// description; details: where a chosen node's details go; nodesTable,
// channelsTable: the tables the graph is also written as.
export class GraphView {
  constructor({ svg, desc, details, nodesTable, channelsTable }) {
    Object.assign(this, { svg, desc, details, nodesTable, channelsTable });
    this.focusId = ''; // the node holding the tab stop
    this.chosen = ''; // the node whose details show
    this.order = [];
    this.last = null;
    svg.addEventListener('keydown', (ev) => this.key(ev));
    svg.addEventListener('click', (ev) => {
      const g = ev.target.closest?.('g.node');
      if (g) this.choose(g.dataset.id, true);
    });
    svg.addEventListener('focusin', (ev) => {
      const g = ev.target.closest?.('g.node');
      if (g) this.focusId = g.dataset.id;
    });
  }

  // draw renders the answers (see drawGraph); the focused node keeps the
  // focus and the chosen node's details are written again from them.
  draw(data) {
    const hadFocus = this.svg.contains(document.activeElement);
    this.last = drawGraph(this.svg, this.desc, data);
    this.draws = (this.draws || 0) + 1;
    this.svg.dataset.draws = String(this.draws); // tests wait for a redraw by it
    this.order = this.last.order;
    if (!this.order.includes(this.focusId)) this.focusId = this.order[0] || '';
    for (const g of this.svg.querySelectorAll('g.node')) g.setAttribute('tabindex', g.dataset.id === this.focusId ? '0' : '-1');
    if (hadFocus) this.nodeEl(this.focusId)?.focus();
    this.tables();
    if (this.chosen && !this.order.includes(this.chosen)) this.chosen = '';
    this.showDetails();
  }

  nodeEl(id) {
    return [...this.svg.querySelectorAll('g.node')].find((g) => g.dataset.id === id);
  }

  move(id) {
    const g = this.nodeEl(id);
    if (!g) return;
    for (const n of this.svg.querySelectorAll('g.node')) n.setAttribute('tabindex', n === g ? '0' : '-1');
    this.focusId = id;
    g.focus();
  }

  key(ev) {
    const g = ev.target.closest?.('g.node');
    if (!g || !this.order.length) return;
    const i = this.order.indexOf(g.dataset.id);
    const n = this.order.length;
    let to = -1;
    switch (ev.key) {
      case 'ArrowRight': case 'ArrowDown': to = (i + 1) % n; break;
      case 'ArrowLeft': case 'ArrowUp': to = (i - 1 + n) % n; break;
      case 'Home': to = 0; break;
      case 'End': to = n - 1; break;
      case 'Enter': case ' ':
        ev.preventDefault();
        this.choose(g.dataset.id, false);
        return;
      case 'Escape':
        if (this.chosen) {
          ev.preventDefault();
          this.choose('', false);
        }
        return;
      default:
        return;
    }
    ev.preventDefault();
    this.move(this.order[to]);
  }

  // choose shows id's details ('' hides them); a click moves the tab stop
  // there too.
  choose(id, click) {
    this.chosen = id;
    if (click && id) this.move(id);
    this.showDetails();
  }

  showDetails() {
    const d = this.details;
    for (const g of this.svg.querySelectorAll('g.node')) g.setAttribute('aria-pressed', String(g.dataset.id === this.chosen));
    for (const p of this.svg.querySelectorAll('path.edge')) {
      p.classList.toggle('hl', !!this.chosen && (p.dataset.source === this.chosen || p.dataset.destination === this.chosen));
    }
    this.svg.classList.toggle('choosing', !!this.chosen);
    if (!this.chosen || !this.last) {
      d.hidden = true;
      d.replaceChildren();
      return;
    }
    const { self, nodes, edges, name } = this.last;
    const id = this.chosen;
    const info = nodes.get(id);
    const mine = edges.filter((e) => e.source === id || e.destination === id);
    d.hidden = false;
    const head = el('h3', id === self ? 'This node' : name(id));
    const facts = el('dl', undefined, { class: 'facts' });
    const idd = el('dd', id, { class: 'peer-id' });
    facts.append(el('dt', 'PeerId'), idd);
    facts.append(el('dt', 'State'), el('dd', id === self ? 'this node' : info?.connected ? 'connected peer' : 'known node, not connected'));
    facts.append(el('dt', 'Channels'), el('dd', String(mine.length)));
    const list = el('ul', undefined, { class: 'graph-channels' });
    for (const e of mine) {
      const dir = e.source === id ? `to ${name(e.destination)}` : `from ${name(e.source)}`;
      list.append(el('li', `${dir}: ${tokens(e.balance)} tokens, ${e.status}`));
    }
    const hint = el('p', 'Arrow keys: the next node; Escape: hide these details.', { class: 'muted hint' });
    d.replaceChildren(head, facts, ...(mine.length ? [list] : []), hint);
  }

  tables() {
    const { self, nodes, edges, name } = this.last;
    const cell = (id) => {
      const td = el('td', undefined, { class: 'peer' });
      td.append(el('span', id === self ? `this node (${shortId(id)})` : name(id), { class: 'peer-id', title: id }));
      return td;
    };
    const sum = (list) => list.reduce((s, e) => { try { return s + BigInt(e.balance); } catch { return s; } }, 0n);
    const nb = this.nodesTable.tBodies[0];
    nb.replaceChildren(...this.order.map((id) => {
      const out = edges.filter((e) => e.source === id);
      const inc = edges.filter((e) => e.destination === id);
      const tr = el('tr');
      tr.dataset.id = id;
      tr.append(cell(id), el('td', id === self ? 'this node' : nodes.get(id)?.connected ? 'connected' : 'not connected'),
        el('td', `${out.length} (${tokens(sum(out))} tokens)`), el('td', `${inc.length} (${tokens(sum(inc))} tokens)`));
      return tr;
    }));
    const cb = this.channelsTable.tBodies[0];
    cb.replaceChildren(...edges.map((e) => {
      const tr = el('tr');
      tr.append(cell(e.source), cell(e.destination), el('td', `${tokens(e.balance)} tokens`), el('td', e.status));
      return tr;
    }));
    if (!edges.length) {
      const tr = el('tr');
      tr.append(el('td', 'No channels.', { colspan: '4', class: 'muted' }));
      cb.append(tr);
    }
  }
}
