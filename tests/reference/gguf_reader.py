"""Minimal independent GGUF (v2/v3) reader for the wick reference tests.

Written from the GGUF specification (ggml/docs/gguf.md), not from wick's C code.

    meta, tensors = read_gguf(path)

meta    : dict key -> value (ints, floats, bools, str, or lists of those)
tensors : dict name -> numpy float32 array in row-major shape (reversed ne[]:
          GGUF ne[0] is the innermost dimension, i.e. the number of columns)
"""
import struct

import numpy as np

import dequant

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

# ggml tensor types we can read: id -> (name, block elements, block bytes);
# dequant.py decodes every one of them from its definition
_GGML = dict(dequant.TYPES)


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


def _decode(ttype, raw, n):
    try:
        return dequant.dequantize(ttype, raw, n)
    except ValueError as e:
        raise GGUFError(str(e))


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
