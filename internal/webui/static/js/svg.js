// A few helpers to draw SVG with the DOM (no markup strings).
import { visible } from './text.js';

const NS = 'http://www.w3.org/2000/svg';

// svgEl creates an SVG element with attributes; text, when given, becomes
// its text content (made visible).
export function svgEl(tag, attrs = {}, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = visible(text);
  return e;
}
