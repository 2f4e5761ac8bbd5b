"""Minimal independent safetensors reader for the wick reference tests.

Format: 8-byte little-endian header length N, N bytes of JSON header
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}},
then the data section (offsets are relative to its start).

    tensors = read_safetensors(path_or_dir)

Accepts a single .safetensors file, or a directory holding either
model.safetensors or a sharded model.safetensors.index.json. Returns
name -> numpy float32 array (F32, F16, BF16 supported).
"""
import json
import os
import struct

import numpy as np


class SafetensorsError(Exception):
    pass


def _convert(dtype, raw, shape):
    n = 1
    for d in shape:
        n *= d
    if dtype == "F32":
        a = np.frombuffer(raw, dtype="<f4", count=n).astype(np.float32)
    elif dtype == "F16":
        a = np.frombuffer(raw, dtype="<f2", count=n).astype(np.float32)
    elif dtype == "BF16":
        a = (np.frombuffer(raw, dtype="<u2", count=n).astype(np.uint32) << 16).view(np.float32)
    elif dtype == "F64":
        a = np.frombuffer(raw, dtype="<f8", count=n).astype(np.float32)
    else:
        raise SafetensorsError("unsupported safetensors dtype %s" % dtype)
    return a.reshape(shape)


_SIZES = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8}


def read_safetensors_file(path, out=None, dtypes=None):
    out = {} if out is None else out
    with open(path, "rb") as f:
        buf = memoryview(f.read())
    if len(buf) < 8:
        raise SafetensorsError("%s: truncated" % path)
    hlen = struct.unpack("<Q", buf[:8])[0]
    header = json.loads(bytes(buf[8:8 + hlen]).decode("utf-8"))
    base = 8 + hlen
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = info["dtype"]
        shape = tuple(info["shape"])
        b, e = info["data_offsets"]
        if dtype not in _SIZES:
            raise SafetensorsError("%s: unsupported dtype %s" % (name, dtype))
        n = 1
        for d in shape:
            n *= d
        if e - b != n * _SIZES[dtype] or base + e > len(buf):
            raise SafetensorsError("%s: bad data offsets" % name)
        out[name] = _convert(dtype, buf[base + b:base + e], shape)
        if dtypes is not None:
            dtypes[name] = dtype
    return out


def read_safetensors(path, dtypes=None):
    if os.path.isdir(path):
        index = os.path.join(path, "model.safetensors.index.json")
        if os.path.exists(index):
            with open(index) as f:
                wm = json.load(f)["weight_map"]
            out = {}
            for shard in sorted(set(wm.values())):
                read_safetensors_file(os.path.join(path, shard), out, dtypes)
            missing = [k for k in wm if k not in out]
            if missing:
                raise SafetensorsError("tensors listed in index but missing: %s" % missing[:5])
            return out
        single = os.path.join(path, "model.safetensors")
        if os.path.exists(single):
            return read_safetensors_file(single, None, dtypes)
        raise SafetensorsError("%s: no model.safetensors or index" % path)
    return read_safetensors_file(path, None, dtypes)


if __name__ == "__main__":
    import sys
    d = {}
    t = read_safetensors(sys.argv[1], d)
    for k in sorted(t):
        print(k, t[k].shape, d[k])
