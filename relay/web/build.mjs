// Builds the page into dist/: two bundles (chat, account), the stylesheet and the pages
// minified (whitespace only, for the pages), the pages with a Subresource
// Integrity hash on every script and stylesheet, and manifest.json listing every file's
// SHA-256. The bundle's published hash is the SHA-256 of manifest.json (measurements/web.json).
//
//   node build.mjs            write dist/ and measurements/web.json
//   node build.mjs --check    build into memory; fail on any byte that differs from dist/
//
// Deterministic: pinned esbuild from the committed lock, no source maps, no timestamps, no
// absolute paths; files are written in a fixed order.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
const published = join(here, '..', '..', 'measurements', 'web.json');

const sha = (alg, bytes) => createHash(alg).update(bytes).digest();

export async function build() {
  const files = new Map();
  const result = await esbuild.build({
    absWorkingDir: here,
    entryPoints: { chat: 'src/app/chat.js', account: 'src/app/account.js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'eof',
    charset: 'utf8',
    sourcemap: false,
    write: false,
    outdir: 'dist/assets',
    define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
    logLevel: 'warning',
  });
  for (const out of result.outputFiles) {
    files.set(`assets/${out.path.split('/').pop()}`, Buffer.from(out.contents));
  }
  const css = await esbuild.transform(readFileSync(join(here, 'src/pages/style.css'), 'utf8'), { loader: 'css', minify: true, charset: 'utf8' });
  files.set('assets/style.css', Buffer.from(css.code));
  for (const page of ['index.html', 'account.html']) {
    // Whitespace that spans lines collapses to one space, as the browser renders it (the pages
    // hold no <pre> and no text area with content).
    const template = readFileSync(join(here, 'src/pages', page), 'utf8').replace(/\s*\n\s*/g, ' ').trim();
    const html = template.replace(/\{\{integrity:([^}]+)\}\}/g, (_, path) => {
      const bytes = files.get(path);
      if (!bytes) throw new Error(`${page} names ${path}, which the build did not make`);
      return `sha384-${sha('sha384', bytes).toString('base64')}`;
    });
    files.set(page, Buffer.from(html));
  }
  const listed = Object.fromEntries([...files.keys()].sort().map((p) => [p, sha('sha256', files.get(p)).toString('hex')]));
  files.set('manifest.json', Buffer.from(`${JSON.stringify({ schemaVersion: 1, files: listed }, null, 2)}\n`));
  const bundleSha256 = sha('sha256', files.get('manifest.json')).toString('hex');
  const web = Buffer.from(`${JSON.stringify({ schemaVersion: 1, bundleSha256, files: listed }, null, 2)}\n`);
  return { files, web, bundleSha256 };
}

/// The files of `build()` that differ from what is committed (dist/ and measurements/web.json),
/// and files in dist/ that the build does not make.
export function differences({ files, web }) {
  const differ = [...files].filter(([p, bytes]) => !existsSync(join(dist, p)) || !readFileSync(join(dist, p)).equals(bytes)).map(([p]) => p);
  const extra = existsSync(dist) ? readdirSync(dist, { recursive: true }).filter((p) => statSync(join(dist, p)).isFile() && !files.has(p)) : [];
  if (!existsSync(published) || !readFileSync(published).equals(web)) differ.push('../../measurements/web.json');
  return [...differ, ...extra.map((p) => `${p} (not built)`)];
}

async function main() {
  const built = await build();
  if (process.argv.includes('--check')) {
    const differ = differences(built);
    if (differ.length) {
      console.error(`the committed bundle differs from a build of the sources: ${differ.join(', ')} (run \`node build.mjs\` in relay/web)`);
      process.exit(1);
    }
    console.log(`bundle ${built.bundleSha256}: the committed dist/ is what the sources build`);
    return;
  }
  rmSync(dist, { recursive: true, force: true });
  for (const [p, bytes] of [...built.files].sort(([a], [b]) => a.localeCompare(b))) {
    mkdirSync(dirname(join(dist, p)), { recursive: true });
    writeFileSync(join(dist, p), bytes);
  }
  writeFileSync(published, built.web);
  console.log(`bundle ${built.bundleSha256}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
