// Builds Factory with esbuild.
//   node build.mjs            the app: dist/server.js, dist/desktop/{main,preload}.js, dist/ui/
//   node build.mjs --tests    the app, plus every test, benchmark and test child process
//                             (test/**/*.{test,bench,child}.ts) into dist-test/, one .mjs each
//   node build.mjs --tests-only   only the tests (into $TEST_OUT, default dist-test/)
//   node build.mjs --desktop  the app, then launches Electron (fetching its binary when it is missing)
import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const args = new Set(process.argv.slice(2));
const { version } = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync(join(root, 'package.json'), 'utf8')));

const nodeBundle = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  define: { FACTORY_VERSION: JSON.stringify(version) },
};

async function buildApp() {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  const jobs = [
    build({ ...nodeBundle, entryPoints: ['src/server.ts'], outfile: 'dist/server.js', format: 'cjs' }),
  ];
  if (existsSync(join(root, 'src/desktop/main.ts'))) {
    jobs.push(build({ ...nodeBundle, entryPoints: ['src/desktop/main.ts'], outfile: 'dist/desktop/main.js', format: 'cjs', external: ['electron'] }));
    jobs.push(build({ ...nodeBundle, entryPoints: ['src/desktop/preload.ts'], outfile: 'dist/desktop/preload.js', format: 'cjs', external: ['electron'], sourcemap: false }));
  }
  jobs.push(build({
    entryPoints: ['ui/main.ts'], outfile: 'dist/ui/app.js', bundle: true, format: 'iife', platform: 'browser',
    target: 'es2022', minify: true, sourcemap: false, logLevel: 'warning',
  }));
  await Promise.all(jobs);
  for (const file of readdirSync(join(root, 'ui'))) {
    if (file.endsWith('.html') || file.endsWith('.css') || file.endsWith('.svg')) cpSync(join(root, 'ui', file), join(root, 'dist/ui', file));
  }
}

function listFiles(folder, accept) {
  if (!existsSync(folder)) return [];
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === 'fakes' ? [] : listFiles(path, accept);
    return accept(name) ? [path] : [];
  });
}

const testOut = process.env.TEST_OUT || 'dist-test';

async function buildTests() {
  rmSync(join(root, testOut), { recursive: true, force: true });
  const entryPoints = listFiles(join(root, 'test'), (name) => /\.(test|bench|child)\.ts$/.test(name));
  if (entryPoints.length === 0) return;
  await build({
    ...nodeBundle,
    entryPoints: entryPoints.map((path) => relative(root, path)),
    outdir: testOut,
    outbase: 'test',
    format: 'esm',
    outExtension: { '.js': '.mjs' },
    sourcemap: 'inline',
    packages: 'external',
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  });
}

function launchDesktop() {
  const require = createRequire(import.meta.url);
  let electronDir;
  try {
    electronDir = dirname(require.resolve('electron/package.json'));
  } catch {
    console.error('Electron is not installed: run `npm ci` first.');
    process.exit(1);
  }
  const hasBinary = () => existsSync(join(electronDir, 'path.txt'));
  if (!hasBinary()) {
    console.log('The Electron binary is missing; fetching it (this needs internet access)...');
    const install = spawn(process.execPath, [join(electronDir, 'install.js')], { stdio: ['ignore', 'inherit', 'pipe'] });
    let errors = '';
    install.stderr.on('data', (chunk) => (errors += chunk));
    install.on('exit', (code) => {
      if (code !== 0 || !hasBinary()) {
        const reason = errors.split('\n').find((line) => /^\w*Error\b|ENOTFOUND|EAI_AGAIN|ECONNREFUSED/.test(line.trim())) ?? `exit code ${code}`;
        console.error(`Could not download the Electron binary (${reason.trim()}).`);
        console.error('The desktop app needs it; `npm start` runs Factory headless in the browser instead.');
        process.exit(1);
      }
      start();
    });
  } else {
    start();
  }
  function start() {
    const electronPath = require('electron');
    const child = spawn(electronPath, [root], { stdio: 'inherit' });
    child.on('exit', (code) => process.exit(code ?? 0));
  }
}

mkdirSync(join(root, 'dist'), { recursive: true });
if (!args.has('--tests-only')) await buildApp();
if (args.has('--tests') || args.has('--tests-only')) await buildTests();
if (args.has('--desktop')) launchDesktop();
