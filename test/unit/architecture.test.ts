/**
 * docs/architecture.md kept true: every import of src/**\/*.ts(x) (type-only and dynamic ones
 * included) runs down the floors its "Floors" tables give, or is one of its "Crossings still to
 * mend", and no files import each other in a circle. The tables are read from the document
 * itself, so the map and this test cannot drift apart; the rules the issue asks of the map (the
 * bridge beside the store, the contracts below both, the web app apart) are held against it too.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOC = 'docs/architecture.md';

// ---- the map

type Floor = number | 'apart';

interface Room {
  /** Paths from the repository's root: a folder ends in `/`. */
  paths: string[];
  floor: Floor;
  /** What it may import as types only, whatever the floors say. */
  typesFrom: string[];
  /** The room whose inside its table maps (`src/` for the house). */
  scope: string;
}

interface Crossing {
  from: string;
  to: string;
}

interface FloorPlan {
  rooms: Room[];
  crossings: Crossing[];
}

const backticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);

/** The floor tables (header `| Floor | Room | Types only from | ...`) and the crossings list of the document. */
function readMap(markdown: string): FloorPlan {
  const rooms: Room[] = [];
  const crossings: Crossing[] = [];
  let scope = 'src/';
  let inTable = false;
  let inCrossings = false;
  for (const line of markdown.split('\n')) {
    const heading = /^#+ (.*)$/.exec(line);
    if (heading) {
      const inside = /inside `([^`]+)`/.exec(heading[1] as string);
      scope = inside ? (inside[1] as string) : 'src/';
      inCrossings = /^Crossings still to mend$/.test(heading[1] as string);
      inTable = false;
      continue;
    }
    if (/^\| Floor \| Room \| Types only from \|/.test(line)) {
      inTable = true;
      continue;
    }
    if (inTable && line.startsWith('|')) {
      const cells = line.split('|').slice(1, -1).map((cell) => cell.trim());
      if (/^-+$/.test(cells[0] ?? '')) continue;
      const floor = cells[0] === 'apart' ? 'apart' : Number(cells[0]);
      if (floor !== 'apart' && !Number.isInteger(floor)) throw new Error(`${DOC}: a floor is a whole number or "apart": ${line}`);
      rooms.push({ paths: backticked(cells[1] ?? ''), floor, typesFrom: backticked(cells[2] ?? ''), scope });
      continue;
    }
    inTable = false;
    const crossing = inCrossings ? /^- `([^`]+)` -> `([^`]+)`/.exec(line) : null;
    if (crossing) crossings.push({ from: crossing[1] as string, to: crossing[2] as string });
  }
  return { rooms, crossings };
}

const covers = (roomPath: string, file: string): boolean => (roomPath.endsWith('/') ? file.startsWith(roomPath) : file === roomPath);

/** The room of `file` among those the table of `scope` maps: the one with the longest path that starts it. */
function roomOf(map: FloorPlan, scope: string, file: string): Room | undefined {
  let best: { room: Room; length: number } | undefined;
  for (const room of map.rooms) {
    if (room.scope !== scope) continue;
    for (const p of room.paths) if (covers(p, file) && p.length > (best?.length ?? -1)) best = { room, length: p.length };
  }
  return best?.room;
}

const nameOf = (room: Room): string => room.paths.join(' ');

/**
 * Why the import of `to` by `from` breaks the map, or undefined when it keeps it: compared in the
 * table of the house, and where both are in one room that has a table of its own, in that one.
 */
function breachOf(map: FloorPlan, from: string, to: string, typeOnly: boolean): string | undefined {
  let scope = 'src/';
  for (;;) {
    const a = roomOf(map, scope, from);
    const b = roomOf(map, scope, to);
    if (!a || !b) return `${!a ? from : to} is in no room of ${DOC}`;
    if (a === b) {
      const inner = a.paths.length === 1 && a.paths[0] !== scope && map.rooms.some((room) => room.scope === a.paths[0]) ? (a.paths[0] as string) : undefined;
      if (inner === undefined) return undefined;
      scope = inner;
      continue;
    }
    if (typeOnly && a.typesFrom.some((p) => covers(p, to))) return undefined;
    // Floor 0 is the ground everything may stand on, a room apart included (browser-safe pure code).
    if (a.floor === 'apart') return b.floor === 0 ? undefined : `${nameOf(a)} stands apart: it imports nothing of ${nameOf(b)}`;
    if (b.floor === 'apart') return `${nameOf(b)} stands apart: ${nameOf(a)} may not import it`;
    if (b.floor < a.floor) return undefined;
    return b.floor === a.floor
      ? `${nameOf(a)} and ${nameOf(b)} stand beside each other on floor ${a.floor}: neither imports the other`
      : `${nameOf(a)} (floor ${a.floor}) imports ${nameOf(b)} (floor ${b.floor}), above it`;
  }
}

// ---- the code

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** The file a relative specifier names (`./x.js` is `./x.ts` or `./x.tsx` in the sources). */
function resolve(from: string, specifier: string): string {
  const base = path.posix.join(path.posix.dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`];
  const found = candidates.find((c) => existsSync(path.join(ROOT, c)) && statSync(path.join(ROOT, c)).isFile());
  if (!found) throw new Error(`${from}: cannot find the file of import '${specifier}'`);
  return found;
}

/** Every import of a file of this tree: static, re-exports, dynamic import() of a literal, and whether it is for types only. */
function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Import[] = [];
  const add = (specifier: ts.Expression | undefined, typeOnly: boolean): void => {
    if (specifier && ts.isStringLiteralLike(specifier) && specifier.text.startsWith('.')) found.push({ from: file, to: resolve(file, specifier.text), typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const namedTypesOnly = !!clause && !clause.name && !!bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier, !!clause && (clause.isTypeOnly || namedTypesOnly));
    } else if (ts.isExportDeclaration(node)) {
      const clause = node.exportClause;
      const namedTypesOnly = !!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier, node.isTypeOnly || namedTypesOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Files that import each other in a loop (Tarjan's strongly connected components of two files or more, or one importing itself). */
function circlesOf(edges: ReadonlyArray<{ from: string; to: string }>): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let counter = 0;
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || (next.get(v) ?? []).includes(v)) circles.push(component.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) connect(v);
  return circles;
}

// ---- the checks

const map = readMap(readFileSync(path.join(ROOT, DOC), 'utf8'));
const files = sourceFiles('src');
const imports = files.flatMap(importsOf);
const key = (c: Crossing): string => `${c.from} -> ${c.to}`;

describe(`${DOC}, the map of the rooms`, () => {
  it('puts every source file in a room of the house', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((file) => !roomOf(map, 'src/', file))).toEqual([]);
  });

  it('has no import that runs up a floor, between rooms beside each other or into a room apart, but the crossings it lists', () => {
    const listed = new Set(map.crossings.map(key));
    const breaches = imports.flatMap((i) => {
      const why = breachOf(map, i.from, i.to, i.typeOnly);
      return why && !listed.has(key(i)) ? [`${key(i)}${i.typeOnly ? ' (types)' : ''}: ${why}`] : [];
    });
    expect(breaches).toEqual([]);
  });

  it('lists only crossings the code still has, each breaking the floors (strike a mended one)', () => {
    const present = new Set(imports.map(key));
    expect(map.crossings.filter((c) => !present.has(key(c))).map(key)).toEqual([]);
    expect(map.crossings.filter((c) => !breachOf(map, c.from, c.to, false)).map(key)).toEqual([]);
  });

  it('has no files importing each other in a circle', () => {
    expect(circlesOf(imports)).toEqual([]);
  });

  it('finds a circle where there is one', () => {
    const edges = [
      { from: 'a', to: 'b' },
      { from: 'b', to: 'c' },
      { from: 'c', to: 'a' },
      { from: 'c', to: 'd' },
      { from: 'e', to: 'e' },
    ];
    expect(circlesOf(edges)).toEqual([['a', 'b', 'c'], ['e']]);
  });
});

describe(`${DOC} says what issue 29 asks of the floors`, () => {
  const refused = (from: string, to: string, typeOnly = false): boolean => breachOf(map, from, to, typeOnly) !== undefined;

  it('keeps the bridge beside the store: neither imports the other', () => {
    expect(refused('src/bridge/dav-errors.ts', 'src/store/storage/sql.ts', true)).toBe(true);
    expect(refused('src/store/bridge-store.ts', 'src/bridge/server.ts', true)).toBe(true);
  });

  it('lets both stand on the contracts, the store client and common, and those on nothing above them', () => {
    for (const upper of ['src/bridge/server.ts', 'src/store/app.ts']) {
      for (const lower of ['src/contracts/bridge-state.ts', 'src/store-client/contract.ts', 'src/common/config.ts']) expect(refused(upper, lower)).toBe(false);
    }
    expect(refused('src/store-client/http.ts', 'src/bridge/server.ts', true)).toBe(true);
    expect(refused('src/store-client/http.ts', 'src/contracts/bridge-state.ts', true)).toBe(true);
    expect(refused('src/contracts/local-part-store.ts', 'src/common/private-files.ts')).toBe(false);
    for (const above of ['src/store-client/contract.ts', 'src/store/storage/sql.ts', 'src/bridge/locks.ts']) expect(refused('src/contracts/dav-locks.ts', above, true)).toBe(true);
    for (const above of ['src/contracts/dav-locks.ts', 'src/store-client/contract.ts', 'src/store/app.ts', 'src/bridge/server.ts', 'src/cli/program.ts', 'src/main.ts']) {
      expect(refused('src/common/config.ts', above, true)).toBe(true);
    }
  });

  it('keeps the web app apart: types of the store schemas only', () => {
    expect(refused('src/web/api/admin.ts', 'src/store/schemas/users.ts', true)).toBe(false);
    expect(refused('src/web/api/admin.ts', 'src/store/schemas/users.ts', false)).toBe(true);
    expect(refused('src/web/api/admin.ts', 'src/store/ops/login.ts', true)).toBe(true);
    expect(refused('src/web/api/admin.ts', 'src/common/config.ts', true)).toBe(true);
    expect(refused('src/store/web-app.ts', 'src/web/app.tsx', true)).toBe(true);
  });

  it('lets the web app and the bridge share floor 0, browser-safe code that imports nothing', () => {
    expect(refused('src/web/api/files.ts', 'src/shared/group-folder-names.ts')).toBe(false);
    expect(refused('src/bridge/namespace.ts', 'src/shared/group-folder-names.ts')).toBe(false);
    expect(refused('src/shared/group-folder-names.ts', 'src/common/config.ts', true)).toBe(true);
    expect(refused('src/shared/group-folder-names.ts', 'src/web/api/files.ts', true)).toBe(true);
  });

  it('orders the bridge inside: doors, then verbs beside uploads, then commit.ts, then request/, then the rest', () => {
    expect(refused('src/bridge/server.ts', 'src/bridge/verbs/get.ts')).toBe(false);
    expect(refused('src/bridge/verbs/put.ts', 'src/bridge/commit.ts')).toBe(false);
    expect(refused('src/bridge/uploads/tus.ts', 'src/bridge/commit.ts')).toBe(false);
    expect(refused('src/bridge/commit.ts', 'src/bridge/request/context.ts')).toBe(false);
    expect(refused('src/bridge/request/context.ts', 'src/bridge/store-tree.ts')).toBe(false);
    expect(refused('src/bridge/uploads/tus.ts', 'src/bridge/verbs/get.ts', true)).toBe(true);
    expect(refused('src/bridge/verbs/get.ts', 'src/bridge/uploads/tus.ts', true)).toBe(true);
    expect(refused('src/bridge/commit.ts', 'src/bridge/verbs/put.ts', true)).toBe(true);
    expect(refused('src/bridge/request/context.ts', 'src/bridge/commit.ts', true)).toBe(true);
    expect(refused('src/bridge/store-tree.ts', 'src/bridge/request/context.ts', true)).toBe(true);
    expect(refused('src/bridge/locks.ts', 'src/bridge/server.ts', true)).toBe(true);
  });
});
