/* Comparisons (==, !=, <, <=, >, >=) written straight into bool outputs, in the operands'
 * own type: a row whose operands are each contiguous or one broadcast value.  The general
 * path converts integers to int64, compares into an int64 buffer and converts that to
 * bool; here each loop is one vectorised compare-and-narrow.  The results are those of the
 * general path: integer comparisons do not depend on the width, and IEEE comparisons
 * (false on NaN but for !=) are the same in C at any width. */
#ifndef EMBER_CPU_COMPARE_ROWS_H
#define EMBER_CPU_COMPARE_ROWS_H
#include <stdint.h>
#include "_rowmath.h"
#include "ember/abi.h"

/* op: 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >= (abi.h's EMBER_BINARY_EQ.. order); sa, sb: 1 or 0 */
#define EMBER_CMP_LOOPS(OP)                                                              \
    if (sa && sb) for (int64_t i = 0; i < n; i++) o[i] = a[i] OP b[i];                   \
    else if (sa) { T y = b[0]; for (int64_t i = 0; i < n; i++) o[i] = a[i] OP y; }       \
    else if (sb) { T x = a[0]; for (int64_t i = 0; i < n; i++) o[i] = x OP b[i]; }       \
    else { uint8_t r = a[0] OP b[0]; for (int64_t i = 0; i < n; i++) o[i] = r; }

#define EMBER_CMP_FN(TYPE, NAME)                                                         \
EMBER_ROW_CLONES static void NAME(int op, uint8_t *restrict o, const TYPE *restrict a,     \
                                  int64_t sa, const TYPE *restrict b, int64_t sb,         \
                                  int64_t n) {                                           \
    typedef TYPE T;                                                                      \
    switch (op) {                                                                        \
    case 0: EMBER_CMP_LOOPS(==) break;                                                   \
    case 1: EMBER_CMP_LOOPS(!=) break;                                                   \
    case 2: EMBER_CMP_LOOPS(<) break;                                                    \
    case 3: EMBER_CMP_LOOPS(<=) break;                                                   \
    case 4: EMBER_CMP_LOOPS(>) break;                                                    \
    default: EMBER_CMP_LOOPS(>=) break;                                                  \
    }                                                                                    \
}

EMBER_CMP_FN(uint8_t, ember_compare_u8)
EMBER_CMP_FN(int8_t, ember_compare_i8)
EMBER_CMP_FN(int16_t, ember_compare_i16)
EMBER_CMP_FN(int32_t, ember_compare_i32)
EMBER_CMP_FN(int64_t, ember_compare_i64)
EMBER_CMP_FN(float, ember_compare_f32)
EMBER_CMP_FN(double, ember_compare_f64)

#undef EMBER_CMP_FN
#undef EMBER_CMP_LOOPS

/* The row in the loop of `dtype` (abi.h's code); 0 when no loop here takes that dtype. */
static inline int ember_compare_row(int dtype, int op, uint8_t *o, const void *a, int64_t sa,
                                    const void *b, int64_t sb, int64_t n) {
    switch (dtype) {
    case EMBER_UINT8: case EMBER_BOOL: ember_compare_u8(op, o, a, sa, b, sb, n); return 1;
    case EMBER_INT8: ember_compare_i8(op, o, a, sa, b, sb, n); return 1;
    case EMBER_INT16: ember_compare_i16(op, o, a, sa, b, sb, n); return 1;
    case EMBER_INT32: ember_compare_i32(op, o, a, sa, b, sb, n); return 1;
    case EMBER_INT64: ember_compare_i64(op, o, a, sa, b, sb, n); return 1;
    case EMBER_FLOAT32: ember_compare_f32(op, o, a, sa, b, sb, n); return 1;
    case EMBER_FLOAT64: ember_compare_f64(op, o, a, sa, b, sb, n); return 1;
    default: return 0;
    }
}
#endif
