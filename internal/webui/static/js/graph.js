// The channel graph the node knows: this node in the middle, every other
// node around it (connected ones highlighted), and the channels as edges
// whose width grows with their balance: this node's outgoing and incoming
// ones in colour, those between two other nodes in grey; the two
// directions between a pair are drawn as two arcs. The data is the REST
// GET /node/graph (the whole graph the node has indexed); when that call
// fails (an older node), this node's own channels and peers.
import { svgEl } from './svg.js';
import { tokens, shortId } from './text.js';

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
// alias.
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
  const order = { remote: 0, in: 1, out: 2 };
  const sorted = [...edges].sort((a, b) => order[kind(a)] - order[kind(b)]);
  const edgeGroup = svgEl('g', { class: 'edges' });
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
    const cx = mx - (dy / len) * bend;
    const cy = my + (dx / len) * bend;
    // Stop short of the target's circle.
    const ex = to.x - (dx / len) * 22;
    const ey = to.y - (dy / len) * 22;
    const path = svgEl('path', {
      d: `M${from.x.toFixed(1)},${from.y.toFixed(1)} Q${cx.toFixed(1)},${cy.toFixed(1)} ${ex.toFixed(1)},${ey.toFixed(1)}`,
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
    // cover each other. The others name their balance on hover.
    if (k !== 'remote') edgeGroup.append(svgEl('text', { x: cx.toFixed(1), y: (cy - 4).toFixed(1), class: 'edge-label' }, tokens(e.balance, 2)));
  }
  kids.push(edgeGroup);

  const g = svgEl('g', { class: 'nodes' });
  for (const id of [self, ...ids]) {
    const p = pos.get(id);
    const isSelf = id === self;
    const cls = isSelf ? 'self' : nodes.get(id).connected ? 'peer' : 'other';
    const node = svgEl('g', { class: `node ${cls}`, transform: `translate(${p.x.toFixed(1)},${p.y.toFixed(1)})`, 'data-id': id });
    node.append(svgEl('circle', { r: isSelf ? 22 : 16 }));
    node.append(svgEl('title', {}, `${isSelf ? 'this node' : cls === 'peer' ? 'connected peer' : 'known node'} ${id}`));
    node.append(svgEl('text', { y: isSelf ? 38 : 31, class: 'node-label' }, isSelf ? 'this node' : names.get(id) || shortId(id)));
    g.append(node);
  }
  kids.push(g);
  svg.replaceChildren(...kids);
  const open = edges.filter((e) => e.status === 'Open').length;
  const remote = edges.filter((e) => kind(e) === 'remote').length;
  const plural = (n, w) => `${n} ${w}${n === 1 ? '' : 's'}`;
  desc.textContent = `This node, ${plural(ids.length, 'other node')} and ${plural(edges.length, 'channel')} (${open} open, ${remote} between other nodes).`;
  if (data !== 'graph') desc.textContent += ' Only this node\'s channels: the node did not list its whole graph.';
  svg.dataset.nodes = String(ids.length + 1);
  svg.dataset.edges = String(edges.length);
  svg.dataset.remote = String(remote);
  svg.dataset.from = data;
}
