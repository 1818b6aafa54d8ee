// The official MCP TypeScript SDK as a real client of the relay's MCP server, or of a local
// stdio server it starts (`svc mcp`).
//   node mcp.mjs --url http://127.0.0.1:PORT/mcp/v1 [--key sk_svc_…] [--calls calls.json] [--host HOST]
//   node mcp.mjs --stdio '["/path/to/svc", "--relay", …, "mcp", "--owner-key", FILE]' [--calls calls.json]
// Lists the tools, then calls each {name, arguments, _meta?} of the calls file in order.
// Prints one JSON object: {tools: [{name, description, inputSchema}], results: [{name, isError,
// structuredContent, meta, text}]}. A transport or protocol failure exits 1 with the error.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const { values } = parseArgs({
  options: { url: { type: "string" }, stdio: { type: "string" }, key: { type: "string" }, calls: { type: "string" }, host: { type: "string" } },
});
const headers = {};
if (values.key) headers.Authorization = `Bearer ${values.key}`;
if (values.host) headers.Host = values.host;
const client = new Client({ name: "svc-e2e", version: "1.0.0" });
try {
  if (values.stdio) {
    const [command, ...args] = JSON.parse(values.stdio);
    // The server gets this environment (SVC_RELAY_URL, SVC_MEASUREMENTS, …), as an MCP host
    // passes its configured `env`.
    await client.connect(new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" }));
  } else {
    await client.connect(new StreamableHTTPClientTransport(new URL(values.url), { requestInit: { headers } }));
  }
  const { tools } = await client.listTools();
  const results = [];
  const calls = values.calls ? JSON.parse(readFileSync(values.calls, "utf8")) : [];
  for (const call of calls) {
    const params = { name: call.name, arguments: call.arguments ?? {} };
    if (call._meta) params._meta = call._meta;
    const r = await client.callTool(params);
    results.push({ name: call.name, isError: r.isError ?? false, structuredContent: r.structuredContent ?? null,
                   meta: r._meta ?? null, text: r.content?.[0]?.text ?? null });
  }
  console.log(JSON.stringify({ tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })), results }));
  await client.close();
} catch (e) {
  console.log(JSON.stringify({ error: String(e?.message ?? e), code: e?.code ?? null }));
  process.exit(1);
}
