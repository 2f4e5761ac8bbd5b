#!/usr/bin/python3
"""check_wick.py --wick BIN --tmp DIR [--prompt TEXT] [--only SUBSTR]

Step 2 of tests/reference.test.sh: for every arch x format x dtype, has wick
write a tiny random-weight test model (`wick make-test-model`), asks wick for the
last-position logits of a prompt (`wick logits`), runs the independent NumPy
reference on the same token ids, and compares:
  F32 weights      : max|wick - ref| <= 1e-4 * max|ref|
  other dtypes     : same argmax (or, where the reference's top two logits lie within
                     1% of max|logit|, either of them) and cosine similarity >= 0.999
(the reference runs on the dequantized weights it reads from the file).
Q6_K models (qwen3, llama) use the tiny256 shape, whose rows are whole
256-element super-blocks; qwen3 ties the output to the Q6_K embedding.
The archs with features (granite, gemma2, gemma3, phi3) run with their features on
(make-test-model's profiles: Granite multipliers, Gemma soft-caps that bite,
sliding windows shorter than the prompt, Gemma 3's local and global layers,
Phi-3's fused projections, and LongRoPE as an extra case).
Mixture of experts with quantized weights: wick quantizes activations to 8
bits, so where a token's k-th and (k+1)-th router logits are nearly tied
(gap < ROUTE_TIE standard deviations of the layer's logits) it may pick either; when the first
comparison fails, the case passes if the reference with one such near-tie
taken the other way (one at a time) matches within the same bounds.
The mixture-of-experts archs (qwen2moe, qwen3moe, mixtral: 8 experts, 2 per
token) run every format x dtype too, plus a Mixtral GGUF with one tensor per
expert (the older blk.N.ffn_gate.E.weight form) instead of 3-D stacks, and HF
qwen2moe/qwen3moe models with a dense layer (config mlp_only_layers).
Also checks, with the reference alone, that the same-seed GGUF and HF F32 models
are the same model (their reference logits agree to 1e-4 relative).
Prints one PASS/FAIL line per case and "N passed, N failed"; exits 1 on failure.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model as refmodel  # noqa: E402

ARCHS = ["llama", "mistral", "qwen2", "qwen3", "granite", "gemma2", "gemma3", "phi3", "qwen2moe", "qwen3moe",
         "mixtral"]
DTYPES = {"gguf": ["f32", "f16", "bf16", "q8_0", "q4_0"], "hf": ["f32", "f16", "bf16"]}
PROMPT = "Once upon a time, a small robot named Pip counted the stars every night."
SHORT_PROMPT = "Pip counted the stars."  # fewer tokens than LongRoPE's original context (32)
F32_TOL = 1e-4
COS_MIN = 0.999
LOGIT_TIE = 0.01   # quantized dtypes: top-1 may differ where the reference's top logits are this close (× max|logit|)
ROUTE_TIE = 0.03


def run(cmd, timeout=120):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if p.returncode != 0:
        err = (p.stderr.decode(errors="replace").strip() or p.stdout.decode(errors="replace").strip())
        raise RuntimeError("`%s` exited %d: %s" % (" ".join(cmd), p.returncode, err[-300:]))
    return p.stdout.decode(errors="replace")


def parse_json(text):
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        # tolerate log lines around the JSON object
        for line in reversed(text.splitlines()):
            line = line.strip()
            if line.startswith("{"):
                return json.loads(line)
        raise


def to_gemma3_multimodal(src, dst):
    """Rewrite a gemma3 (text) HF directory as a Gemma3ForConditionalGeneration checkpoint:
    config.json {"model_type": "gemma3", "text_config": {...}} leaving out keys at
    Gemma3TextConfig's defaults, and the text model's tensors under language_model.model."""
    os.makedirs(dst, exist_ok=True)
    for f in os.listdir(src):
        if f not in ("config.json", "model.safetensors"):
            shutil.copy(os.path.join(src, f), os.path.join(dst, f))
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    for k in ("rope_local_base_freq", "sliding_window_pattern", "tie_word_embeddings", "model_type",
              "architectures"):
        cfg.pop(k, None)
    with open(os.path.join(dst, "config.json"), "w") as f:
        json.dump({"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
                   "text_config": cfg}, f)
    with open(os.path.join(src, "model.safetensors"), "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header = {("language_model." + k if k.startswith("model.") else k): v for k, v in header.items()}
    hb = json.dumps(header).encode()
    hb += b" " * (-len(hb) % 8)
    with open(os.path.join(dst, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hb)) + hb + raw[8 + n:])


# config.json edits for the "hf-edited" cases: HF keys the test models do not write
# (wick and the reference must read them the same way)
HF_EDITS = {
    # query_pre_attn_scalar other than head_dim, per-layer layer_types (both sliding),
    # tie_word_embeddings left to Gemma's default (true)
    "gemma2": {"query_pre_attn_scalar": 20, "layer_types": ["sliding_attention", "sliding_attention"],
               "tie_word_embeddings": None},
    # Phi-3.5 / Phi-4-mini rotate part of each head; LongRoPE with an explicit attention factor
    "phi3": {"partial_rotary_factor": 0.5},
}


def edit_config(path, edits):
    with open(os.path.join(path, "config.json")) as f:
        cfg = json.load(f)
    for k, v in edits.items():
        if v is None:
            cfg.pop(k, None)
        else:
            cfg[k] = v
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(cfg, f)


def compare(ours, ref, dtype):
    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if ours.shape != ref.shape:
        return False, "logits length %d, reference %d" % (ours.size, ref.size)
    if not np.all(np.isfinite(ours)):
        return False, "non-finite logits from wick"
    amax_o, amax_r = int(ours.argmax()), int(ref.argmax())
    cos = float(ours @ ref / (np.linalg.norm(ours) * np.linalg.norm(ref) + 1e-300))
    if dtype == "f32":
        err = float(np.abs(ours - ref).max())
        scale = float(np.abs(ref).max())
        ok = err <= F32_TOL * scale
        return ok, "max|d|=%.3g (tol %.3g) rel=%.2e cos=%.7f argmax %d/%d" % (
            err, F32_TOL * scale, err / scale, cos, amax_o, amax_r)
    # a different top-1 passes only where the reference's own top logits are nearly tied
    tie = amax_o != amax_r and ref[amax_r] - ref[amax_o] <= LOGIT_TIE * float(np.abs(ref).max())
    ok = (amax_o == amax_r or tie) and cos >= COS_MIN
    return ok, "cos=%.6f (min %g) argmax wick %d ref %d%s" % (
        cos, COS_MIN, amax_o, amax_r, " (reference near-tie: %.3g apart)" % (ref[amax_r] - ref[amax_o]) if tie else "")


def near_tie_retry(m, toks, ours, dt, msg):
    """Retry with each near-tied routing decision taken the other way."""
    ties = sorted((float(g[t]), L, t) for L, g in m.route_gaps.items() for t in range(len(g))
                  if g[t] < ROUTE_TIE)
    for gap, L, t in ties:
        m.flips = {(L, t)}
        ok, msg2 = compare(ours, m.forward(toks)[-1], dt)
        if ok:
            return True, msg2 + " (layer %d token %d: router near-tie, gap %.3g sd, taken the other way)" % (L, t, gap)
    m.flips = set()
    return False, msg + " (%d near-ties tried)" % len(ties)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wick", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--prompt", default=PROMPT)
    ap.add_argument("--only", default="", help="run only cases whose name contains this")
    ap.add_argument("--prior", default="0,0",
                    help="passed,failed counts from earlier steps, added to the final line")
    args = ap.parse_args()

    cases = []
    for arch in ARCHS:
        for fmt in ("gguf", "hf"):
            for dt in DTYPES[fmt]:
                cases.append((arch, fmt, dt, None))
    # Q6_K needs rows that are whole 256-element super-blocks: shape tiny256
    cases.append(("qwen3", "gguf", "q6_k", None))
    cases.append(("llama", "gguf", "q6_k", None))
    cases.append(("qwen3moe", "gguf", "q6_k", None))
    cases.append(("llama", "gguf", "f32", "llama3"))
    cases.append(("llama", "hf", "f32", "llama3"))
    # Phi-3 128k's LongRoPE (the prompt is longer than the test model's original context)
    cases.append(("phi3", "gguf", "f32", "longrope"))
    cases.append(("phi3", "hf", "f32", "longrope"))
    cases.append(("phi3", "gguf", "q8_0", "longrope"))
    # ... and with a context no longer than the original one (wick then uses the short
    # factors, as does HF for a sequence that fits the original context)
    cases.append(("phi3", "hf", "f32", "longrope-short"))
    cases.append(("phi3", "gguf", "f32", "longrope-short"))
    # Gemma 3's multimodal checkpoint layout (text_config, language_model.model.* tensors)
    cases.append(("gemma3", "hf-multimodal", "f32", None))
    for arch in sorted(HF_EDITS):
        cases.append((arch, "hf-edited", "f32", None))
    cases.append(("mixtral", "gguf", "q8_0", "split-experts"))
    cases.append(("qwen2moe", "hf", "f32", "mlp-only-layers=0"))
    cases.append(("qwen3moe", "hf", "bf16", "mlp-only-layers=1"))

    passed, failed = (int(v) for v in args.prior.split(","))
    ref_f32 = {}   # (arch, rope) -> {fmt: (tokens, ref logits all positions)}
    t0 = time.time()
    for arch, fmt, dt, rope in cases:
        split = rope is not None and (rope == "split-experts" or rope.startswith("mlp-only-layers="))
        name = "%s %s %s%s" % (arch, fmt, dt, (" " + rope if split else " rope=" + rope) if rope else "")
        if args.only and args.only not in name:
            continue
        base = os.path.join(args.tmp, "%s-%s-%s%s" % (arch, fmt, dt, "-" + rope.replace("=", "") if rope else ""))
        path = base + ".gguf" if fmt == "gguf" else base
        try:
            multimodal = fmt == "hf-multimodal"
            cmd = [args.wick, "make-test-model", "--arch", arch, "--format", "hf" if fmt.startswith("hf") else fmt,
                   "--dtype", dt, "--shape", "tiny256" if dt == "q6_k" else "tiny", "--seed", "7",
                   "--out", path + "-text" if multimodal else path]
            prompt, extra = args.prompt, []
            if rope == "longrope-short":
                prompt, extra = SHORT_PROMPT, ["--ctx", "32"]
            if split:
                cmd += ["--" + rope.split("=")[0]] + rope.split("=")[1:]   # --split-experts, --mlp-only-layers N
            elif rope:
                cmd += ["--rope-scaling", rope.split("-")[0]]
            run(cmd)
            if multimodal:
                to_gemma3_multimodal(path + "-text", path)
            if fmt == "hf-edited":
                edit_config(path, HF_EDITS[arch])
            out = parse_json(run([args.wick, "logits", "-m", path, "-p", prompt] + extra))
            toks = [int(t) for t in out["tokens"]]
            if not toks:
                raise RuntimeError("wick logits returned no tokens")
            m = refmodel.load_model(path)
            ref_all = m.forward(toks)
            ok, msg = compare(out["logits"], ref_all[-1], dt)
            if not ok and dt != "f32" and m.route_gaps:
                ok, msg = near_tie_retry(m, toks, out["logits"], dt, msg)
            msg += " (%d tokens)" % len(toks)
            if dt == "f32" and not split:
                ref_f32.setdefault((arch, rope), {})[fmt] = (toks, m)
        except Exception as e:  # noqa: BLE001
            ok, msg = False, "error: %s" % e
        print("%s %-28s %s" % ("PASS" if ok else "FAIL", name, msg), flush=True)
        passed += ok
        failed += not ok

    # same seed, both formats: the reference must see the same model
    for (arch, rope), d in sorted(ref_f32.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        if "gguf" not in d or "hf" not in d:
            continue
        name = "%s gguf==hf f32%s (ref)" % (arch, " rope=" + rope if rope else "")
        toks = d["gguf"][0]
        la = d["gguf"][1].forward(toks)
        lb = d["hf"][1].forward(toks)
        if la.shape != lb.shape:
            ok, msg = False, "vocab differs: %s vs %s" % (la.shape, lb.shape)
        else:
            err = float(np.abs(la - lb).max())
            scale = float(np.abs(lb).max())
            ok = err <= F32_TOL * scale
            msg = "max|d| all positions=%.3g (tol %.3g)" % (err, F32_TOL * scale)
            if d["hf"][0] != toks:
                ok, msg = False, msg + "; wick tokenized the prompt differently per format"
        print("%s %-28s %s" % ("PASS" if ok else "FAIL", name, msg), flush=True)
        passed += ok
        failed += not ok

    # Mixtral: top-k then softmax over k (wick) == softmax, top-k, renormalize (HF)
    if not args.only or args.only in "mixtral routing":
        rng = np.random.default_rng(5)
        logits = rng.normal(0, 2, (1000, 8))
        logits[::7, 3] = logits[::7, 5]   # exact ties: the lower index wins in both
        ia, wa = refmodel.topk_softmax(logits, 2)
        ib, wb = refmodel.moe_route(logits, 2, True)
        err = float(np.abs(wa - wb).max())
        ok = bool(np.array_equal(ia, ib)) and err < 1e-12
        print("%s %-28s same experts: %s, max|dw|=%.2g" % ("PASS" if ok else "FAIL", "mixtral routing forms (ref)",
                                                         bool(np.array_equal(ia, ib)), err), flush=True)
        passed += ok
        failed += not ok

    print("step 2 took %.1f s" % (time.time() - t0))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
