/* Stable sorts of one row for the `sort` entry (_sort.pyx): each element becomes an
 * unsigned key whose order is PyTorch's (NaN above every number and all NaNs equal, -0 equal
 * to +0; descending: the key's complement), the keys with their positions go through an LSD
 * radix sort (a pass per byte, skipped where every key has the same byte: small integers
 * take one pass), so equal elements keep their order, in both directions.  Rows under
 * EMBER_SORT_SMALL elements take an insertion sort instead (no 256-bucket histograms). */
#ifndef EMBER_CPU_SORT_ROWS_H
#define EMBER_CPU_SORT_ROWS_H
#include <stdint.h>
#include <string.h>

#define EMBER_SORT_SMALL 64

static inline uint32_t ember_key_f32(uint32_t u) {
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;          /* NaN */
    if (u == 0x80000000u) u = 0;                                        /* -0 */
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
static inline uint64_t ember_key_f64(uint64_t u) {
    if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) return ~0ull;
    if (u == 0x8000000000000000ull) u = 0;
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}
/* float16 and bfloat16 bits (`exp`: the exponent mask, NaN above it) as 16-bit keys */
static inline uint32_t ember_key_h16(uint32_t u, uint32_t exp) {
    if ((u & 0x7fffu) > exp) return 0xffffu;
    if (u == 0x8000u) u = 0;
    return (u & 0x8000u) ? (~u & 0xffffu) : (u | 0x8000u);
}

/* Sorts keys k[0..n) with their positions p ascending, stably; k2/p2 are scratch of n
 * elements.  Returns 1 when the result ended in k2/p2, else 0.  `bytes`: the key's width. */
#define EMBER_RADIX(NAME, KT)                                                               \
static int NAME(KT *k, uint32_t *p, KT *k2, uint32_t *p2, int64_t n, int bytes) {         \
    int64_t i;                                                                              \
    if (n < EMBER_SORT_SMALL) {                                                             \
        for (i = 1; i < n; i++) {                                                           \
            KT key = k[i];                                                                  \
            uint32_t pos = p[i];                                                            \
            int64_t j = i - 1;                                                              \
            while (j >= 0 && k[j] > key) {                                                  \
                k[j + 1] = k[j];                                                            \
                p[j + 1] = p[j];                                                            \
                j--;                                                                        \
            }                                                                               \
            k[j + 1] = key;                                                                 \
            p[j + 1] = pos;                                                                 \
        }                                                                                   \
        return 0;                                                                           \
    }                                                                                       \
    int64_t count[8][256];                                                                  \
    memset(count, 0, sizeof(int64_t) * 256 * (size_t)bytes);                                \
    for (i = 0; i < n; i++) {                                                               \
        KT key = k[i];                                                                      \
        for (int b = 0; b < bytes; b++)                                                     \
            count[b][(key >> (8 * b)) & 0xff]++;                                            \
    }                                                                                       \
    int swapped = 0;                                                                        \
    for (int b = 0; b < bytes; b++) {                                                       \
        int64_t *c = count[b];                                                              \
        if (c[(k[0] >> (8 * b)) & 0xff] == n) continue;    /* one value of this byte */     \
        int64_t at = 0;                                                                     \
        for (int v = 0; v < 256; v++) {                                                     \
            int64_t m = c[v];                                                               \
            c[v] = at;                                                                      \
            at += m;                                                                        \
        }                                                                                   \
        for (i = 0; i < n; i++) {                                                           \
            KT key = k[i];                                                                  \
            int64_t to = c[(key >> (8 * b)) & 0xff]++;                                      \
            k2[to] = key;                                                                   \
            p2[to] = p[i];                                                                  \
        }                                                                                   \
        KT *tk = k; k = k2; k2 = tk;                                                        \
        uint32_t *tp = p; p = p2; p2 = tp;                                                  \
        swapped ^= 1;                                                                       \
    }                                                                                       \
    return swapped;                                                                         \
}

EMBER_RADIX(ember_radix_u32, uint32_t)
EMBER_RADIX(ember_radix_u64, uint64_t)

#endif
