// The committed bundle is what the sources build, byte for byte, twice over, and its hash is
// the published one (measurements/web.json) that the relay serves.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { build, differences } from '../build.mjs';

const here = join(import.meta.dirname, '..');

test('two builds are byte-identical and equal the committed dist/ and the published hash', async () => {
  const [first, second] = [await build(), await build()];
  assert.deepEqual([...first.files.keys()], [...second.files.keys()]);
  for (const [path, bytes] of first.files) assert.ok(bytes.equals(second.files.get(path)), `${path} differs between two builds`);
  assert.deepEqual(differences(first), [], 'run `node build.mjs` in relay/web and commit dist/ and measurements/web.json');
  const published = JSON.parse(readFileSync(join(here, '..', '..', 'measurements', 'web.json'), 'utf8'));
  const manifest = readFileSync(join(here, 'dist', 'manifest.json'));
  assert.equal(published.bundleSha256, createHash('sha256').update(manifest).digest('hex'));
  for (const [path, digest] of Object.entries(JSON.parse(manifest).files)) {
    assert.equal(createHash('sha256').update(readFileSync(join(here, 'dist', path))).digest('hex'), digest, path);
  }
});

test('every script and stylesheet a page loads carries its integrity hash, and no page has inline script', () => {
  for (const page of ['index.html', 'account.html']) {
    const html = readFileSync(join(here, 'dist', page), 'utf8');
    const tags = [...html.matchAll(/<(script|link)\b[^>]*>/g)].map((m) => m[0]);
    const loads = tags.filter((t) => /\bsrc=|rel="stylesheet"/.test(t));
    assert.ok(loads.length >= 2, page);
    for (const tag of loads) {
      const path = /(?:src|href)="\/([^"]+)"/.exec(tag)[1];
      const want = `sha384-${createHash('sha384').update(readFileSync(join(here, 'dist', path))).digest('base64')}`;
      assert.ok(tag.includes(`integrity="${want}"`), `${page}: ${tag}`);
    }
    for (const tag of tags.filter((t) => t.startsWith('<script'))) assert.match(tag, /\bsrc="\/assets\//, `${page}: inline script`);
    assert.ok(!/\son[a-z]+=/.test(html), `${page}: inline event handler`);
  }
});
