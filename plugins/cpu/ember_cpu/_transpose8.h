/* The 8 x 8 float transpose that packing routines share (_small_gemm.h's gather of a
 * column-major matrix, _gemm.h's packs of row-major A and column-major B): o[c] holds
 * column c of the rows r[0..7], in three rounds of shuffles (unpack pairs of rows, then
 * pairs of pairs, then halves), no scalar moves. */
#ifndef EMBER_CPU_TRANSPOSE8_H
#define EMBER_CPU_TRANSPOSE8_H
#include <stdint.h>

typedef float ember_v8f __attribute__((vector_size(32)));
typedef float ember_u8f __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t ember_v8i __attribute__((vector_size(32)));

static inline void ember_transpose8_f32(const ember_v8f r[8], ember_v8f o[8]) {
    const ember_v8i lo = {0, 8, 1, 9, 4, 12, 5, 13}, hi = {2, 10, 3, 11, 6, 14, 7, 15};
    const ember_v8i lo2 = {0, 1, 8, 9, 4, 5, 12, 13}, hi2 = {2, 3, 10, 11, 6, 7, 14, 15};
    const ember_v8i lo4 = {0, 1, 2, 3, 8, 9, 10, 11}, hi4 = {4, 5, 6, 7, 12, 13, 14, 15};
    ember_v8f t[8], u[8];
    int i;
    for (i = 0; i < 8; i += 2) {
        t[i] = __builtin_shuffle(r[i], r[i + 1], lo);
        t[i + 1] = __builtin_shuffle(r[i], r[i + 1], hi);
    }
    for (i = 0; i < 8; i += 4) {   /* u[i + c] holds columns c and c + 4 of 4 rows */
        u[i] = __builtin_shuffle(t[i], t[i + 2], lo2);
        u[i + 1] = __builtin_shuffle(t[i], t[i + 2], hi2);
        u[i + 2] = __builtin_shuffle(t[i + 1], t[i + 3], lo2);
        u[i + 3] = __builtin_shuffle(t[i + 1], t[i + 3], hi2);
    }
    for (i = 0; i < 4; i++) {
        o[i] = __builtin_shuffle(u[i], u[i + 4], lo4);
        o[i + 4] = __builtin_shuffle(u[i], u[i + 4], hi4);
    }
}

#endif
