// A local Solana chain for tests and `make run`: Surfpool's Surfnet (LiteSVM inside, real
// JSON-RPC and WebSocket on 127.0.0.1, random ports), offline, in this Node process.
//
//   node chain.mjs [--block-production-mode transaction|clock|manual] [--slot-time-ms N]
//                  [--no-stdin]
//
// --block-production-mode  how blocks are made (default transaction: a block per transaction,
//                          so `confirmed` as soon as sendTransaction returns)
// --slot-time-ms           the chain's tick (default 1). In transaction mode `finalized` comes
//                          about 2250 ticks after a transaction and an idle blockhash expires after
//                          about 11500 ticks (1 ms: 2.2 s and 11 s; 5 ms: 11 s and 56 s). See README.
// --no-stdin               read no commands and ignore stdin; run until SIGTERM/SIGINT/SIGHUP or
//                          until the parent process goes away (for `make run` with stdin not a pipe)
//
// stdout, line by line, nothing else:
//   1. once ready: {"rpcUrl", "wsUrl", "payer", "payerSecretKey": [64 numbers]} (payer: 10 SOL)
//   2. one answer per command read on stdin (one JSON object a line):
//        {"id": <the command's id>, "ok": true, "result": ...} | {"id", "ok": false, "error": "..."}
//      {"id":1,"cmd":"ping"}                                               -> "pong"
//      {"id":2,"cmd":"fundSol","address":B58,"lamports":N}                 -> {"lamports": N}
//          sets the balance to N (not adds); other fields of the account are kept
//      {"id":3,"cmd":"fundToken","owner":B58,"mint":B58,"amount":N[,"tokenProgram":B58]}
//                                                                          -> {"ata": B58}
//          creates the owner's associated token account if missing and sets its amount to N;
//          the mint's supply is not changed and the mint account is not created if missing
//      {"id":4,"cmd":"setAccount","address":B58,"lamports":N[,"dataBase64":S][,"owner":B58]}
//                                                                          -> null
//          owner defaults to the System Program, data to empty
//      {"id":5,"cmd":"timeTravel","slot":N | "epoch":N | "timestamp":UNIX_MILLISECONDS}
//                                                                          -> epoch info
//          forward only
//      {"id":6,"cmd":"deploy","programId":B58,"soBase64":S}                 -> {"programId": B58}
//          deploys the sBPF program S (an ELF) at that address
// Numbers are JSON numbers or decimal strings, non-negative safe integers (< 2^53).
// Logs go to stderr. Stops the chain and exits 0 when stdin closes or on SIGTERM/SIGINT/SIGHUP.
// See README.md for what the chain does and does not do.

import { createRequire } from "node:module";
import { createInterface } from "node:readline";

const started = process.hrtime.bigint();
const log = (...parts) => console.error("[chain]", ...parts);

let surfnet = null;
let stopping = false;

function shutdown(reason, code = 0) {
  if (stopping) return;
  stopping = true;
  log(`stopping (${reason})`);
  if (surfnet) {
    const since = process.hrtime.bigint();
    try {
      surfnet.stop();
      log(`stopped in ${(Number(process.hrtime.bigint() - since) / 1e6).toFixed(0)} ms`);
    } catch (err) {
      log(`stop failed: ${err.message}`);
    }
  }
  process.exit(code);
}

// Installed before the chain starts: a signal during start-up is handled once it returns.
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => shutdown(signal));
// A reader that went away (EPIPE on stdout) means the parent is gone.
process.stdout.on("error", (err) => shutdown(`stdout: ${err.code ?? err.message}`));

function parseArgs(argv) {
  const opts = { blockProductionMode: "transaction", slotTimeMs: 1, stdin: true };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--block-production-mode") opts.blockProductionMode = argv[++i];
    else if (arg === "--slot-time-ms") opts.slotTimeMs = Number(argv[++i]);
    else if (arg === "--no-stdin") opts.stdin = false;
    else {
      log(`unknown argument ${arg}`);
      process.exit(2);
    }
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const require = createRequire(import.meta.url);

try {
  const { Surfnet } = require("@solana/surfpool-linux-x64-gnu/surfpool-sdk.linux-x64-gnu.node");
  surfnet = Surfnet.startWithConfig({
    offline: true,
    blockProductionMode: opts.blockProductionMode,
    slotTimeMs: opts.slotTimeMs,
  });
} catch (err) {
  log(`start failed: ${err.message}`);
  process.exit(1);
}

const write = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

write({
  rpcUrl: surfnet.rpcUrl,
  wsUrl: surfnet.wsUrl,
  payer: surfnet.payer,
  payerSecretKey: Array.from(surfnet.payerSecretKey),
});
const readyMs = Number(process.hrtime.bigint() - started) / 1e6;
log(`ready in ${readyMs.toFixed(0)} ms at ${surfnet.rpcUrl} (${opts.blockProductionMode}, slot ${opts.slotTimeMs} ms)`);

// The SDK buffers every simnet event (one a slot, one a transaction) until drained: drain them
// so memory stays flat, and pass the errors on to stderr.
setInterval(() => {
  if (stopping) return;
  for (const event of surfnet.drainEvents()) {
    if (event.kind === "errorLog" || event.kind === "aborted") log(`${event.kind}: ${event.message}`);
  }
}, 1000).unref();

const SYSTEM_PROGRAM = "11111111111111111111111111111111";

function amount(cmd, field, { required = true } = {}) {
  const raw = cmd[field];
  if (raw === undefined && !required) return undefined;
  const value = typeof raw === "string" && /^[0-9]+$/.test(raw) ? Number(raw) : raw;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new Error(`${field} must be a non-negative integer below 2^53`);
  }
  return value;
}

function text(cmd, field) {
  if (typeof cmd[field] !== "string" || cmd[field] === "") throw new Error(`${field} is required`);
  return cmd[field];
}

const commands = {
  ping: () => "pong",
  fundSol: (cmd) => {
    const lamports = amount(cmd, "lamports");
    surfnet.fundSol(text(cmd, "address"), lamports);
    return { lamports };
  },
  fundToken: (cmd) => {
    const owner = text(cmd, "owner");
    const mint = text(cmd, "mint");
    const program = cmd.tokenProgram === undefined ? undefined : text(cmd, "tokenProgram");
    surfnet.fundToken(owner, mint, amount(cmd, "amount"), program);
    return { ata: surfnet.getAta(owner, mint, program) };
  },
  setAccount: (cmd) => {
    const data = cmd.dataBase64 === undefined ? [] : [...Buffer.from(String(cmd.dataBase64), "base64")];
    const owner = cmd.owner === undefined ? SYSTEM_PROGRAM : text(cmd, "owner");
    surfnet.setAccount(text(cmd, "address"), amount(cmd, "lamports"), data, owner);
    return null;
  },
  deploy: (cmd) => {
    const programId = text(cmd, "programId");
    const soBytes = [...Buffer.from(text(cmd, "soBase64"), "base64")];
    return { programId: surfnet.deploy({ programId, soBytes }) };
  },
  timeTravel: (cmd) => {
    const given = ["slot", "epoch", "timestamp"].filter((field) => cmd[field] !== undefined);
    if (given.length !== 1) throw new Error("timeTravel takes exactly one of slot, epoch, timestamp");
    const field = given[0];
    const value = amount(cmd, field);
    if (field === "slot") return surfnet.timeTravelToSlot(value);
    if (field === "epoch") return surfnet.timeTravelToEpoch(value);
    return surfnet.timeTravelToTimestamp(value);
  },
};

function answer(line) {
  if (line.trim() === "") return;
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch (err) {
    write({ id: null, ok: false, error: `bad JSON: ${err.message}` });
    return;
  }
  const id = cmd && typeof cmd === "object" && "id" in cmd ? cmd.id : null;
  const handler = cmd && typeof cmd === "object" && Object.hasOwn(commands, cmd.cmd) ? commands[cmd.cmd] : null;
  if (!handler) {
    write({ id, ok: false, error: `unknown cmd ${JSON.stringify(cmd?.cmd ?? null)}` });
    return;
  }
  try {
    write({ id, ok: true, result: handler(cmd) ?? null });
  } catch (err) {
    write({ id, ok: false, error: String(err?.message ?? err) });
  }
}

if (opts.stdin) {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on("line", (line) => {
    if (!stopping) answer(line);
  });
  lines.on("close", () => shutdown("stdin closed"));
} else {
  // Without stdin, notice a parent that went away (this process is then re-parented).
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) shutdown("parent exited");
  }, 1000);
}
