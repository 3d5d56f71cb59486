/* The float sum of one reduction block (_reduce.pyx), at most BLOCK contiguous elements:
 * four 64-byte vectors of independent accumulators, so that enough adds are in flight to
 * read at cache speed; they combine as (a0 + a1) + (a2 + a3), then lane j takes lane
 * j + w for w = W/2 .. 1 (a fixed tree), then the tail adds in order.  The order depends
 * only on n, never on the instruction set a clone runs (a sum has no FMA to contract), so
 * the bits are the same on every machine and thread count. */
#ifndef EMBER_CPU_SUM_BLOCK_H
#define EMBER_CPU_SUM_BLOCK_H
#include "_rowmath.h"

#define EMBER_SUM_BLOCK(T, S)                                                             \
EMBER_ROW_CLONES static T ember_sum_block_##S(const T *x, int64_t n) {                    \
    typedef T vec __attribute__((vector_size(64)));                                       \
    enum { W = 64 / sizeof(T) };                                                          \
    vec a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, v0, v1, v2, v3;                           \
    T lane[W], s;                                                                         \
    int64_t i, nb = n - n % (4 * W);                                                      \
    int j;                                                                                \
    for (i = 0; i < nb; i += 4 * W) {                                                     \
        memcpy(&v0, x + i, sizeof v0);                                                    \
        memcpy(&v1, x + i + W, sizeof v1);                                                \
        memcpy(&v2, x + i + 2 * W, sizeof v2);                                            \
        memcpy(&v3, x + i + 3 * W, sizeof v3);                                            \
        a0 += v0; a1 += v1; a2 += v2; a3 += v3;                                           \
    }                                                                                     \
    a0 = (a0 + a1) + (a2 + a3);                                                           \
    memcpy(lane, &a0, sizeof lane);                                                       \
    for (j = 0; j < W / 2; j++) lane[j] += lane[j + W / 2];                               \
    for (j = 0; j < W / 4; j++) lane[j] += lane[j + W / 4];                               \
    for (j = 0; j < W / 8; j++) lane[j] += lane[j + W / 8];                               \
    if (W == 16) lane[0] += lane[1];                                                      \
    s = lane[0];                                                                          \
    for (i = nb; i < n; i++) s += x[i];                                                   \
    return s;                                                                             \
}

EMBER_SUM_BLOCK(float, f32)
EMBER_SUM_BLOCK(double, f64)

#endif
