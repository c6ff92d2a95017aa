/**
 * The engine's layers, read from the code: every relative import of `src/` (static, dynamic and
 * type-only, as TypeScript's own pre-processor lists them), the layer of each file, and what breaks
 * the rules: a circle of imports, between files or between the folders of any one folder, and an
 * arrow from a lower layer to a higher one. `test/architecture/layers.test.ts` holds the tree to it,
 * and the architecture page draws the layers from it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import ts from 'typescript';

/** The layers, lowest first: a file may import its own layer and the ones before it. */
export const LAYERS = [
  {
    name: 'core',
    what: 'errors, paths, the handler convention, project modules, DynamoDB JSON, expressions, templates',
  },
  { name: 'definitions', what: 'the files of a project: schemas, loaders, checks, Mermaid and XState views' },
  { name: 'runtime', what: 'what a Lambda runs: step handler, steps, models, tools, email trigger, lifecycle' },
  { name: 'project', what: 'a whole project: its settings, workflows with their code, lifecycles, validate' },
  { name: 'cdk', what: 'the app, the stacks and the constructs that compile to ASL' },
  { name: 'local', what: 'the emulator: the emulated cloud, execution records, the ASL interpreter, sessions' },
  { name: 'evals', what: 'eval runner, record and replay, comparison, JUnit, cost model' },
  { name: 'cli', what: 'the stepwise command, Studio, templates' },
] as const;

/**
 * The rooms of a layer that has them, lowest first. A file sits in one room; it may import its own room and rooms of a
 * lower rank, and rooms of one rank import nothing of each other.
 */
export const ROOMS: Readonly<Record<string, readonly { name: string; rank: number; what: string }[]>> = {
  local: [
    {
      name: 'cloud',
      rank: 0,
      what: 'the emulated AWS services: the app synthesized in process and its intrinsics, Lambda, DynamoDB Local and the warm service, the EventBridge bus and Pipe, the scheduler',
    },
    {
      name: 'records',
      rank: 0,
      what: 'what an execution leaves behind: histories, pauses, the execution list, imports, forks and their edits, step statistics, recorded emails',
    },
    {
      name: 'asl',
      rank: 1,
      what: 'the ASL interpreter and what drives it: the local runtime, executions, waits, limits, faults, child executions',
    },
    {
      name: 'sessions',
      rank: 2,
      what: 'what a command or a test runs: workflow, lifecycle and single-prompt sessions, the email ingress, event waits, replay',
    },
  ],
};

/** The room of a file of a layer with rooms (`local/asl/runtime.ts` → asl), or undefined. */
export function roomOf(file: string): { layer: string; name: string; rank: number } | undefined {
  const [layer, room, ...rest] = file.split('/');
  const found = rest.length > 0 ? ROOMS[layer!]?.find((r) => r.name === room) : undefined;
  return found && { layer: layer!, name: found.name, rank: found.rank };
}

/** The public entry points that sit at the top of `src/`, each with the layer it belongs to. */
export const FACES: Readonly<Record<string, string>> = {
  'index.ts': 'runtime', // `stepwise`: what a workflow's code imports, bundled into its Lambdas
  'config.ts': 'project', // `stepwise/config`: what the project's stepwise.config.ts imports
  'testing.ts': 'evals', // `stepwise/testing`: local sessions and evals for a project's tests
  'embeddings.ts': 'runtime', // `stepwise/embeddings`: the embeddings port, for a tool's code
  'templates.ts': 'core', // `stepwise/templates`: `{{placeholder}}` templates, for a step's replies
  'dynamodb.ts': 'core', // `stepwise/dynamodb`: a tool's own DynamoDB store, free-form JSON kept as text
};

/** A file's imports, as paths relative to the root the graph was read from. */
export type ImportGraph = Record<string, string[]>;

const SOURCE = /\.(m?ts|tsx)$/;

/** Every TypeScript file under `dir` (the Studio UI included), without the project templates `stepwise new` copies. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'templates' || name === 'dist' ? [] : sourceFiles(path);
    return SOURCE.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The relative imports of every source file under `root` (paths relative to `root`, `/`-separated). */
export function importGraph(root: string): ImportGraph {
  const graph: ImportGraph = {};
  const rel = (path: string) => relative(root, path).split(sep).join('/');
  for (const file of sourceFiles(root)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    graph[rel(file)] = importedFiles
      .map((i) => i.fileName)
      .filter((spec) => spec.startsWith('.') && SOURCE.test(spec))
      .map((spec) => posix.normalize(posix.join(posix.dirname(rel(file)), spec)));
  }
  return graph;
}

/** The layer of a file of `src/` (its first folder, or its face), or undefined for a file outside every layer. */
export function layerOf(file: string): string | undefined {
  const [first, ...rest] = file.split('/');
  if (rest.length === 0) return FACES[first!];
  return LAYERS.some((l) => l.name === first) ? first : undefined;
}

const rank = (layer: string) => LAYERS.findIndex((l) => l.name === layer);

/** Every folder that holds one of `files`, its parent folders included (`a/b/c.ts` → `a`, `a/b`). */
function foldersOf(files: readonly string[]): Set<string> {
  const folders = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    for (let depth = 1; depth < parts.length; depth++) folders.add(parts.slice(0, depth).join('/'));
  }
  return folders;
}

/** Groups of nodes that import each other, directly or through others (Tarjan's strongly connected components). */
function circles(nodes: Iterable<string>, edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (node: string) => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1) found.push(group.sort());
  };
  for (const node of nodes) if (!index.has(node)) connect(node);
  return found;
}

/** The arrows between the children (files and folders) of `folder`. */
function childEdges(graph: ImportGraph, folder: string): Map<string, Set<string>> {
  const prefix = folder === '' ? '' : `${folder}/`;
  const child = (file: string) =>
    file.startsWith(prefix) ? prefix + file.slice(prefix.length).split('/')[0] : undefined;
  const edges = new Map<string, Set<string>>();
  for (const [file, imports] of Object.entries(graph)) {
    const from = child(file);
    if (!from) continue;
    for (const target of imports) {
      const to = child(target);
      if (to && to !== from) edges.set(from, (edges.get(from) ?? new Set()).add(to));
    }
  }
  return edges;
}

/** What breaks the rooms of a layer: a file in no room, an import of a higher room or of a sibling room of one rank. */
function roomProblems(graph: ImportGraph): string[] {
  const problems: string[] = [];
  for (const [file, imports] of Object.entries(graph)) {
    const layer = layerOf(file);
    if (!layer || !ROOMS[layer]) continue;
    const from = roomOf(file);
    if (!from) {
      problems.push(`${file}: in no room of ${layer} (${ROOMS[layer].map((r) => r.name).join(', ')})`);
      continue;
    }
    for (const to of imports.map((target) => ({ target, room: roomOf(target) }))) {
      if (!to.room || to.room.layer !== layer || to.room.name === from.name) continue;
      const where = `${file} (${layer}/${from.name}) imports ${to.target} (${layer}/${to.room.name})`;
      if (to.room.rank > from.rank) problems.push(`${where}: a lower room imports a higher one`);
      else if (to.room.rank === from.rank) problems.push(`${where}: rooms of one rank import nothing of each other`);
    }
  }
  return problems;
}

/**
 * Everything that breaks the layering, one line each: an import of a file that is not there, of a
 * higher layer, or of no layer; a file outside the rooms of its layer, or importing a higher room or a
 * room of its own rank; a circle of files; a circle of the files and folders inside any one folder (a
 * folder that imports a sibling which imports it back, through any file).
 */
export function layerProblems(graph: ImportGraph): string[] {
  const problems: string[] = [];
  for (const [file, imports] of Object.entries(graph)) {
    const from = layerOf(file);
    if (!from) problems.push(`${file}: in no layer (${LAYERS.map((l) => l.name).join(', ')})`);
    for (const target of imports) {
      const to = layerOf(target);
      if (!(target in graph)) problems.push(`${file} imports ${target}, which is not a source file of the tree`);
      else if (from && to && rank(to) > rank(from))
        problems.push(`${file} (${from}) imports ${target} (${to}): a lower layer imports a higher one`);
    }
  }
  problems.push(...roomProblems(graph));
  const fileEdges = new Map(Object.entries(graph).map(([file, imports]) => [file, new Set(imports)]));
  for (const circle of circles(Object.keys(graph), fileEdges)) problems.push(`import circle: ${circle.join(' → ')}`);
  const folders = foldersOf(Object.keys(graph));
  for (const folder of ['', ...[...folders].sort()]) {
    const edges = childEdges(graph, folder);
    for (const circle of circles(edges.keys(), edges)) {
      if (circle.every((node) => SOURCE.test(node))) continue; // a circle of files is reported above
      problems.push(`folder circle in ${folder || '.'}: ${circle.join(' ⇄ ')}`);
    }
  }
  return problems;
}

/** How many arrows run from each layer to each other one. */
export function layerArrows(graph: ImportGraph): Map<string, Map<string, number>> {
  const arrows = new Map<string, Map<string, number>>();
  for (const [file, imports] of Object.entries(graph)) {
    const from = layerOf(file);
    for (const target of imports) {
      const to = layerOf(target);
      if (!from || !to || from === to) continue;
      const row = arrows.get(from) ?? new Map<string, number>();
      arrows.set(from, row.set(to, (row.get(to) ?? 0) + 1));
    }
  }
  return arrows;
}

/** The layers as a Mermaid flowchart, highest first, with an arrow wherever one layer imports another. */
export function layersMermaid(graph: ImportGraph): string {
  const arrows = layerArrows(graph);
  const lines = ['flowchart TD'];
  for (const layer of [...LAYERS].reverse()) lines.push(`  ${layer.name}["src/${layer.name}/<br/>${layer.what}"]`);
  for (const layer of [...LAYERS].reverse())
    for (const to of [...(arrows.get(layer.name)?.keys() ?? [])].sort((a, b) => rank(b) - rank(a)))
      lines.push(`  ${layer.name} --> ${to}`);
  return `${lines.join('\n')}\n`;
}

/** The rooms of `layer` as a Mermaid flowchart, highest first, each arrow labelled with the imports it stands for. */
export function roomsMermaid(graph: ImportGraph, layer: string): string {
  const rooms = [...(ROOMS[layer] ?? [])].reverse();
  const arrows = new Map<string, number>();
  for (const [file, imports] of Object.entries(graph)) {
    const from = roomOf(file);
    for (const to of imports.map(roomOf))
      if (from?.layer === layer && to?.layer === layer && to.name !== from.name)
        arrows.set(`${from.name} --> ${to.name}`, (arrows.get(`${from.name} --> ${to.name}`) ?? 0) + 1);
  }
  const lines = ['flowchart TD', ...rooms.map((r) => `  ${r.name}["src/${layer}/${r.name}/<br/>${r.what}"]`)];
  for (const from of rooms)
    for (const to of rooms)
      if (arrows.has(`${from.name} --> ${to.name}`))
        lines.push(`  ${from.name} -->|${arrows.get(`${from.name} --> ${to.name}`)}| ${to.name}`);
  return `${lines.join('\n')}\n`;
}

/** The figures of the layering, as a markdown table: layers, arrows between them, arrows up, circles. */
export function layerFigures(graph: ImportGraph): string {
  const between = [...layerArrows(graph).values()].flatMap((row) => [...row.values()]);
  const problems = layerProblems(graph);
  const count = (pattern: RegExp) => problems.filter((p) => pattern.test(p)).length;
  const rows: [string, number][] = [
    ['layers', LAYERS.length],
    ['arrows between layers (pairs of layers with at least one import)', between.length],
    ['arrows from a lower layer to a higher one', count(/a lower layer imports a higher one/)],
    ['rooms (folders of a layer held to their own order: src/local/)', Object.values(ROOMS).flat().length],
    [
      'arrows from a lower room to a higher one, or between rooms of one rank',
      count(/a lower room imports a higher one|rooms of one rank import/),
    ],
    ['import circles (between files, or between the folders of any one folder)', count(/^(import|folder) circle/)],
  ];
  return ['| Figure | Count |', '| --- | ---: |', ...rows.map(([what, n]) => `| ${what} | ${n} |`), ''].join('\n');
}

/** The engine's source folder. */
export const SRC_DIR = join(dirname(dirname(dirname(new URL(import.meta.url).pathname))), 'src');
