"""Dequantization of every GGML block type wick reads, written from the block
layouts of the GGML format (ggml-common.h's block_* structs and the
dequantize_row_* definitions they come with), independent of wick's C code.

    dequantize(type_id, raw_bytes, n) -> float32 array of n values

Every value is computed in float32 in the definition's order (the scale of a
sub-block times d first, then times the quant, minus the min times dmin), so
the result equals llama.cpp's dequantization bit for bit.

Layouts (sizes in bytes; fp16 fields little-endian IEEE half; "element e"
counts within the block):
  Q4_0   18: d, qs[16]; x[j] = d*((qs[j] & 15) - 8), x[j+16] = d*((qs[j] >> 4) - 8)
  Q4_1   20: d, m, qs[16]; x[j] = d*(qs[j] & 15) + m, x[j+16] = d*(qs[j] >> 4) + m
  Q5_0   22: d, qh[4], qs[16]; h = qh as uint32 LE; q[j] gets bit j of h as its
             fifth bit (j < 32, nibbles as Q4_0); x = d*(q - 16)
  Q5_1   24: d, m, qh[4], qs[16]; q as Q5_0; x = d*q + m
  Q8_0   34: d, int8 qs[32]; x = d*qs
  IQ4_NL 18: d, qs[16]; nibbles as Q4_0 index KVALUES; x = d*KVALUES[nibble]
  IQ4_XS 136: d, uint16 scales_h, scales_l[4], qs[128]; sub-block j (of 32):
             ls = nibble j%2 of scales_l[j//2] | bits 2j..2j+1 of scales_h << 4,
             nibbles of qs[16j:16j+16] as one IQ4_NL block, x = (d*(ls - 32))*KVALUES[n]
  Q2_K   84: scales[16], qs[64], d, dmin; e = 128h + 32k + l: q = (qs[32h+l] >> 2k) & 3,
             g = e // 16: x = (d*(scales[g] & 15))*q - dmin*(scales[g] >> 4)
  Q3_K  110: hmask[32], qs[64], scales[12], d; q = (qs[32h+l] >> 2k) & 3, minus 4 when
             bit 4h+k of hmask[l] is clear; 6-bit scale s_g: low 4 bits nibble (g // 8)
             of scales[g % 8], high 2 bits bits 2(g//4) of scales[8 + g%4];
             x = (d*(s_g - 32))*q
  Q4_K  144: d, dmin, scales[12], qs[128]; 8 sub-blocks of 32 with 6-bit scale sc_j
             and min m_j (j < 4: scales[j] & 63, scales[j+4] & 63; j >= 4:
             (scales[j+4] & 15) | (scales[j-4] >> 6) << 4, (scales[j+4] >> 4) |
             (scales[j] >> 6) << 4); element 64p + l: low nibble of qs[32p + l],
             64p + 32 + l: its high nibble; x = (d*sc_j)*q - dmin*m_j
  Q5_K  176: d, dmin, scales[12], qh[32], qs[128]; as Q4_K, element l of sub-block
             j gets bit j of qh[l] as its fifth bit
  Q6_K  210: ql[128], qh[64], int8 scales[16], d; element 128h + 32k + l: low 4 bits
             from ql[64h + 32(k % 2) + l] (high nibble for k >= 2), high 2 bits at bit
             2k of qh[32h + l]; x = (d*scales[e // 16])*(q - 32)
"""
import numpy as np

F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 = 0, 1, 2, 3, 6, 7, 8
Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, BF16 = 10, 11, 12, 13, 14, 20, 23, 30

# id -> (name, elements per block, bytes per block)
TYPES = {
    F32: ("F32", 1, 4), F16: ("F16", 1, 2), BF16: ("BF16", 1, 2),
    Q4_0: ("Q4_0", 32, 18), Q4_1: ("Q4_1", 32, 20), Q5_0: ("Q5_0", 32, 22),
    Q5_1: ("Q5_1", 32, 24), Q8_0: ("Q8_0", 32, 34), IQ4_NL: ("IQ4_NL", 32, 18),
    IQ4_XS: ("IQ4_XS", 256, 136), Q2_K: ("Q2_K", 256, 84), Q3_K: ("Q3_K", 256, 110),
    Q4_K: ("Q4_K", 256, 144), Q5_K: ("Q5_K", 256, 176), Q6_K: ("Q6_K", 256, 210),
}

KVALUES = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113],
                   dtype=np.float32)


def _blocks(raw, size):
    return np.frombuffer(raw, dtype=np.uint8).reshape(-1, size)


def _f16(b, at):
    """The fp16 field at byte `at` of every block, as float32 [nb, 1]."""
    return b[:, at:at + 2].copy().view("<f2").astype(np.float32)


def _nibbles32(qs):
    """[nb, 16] bytes -> [nb, 32] quants: element j < 16 the low nibble of byte j,
    element j + 16 its high nibble."""
    qs = qs.astype(np.int32)
    return np.concatenate([qs & 15, qs >> 4], axis=1)


def _q4_0(raw):
    b = _blocks(raw, 18)
    return _f16(b, 0) * (_nibbles32(b[:, 2:18]) - 8).astype(np.float32)


def _q4_1(raw):
    b = _blocks(raw, 20)
    return _f16(b, 0) * _nibbles32(b[:, 4:20]).astype(np.float32) + _f16(b, 2)


def _fifth_bits(qh):
    """[nb, 4] bytes -> [nb, 32] bits j of the little-endian uint32."""
    h = qh.copy().view("<u4").astype(np.int64)          # [nb, 1]
    return ((h >> np.arange(32)) & 1).astype(np.int32)  # [nb, 32]


def _q5_0(raw):
    b = _blocks(raw, 22)
    q = _nibbles32(b[:, 6:22]) | (_fifth_bits(b[:, 2:6]) << 4)
    return (q - 16).astype(np.float32) * _f16(b, 0)


def _q5_1(raw):
    b = _blocks(raw, 24)
    q = _nibbles32(b[:, 8:24]) | (_fifth_bits(b[:, 4:8]) << 4)
    return q.astype(np.float32) * _f16(b, 0) + _f16(b, 2)


def _q8_0(raw):
    b = _blocks(raw, 34)
    return _f16(b, 0) * b[:, 2:34].copy().view(np.int8).astype(np.float32)


def _iq4_nl(raw):
    b = _blocks(raw, 18)
    return _f16(b, 0) * KVALUES[_nibbles32(b[:, 2:18])]


def _iq4_xs(raw):
    b = _blocks(raw, 136)
    nb = b.shape[0]
    d = _f16(b, 0)                                               # [nb, 1]
    sh = b[:, 2:4].copy().view("<u2").astype(np.int32)           # [nb, 1]
    sl = b[:, 4:8].astype(np.int32)                              # [nb, 4]
    j = np.arange(8)
    ls = ((sl[:, j // 2] >> (4 * (j % 2))) & 15) | (((sh >> (2 * j)) & 3) << 4)  # [nb, 8]
    dl = d * (ls - 32).astype(np.float32)                        # [nb, 8]
    qs = b[:, 8:136].reshape(nb, 8, 16)
    v = KVALUES[np.concatenate([qs & 15, qs >> 4], axis=2)]       # [nb, 8, 32]
    return (dl[:, :, None] * v).reshape(nb, 256)


# element e = 128h + 32k + l of the 2-bit layouts (Q2_K, Q3_K)
_E = np.arange(256)
_H, _K, _L = _E // 128, (_E % 128) // 32, _E % 32
_G16 = _E // 16


def _two_bits(qs):
    return (qs.astype(np.int32)[:, 32 * _H + _L] >> (2 * _K)) & 3   # [nb, 256]


def _q2_k(raw):
    b = _blocks(raw, 84)
    sc = b[:, 0:16].astype(np.int32)
    q = _two_bits(b[:, 16:80]).astype(np.float32)
    d, dmin = _f16(b, 80), _f16(b, 82)
    dl = d * (sc & 15).astype(np.float32)
    ml = dmin * (sc >> 4).astype(np.float32)
    return dl[:, _G16] * q - ml[:, _G16]


def _q3_k(raw):
    b = _blocks(raw, 110)
    hm = b[:, 0:32].astype(np.int32)
    q = _two_bits(b[:, 32:96])
    high = (hm[:, _L] >> (4 * _H + _K)) & 1
    q = q - 4 * (1 - high)
    s = b[:, 96:108].astype(np.int32)
    g = np.arange(16)
    low4 = (s[:, g % 8] >> (4 * (g // 8))) & 15
    high2 = (s[:, 8 + g % 4] >> (2 * (g // 4))) & 3
    sc = (low4 | (high2 << 4)) - 32                               # [nb, 16]
    dl = _f16(b, 108) * sc.astype(np.float32)
    return dl[:, _G16] * q.astype(np.float32)


def _scale_min_k4(s):
    """[nb, 12] packed bytes -> (sc, m), each [nb, 8]."""
    s = s.astype(np.int32)
    sc = np.empty((s.shape[0], 8), dtype=np.int32)
    m = np.empty_like(sc)
    for j in range(8):
        if j < 4:
            sc[:, j] = s[:, j] & 63
            m[:, j] = s[:, j + 4] & 63
        else:
            sc[:, j] = (s[:, j + 4] & 15) | ((s[:, j - 4] >> 6) << 4)
            m[:, j] = (s[:, j + 4] >> 4) | ((s[:, j] >> 6) << 4)
    return sc, m


# Q4_K / Q5_K: element e = 32j + l of sub-block j: byte 32(j // 2) + l of qs,
# low nibble for even j, high nibble for odd j
_J8, _L32 = _E // 32, _E % 32


def _k4_quants(qs):
    qs = qs.astype(np.int32)
    return (qs[:, 32 * (_J8 // 2) + _L32] >> (4 * (_J8 % 2))) & 15


def _k4_values(b, q):
    d, dmin = _f16(b, 0), _f16(b, 2)
    sc, m = _scale_min_k4(b[:, 4:16])
    d1 = d * sc.astype(np.float32)
    m1 = dmin * m.astype(np.float32)
    return d1[:, _J8] * q.astype(np.float32) - m1[:, _J8]


def _q4_k(raw):
    b = _blocks(raw, 144)
    return _k4_values(b, _k4_quants(b[:, 16:144]))


def _q5_k(raw):
    b = _blocks(raw, 176)
    qh = b[:, 16:48].astype(np.int32)
    q = _k4_quants(b[:, 48:176]) | (((qh[:, _L32] >> _J8) & 1) << 4)
    return _k4_values(b, q)


def _q6_k(raw):
    b = _blocks(raw, 210)
    ql = b[:, 0:128].astype(np.int32)
    qh = b[:, 128:192].astype(np.int32)
    sc = b[:, 192:208].copy().view(np.int8).astype(np.float32)
    d = _f16(b, 208)
    q = ((ql[:, 64 * _H + 32 * (_K % 2) + _L] >> np.where(_K >= 2, 4, 0)) & 15) | \
        (((qh[:, 32 * _H + _L] >> (2 * _K)) & 3) << 4)
    return (d * sc)[:, _G16] * (q - 32).astype(np.float32)


_BLOCK = {
    Q4_0: _q4_0, Q4_1: _q4_1, Q5_0: _q5_0, Q5_1: _q5_1, Q8_0: _q8_0, IQ4_NL: _iq4_nl,
    IQ4_XS: _iq4_xs, Q2_K: _q2_k, Q3_K: _q3_k, Q4_K: _q4_k, Q5_K: _q5_k, Q6_K: _q6_k,
}


def dequantize(ttype, raw, n):
    """n float32 values of type `ttype` from raw bytes (exactly n // block * bytes)."""
    if ttype == F32:
        return np.frombuffer(raw, dtype="<f4", count=n).astype(np.float32)
    if ttype == F16:
        return np.frombuffer(raw, dtype="<f2", count=n).astype(np.float32)
    if ttype == BF16:
        return (np.frombuffer(raw, dtype="<u2", count=n).astype(np.uint32) << 16).view(np.float32)
    if ttype not in _BLOCK:
        raise ValueError("unsupported ggml type %d" % ttype)
    with np.errstate(over="ignore", invalid="ignore"):
        return _BLOCK[ttype](raw).reshape(-1)[:n]
