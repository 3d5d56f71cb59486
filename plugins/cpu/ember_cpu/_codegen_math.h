/* Scalar math for the C kernels ember.compile generates (ember_cpu/codegen.py): what the
 * fused loops call, written so the loops vectorise.  The float32 transcendental functions
 * are the eager kernels' (_rowmath.h, _vecmath.h); kernels flag sin/cos arguments outside
 * the fast range (and NaN/inf) and recompute those chunks with libm. */
#ifndef EMBER_CPU_CODEGEN_MATH_H
#define EMBER_CPU_CODEGEN_MATH_H
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_rowmath.h"
#include "_vecmath.h"

/* x when x > y or x is NaN, else y: PyTorch's NaN-propagating maximum (and minimum) */
#define EMBER_MAX(x, y) (((x) > (y)) | ((x) != (x)) ? (x) : (y))
#define EMBER_MIN(x, y) (((x) < (y)) | ((x) != (x)) ? (x) : (y))

#endif
