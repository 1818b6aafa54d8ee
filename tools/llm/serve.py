#!/usr/bin/env python3
"""Run llama.cpp's OpenAI-compatible server in-process via xllamacpp.

Config is env-only so start.sh, CI and tests can drive it the same way.
xllamacpp.Server(params) starts the HTTP server on its own threads; we just
keep the process alive until SIGTERM/SIGINT.
"""
import os
import signal
import sys
import threading

import xllamacpp as xlc

HERE = os.path.dirname(os.path.abspath(__file__))


def env(name, default):
    return os.environ.get(name) or default


def build_params():
    model = os.environ.get("LLM_MODEL")
    if not model or not os.path.isfile(model):
        sys.exit(f"serve.py: LLM_MODEL must point to a .gguf file (got {model!r})")
    template = env("LLM_TEMPLATE", os.path.join(HERE, "smollm2-tools.jinja"))
    threads = int(env("LLM_THREADS", "2"))

    p = xlc.CommonParams()
    p.model.path = model
    p.model_alias = {env("LLM_ALIAS", "smollm2-135m")}  # a set: a str comes back as "-"
    p.n_ctx = int(env("LLM_CTX", "4096"))
    p.n_parallel = int(env("LLM_PARALLEL", "1"))
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = threads
    # No chat_template_file field: llama.cpp's --chat-template-file just loads the text.
    with open(template, encoding="utf-8") as f:
        p.chat_template = f.read()
    p.use_jinja = True  # needed for tools / tool_calls parsing
    p.hostnames = [env("LLM_HOST", "127.0.0.1")]
    p.port = int(env("LLM_PORT", "8080"))
    return p


def main():
    params = build_params()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server = xlc.Server(params)
    print(f"serve.py: listening on http://{params.hostnames[0]}:{params.port}", flush=True)
    # Event.wait with a timeout keeps the main thread responsive to signals.
    while not stop.wait(1.0):
        pass
    print("serve.py: shutting down", flush=True)
    del server
    # The C++ server threads may not all be joinable from Python; exit hard once done.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
