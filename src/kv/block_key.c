/* block_key.c — content keys of KV blocks (see block_key.h). The bytes
 * hashed are fixed: they name files on disk written by earlier runs. */
#include "kv/block_key.h"

#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

kv_key block_key(kv_key parent, const int32_t *tokens, int n) {
    unsigned char buf[16 + 4 + KV_BLOCK_SIZE * 4];
    memcpy(buf, &parent.lo, 8);
    memcpy(buf + 8, &parent.hi, 8);
    int32_t n32 = n;
    memcpy(buf + 16, &n32, 4);
    memcpy(buf + 20, tokens, (size_t)n * 4);
    XXH128_hash_t h = XXH3_128bits(buf, 20 + (size_t)n * 4);
    return (kv_key){h.low64, h.high64};
}

kv_key block_root(kv_key identity, kv_layout layout, const char *salt) {
    const uint64_t id[7] = {identity.lo,
                            identity.hi,
                            (uint64_t)layout.n_layer,
                            (uint64_t)layout.n_kv_heads,
                            (uint64_t)layout.head_dim,
                            (uint64_t)layout.type,
                            KV_BLOCK_SIZE};
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    XXH3_128bits_update(&st, id, sizeof id);
    if (salt && *salt) {
        XXH3_128bits_update(&st, "salt", 4);
        XXH3_128bits_update(&st, salt, strlen(salt));
    }
    XXH128_hash_t h = XXH3_128bits_digest(&st);
    return (kv_key){h.low64, h.high64};
}

kv_key block_span_root(kv_key root, const int32_t *anchor, int n_anchor) {
    const int32_t n = n_anchor;
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    XXH3_128bits_update(&st, &root, sizeof root);
    XXH3_128bits_update(&st, "span pre-RoPE K", 15);
    XXH3_128bits_update(&st, &n, sizeof n);
    if (n_anchor > 0) XXH3_128bits_update(&st, anchor, (size_t)n_anchor * sizeof *anchor);
    XXH128_hash_t h = XXH3_128bits_digest(&st);
    return (kv_key){h.low64, h.high64};
}
