#!/usr/bin/env node
// `clawhost-js build <package-dir> [--out <dir>] [--module app.js]`: a plugin
// package (your module and its openclaw.plugin.json) into a loadable package
// (plugin.wasm and the manifest), with jco's QuickJS backend.
//
// Why QuickJS (`--backend quickjs --backend-qjs-disable-async`): ~1.7 MB
// components that a host compiles in ~2 s, against ~12 MB / 6-10 s for the
// default StarlingMonkey engine, which also imports `wasi:http` by default;
// `disable-async` keeps the component free of the component-model async
// feature the host does not enable.

import { spawnSync } from 'node:child_process';
import { realpathSync, writeFileSync, readFileSync, existsSync, mkdirSync, copyFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdkDir = dirname(fileURLToPath(import.meta.url));
const witDir = join(sdkDir, 'wit');
const sdkEntry = join(sdkDir, 'src', 'index.js');
const EXPORTS = [
  'toolProvider', 'toolHooks', 'promptHooks', 'modelHooks', 'sessionHooks',
  'transcriptHooks', 'toolGate', 'persistHooks', 'runHooks', 'compactionProvider', 'turnHooks',
  'prepareHooks',
];

// jco's command, from the node_modules this SDK was installed with.
function jcoBin() {
  for (let dir = sdkDir; ; dir = dirname(dir)) {
    const pkg = join(dir, 'node_modules', '@bytecodealliance', 'jco');
    if (existsSync(join(pkg, 'package.json'))) {
      const { bin } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
      return join(pkg, typeof bin === 'string' ? bin : bin.jco);
    }
    if (dirname(dir) === dir) fail('@bytecodealliance/jco is not installed (npm install in sdk/js)');
  }
}

function fail(message) {
  process.stderr.write(`clawhost-js: ${message}\n`);
  process.exit(1);
}

export function build(pkg, out, module) {
  const manifestPath = join(pkg, 'openclaw.plugin.json');
  if (!existsSync(manifestPath)) fail(`${manifestPath} is missing: a plugin package needs its manifest`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  if (!String(manifest.apiVersion ?? '').startsWith('0.2.')) {
    fail(`${manifestPath}: apiVersion is ${JSON.stringify(manifest.apiVersion)}; this SDK builds API 0.2.1`);
  }
  const app = resolve(pkg, module);
  if (!existsSync(app)) fail(`${app} is missing (use --module to name another)`);
  mkdirSync(out, { recursive: true });
  // A fixed place for the generated entry: paths end up in the bundle, and
  // the same source must give the same component (operators pin sha256s).
  const tmp = join(out, '.clawhost-build');
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    const entry = join(tmp, 'entry.js');
    writeFileSync(
      entry,
      `import plugin from ${JSON.stringify(app)};\n` +
        `import { exportsOf } from ${JSON.stringify(sdkEntry)};\n` +
        `const e = exportsOf(plugin);\n` +
        EXPORTS.map((name) => `export const ${name} = e.${name};\n`).join(''),
    );
    // `@clawhost/sdk` in the plugin resolves to this SDK, installed or not.
    const config = join(tmp, 'bundle.config.mjs');
    writeFileSync(
      config,
      `export default { resolve: { alias: { '@clawhost/sdk': ${JSON.stringify(sdkEntry)} } } };\n`,
    );
    const jco = jcoBin();
    const partial = join(out, 'plugin.wasm.partial');
    const done = spawnSync(process.execPath, [
      jco, 'componentize', entry,
      '--wit', witDir, '--world-name', 'plugin',
      '--backend', 'quickjs', '--backend-qjs-disable-async',
      '--bundle', '--bundle-config', config,
      '-o', partial,
    ], { encoding: 'utf8' });
    if (done.status !== 0) {
      process.stderr.write(done.stdout + done.stderr);
      fail(`jco componentize failed for ${pkg}`);
    }
    renameSync(partial, join(out, 'plugin.wasm'));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  copyFileSync(manifestPath, join(out, 'openclaw.plugin.json'));
  return join(out, 'plugin.wasm');
}

function main(argv) {
  const [command, pkg, ...rest] = argv;
  if (command !== 'build' || !pkg) fail('usage: clawhost-js build <package-dir> [--out <dir>] [--module app.js]');
  let out = pkg;
  let module = 'app.js';
  for (let i = 0; i < rest.length; i += 2) {
    if (rest[i] === '--out') out = rest[i + 1];
    else if (rest[i] === '--module') module = rest[i + 1];
    else fail(`unknown option ${rest[i]}`);
  }
  process.stdout.write(build(resolve(pkg), resolve(out), module) + '\n');
}

// Run as a command (also through node_modules/.bin's symlink), not when imported.
if (process.argv[1] && realpathSync(resolve(process.argv[1])) === realpathSync(fileURLToPath(import.meta.url))) {
  main(process.argv.slice(2));
}
