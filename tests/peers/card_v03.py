"""The card as an A2A v0.3 reader sees it: a2a-sdk 0.3.26's pydantic `AgentCard` (the v0.3
schema's required fields and types). Prints {"ok": bool, "problems": [...]}; exits 1 on any."""
import json
import sys
import urllib.request

from a2a.types import AgentCard
from pydantic import ValidationError


def main(base):
    with urllib.request.urlopen(f"{base}/.well-known/agent-card.json") as r:
        raw = json.load(r)
    try:
        card = AgentCard.model_validate(raw)
        problems = []
        if card.protocol_version != "0.3.0":
            problems.append(f"protocolVersion {card.protocol_version}")
    except ValidationError as e:
        problems = [f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors()]
    print(json.dumps({"ok": not problems, "problems": problems}))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
