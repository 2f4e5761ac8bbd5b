#!/usr/bin/python3
"""check_quantized.py --wick BIN --tmp DIR [--llamacpp REF LIBDIR] [--only SUBSTR]

Quantized GGUF files of every weight type against the independent reference
(tests/reference.test.sh's counterpart for quantization; run by
tests/reference_quant.test.sh):

  * files written by llama.cpp's quantizer (llama_model_quantize, the code of
    llama-quantize, driven by bench/llamacpp_ref.c) in every file type it
    offers for these shapes (Q2_K, Q3_K_S/M/L, Q4_K_S/M, Q5_K_S/M, Q6_K,
    IQ4_NL, IQ4_XS, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0; mixes included) — when
    --llamacpp is given;
  * files written by `wick quantize` in every mix (always);

each from a tiny random-weight F32 model of shape tiny256 (every row a
multiple of 256) and of shape tiny (64-wide rows: the K-quants fall back to
Q5_0 / Q5_1 / Q8_0 / Q4_0 / IQ4_NL per tensor), tied (qwen3) and untied
(llama). For every file:
  1. wick's dequantization equals the NumPy one (dequant.py, written from the
     GGUF block definitions): every quantized tensor, `wick info --dump`
     against gguf_reader, bit for bit;
  2. wick's last-position logits against the reference forward pass run on
     the dequantized weights: same argmax (or, where the reference's top two
     logits lie within 1% of max|logit|, either of them) and cosine >= 0.999
     (check_wick.py's quantized tolerance; wick quantizes activations to 8
     bits, the reference does not, so a near-tie may go either way: seen on
     AVX2, whose float reductions round differently from AVX-512's).
Prints one PASS/FAIL line per file and "N passed, N failed"; exits 1 on failure.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dequant  # noqa: E402
import gguf_reader  # noqa: E402
import model as refmodel  # noqa: E402

LLAMACPP_TYPES = ["q2_k", "q3_k_s", "q3_k_m", "q3_k_l", "q4_k_s", "q4_k_m", "q5_k_s", "q5_k_m", "q6_k",
                  "iq4_nl", "iq4_xs", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0"]
WICK_TYPES = LLAMACPP_TYPES + ["q2_k_s"]
MODELS = [("llama", "tiny256"), ("qwen3", "tiny256"), ("llama", "tiny"), ("qwen2", "tiny")]
PROMPT = "Once upon a time, a small robot named Pip counted the stars every night."
COS_MIN = 0.999
LOGIT_TIE = 0.01  # top-1 may differ where the reference's top logits are this close (x max|logit|)


def run(cmd, timeout=300):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if p.returncode != 0:
        err = (p.stderr.decode(errors="replace").strip() or p.stdout.decode(errors="replace").strip())
        raise RuntimeError("`%s` exited %d: %s" % (" ".join(cmd), p.returncode, err[-300:]))
    return p.stdout.decode(errors="replace")


def check_dequant(wick, path, meta, tensors):
    """Every quantized tensor of the file: wick's values equal NumPy's."""
    types = meta["__tensor_types__"]
    n_checked = 0
    for name, arr in tensors.items():
        if types[name] in ("F32", "F16", "BF16"):
            continue
        out = json.loads(run([wick, "info", "-m", path, "--dump", name]))
        ours = np.array(out["values"], dtype=np.float32)
        ref = arr.reshape(-1).astype(np.float32)
        if out["type"] != types[name] or ours.shape != ref.shape:
            return False, "%s: wick reads %s %s, NumPy %s %s" % (name, out["type"], ours.shape, types[name], ref.shape)
        # equal as floats (JSON writes -0 as an integer, so a zero's sign is not compared)
        if not np.array_equal(ours, ref):
            bad = int(np.count_nonzero(ours != ref))
            return False, "%s (%s): %d of %d values differ from NumPy's" % (name, types[name], bad, ref.size)
        n_checked += 1
    return True, "%d quantized tensors equal" % n_checked


def check_file(wick, path):
    meta, tensors = gguf_reader.read_gguf(path)
    ok, dq_msg = check_dequant(wick, path, meta, tensors)
    if not ok:
        return False, dq_msg
    out = json.loads(run([wick, "logits", "-m", path, "-p", PROMPT]))
    toks = [int(t) for t in out["tokens"]]
    ref = refmodel.load_model(path).forward(toks)[-1].astype(np.float64)
    ours = np.asarray(out["logits"], dtype=np.float64)
    if ours.shape != ref.shape or not np.all(np.isfinite(ours)):
        return False, "logits: %d from wick, %d from the reference" % (ours.size, ref.size)
    cos = float(ours @ ref / (np.linalg.norm(ours) * np.linalg.norm(ref) + 1e-300))
    amax_o, amax_r = int(ours.argmax()), int(ref.argmax())
    tie = amax_o != amax_r and ref[amax_r] - ref[amax_o] <= LOGIT_TIE * float(np.abs(ref).max())
    ok = (amax_o == amax_r or tie) and cos >= COS_MIN
    mix = sorted(set(t for t in meta["__tensor_types__"].values()))
    return ok, "%s; logits cos=%.6f (min %g) argmax wick %d ref %d%s; types %s" % (
        dq_msg, cos, COS_MIN, amax_o, amax_r,
        " (reference near-tie: %.3g apart)" % (ref[amax_r] - ref[amax_o]) if tie else "", ",".join(mix))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wick", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--llamacpp", nargs=2, metavar=("REF", "LIBDIR"))
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    passed = failed = 0
    for arch, shape in MODELS:
        src = os.path.join(args.tmp, "%s-%s-f32.gguf" % (arch, shape))
        run([args.wick, "make-test-model", "--arch", arch, "--shape", shape, "--format", "gguf", "--dtype", "f32",
             "--seed", "9", "--out", src])
        writers = [("wick", t) for t in WICK_TYPES]
        if args.llamacpp:
            writers = [("llama.cpp", t) for t in LLAMACPP_TYPES] + writers
        for who, t in writers:
            name = "%s %s %s %s" % (who, t, arch, shape)
            if args.only and args.only not in name:
                continue
            path = os.path.join(args.tmp, "q.gguf")
            try:
                if who == "wick":
                    run([args.wick, "quantize", src, path, t])
                else:
                    run([args.llamacpp[0], args.llamacpp[1], "quantize", src, path, t, "2"])
                ok, msg = check_file(args.wick, path)
            except Exception as e:  # noqa: BLE001
                ok, msg = False, "error: %s" % e
            print("%s %-34s %s" % ("PASS" if ok else "FAIL", name, msg), flush=True)
            passed += ok
            failed += not ok
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
