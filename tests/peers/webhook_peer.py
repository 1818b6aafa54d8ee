"""A webhook receiver and verifier for tests/tests/wallets.rs, built on the Standard Webhooks
reference library (standardwebhooks on PyPI), not on the relay's own code.

  webhook_peer.py serve PORT LOG   records every POST (headers and body) as one JSON line, answers 204
  webhook_peer.py verify SECRET LOG verifies each recorded request with standardwebhooks.Webhook;
                                    prints {"verified": [payloads], "failed": [errors]}
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook


def serve(port, log):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length).decode()
            headers = {k.lower(): v for k, v in self.headers.items()}
            with open(log, "a") as f:
                f.write(json.dumps({"headers": headers, "body": body}) + "\n")
                f.flush()
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", int(port)), Handler).serve_forever()


def verify(secret, log):
    wh = Webhook(secret)
    verified, failed = [], []
    with open(log) as f:
        for line in f:
            rec = json.loads(line)
            try:
                payload = wh.verify(rec["body"], rec["headers"])
                verified.append({"id": rec["headers"].get("webhook-id"), "payload": payload})
            except Exception as e:  # noqa: BLE001 - report every failure
                failed.append({"id": rec["headers"].get("webhook-id"), "error": repr(e)})
    print(json.dumps({"verified": verified, "failed": failed}))


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
    else:
        verify(sys.argv[2], sys.argv[3])
