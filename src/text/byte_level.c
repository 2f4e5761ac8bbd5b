/* byte_level.c — GPT-2's reversible byte <-> printable code point map used by
 * byte-level BPE: bytes 33..126, 161..172 and 174..255 map to themselves, the
 * other 68 bytes map to U+0100.. in byte order. */
#include "text/tok_internal.h"

static bool byte_printable(unsigned b) {
    return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
}

uint32_t tok_byte_to_cp(unsigned char b) {
    if (byte_printable(b)) return b;
    if (b <= 32) return 256u + b;        /* 0..32    -> U+0100..U+0120 */
    if (b <= 160) return (uint32_t)b + 162u; /* 127..160 -> U+0121..U+0142 */
    return 323;                          /* 173      -> U+0143 */
}

int tok_cp_to_byte(uint32_t cp) {
    if (cp < 256) return byte_printable(cp) ? (int)cp : -1;
    if (cp <= 288) return (int)(cp - 256);
    if (cp <= 322) return (int)(cp - 162);
    if (cp == 323) return 173;
    return -1;
}

int tok_byte_to_utf8(unsigned char b, char out[4]) { return tok_utf8_encode(tok_byte_to_cp(b), out); }

size_t tok_byte_level_unmap(const char *s, size_t len, char *out, size_t cap) {
    size_t o = 0, i = 0;
    while (i < len) {
        uint32_t cp;
        int k = tok_utf8_decode(s + i, len - i, &cp);
        int b = tok_cp_to_byte(cp);
        if (b >= 0) {
            if (o < cap) out[o] = (char)b;
            o++;
        } else {
            for (int j = 0; j < k; j++, o++)
                if (o < cap) out[o] = s[i + j];
        }
        i += (size_t)k;
    }
    return o;
}
