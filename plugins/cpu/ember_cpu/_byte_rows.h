/* Bitwise and logical ops on 1-byte operands (bool, uint8, int8) straight into a 1-byte
 * row: a &, |, ^ (bool's * and + too), logical_and/or/xor, ~ and not.  The general path
 * widens bytes to int64, computes and narrows back (1.5 ns an element); these loops are
 * byte vectors.  Results are the general path's: bool operands and logical ops count a
 * byte as its != 0, and bool results store 0 or 1. */
#ifndef EMBER_CPU_BYTE_ROWS_H
#define EMBER_CPU_BYTE_ROWS_H
#include <stdint.h>
#include "_rowmath.h"

/* kind: 0 and, 1 or, 2 xor; truth: read each byte as != 0 (bool operands, logical ops);
 * sa, sb: 1 (contiguous) or 0 (one broadcast value) */
#define EMBER_BYTE_LOOP(EXPR)                                                             \
    if (sa && sb) for (i = 0; i < n; i++) { uint8_t x = a[i], y = b[i]; o[i] = EXPR; }    \
    else if (sa) { const uint8_t y = b[0]; for (i = 0; i < n; i++) { uint8_t x = a[i];    \
                                                                     o[i] = EXPR; } }     \
    else if (sb) { const uint8_t x = a[0]; for (i = 0; i < n; i++) { uint8_t y = b[i];    \
                                                                     o[i] = EXPR; } }     \
    else { const uint8_t x = a[0], y = b[0], r = EXPR; for (i = 0; i < n; i++) o[i] = r; }

EMBER_ROW_CLONES static void ember_byte_binary(int kind, int truth, uint8_t *o,
                                               const uint8_t *a, int64_t sa,
                                               const uint8_t *b, int64_t sb, int64_t n) {
    int64_t i;
    if (truth) {
        if (kind == 0) { EMBER_BYTE_LOOP((uint8_t)((x != 0) & (y != 0))) }
        else if (kind == 1) { EMBER_BYTE_LOOP((uint8_t)((x != 0) | (y != 0))) }
        else { EMBER_BYTE_LOOP((uint8_t)((x != 0) ^ (y != 0))) }
    } else {
        if (kind == 0) { EMBER_BYTE_LOOP((uint8_t)(x & y)) }
        else if (kind == 1) { EMBER_BYTE_LOOP((uint8_t)(x | y)) }
        else { EMBER_BYTE_LOOP((uint8_t)(x ^ y)) }
    }
}

/* truth: not (bool's ~, 1 where the byte is 0); else the bitwise complement */
EMBER_ROW_CLONES static void ember_byte_not(int truth, uint8_t *o, const uint8_t *a,
                                            int64_t n) {
    int64_t i;
    if (truth)
        for (i = 0; i < n; i++) o[i] = a[i] == 0;
    else
        for (i = 0; i < n; i++) o[i] = (uint8_t)~a[i];
}

#undef EMBER_BYTE_LOOP
#endif
