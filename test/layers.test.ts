// The layer rules of DESIGN §2, checked over every source file's imports.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = process.cwd();

interface Import {
  specifier: string;
  typeOnly: boolean;
}

/** Every import, export-from, dynamic import and require in a file's text. */
export function findImports(text: string): Import[] {
  const found: Import[] = [];
  const staticPattern = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
  for (const match of text.matchAll(staticPattern)) found.push({ specifier: match[3]!, typeOnly: Boolean(match[2]) });
  for (const match of text.matchAll(/\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push({ specifier: match[1]!, typeOnly: false });
  return found;
}

/** The layer a file or resolved import belongs to, by its path under the project root. */
function layerOf(path: string): string {
  const parts = relative(root, path).split(sep);
  if (parts[0] === 'ui') return 'ui';
  if (parts[0] !== 'src') return 'outside';
  if (parts.length === 2) return parts[1]!.replace(/\.ts$/, ''); // api, app, server, options
  return parts[1]!;
}

const engineSide = ['core', 'net', 'store', 'engine', 'harness', 'triggers', 'channels'];
/** Which layers each layer may import from (besides itself). */
const allowed: Record<string, string[]> = {
  core: [],
  net: ['core'],
  store: ['core'],
  engine: engineSide,
  harness: engineSide,
  triggers: engineSide,
  channels: engineSide,
  api: engineSide,
  http: ['core', 'api'],
  app: [...engineSide, 'api', 'http'],
  options: ['core'],
  server: ['core', 'app', 'options'],
  desktop: ['core', 'api', 'app', 'http'],
  ui: [],
};

/**
 * The files outside store/ that may use the file system, each for its own job. Anything else that
 * reads or writes files goes through store/ (DESIGN §2: the only code that touches the data folder).
 */
const fileSystemUsers: Record<string, string> = {
  'src/engine/config.ts': 'checks that a project folder exists',
  'src/engine/spawn-error.ts': 'says why a command could not start (a missing folder or interpreter)',
  'src/engine/process-marker.ts': 'reads /proc to find a step’s escaped processes',
  'src/engine/cgroup.ts': 'makes, fills, kills and removes a step’s cgroup (cgroupfs)',
  'src/engine/descendants.ts': 'reads /proc to follow a step’s process tree',
  'src/engine/shell-step.ts': 'hands values too large for the environment over in private temp files',
  'src/engine/workspace.ts': 'looks at project and worktree folders',
  'src/engine/sandbox.ts': 'looks at the system folders, git’s pointers and bwrap it mounts into a sandbox',
  'src/engine/ssh.ts': 'makes the private folder for ssh’s connection sockets, keeps a starting master’s stderr in a temp file',
  'src/harness/find-executable.ts': 'finds agent CLIs on the PATH',
  'src/harness/generate.ts': 'gives an agent a scratch folder to work in',
  'src/harness/claude-sessions.ts': 'copies a Claude Code session transcript to where a follow-up resumes it',
  'src/http/static.ts': 'serves the renderer’s files',
  'src/http/remote.ts': 'streams a log file for a download',
  'src/desktop/main.ts': 'the desktop shell’s own files',
};

/** The broken rules in one file, as readable sentences (empty when it keeps them all). */
export function checkFile(file: string, imports: Import[]): string[] {
  const layer = layerOf(file);
  const problems: string[] = [];
  const name = relative(root, file);
  for (const { specifier, typeOnly } of imports) {
    if (specifier === 'electron') {
      if (layer !== 'desktop') problems.push(`${name} imports electron: only src/desktop may`);
      continue;
    }
    if (specifier.startsWith('node:')) {
      if (layer === 'core' || layer === 'ui') problems.push(`${name} imports ${specifier}: ${layer}/ must stay free of Node`);
      else if (/^node:fs(\/promises)?$/.test(specifier) && layer !== 'store' && !fileSystemUsers[name.split(sep).join('/')]) {
        problems.push(`${name} imports ${specifier}: files are the store's job (or name this file and its reason in fileSystemUsers)`);
      }
      continue;
    }
    if (!specifier.startsWith('.')) {
      problems.push(`${name} imports the package ${specifier}: Factory has no runtime dependencies`);
      continue;
    }
    const target = resolve(dirname(file), specifier);
    const targetLayer = layerOf(target);
    if (layer === 'ui') {
      const isCoreApi = relative(root, target).replace(/\.ts$/, '') === join('src', 'core', 'api');
      if (targetLayer !== 'ui' && !(isCoreApi && typeOnly)) problems.push(`${name} imports ${specifier}: ui/ may only import types from src/core/api.ts`);
      continue;
    }
    if (targetLayer === layer) continue;
    if (!(allowed[layer] ?? []).includes(targetLayer)) problems.push(`${name} (${layer}) imports ${specifier} (${targetLayer})`);
  }
  return problems;
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const layers = suite('layers');

layers('every file in src/ and ui/ keeps the layer rules of DESIGN §2', () => {
  const files = [...sourceFiles(join(root, 'src')), ...sourceFiles(join(root, 'ui'))];
  assert.ok(files.length > 5, 'source files found');
  const problems = files.flatMap((file) => checkFile(file, findImports(readFileSync(file, 'utf8'))));
  assert.equal(problems, []);
});

/** The import graph between engine-side folders: folder → the folders it imports. */
function folderGraph(files: string[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const layer = layerOf(file);
    if (!engineSide.includes(layer)) continue;
    for (const { specifier } of findImports(readFileSync(file, 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = layerOf(resolve(dirname(file), specifier));
      if (target !== layer && engineSide.includes(target)) graph.set(layer, (graph.get(layer) ?? new Set()).add(target));
    }
  }
  return graph;
}

/** A cycle in the graph, as `a → b → a`, or undefined. */
export function findCycle(graph: Map<string, Set<string>>): string | undefined {
  const done = new Set<string>();
  const visit = (node: string, path: string[]): string | undefined => {
    if (path.includes(node)) return [...path.slice(path.indexOf(node)), node].join(' → ');
    if (done.has(node)) return undefined;
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next, [...path, node]);
      if (cycle) return cycle;
    }
    done.add(node);
    return undefined;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node, []);
    if (cycle) return cycle;
  }
  return undefined;
}

layers('no engine-side folder imports another that imports it back (no cycles)', () => {
  assert.is(findCycle(folderGraph(sourceFiles(join(root, 'src')))), undefined);
  assert.is(findCycle(new Map([['engine', new Set(['store'])], ['store', new Set(['core'])]])), undefined);
  assert.is(findCycle(new Map([['engine', new Set(['triggers'])], ['triggers', new Set(['channels'])], ['channels', new Set(['engine'])]])), 'engine → triggers → channels → engine');
});

layers('files are the store’s job: node:fs elsewhere only in the named files', () => {
  assert.equal(checkFile(join(root, 'src/triggers/x.ts'), findImports("import { readFile } from 'node:fs/promises';")).length, 1);
  assert.equal(checkFile(join(root, 'src/store/x.ts'), findImports("import { readFile } from 'node:fs/promises';")), []);
  assert.equal(checkFile(join(root, 'src/http/static.ts'), findImports("import { createReadStream } from 'node:fs';")), []);
});

layers('the check catches a core file that reaches for Node or the engine', () => {
  const file = join(root, 'src/core/example.ts');
  assert.equal(checkFile(file, findImports("import { readFile } from 'node:fs';\nimport { x } from '../engine/config';")).length, 2);
  assert.equal(checkFile(file, findImports("import type { Run } from './api';")), []);
});

layers('the check catches electron outside desktop, http reaching into the engine, and packages', () => {
  assert.equal(checkFile(join(root, 'src/engine/x.ts'), findImports("import { app } from 'electron';")).length, 1);
  assert.equal(checkFile(join(root, 'src/http/x.ts'), findImports("export { ConfigService } from '../engine/config';")).length, 1);
  assert.equal(checkFile(join(root, 'src/engine/x.ts'), findImports("const x = require('left-pad');")).length, 1);
  assert.equal(checkFile(join(root, 'src/desktop/x.ts'), findImports("import { app } from 'electron';")), []);
});

layers('ui may import only types from core/api', () => {
  const file = join(root, 'ui/views/runs.ts');
  assert.equal(checkFile(file, findImports("import type { Run } from '../../src/core/api';")), []);
  assert.equal(checkFile(file, findImports("import { methods } from '../../src/core/api';")).length, 1);
  assert.equal(checkFile(file, findImports("import { x } from '../../src/engine/config';")).length, 1);
});

layers('no runtime dependencies: package.json names development tools only', () => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies', 'bundleDependencies', 'bundledDependencies']) {
    assert.ok(!manifest[field] || Object.keys(manifest[field] as object).length === 0, `package.json has ${field}`);
  }
  assert.equal(Object.keys(manifest.devDependencies as object).sort(), ['@types/node', 'electron', 'esbuild', 'typescript', 'uvu']);
});

layers.run();
