// Sign-in with a Solana wallet through the Wallet Standard (no framework, no adapter): connect,
// ask the relay for its Sign-In-With-Solana challenge, have the wallet sign it — through
// `solana:signIn` when the wallet offers it (the wallet shows the fields itself, as Phantom
// does), else `solana:signMessage` of the relay's exact text — and trade the signature for a
// key. The relay checks the signature; the page checks that the wallet signed the relay's text.

import { getWallets } from '@wallet-standard/app';
import { base58 } from '@scure/base';
import { call } from './api.js';

export const SCOPES = ['chat', 'account', 'swap', 'keys'];

const usable = (w) => w.features['standard:connect'] && (w.features['solana:signIn'] || w.features['solana:signMessage']);

/// Calls `onChange(wallets)` now and whenever a wallet registers or leaves.
export function watchWallets(onChange) {
  const registry = getWallets();
  const update = () => onChange(registry.get().filter(usable));
  registry.on('register', update);
  registry.on('unregister', update);
  update();
}

/// The fields of the relay's SIWS text, as `solana:signIn` takes them.
export function parseChallenge(message) {
  const lines = message.split('\n');
  const domain = lines[0]?.replace(/ wants you to sign in with your Solana account:$/, '');
  const field = (name) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
  return {
    domain,
    address: lines[1],
    statement: lines[3],
    uri: field('URI'),
    version: field('Version'),
    chainId: field('Chain ID'),
    nonce: field('Nonce'),
    issuedAt: field('Issued At'),
    expirationTime: field('Expiration Time'),
  };
}

const equalBytes = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

/// Signs in with `wallet`; returns the relay's `{apiKey, keyId, scopes}` and the address.
export async function signIn(wallet) {
  const { accounts } = await wallet.features['standard:connect'].connect();
  const account = accounts.find((a) => a.chains.some((c) => c.startsWith('solana:'))) ?? accounts[0];
  if (!account) throw new Error('the wallet offered no account');
  const challenge = await call('POST', '/api/v1/auth/challenge', { body: { wallet: account.address, scopes: SCOPES } });
  const text = new TextEncoder().encode(challenge.message);
  let signature = null;
  if (wallet.features['solana:signIn']) {
    const [out] = await wallet.features['solana:signIn'].signIn(parseChallenge(challenge.message));
    // Use it only if the wallet signed exactly the relay's text for this account.
    if (out && out.account.address === account.address && equalBytes(out.signedMessage, text)) signature = out.signature;
  }
  if (!signature) {
    const [out] = await wallet.features['solana:signMessage'].signMessage({ account, message: text });
    signature = out.signature;
  }
  const issued = await call('POST', '/api/v1/auth/verify', {
    body: { wallet: account.address, nonce: challenge.nonce, signature: base58.encode(signature), scopes: SCOPES },
  });
  return { ...issued, address: account.address };
}
