#!/usr/bin/python3
"""gguf_compare.py — comparisons of GGUF files for tests/quantize_llamacpp.test.sh,
through the independent reader (gguf_reader.py, dequant.py). Each subcommand
prints one line starting "ok  " or "FAIL" and exits 0 or 1.

  types A B                 every tensor of A has the same type and shape in B, and B no others
  same-bytes A B            every tensor's bytes are equal except those of the K-quant
                            and IQ4 types, and every key of A has A's value in B
  perturb FILE SEED         rewrite FILE's 2-D F32 tensors in place with Gaussian and
                            heavy-tailed rows (per-row scales, 1% outliers x8, Laplace rows)
  rmse SRC A B LABEL MAX    per tensor type present in both A and B for the same tensor:
                            RMSE of A's and B's dequantized values against SRC (F32);
                            fails when B's exceeds MAX x A's for any type
  logits A.json B.json LABEL REL COS
                            max|a-b|/max|b| <= REL and 1-cos <= COS
"""
import json
import struct
import sys
import os

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dequant  # noqa: E402
import gguf_reader  # noqa: E402


def layout(path):
    """meta, {name: (type id, shape ne, file offset, nbytes)} without decoding."""
    buf = memoryview(open(path, "rb").read())
    version = struct.unpack("<I", buf[4:8])[0]
    c = gguf_reader._Cursor(buf, version)
    c.pos = 8
    n_t, n_kv = c.count(), c.count()
    meta = {}
    for _ in range(n_kv):
        key = c.string()
        meta[key] = c.value(c.u32())
    infos = []
    for _ in range(n_t):
        name = c.string()
        ne = [c.u64() for _ in range(c.u32())]
        infos.append((name, ne, c.u32(), c.u64()))
    align = int(meta.get("general.alignment", 32))
    start = (c.pos + align - 1) // align * align
    out = {}
    for name, ne, t, off in infos:
        _, blk, bsz = dequant.TYPES[t]
        n = int(np.prod(ne))
        out[name] = (t, ne, start + off, n // blk * bsz)
    return buf, meta, out


def name_of(t):
    return dequant.TYPES[t][0]


def cmd_types(a, b):
    _, _, ta = layout(a)
    _, _, tb = layout(b)
    diff = ["%s: %s %s vs %s %s" % (n, name_of(ta[n][0]), ta[n][1], name_of(tb[n][0]) if n in tb else "-",
                                    tb[n][1] if n in tb else "") for n in ta if n not in tb or ta[n][:2] != tb[n][:2]]
    diff += ["%s: only in the second" % n for n in tb if n not in ta]
    return not diff, "%d tensors, same types%s" % (len(ta), "" if not diff else "; " + "; ".join(diff[:4]))


# types whose quantizer searches scales: wick writes them by the same method, not the same bytes
SEARCHED = {"Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS"}


def cmd_same_bytes(a, b):
    ba, ma, ta = layout(a)
    bb, mb, tb = layout(b)
    bad, n = [], 0
    for name, (t, ne, off, nb) in ta.items():
        if name_of(t) in SEARCHED:
            continue
        n += 1
        if name not in tb or tb[name][0] != t or ba[off:off + nb] != bb[tb[name][2]:tb[name][2] + tb[name][3]]:
            bad.append("%s (%s)" % (name, name_of(t)))
    keys = [k for k in ma if mb.get(k) != ma[k]]
    ok = not bad and not keys
    return ok, "%d tensors byte-identical, %d keys equal%s%s" % (
        n - len(bad), len(ma) - len(keys), "; differ: " + ", ".join(bad[:4]) if bad else "",
        "; keys differ: " + ", ".join(keys[:4]) if keys else "")


def cmd_perturb(path, seed):
    _, _, ta = layout(path)
    rng = np.random.default_rng(int(seed))
    with open(path, "r+b") as f:
        for name, (t, ne, off, nb) in sorted(ta.items()):
            if t != dequant.F32 or len(ne) < 2:
                continue
            rows, cols = int(np.prod(ne[1:])), ne[0]
            x = rng.standard_normal((rows, cols))
            x *= np.exp(0.5 * rng.standard_normal((rows, 1)))           # per-row scales
            x[rng.random((rows, cols)) < 0.01] *= 8.0                   # outliers
            lap = rng.random(rows) < 0.25
            x[lap] = rng.laplace(size=(int(lap.sum()), cols))            # heavy-tailed rows
            x *= 0.5 / np.sqrt(cols)
            f.seek(off)
            f.write(x.astype("<f4").tobytes())
    return True, "perturbed %s" % path


def cmd_rmse(src, a, b, label, max_ratio):
    meta_s, ts = gguf_reader.read_gguf(src)
    ma, ta = gguf_reader.read_gguf(a)
    mb, tb = gguf_reader.read_gguf(b)
    types_a, types_b = ma["__tensor_types__"], mb["__tensor_types__"]
    se = {}
    for name in ta:
        t = types_a[name]
        if t in ("F32", "F16", "BF16") or types_b.get(name) != t:
            continue
        x = ts[name].astype(np.float64)
        ea = float(np.sum((ta[name] - x) ** 2))
        eb = float(np.sum((tb[name] - x) ** 2))
        s = se.setdefault(t, [0.0, 0.0, 0])
        s[0] += ea
        s[1] += eb
        s[2] += x.size
    if not se:
        return False, "%s: no tensor of a common quantized type" % label
    parts, ok = [], True
    for t, (ea, eb, n) in sorted(se.items()):
        ratio = np.sqrt(eb / ea) if ea > 0 else (1.0 if eb == 0 else np.inf)
        ok &= ratio <= float(max_ratio)
        parts.append("%s %.4g/%.4g=%.4f" % (t, np.sqrt(ea / n), np.sqrt(eb / n), ratio))
    return ok, "%s: rmse llama.cpp/wick per type (max ratio %s): %s" % (label, max_ratio, ", ".join(parts))


def cmd_logits(fa, fb, label, rel_max, cos_max):
    a = np.array(json.load(open(fa))["logits"], dtype=np.float64)
    b = np.array(json.load(open(fb))["logits"], dtype=np.float64)
    if a.shape != b.shape:
        return False, "%s: %d logits vs %d" % (label, a.size, b.size)
    rel = np.abs(a - b).max() / np.abs(b).max()
    cos = 1 - a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    ok = rel <= float(rel_max) and cos <= float(cos_max)
    return ok, "%s: max|diff|/max|logit| %.2e (<= %s), 1-cos %.2e (<= %s), argmax %d/%d" % (
        label, rel, rel_max, cos, cos_max, int(a.argmax()), int(b.argmax()))


def main():
    cmds = {"types": cmd_types, "same-bytes": cmd_same_bytes, "perturb": cmd_perturb, "rmse": cmd_rmse,
            "logits": cmd_logits}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__)
        return 2
    try:
        ok, msg = cmds[sys.argv[1]](*sys.argv[2:])
    except Exception as e:  # noqa: BLE001
        ok, msg = False, "%s: error: %s" % (sys.argv[1], e)
    print("%s %s" % ("ok  " if ok else "FAIL", msg))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
