// The real x402 client (@x402/fetch + @x402/svm) paying one POST, then replaying the same
// payment header by hand. Prints one JSON object on stdout.
//
//   node pay.mjs --url URL --rpc RPC_URL --key HEX32 (--body-file FILE | --method GET)
//                [--x402-version 1|2] [--tamper amount|payTo] [--no-replay]
//
// --url          the paid route (e.g. http://127.0.0.1:8787/api/v1/x402/chat/completions)
// --rpc          Solana JSON-RPC the client builds its transaction with (getAccountInfo of the
//                mint, getLatestBlockhash); a local stand-in in tests
// --key          the payer's ed25519 secret key (32 bytes, hex)
// --body-file    the JSON body to POST
// --method GET   a GET without a body instead (e.g. /agents/v1/quote?…)
// --terms-from   a GET route whose 402 carries the same terms: used when --url answers 200
//                `requiresDeposit` instead of a 402 (a guest's /agent once its free messages are
//                spent, as the contract says), as a client that read /.well-known/x402 would;
//                the resource is set to --url.
// --x402-version 2 (default) answers the server's PAYMENT-REQUIRED header with PAYMENT-SIGNATURE.
//                1 hides that header from the client, which then reads the v1 JSON body and
//                pays with X-PAYMENT, as a v1-only client would.
// --tamper       changes the requirements the client sees before it signs (a lying or broken
//                402): `amount` pays one base unit less, `payTo` pays another wallet.
// --no-replay    skip the replay of the payment header.
// --allow-asset  a mint the client's spend controls accept besides its default assets (a local
//                chain's stablecoin), capped at 1,000,000 base units per payment.
//
// Output: {x402Version, challenge: {status, v1Body, v2Header, schemaValid}, status, paymentHeader:
// {name, value}, settlement: {name, decoded} | null, body, replay: {status, body, paymentRequired} | null}

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createKeyPairSignerFromPrivateKeyBytes } from "@solana/kit";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { isPaymentRequiredV1, isPaymentRequiredV2 } from "@x402/core/schemas";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { ExactSvmSchemeV1 } from "@x402/svm/exact/v1/client";

const { values: args } = parseArgs({
  options: {
    url: { type: "string" },
    rpc: { type: "string" },
    key: { type: "string" },
    "body-file": { type: "string" },
    method: { type: "string", default: "POST" },
    "terms-from": { type: "string" },
    "allow-asset": { type: "string" },
    "x402-version": { type: "string", default: "2" },
    tamper: { type: "string" },
    "no-replay": { type: "boolean", default: false },
  },
});
const isGet = args.method === "GET";
for (const required of isGet ? ["url", "rpc", "key"] : ["url", "rpc", "key", "body-file"]) {
  if (!args[required]) {
    console.error(`missing --${required}`);
    process.exit(2);
  }
}
const version = Number(args["x402-version"]);
if (version !== 1 && version !== 2) {
  console.error("--x402-version must be 1 or 2");
  process.exit(2);
}

const decodeB64Json = (text) => JSON.parse(Buffer.from(text, "base64").toString("utf8"));
const encodeB64Json = (value) => Buffer.from(JSON.stringify(value), "utf8").toString("base64");
const PAYMENT_HEADERS = ["PAYMENT-SIGNATURE", "X-PAYMENT"];
// A wallet that is not the server's payTo (any valid address).
const OTHER_WALLET = "vines1vzrYbzLMRdu58ou5XTby4qAqVRLmqo36NKPTg";

function tamper(requirements) {
  if (args.tamper === "amount") {
    const field = "maxAmountRequired" in requirements ? "maxAmountRequired" : "amount";
    requirements[field] = String(BigInt(requirements[field]) - 1n);
  } else if (args.tamper === "payTo") {
    requirements.payTo = OTHER_WALLET;
  } else if (args.tamper) {
    throw new Error(`unknown --tamper ${args.tamper}`);
  }
}

const seed = Uint8Array.from(Buffer.from(args.key, "hex"));
const signer = await createKeyPairSignerFromPrivateKeyBytes(seed);
const client = new x402Client();
// registerExactSvmScheme() does not forward rpcUrl, so the schemes are built by hand.
client.register("solana:*", new ExactSvmScheme(signer, { rpcUrl: args.rpc }));
for (const network of ["solana", "solana-devnet", "solana-testnet"]) {
  client.registerV1(network, new ExactSvmSchemeV1(signer, { rpcUrl: args.rpc }));
}
if (args["allow-asset"]) {
  const networks = ["solana-devnet", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"];
  client.setSpendControls({
    allowedAssets: networks.map((network) => ({ network, asset: args["allow-asset"], maxAmountPerPayment: "1000000" })),
  });
}

const out = { x402Version: version, payer: signer.address, challenge: null, paymentHeader: null };

// The transport under the x402 wrapper: it records the challenge and the payment header sent,
// and shapes what the client sees of the 402 (version choice, tampering).
async function transport(input, init) {
  const request = new Request(input, init);
  for (const name of PAYMENT_HEADERS) {
    const value = request.headers.get(name);
    if (value) out.paymentHeader = { name, value };
  }
  let response = await fetch(request);
  if (response.status !== 402 && out.challenge === null && args["terms-from"]) {
    const text = await response.text();
    out.firstAnswer = { status: response.status, body: text ? JSON.parse(text) : null };
    if (out.firstAnswer.body?.requiresDeposit !== true) {
      return new Response(text, { status: response.status, headers: response.headers });
    }
    const probe = await fetch(args["terms-from"]);
    const required = decodeB64Json(probe.headers.get("PAYMENT-REQUIRED"));
    required.resource = { ...required.resource, url: args.url };
    const v1 = await probe.json();
    v1.accepts.forEach((a) => (a.resource = args.url));
    const headers = new Headers(probe.headers);
    headers.set("PAYMENT-REQUIRED", encodeB64Json(required));
    response = new Response(JSON.stringify(v1), { status: 402, headers });
  }
  if (response.status !== 402 || out.challenge !== null) return response;
  const text = await response.text();
  const v1Body = text ? JSON.parse(text) : null;
  const header = response.headers.get("PAYMENT-REQUIRED");
  const v2Header = header ? decodeB64Json(header) : null;
  out.challenge = {
    status: response.status,
    v1Body,
    v2Header,
    schemaValid: { v1: isPaymentRequiredV1(v1Body), v2: isPaymentRequiredV2(v2Header) },
  };
  const headers = new Headers(response.headers);
  let body = text;
  if (version === 1) {
    headers.delete("PAYMENT-REQUIRED");
    const shaped = structuredClone(v1Body);
    shaped.accepts.forEach(tamper);
    body = JSON.stringify(shaped);
  } else if (v2Header) {
    const shaped = structuredClone(v2Header);
    shaped.accepts.forEach(tamper);
    headers.set("PAYMENT-REQUIRED", encodeB64Json(shaped));
  }
  return new Response(body, { status: response.status, headers });
}

const pay = wrapFetchWithPayment(transport, client);
const requestBody = isGet ? undefined : readFileSync(args["body-file"], "utf8");
const init = (headers) =>
  isGet
    ? { method: "GET", headers }
    : { method: "POST", headers: { "content-type": "application/json", ...headers }, body: requestBody };
const post = (headers) => fetch(args.url, init(headers));
const readBody = async (response) => {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};
const settlementOf = (response) => {
  for (const name of ["PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"]) {
    const value = response.headers.get(name);
    if (value) return { name, decoded: decodeB64Json(value) };
  }
  return null;
};

try {
  const response = await pay(args.url, init({}));
  out.status = response.status;
  out.settlement = settlementOf(response);
  out.exposeHeaders = response.headers.get("Access-Control-Expose-Headers");
  out.body = await readBody(response);
  out.replay = null;
  if (!args["no-replay"] && out.paymentHeader) {
    const again = await post({ [out.paymentHeader.name]: out.paymentHeader.value });
    const required = again.headers.get("PAYMENT-REQUIRED");
    out.replay = {
      status: again.status,
      settlement: settlementOf(again),
      body: await readBody(again),
      paymentRequired: required ? decodeB64Json(required) : null,
    };
  }
  console.log(JSON.stringify(out));
} catch (error) {
  out.error = error instanceof Error ? error.message : String(error);
  console.log(JSON.stringify(out));
  process.exit(1);
}
