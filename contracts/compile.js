#!/usr/bin/env node
// compile.js compiles the Solidity sources in this folder with the pinned solc (package.json) and
// writes <outDir>/combined.json in the shape of `solc --combined-json abi,bin`, which
// `abigen --combined-json` reads. The output is deterministic: sorted keys, no timestamps, no
// absolute paths, so scripts/gen-contracts.sh can be re-run and compared byte for byte.
//
// Usage: node compile.js [outDir]   (default: ../internal/chain/contracts)
'use strict';

const fs = require('fs');
const path = require('path');
const solc = require('solc');

// The contracts whose ABI and bytecode are published; OpenZeppelin's are only imported.
const SOURCES = ['RelayChannels.sol', 'RelayToken.sol'];

const here = __dirname;
const outDir = path.resolve(process.argv[2] || path.join(here, '..', 'internal', 'chain', 'contracts'));

function findImport(importPath) {
  // A sibling source of this folder, imported as "./Name.sol" (solc asks for "contracts/Name.sol"):
  // read it from here, whether or not SOURCES lists it (a library such as RelayVRF is compiled
  // into the contracts importing it and has no artefact of its own).
  const local = /^contracts\/([A-Za-z0-9_]+\.sol)$/.exec(importPath);
  if (local) {
    try {
      return { contents: fs.readFileSync(path.join(here, local[1]), 'utf8') };
    } catch (err) {
      return { error: `cannot read ${importPath}: ${err.message}` };
    }
  }
  // Anything else only from the packages installed by `npm ci`; never reach outside node_modules.
  const resolved = path.resolve(here, 'node_modules', importPath);
  if (!resolved.startsWith(path.join(here, 'node_modules') + path.sep)) {
    return { error: `import outside node_modules: ${importPath}` };
  }
  try {
    return { contents: fs.readFileSync(resolved, 'utf8') };
  } catch (err) {
    return { error: `cannot read ${importPath}: ${err.message}` };
  }
}

// sortKeys returns a copy of v with every object's keys in lexicographic order.
function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const out = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k]);
    return out;
  }
  return v;
}

const sources = {};
for (const name of SOURCES) {
  sources[`contracts/${name}`] = { content: fs.readFileSync(path.join(here, name), 'utf8') };
}

const input = {
  language: 'Solidity',
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};

const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport }));
let failed = false;
for (const e of output.errors || []) {
  process.stderr.write(e.formattedMessage || e.message);
  if (e.severity === 'error') failed = true;
}
if (failed) {
  process.stderr.write('compile.js: compilation failed\n');
  process.exit(1);
}

const contracts = {};
for (const file of Object.keys(sources)) {
  for (const [name, c] of Object.entries(output.contracts[file] || {})) {
    if (!c.evm.bytecode.object) continue; // interfaces and abstract contracts
    contracts[`${file}:${name}`] = { abi: c.abi, bin: c.evm.bytecode.object };
  }
}
if (Object.keys(contracts).length === 0) {
  process.stderr.write('compile.js: no contracts in the output\n');
  process.exit(1);
}

fs.mkdirSync(outDir, { recursive: true });
const combined = sortKeys({ contracts, version: solc.version() });
fs.writeFileSync(path.join(outDir, 'combined.json'), JSON.stringify(combined, null, 2) + '\n');
