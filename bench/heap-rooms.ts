/**
 * A V8 heap snapshot by room (bench/memory.ts; or alone: `npx tsx bench/heap-rooms.ts <file>`):
 * self sizes grouped by the package whose code made them (closures and code by their script's
 * path: an npm package, node's built-ins, driveway's dist/<room>), other objects by constructor,
 * strings together.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fmt, MiB } from './lib.js';

/** Self sizes of a V8 heap snapshot by room (package of the code, or constructor), MiB. */
export function heapByRoom(file: string): Array<[string, number]> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  const { node_fields: nf, node_types: nt, edge_fields: ef, edge_types: et } = snap.snapshot.meta;
  const N = nf.length;
  const E = ef.length;
  const [iType, iName, iSize, iEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) => nf.indexOf(f)) as [number, number, number, number];
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f)) as [number, number, number];
  const types = nt[0];
  const edgeTypes = et[0];
  const count = snap.nodes.length / N;
  const firstEdge = new Int32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += (snap.nodes[i * N + iEdges] as number) * E;
  }
  firstEdge[count] = snap.edges.length;
  const typeOf = (i: number) => types[snap.nodes[i * N + iType] as number] as string;
  const nameOf = (i: number) => snap.strings[snap.nodes[i * N + iName] as number] as string;
  const roomOfScript = (url: string): string => {
    const nm = url.lastIndexOf('node_modules/');
    if (nm >= 0) {
      const rest = url.slice(nm + 'node_modules/'.length).split('/');
      return `npm: ${rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
    }
    if (url === '') return 'unattributed (no script found)';
    if (url.startsWith('node:') || !url.includes('/')) return 'node: built-in modules';
    const dist = url.indexOf('/dist/');
    if (dist >= 0) return `driveway: ${url.slice(dist + 6).split('/').slice(0, 2).join('/').replace(/\.js$/, '')}`;
    return 'other scripts';
  };
  // A closure's or a function's script: follow `shared` then `script` edges to a script's name.
  const scriptOf = (i: number, depth = 0): string | undefined => {
    if (depth > 3) return undefined;
    for (let e = firstEdge[i] as number; e < (firstEdge[i + 1] as number); e += E) {
      const kind = edgeTypes[snap.edges[e + eType] as number];
      if (kind !== 'internal' && kind !== 'property') continue;
      const label = snap.strings[snap.edges[e + eName] as number];
      const to = (snap.edges[e + eTo] as number) / N;
      if (label === 'script' || label === 'script_or_debug_info') {
        const name = typeOf(to) === 'code' || typeOf(to) === 'hidden' || typeOf(to) === 'object' ? findSource(to) : undefined;
        if (name) return name;
      }
      if (label === 'shared' || label === 'function_data' || label === 'script') {
        const found = scriptOf(to, depth + 1);
        if (found) return found;
      }
    }
    return undefined;
  };
  const findSource = (i: number): string | undefined => {
    for (let e = firstEdge[i] as number; e < (firstEdge[i + 1] as number); e += E) {
      if (snap.strings[snap.edges[e + eName] as number] === 'name') {
        const to = (snap.edges[e + eTo] as number) / N;
        if (typeOf(to) === 'string') return nameOf(to);
      }
    }
    return undefined;
  };
  const rooms = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const type = typeOf(i);
    const size = snap.nodes[i * N + iSize] as number;
    let room: string;
    if (type === 'closure') room = roomOfScript(scriptOf(i) ?? '');
    else if (type === 'code') room = `code: ${roomOfScript(scriptOf(i) ?? '')}`;
    else if (type === 'string' || type === 'concatenated string' || type === 'sliced string') room = 'strings';
    else if (type === 'native') room = `native: ${nameOf(i).split(' ')[0]}`;
    else if (type === 'object') room = `objects: ${nameOf(i)}`;
    else room = `(${type}) ${type === 'hidden' || type === 'synthetic' ? nameOf(i).split(' ')[0] : ''}`.trim();
    rooms.set(room, (rooms.get(room) ?? 0) + size);
  }
  return [...rooms.entries()].map(([room, bytes]) => [room, bytes / MiB] as [string, number]).sort((a, b) => b[1] - a[1]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: npx tsx bench/heap-rooms.ts <file.heapsnapshot>');
  const rooms = heapByRoom(file);
  console.log(`${fmt(rooms.reduce((a, [, v]) => a + v, 0))} MiB of self sizes in all`);
  for (const [room, mib] of rooms.slice(0, Number(process.argv[3] ?? 30))) console.log(`  ${room.padEnd(60)} ${fmt(mib, 2).padStart(7)} MiB`);
}
