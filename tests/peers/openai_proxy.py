"""The official OpenAI Python SDK, unchanged, against `svc proxy` (tests/tests/proxy.rs).

    python openai_proxy.py BASE_URL PROMPT     (PROXY_TOKEN: the proxy's --token, if any)

Prints one JSON object: a completion (with the proxy's receipt header), a streamed completion,
the model list, and the error an unknown model gets.
"""

import json
import os
import sys

import openai
from openai import OpenAI

base_url, prompt = sys.argv[1], sys.argv[2]
client = OpenAI(base_url=base_url, api_key=os.environ.get("PROXY_TOKEN", "unused-by-the-proxy"), max_retries=0)
out = {"sdk": openai.__version__}

raw = client.chat.completions.with_raw_response.create(
    model="gpt-oss:20b", messages=[{"role": "user", "content": prompt}], max_tokens=8
)
completion = raw.parse()
out["completion"] = {
    "id": completion.id,
    "object": completion.object,
    "model": completion.model,
    "content": completion.choices[0].message.content,
    "role": completion.choices[0].message.role,
    "finish_reason": completion.choices[0].finish_reason,
    "total_tokens": completion.usage.total_tokens,
    "receipt": raw.headers.get("x-receipt-address"),
}

chunks = list(
    client.chat.completions.create(
        model="gpt-oss:20b", messages=[{"role": "user", "content": prompt}], max_tokens=8, stream=True
    )
)
out["stream"] = {
    "chunks": len(chunks),
    "ids": sorted({c.id for c in chunks}),
    "content": "".join(c.choices[0].delta.content or "" for c in chunks if c.choices),
    "finish_reason": next((c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason), None),
}

out["models"] = [m.id for m in client.models.list().data]

try:
    client.chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": prompt}])
    out["error"] = None
except openai.APIStatusError as e:
    out["error"] = {"status": e.status_code, "code": e.code, "type": e.type, "message": e.message}

print(json.dumps(out))
