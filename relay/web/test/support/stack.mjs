// The stack `make run` starts (tools/run.sh: local chain, enclave with dev quotes, key holder,
// relay), on free ports and in folders of its own, with the suite's model server. Stopped by
// its process id (the script stops what it started).

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..', '..', '..');
const READY = 'Private inference service running';

export function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
    server.on('error', fail);
  });
}

export async function startStack() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-web-'));
  const runDir = join(dir, 'run');
  const dataDir = join(dir, 'data');
  const [relayPort, enclavePort] = [await freePort(), await freePort()];
  const env = { ...process.env, RUN_DIR: runDir, DATA_DIR: dataDir, RELAY_PORT: String(relayPort), ENCLAVE_PORT: String(enclavePort) };
  if (process.env.LLM_BASE_URL) env.RUN_MODEL_URL = process.env.LLM_BASE_URL;
  const child = spawn('bash', [join(ROOT, 'tools/run.sh')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let printed = '';
  child.stdout.on('data', (chunk) => (printed += chunk));
  const deadline = Date.now() + 300_000;
  while (!printed.includes(READY)) {
    if (child.exitCode !== null) throw new Error(`make run exited early:\n${printed}`);
    if (Date.now() > deadline) throw new Error(`make run did not come up:\n${printed}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const sandbox = JSON.parse(readFileSync(join(runDir, 'sandbox.json'), 'utf8'));
  return {
    url: `http://127.0.0.1:${relayPort}`,
    runDir,
    dataDir,
    sandbox,
    printed: () => printed,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
    },
  };
}
