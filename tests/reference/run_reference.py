#!/usr/bin/python3
"""run_reference.py MODEL --tokens 1,2,3 [--greedy N] [--all-positions]

Runs the independent NumPy reference forward pass and prints JSON
{"logits": [... last position ...]} (plus "generated": [ids] with --greedy N:
the N greedily decoded token ids after the prompt).
MODEL is a .gguf file or a Hugging Face directory (config.json + safetensors).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model as refmodel  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--tokens", required=True, help="comma-separated token ids")
    ap.add_argument("--greedy", type=int, default=0, help="greedily decode N more tokens")
    ap.add_argument("--all-positions", action="store_true", help="print logits of every position")
    args = ap.parse_args()
    ids = [int(s) for s in args.tokens.replace(" ", "").split(",") if s]
    if not ids:
        ap.error("--tokens is empty")
    m = refmodel.load_model(args.model)
    logits = m.forward(ids)
    out = {"tokens": ids}
    if args.all_positions:
        out["logits_all"] = [[float(v) for v in row] for row in logits]
    out["logits"] = [float(v) for v in logits[-1]]
    if args.greedy > 0:
        seq = list(ids) + [int(logits[-1].argmax())]
        for _ in range(args.greedy - 1):
            seq.append(int(m.forward(seq)[-1].argmax()))
        out["generated"] = seq[len(ids):]
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
