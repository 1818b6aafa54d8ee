// A Wallet Standard test wallet injected into the page: it registers the way real wallets do
// (the `wallet-standard:register-wallet` event and the app-ready handshake) and offers
// `standard:connect`, `solana:signMessage` and optionally `solana:signIn`. Signing happens in
// the test process with a keypair the test holds; the page only sees public values.

import { createPrivateKey, createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { base58 } from '@scure/base';

export function testKeypair() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, publicKey, address: base58.encode(raw), raw };
}

export function keypairFromSolanaFile(bytes64) {
  const seed = Buffer.from(bytes64.slice(0, 32));
  const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(privateKey);
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, publicKey, address: base58.encode(raw), raw };
}

/// Installs the wallet in `page` before any page script runs; returns what it signed.
export async function installWallet(page, keypair, { name = 'Test Wallet', signIn = true } = {}) {
  const signed = [];
  await page.exposeFunction('__svcTestSign', (b64) => {
    const message = Buffer.from(b64, 'base64');
    signed.push(message.toString('utf8'));
    return sign(null, message, keypair.privateKey).toString('base64');
  });
  await page.addInitScript(({ address, publicKey, name, withSignIn }) => {
    const pk = Uint8Array.from(atob(publicKey), (c) => c.charCodeAt(0));
    const b64 = (bytes) => btoa(String.fromCharCode(...bytes));
    const unb64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    const account = { address, publicKey: pk, chains: ['solana:localnet'], features: ['solana:signMessage', 'solana:signIn'] };
    const signBytes = async (bytes) => unb64(await window.__svcTestSign(b64(bytes)));
    const siws = (i) => [
      `${i.domain} wants you to sign in with your Solana account:`, i.address ?? address, '',
      i.statement, '', `URI: ${i.uri}`, `Version: ${i.version}`, `Chain ID: ${i.chainId}`, `Nonce: ${i.nonce}`,
      `Issued At: ${i.issuedAt}`, `Expiration Time: ${i.expirationTime}`,
    ].join('\n');
    const features = {
      'standard:connect': { version: '1.0.0', connect: async () => ({ accounts: [account] }) },
      'standard:events': { version: '1.0.0', on: () => () => {} },
      'solana:signMessage': {
        version: '1.1.0',
        signMessage: async (...inputs) => Promise.all(inputs.map(async ({ message }) => ({ signedMessage: message, signature: await signBytes(message) }))),
      },
    };
    if (withSignIn) {
      features['solana:signIn'] = {
        version: '1.0.0',
        signIn: async (...inputs) => Promise.all(inputs.map(async (input) => {
          const signedMessage = new TextEncoder().encode(siws(input));
          return { account, signedMessage, signature: await signBytes(signedMessage), signatureType: 'ed25519' };
        })),
      };
    }
    const wallet = { version: '1.0.0', name, icon: 'data:image/svg+xml;base64,PHN2Zy8+', chains: ['solana:localnet'], features, accounts: [] };
    const callback = ({ register }) => register(wallet);
    window.addEventListener('wallet-standard:app-ready', ({ detail: api }) => callback(api));
    try {
      window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: callback }));
    } catch (e) {
      console.warn('wallet registration failed', e);
    }
  }, { address: keypair.address, publicKey: keypair.raw.toString('base64'), name, withSignIn: signIn });
  return signed;
}
