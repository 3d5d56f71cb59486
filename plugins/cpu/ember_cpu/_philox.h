/* Philox4x32-10 (Salmon et al., SC'11) over a block of consecutive counters, the words
 * stored lane by lane so the loop vectorises (the 32x32->64-bit products map to vpmuludq):
 * counter first + i, key (k0, k1), gives w0..w3[i], bit for bit what _random.pyx's scalar
 * philox4x32_10 gives for that counter (_random_rows.h turns them into values). */
#ifndef EMBER_CPU_PHILOX_H
#define EMBER_CPU_PHILOX_H
#include <stdint.h>
#include "_rowmath.h"

EMBER_ROW_CLONES static void ember_philox_block(uint32_t *restrict w0, uint32_t *restrict w1,
                                                uint32_t *restrict w2, uint32_t *restrict w3,
                                                uint64_t first, int64_t n, uint32_t k0,
                                                uint32_t k1) {
    for (int64_t i = 0; i < n; i++) {
        uint64_t ctr = first + (uint64_t)i;
        uint32_t c0 = (uint32_t)ctr, c1 = (uint32_t)(ctr >> 32), c2 = 0, c3 = 0;
        uint32_t a = k0, b = k1;
        for (int r = 0; r < 10; r++) {
            if (r > 0) {
                a += 0x9E3779B9u;
                b += 0xBB67AE85u;
            }
            uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
            uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ a, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ b;
            c1 = (uint32_t)p1;
            c3 = (uint32_t)p0;
            c0 = n0;
            c2 = n2;
        }
        w0[i] = c0;
        w1[i] = c1;
        w2[i] = c2;
        w3[i] = c3;
    }
}

#endif
