"""Reads a Prometheus text exposition (format 0.0.4) on stdin with prometheus_client's parser
and prints its families as one JSON object; exits non-zero when the parser refuses the text.

Non-finite values are printed as the strings "+Inf", "-Inf" and "NaN" (JSON has no number
for them)."""

import json
import math
import sys

from prometheus_client.parser import text_string_to_metric_families


def value(v):
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return v


def main():
    families = []
    for family in text_string_to_metric_families(sys.stdin.read()):
        families.append({
            "name": family.name,
            "type": family.type,
            "help": family.documentation,
            "samples": [{"name": s.name, "labels": s.labels, "value": value(s.value)} for s in family.samples],
        })
    print(json.dumps({"families": families}))


if __name__ == "__main__":
    main()
