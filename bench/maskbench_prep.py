#!/usr/bin/env python3
"""maskbench_prep.py — turns JSONSchemaBench's MaskBench data (one JSON file a
schema, with labelled test instances) into one JSONL line a schema for
bench/maskbench: {"id", "schema", "tests": [{"valid", "text"}]}. Each
instance's text is serialized exactly as MaskBench's runner does
(json.dumps(data, indent=None, ensure_ascii=False)), so the token sequences
checked are the ones the published figures come from.

    python3 bench/maskbench_prep.py maskbench/data/*.json > maskbench.jsonl
"""
import json
import os
import sys

for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    tests = [{"valid": bool(t["valid"]), "text": json.dumps(t["data"], indent=None, ensure_ascii=False)}
             for t in d.get("tests", [])]
    sys.stdout.write(json.dumps({"id": os.path.basename(path), "schema": d["schema"], "tests": tests},
                                ensure_ascii=False) + "\n")
