// The channel graph the node sees: this node in the middle, every peer it
// knows around it (connected ones highlighted), and its channels as edges
// whose width grows with their balance; outgoing and incoming channels with
// the same peer are drawn as two arcs.
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

// draw renders the graph into svg. self is this node's PeerId; peers the
// REST peers answer; channels the REST channels answer; names maps a
// PeerId to an alias.
export function drawGraph(svg, desc, { self, peers, channels, names }) {
  const nodes = new Map(); // id -> {connected}
  for (const p of peers.announced || []) nodes.set(p.peerId, { connected: !!p.connected });
  for (const p of peers.connected || []) nodes.set(p.peerId, { connected: true });
  const all = [...(channels.outgoing || []), ...(channels.incoming || [])].filter((c) => c.status !== 'Closed');
  for (const c of all) if (!nodes.has(c.peerId)) nodes.set(c.peerId, { connected: false });
  nodes.delete(self);
  const ids = [...nodes.keys()].sort();
  const pos = new Map([[self, { x: W / 2, y: H / 2 }]]);
  const r = Math.min(W, H) / 2 - 60;
  ids.forEach((id, i) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / Math.max(1, ids.length);
    pos.set(id, { x: W / 2 + r * Math.cos(a) * 1.25, y: H / 2 + r * Math.sin(a) });
  });

  const kids = [svg.querySelector('desc')];
  const defs = svgEl('defs');
  for (const [id, colour] of [['arrow-out', '#1f5fbf'], ['arrow-in', '#1b7a3a']]) {
    const m = svgEl('marker', { id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 5, markerHeight: 5, orient: 'auto-start-reverse' });
    m.append(svgEl('path', { d: 'M0,0 L10,5 L0,10 z', fill: colour }));
    defs.append(m);
  }
  kids.push(defs);

  const edges = svgEl('g', { class: 'edges' });
  for (const c of all) {
    const peer = pos.get(c.peerId);
    if (!peer) continue;
    const out = c.type === 'outgoing';
    const [from, to] = out ? [pos.get(self), peer] : [peer, pos.get(self)];
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
      class: `edge ${out ? 'out' : 'in'} ${c.status === 'Open' ? 'open' : 'closing'}`,
      'stroke-width': widthOf(c.balance).toFixed(2),
      'marker-end': `url(#arrow-${out ? 'out' : 'in'})`,
    });
    path.append(svgEl('title', {}, `${out ? 'outgoing to' : 'incoming from'} ${names.get(c.peerId) || c.peerId}: ${tokens(c.balance)} tokens, ${c.status}`));
    edges.append(path);
    edges.append(svgEl('text', { x: cx.toFixed(1), y: (cy - 4).toFixed(1), class: 'edge-label' }, tokens(c.balance, 2)));
  }
  kids.push(edges);

  const g = svgEl('g', { class: 'nodes' });
  for (const id of [self, ...ids]) {
    const p = pos.get(id);
    const isSelf = id === self;
    const cls = isSelf ? 'self' : nodes.get(id).connected ? 'peer' : 'other';
    const node = svgEl('g', { class: `node ${cls}`, transform: `translate(${p.x.toFixed(1)},${p.y.toFixed(1)})` });
    node.append(svgEl('circle', { r: isSelf ? 22 : 16 }));
    node.append(svgEl('title', {}, `${isSelf ? 'this node' : cls === 'peer' ? 'connected peer' : 'known node'} ${id}`));
    node.append(svgEl('text', { y: isSelf ? 38 : 31, class: 'node-label' }, isSelf ? 'this node' : names.get(id) || shortId(id)));
    g.append(node);
  }
  kids.push(g);
  svg.replaceChildren(...kids);
  const open = all.filter((c) => c.status === 'Open').length;
  desc.textContent = `This node, ${ids.length} other node${ids.length === 1 ? '' : 's'} and ${all.length} channel${all.length === 1 ? '' : 's'} (${open} open).`;
  svg.dataset.nodes = String(ids.length + 1);
  svg.dataset.edges = String(all.length);
}
