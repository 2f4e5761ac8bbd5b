"""Minimal independent GGUF (v2/v3) reader for the wick reference tests.

Written from the GGUF specification (ggml/docs/gguf.md), not from wick's C code.

    meta, tensors = read_gguf(path)

meta    : dict key -> value (ints, floats, bools, str, or lists of those)
tensors : dict name -> numpy float32 array in row-major shape (reversed ne[]:
          GGUF ne[0] is the innermost dimension, i.e. the number of columns)
"""
import struct

import numpy as np

GGUF_MAGIC = b"GGUF"

# metadata value types
_T_UINT8, _T_INT8, _T_UINT16, _T_INT16, _T_UINT32, _T_INT32, _T_FLOAT32, _T_BOOL, \
    _T_STRING, _T_ARRAY, _T_UINT64, _T_INT64, _T_FLOAT64 = range(13)

_SCALAR = {
    _T_UINT8: ("<B", 1, np.uint8), _T_INT8: ("<b", 1, np.int8),
    _T_UINT16: ("<H", 2, np.dtype("<u2")), _T_INT16: ("<h", 2, np.dtype("<i2")),
    _T_UINT32: ("<I", 4, np.dtype("<u4")), _T_INT32: ("<i", 4, np.dtype("<i4")),
    _T_FLOAT32: ("<f", 4, np.dtype("<f4")), _T_BOOL: ("<?", 1, np.bool_),
    _T_UINT64: ("<Q", 8, np.dtype("<u8")), _T_INT64: ("<q", 8, np.dtype("<i8")),
    _T_FLOAT64: ("<d", 8, np.dtype("<f8")),
}

# ggml tensor types we can read: id -> (name, block elements, block bytes)
GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q8_0, GGML_Q6_K, GGML_BF16 = 0, 1, 2, 8, 14, 30
_GGML = {
    GGML_F32: ("F32", 1, 4),
    GGML_F16: ("F16", 1, 2),
    GGML_Q4_0: ("Q4_0", 32, 18),
    GGML_Q8_0: ("Q8_0", 32, 34),
    GGML_Q6_K: ("Q6_K", 256, 210),
    GGML_BF16: ("BF16", 1, 2),
}


class GGUFError(Exception):
    pass


class _Cursor:
    def __init__(self, buf, version):
        self.buf = buf
        self.pos = 0
        self.version = version

    def take(self, n):
        if self.pos + n > len(self.buf):
            raise GGUFError("truncated GGUF file")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def scalar(self, fmt, size):
        return struct.unpack(fmt, self.take(size))[0]

    def u32(self):
        return self.scalar("<I", 4)

    def u64(self):
        return self.scalar("<Q", 8)

    def count(self):
        # GGUF v1 used 32-bit counts/lengths; v2+ use 64-bit
        return self.u32() if self.version == 1 else self.u64()

    def string(self):
        n = self.count()
        return bytes(self.take(n)).decode("utf-8", errors="surrogateescape")

    def value(self, vtype):
        if vtype in _SCALAR:
            fmt, size, _ = _SCALAR[vtype]
            return self.scalar(fmt, size)
        if vtype == _T_STRING:
            return self.string()
        if vtype == _T_ARRAY:
            etype = self.u32()
            n = self.count()
            if etype in _SCALAR:
                _, size, dt = _SCALAR[etype]
                arr = np.frombuffer(self.take(n * size), dtype=dt, count=n)
                return arr.tolist()
            return [self.value(etype) for _ in range(n)]
        raise GGUFError("unknown GGUF value type %d" % vtype)


def _f16(raw):
    return np.frombuffer(raw, dtype="<f2").astype(np.float32)


def _bf16(raw):
    u = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
    return u.view(np.float32)


def _dequant_q8_0(raw, n):
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 34)
    d = blocks[:, 0:2].copy().view("<f2").astype(np.float32)          # [nb, 1]
    q = blocks[:, 2:34].copy().view(np.int8).astype(np.float32)      # [nb, 32]
    return (d * q).reshape(-1)[:n]


def _dequant_q4_0(raw, n):
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 18)
    d = blocks[:, 0:2].copy().view("<f2").astype(np.float32)          # [nb, 1]
    b = blocks[:, 2:18].astype(np.int32)                              # [nb, 16]
    lo = (b & 15) - 8          # elements 0..15
    hi = (b >> 4) - 8          # elements 16..31
    q = np.concatenate([lo, hi], axis=1).astype(np.float32)           # [nb, 32]
    return (d * q).reshape(-1)[:n]


# Q6_K super-block (ggml-common.h block_q6_K): ql[128] low 4 bits, qh[64] high
# 2 bits, int8 scales[16] (one per 16 elements), fp16 d. Element e = 128h +
# 32k + l (h < 2, k < 4, l < 32): low 4 bits from ql[64h + 32(k % 2) + l], the
# low nibble for k < 2 and the high one for k >= 2; high 2 bits are bits
# 2k, 2k+1 of qh[32h + l]. Value = d * scales[e // 16] * (q - 32).
_E = np.arange(256)
_H, _K, _L = _E // 128, (_E % 128) // 32, _E % 32
_QL_IDX = 64 * _H + 32 * (_K % 2) + _L
_QL_SHIFT = np.where(_K >= 2, 4, 0)
_QH_IDX = 32 * _H + _L
_QH_SHIFT = 2 * _K


def _dequant_q6_k(raw, n):
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 210)
    ql = blocks[:, 0:128].astype(np.int32)
    qh = blocks[:, 128:192].astype(np.int32)
    sc = blocks[:, 192:208].copy().view(np.int8).astype(np.float32)   # [nb, 16]
    d = blocks[:, 208:210].copy().view("<f2").astype(np.float32)      # [nb, 1]
    q = ((ql[:, _QL_IDX] >> _QL_SHIFT) & 15) | (((qh[:, _QH_IDX] >> _QH_SHIFT) & 3) << 4)
    y = (d * sc[:, _E // 16]) * (q - 32).astype(np.float32)
    return y.reshape(-1)[:n]


def _decode(ttype, raw, n):
    if ttype == GGML_F32:
        return np.frombuffer(raw, dtype="<f4", count=n).astype(np.float32)
    if ttype == GGML_F16:
        return _f16(raw)
    if ttype == GGML_BF16:
        return _bf16(raw)
    if ttype == GGML_Q8_0:
        return _dequant_q8_0(raw, n)
    if ttype == GGML_Q4_0:
        return _dequant_q4_0(raw, n)
    if ttype == GGML_Q6_K:
        return _dequant_q6_k(raw, n)
    raise GGUFError("unsupported ggml type %d" % ttype)


def read_gguf(path, load_tensors=True):
    with open(path, "rb") as f:
        buf = memoryview(f.read())
    if bytes(buf[:4]) != GGUF_MAGIC:
        raise GGUFError("%s: not a GGUF file" % path)
    version = struct.unpack("<I", buf[4:8])[0]
    if version not in (1, 2, 3):
        raise GGUFError("unsupported GGUF version %d" % version)
    c = _Cursor(buf, version)
    c.pos = 8
    n_tensors = c.count()
    n_kv = c.count()

    meta = {}
    for _ in range(n_kv):
        key = c.string()
        vtype = c.u32()
        meta[key] = c.value(vtype)

    infos = []
    for _ in range(n_tensors):
        name = c.string()
        n_dims = c.u32()
        ne = [c.u64() for _ in range(n_dims)]
        ttype = c.u32()
        off = c.u64()
        infos.append((name, ne, ttype, off))

    align = int(meta.get("general.alignment", 32))
    data_start = (c.pos + align - 1) // align * align

    tensors = {}
    tensor_types = {}
    for name, ne, ttype, off in infos:
        if ttype not in _GGML:
            raise GGUFError("tensor %s: unsupported ggml type %d" % (name, ttype))
        tname, blk, bsz = _GGML[ttype]
        tensor_types[name] = tname
        if not load_tensors:
            continue
        n = 1
        for d in ne:
            n *= d
        if ne and ne[0] % blk:
            raise GGUFError("tensor %s: row size %d not a multiple of %d" % (name, ne[0], blk))
        nbytes = n // blk * bsz
        start = data_start + off
        if start + nbytes > len(buf):
            raise GGUFError("tensor %s: data out of file bounds" % name)
        flat = _decode(ttype, buf[start:start + nbytes], n)
        shape = tuple(reversed(ne)) if ne else ()
        tensors[name] = flat.reshape(shape)
    meta["__tensor_types__"] = tensor_types
    meta["__version__"] = version
    return meta, tensors


if __name__ == "__main__":
    import sys
    m, t = read_gguf(sys.argv[1])
    for k, v in m.items():
        if isinstance(v, list) and len(v) > 8:
            v = "[%d items] %r ..." % (len(v), v[:4])
        print(k, "=", v)
    for k, v in t.items():
        print(k, v.shape, m["__tensor_types__"][k])
