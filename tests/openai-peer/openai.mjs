// The official openai npm package, unchanged, against `svc proxy` (tests/tests/proxy.rs).
//
//   node openai.mjs BASE_URL PROMPT
//
// Prints one JSON object: a completion (with the proxy's receipt header), a streamed
// completion, the model list, and the error an unknown model gets.
import OpenAI from "openai";

const [baseURL, prompt] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: process.env.PROXY_TOKEN ?? "unused-by-the-proxy", maxRetries: 0 });
const out = {};

const { data: completion, response } = await client.chat.completions
  .create({ model: "gpt-oss:20b", messages: [{ role: "user", content: prompt }], max_tokens: 8 })
  .withResponse();
out.completion = {
  id: completion.id,
  object: completion.object,
  model: completion.model,
  content: completion.choices[0].message.content,
  role: completion.choices[0].message.role,
  finish_reason: completion.choices[0].finish_reason,
  total_tokens: completion.usage.total_tokens,
  receipt: response.headers.get("x-receipt-address"),
};

const stream = await client.chat.completions.create({
  model: "gpt-oss:20b",
  messages: [{ role: "user", content: prompt }],
  max_tokens: 8,
  stream: true,
});
const chunks = [];
for await (const chunk of stream) chunks.push(chunk);
out.stream = {
  chunks: chunks.length,
  ids: [...new Set(chunks.map((c) => c.id))],
  content: chunks.map((c) => c.choices[0]?.delta?.content ?? "").join(""),
  finish_reason: chunks.map((c) => c.choices[0]?.finish_reason).find((f) => f) ?? null,
};

const models = await client.models.list();
out.models = models.data.map((m) => m.id);

try {
  await client.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: prompt }] });
  out.error = null;
} catch (e) {
  out.error = { status: e.status, code: e.code, type: e.type, message: e.message };
}
console.log(JSON.stringify(out));
