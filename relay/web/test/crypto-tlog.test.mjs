// The page's log checks: RFC 9162 hashing and inclusion proofs on transparency-dev/merkle's
// published vectors (testonly/constants.go, proof/verify_test.go; the same ones
// shared/src/tlog/tests.rs uses), and a signed head made here with a key the test holds.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { concat, hex, unhexLower, utf8 } from '../src/crypto/bytes.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { chatEntry, checkInclusion, leafHash, rootFromInclusion, verifyHead } from '../src/crypto/tlog.js';

const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'];
const ROOT_8 = '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328';
const ROOT_5 = '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4';
const ROOT_3 = 'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77';
// (1-based leaf, size, root, path)
const INCLUSION = [
  [1, 8, ROOT_8, ['96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4']],
  [6, 8, ROOT_8, ['bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7']],
  [3, 3, ROOT_3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
  [2, 5, ROOT_5, ['6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b']],
];

test('leaf hashes and inclusion proofs: transparency-dev vectors', () => {
  assert.equal(hex(leafHash(new Uint8Array())), '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d');
  for (const [leaf, size, root, path] of INCLUSION) {
    const got = rootFromInclusion(BigInt(leaf - 1), BigInt(size), leafHash(unhexLower(LEAVES[leaf - 1], LEAVES[leaf - 1].length / 2)), path.map((h) => unhexLower(h, 32)));
    assert.equal(hex(got), root, `leaf ${leaf} of ${size}`);
    // One wrong element, a missing one or another index: not that root.
    const flipped = path.map((h) => unhexLower(h, 32));
    if (flipped.length) {
      flipped[0][0] ^= 1;
      assert.notEqual(hex(rootFromInclusion(BigInt(leaf - 1), BigInt(size), leafHash(unhexLower(LEAVES[leaf - 1], LEAVES[leaf - 1].length / 2)), flipped) ?? new Uint8Array()), root);
    }
    assert.equal(rootFromInclusion(BigInt(size), BigInt(size), new Uint8Array(32), []), null, 'index beyond size');
  }
});

test('a signed head and a receipt in it; another key or a tampered path fails', () => {
  const secret = ed25519.utils.randomSecretKey();
  const key = ed25519.getPublicKey(secret);
  const receipt = {
    address: '11111111111111111111111111111112',
    encryptedPromptHash: '22'.repeat(32),
    enclaveSigR: Buffer.alloc(32, 3).toString('base64'),
    enclaveSigS: Buffer.alloc(32, 4).toString('base64'),
  };
  // A tree of two leaves: this receipt's and another.
  const mine = leafHash(chatEntry(receipt));
  const other = leafHash(utf8('other'));
  const nodeRoot = sha256(concat(Uint8Array.of(1), mine, other));
  const u64 = (n) => { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(n)); return b; };
  const sth = { treeSize: 2, rootHash: hex(nodeRoot), timestamp: 1_800_000_000_000 };
  sth.signature = hex(ed25519.sign(concat(utf8('SVC-LOG-STH-v1'), u64(2), nodeRoot, u64(sth.timestamp)), secret));
  sth.logKey = hex(key);
  assert.ok(verifyHead(sth, key));
  const proof = { leafIndex: 0, treeSize: 2, auditPath: [hex(other)], sth };
  assert.deepEqual(checkInclusion(receipt, proof, key).ok, true);
  assert.equal(checkInclusion(receipt, proof, ed25519.getPublicKey(ed25519.utils.randomSecretKey())).ok, false);
  assert.equal(checkInclusion(receipt, { ...proof, auditPath: [hex(mine)] }, key).ok, false);
  assert.equal(checkInclusion(receipt, { ...proof, leafIndex: 1 }, key).ok, false);
  assert.equal(checkInclusion({ ...receipt, encryptedPromptHash: '33'.repeat(32) }, proof, key).ok, false);
});
