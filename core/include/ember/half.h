/* float16 / bfloat16 <-> float32, round to nearest even on the way down.
 * Neither has a C type: kernels load to float32 per element and round on store. */
#ifndef EMBER_HALF_H
#define EMBER_HALF_H

#include <stdint.h>
#include <string.h>

static inline float ember_bits_to_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t ember_float_to_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static inline float ember_bf16_to_float(uint16_t h) { return ember_bits_to_float((uint32_t)h << 16); }

static inline uint16_t ember_float_to_bf16(float f) {
    uint32_t u = ember_float_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float ember_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) return ember_bits_to_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0) return ember_bits_to_float(sign);
        float f = (float)man * (1.0f / 16777216.0f);   /* subnormal: man * 2^-24 */
        return sign ? -f : f;
    }
    return ember_bits_to_float(sign | ((exp + 112u) << 23) | (man << 13));
}

static inline uint16_t ember_float_to_half(float f) {
    uint32_t u = ember_float_to_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);            /* NaN */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);           /* overflow -> inf */
    if (a < 0x38800000u) {                                              /* subnormal or zero */
        if (a < 0x33000000u) return (uint16_t)sign;                     /* < 2^-25 -> 0 */
        uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e;                                      /* 14 .. 24 */
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = a - 0x38000000u;                                       /* rebias exponent */
    r += 0xfffu + ((r >> 13) & 1u);
    return (uint16_t)(sign | (r >> 13));
}

#endif
