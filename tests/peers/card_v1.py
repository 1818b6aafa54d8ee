"""The card as an A2A v1.0 reader sees it (a2a-sdk 1.3.0).

1. `A2ACardResolver` fetches and parses it (lenient: it upgrades v0.3 cards).
2. Strictly: the v0.3-only keys the card also carries are set aside, the rest must parse into the
   v1 `AgentCard` proto with unknown fields refused, and every field the proto marks REQUIRED
   (google.api.field_behavior) must be present, recursively.

Prints one JSON line {"ok": bool, "problems": [...], "skills": n}; exits 1 on any problem.
"""
import asyncio
import copy
import json
import sys

import httpx
from a2a.client import A2ACardResolver
from a2a.types import a2a_pb2
from google.api import field_behavior_pb2
from google.protobuf.json_format import ParseDict, ParseError

V03_ONLY_TOP = {"schemaVersion", "protocol", "protocolVersion", "url", "preferredTransport", "security", "metadata"}
V03_ONLY_CAPABILITIES = {"stateTransitionHistory"}
V1_SCHEME_WRAPPERS = {"apiKeySecurityScheme", "httpAuthSecurityScheme", "oauth2SecurityScheme",
                      "openIdConnectSecurityScheme", "mtlsSecurityScheme"}


def v1_view(card):
    card = copy.deepcopy(card)
    for key in V03_ONLY_TOP:
        card.pop(key, None)
    for key in V03_ONLY_CAPABILITIES:
        card.get("capabilities", {}).pop(key, None)
    card["securitySchemes"] = {
        name: {k: v for k, v in scheme.items() if k in V1_SCHEME_WRAPPERS}
        for name, scheme in card.get("securitySchemes", {}).items()
    }
    return card


def missing_required(message, path, problems):
    for field in message.DESCRIPTOR.fields:
        behaviors = field.GetOptions().Extensions[field_behavior_pb2.field_behavior]
        name = f"{path}.{field.json_name}"
        repeated = field.is_repeated if hasattr(field, "is_repeated") else field.label == field.LABEL_REPEATED
        if field_behavior_pb2.REQUIRED in behaviors:
            present = len(getattr(message, field.name)) > 0 if repeated else (
                message.HasField(field.name) if field.message_type or field.has_presence else getattr(message, field.name) != field.default_value
            )
            if not present:
                problems.append(f"{name} is required")
        if field.message_type and not field.message_type.GetOptions().map_entry:
            if repeated:
                for i, item in enumerate(getattr(message, field.name)):
                    missing_required(item, f"{name}[{i}]", problems)
            elif message.HasField(field.name):
                missing_required(getattr(message, field.name), name, problems)
        elif field.message_type and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            if value_field.message_type:
                for key, item in getattr(message, field.name).items():
                    missing_required(item, f"{name}[{key}]", problems)


async def main(base):
    problems = []
    async with httpx.AsyncClient() as http:
        resolved = await A2ACardResolver(http, base).get_agent_card()
        raw = (await http.get(f"{base}/.well-known/agent-card.json")).json()
    card = a2a_pb2.AgentCard()
    try:
        ParseDict(v1_view(raw), card, ignore_unknown_fields=False)
    except ParseError as e:
        problems.append(f"strict parse: {e}")
    missing_required(card, "card", problems)
    print(json.dumps({"ok": not problems, "problems": problems, "skills": len(resolved.skills),
                      "name": resolved.name, "interfaces": len(resolved.supported_interfaces)}))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
