/* ember kernel ABI: what a backend plugin implements.
 *
 * The core hands kernels plain data only (pointers, sizes, strides, dtype codes, op
 * codes, and state such as deterministic mode in `ember_ctx`), never Python objects, so a
 * plugin builds with a C compiler (or Cython) and this header alone.  A plugin fills one
 * `ember_kernel_table` and hands it to the core inside a PyCapsule named
 * EMBER_KERNEL_TABLE_CAPSULE from its `ember_kernel_table` hook.
 *
 * Conventions every entry point follows:
 *   - strides are in elements, not bytes; `data` already points at element [0, ..., 0]
 *     (the storage offset is applied by the core);
 *   - a stride may be 0 (broadcast) or any positive value (non-contiguous views);
 *   - inputs of elementwise kernels are already broadcast by the core to `out`'s shape;
 *   - unless stated otherwise every operand has the same dtype as `out` (the core casts
 *     first through `copy`);
 *   - a kernel returns EMBER_OK or an error code and writes a message into ctx->error;
 *     it never aborts the process, so data-dependent errors become Python exceptions;
 *   - an operand whose `flags` hold EMBER_VIEW_HOST_SCALAR is one element in HOST memory
 *     broadcast to the view's shape (every stride 0): a Python number next to a tensor.
 *     A device whose memory the host cannot read takes its value from `data` on the host
 *     (e.g. as a kernel argument); a host device may read it like any view;
 *   - `ctx->device` is the index of the device the op runs on (0 on a device type with one
 *     device); a kernel may complete asynchronously, in the order the core calls kernels on
 *     one device, except `to_host`, which returns once the bytes are on the host.  An error
 *     found in the data (an index out of range, an unsorted search) is returned by the
 *     kernel itself on a host device; an asynchronous device may instead return it from
 *     the next synchronising call on that device (`to_host`, or its runtime's synchronize),
 *     with the same message; the kernel then skips the bad element, never reading or
 *     writing out of bounds.  The core raises such a deferred EMBER_ERR_INDEX as an
 *     exception that is both IndexError and RuntimeError (ember.backends.
 *     IndexOutOfBoundsError, which a runtime's synchronize raises too): the op's own type
 *     is no longer known, and PyTorch's CUDA reports device asserts as RuntimeError.
 *
 *   - `from_host` has read all of `host_src` when it returns (the core may free it).
 *
 * What a plugin must implement: the memory core, `alloc`, `free`, `copy` (at least between
 * views of one dtype), `fill`, `to_host` and `from_host`.  Every other entry may be NULL,
 * and any entry may return EMBER_ERR_NOT_IMPLEMENTED for an op code or dtype it does not
 * handle; an op code it does not know is always EMBER_ERR_NOT_IMPLEMENTED.  The core then
 * runs the call through the host fallback: the primitives (copy, fill, unary ... search)
 * on host copies of the operands with the CPU plugin's kernel, counted and warned about
 * once per op; the fused entries (softmax ... adam) as the core's composite on the device.
 * A plugin may declare what it leaves out (the `ember_unimplemented` hook).
 *
 * ABI versions: `abi_version` (major) must equal the core's; `abi_minor` and `size` say
 * which optional entries a table has (entries are only ever appended, and the core reads
 * none past `size`: it treats them as NULL), so a plugin built for an older minor version
 * keeps loading.  A table of another major version, a newer minor one, or a size that
 * does not fit its minor version is refused, naming the plugin and both versions.
 */
#ifndef EMBER_ABI_H
#define EMBER_ABI_H

#include <stdint.h>

#define EMBER_ABI_VERSION 6      /* 2: `where`; 3: arg-reductions, `scan`;
                                    4: index family, tan, optional fused softmax;
                                    5: optional fused kernels for norms and losses, conv
                                       and pooling; erfinv, lgamma, digamma;
                                    6: devices whose memory the host cannot read: host
                                       scalar operands (view flags), the device index in
                                       ember_ctx, alloc/free per device, asynchronous
                                       kernels; a minor version and the table's size;
                                    6.1: optional `sort`;
                                    6.2: optional `rnn` (whole LSTM layers); the
                                       uint16/uint32/uint64 dtype codes (copies, fills
                                       and casts; the core gates other ops);
                                    6.3: optional `sgd` (the fused SGD step, also
                                       add_(other, alpha=));
                                    6.4: optional `activation` (pointwise activations
                                       and their gradients, one pass each);
                                    6.5: optional `ternary` (lerp, addcmul, addcdiv in
                                       one pass) */
#define EMBER_ABI_MINOR 5
#define EMBER_MAX_DIM 16
#define EMBER_KERNEL_TABLE_CAPSULE "ember.kernel_table"
#define EMBER_ERROR_LEN 256

/* dtype codes: PyTorch's ScalarType numbering */
enum {
    EMBER_UINT8 = 0, EMBER_INT8 = 1, EMBER_INT16 = 2, EMBER_INT32 = 3, EMBER_INT64 = 4,
    EMBER_FLOAT16 = 5, EMBER_FLOAT32 = 6, EMBER_FLOAT64 = 7, EMBER_BOOL = 11,
    EMBER_BFLOAT16 = 15,
    /* ABI 6.2: PyTorch's "barebones" unsigned types (creation, copies and casts, fills,
     * mul, true division, ==/!=, bitwise and/or/xor, sums and sorts; the core refuses the
     * rest as PyTorch does); a kernel without them answers EMBER_ERR_NOT_IMPLEMENTED */
    EMBER_UINT16 = 27, EMBER_UINT32 = 28, EMBER_UINT64 = 29
};

/* return codes; the core raises the named Python exception with ctx->error */
enum {
    EMBER_OK = 0,
    EMBER_ERR_RUNTIME = 1,         /* RuntimeError */
    EMBER_ERR_INDEX = 2,           /* IndexError */
    EMBER_ERR_VALUE = 3,           /* ValueError */
    EMBER_ERR_TYPE = 4,            /* TypeError */
    EMBER_ERR_NOT_IMPLEMENTED = 5, /* NotImplementedError: e.g. dtype not supported */
    EMBER_ERR_MEMORY = 6           /* MemoryError */
};

/* ---- op codes of the uniform families: generated from core/optable.py by
 * `python -m ember.core.optable_codegen`; edit the table, not these lines ---- */

/* elementwise unary op codes: out = f(a) */
enum {
    EMBER_UNARY_NEG = 0, EMBER_UNARY_EXP = 1, EMBER_UNARY_RELU = 2, EMBER_UNARY_ABS = 3,
    EMBER_UNARY_LOG = 4, EMBER_UNARY_SQRT = 5, EMBER_UNARY_SIN = 6, EMBER_UNARY_COS = 7,
    EMBER_UNARY_TANH = 8, EMBER_UNARY_SIGMOID = 9, EMBER_UNARY_RECIPROCAL = 10,
    EMBER_UNARY_SQUARE = 11,
    /* rounding keeps the dtype (identity on integers); ROUND is half-to-even */
    EMBER_UNARY_FLOOR = 12, EMBER_UNARY_CEIL = 13, EMBER_UNARY_TRUNC = 14, EMBER_UNARY_ROUND = 15,
    /* floating dtypes only, like EXP */
    EMBER_UNARY_EXP2 = 16, EMBER_UNARY_EXPM1 = 17, EMBER_UNARY_LOG2 = 18, EMBER_UNARY_LOG10 = 19,
    EMBER_UNARY_LOG1P = 20, EMBER_UNARY_ERF = 21, EMBER_UNARY_ERFC = 22, EMBER_UNARY_ASIN = 23,
    EMBER_UNARY_ACOS = 24, EMBER_UNARY_ATAN = 25, EMBER_UNARY_SINH = 26, EMBER_UNARY_COSH = 27,
    EMBER_UNARY_RSQRT = 28,
    /* integers and bool: ~x (logical not on bool) */
    EMBER_UNARY_BITWISE_NOT = 29,
    /* floating dtypes only */
    EMBER_UNARY_TAN = 30,
    /* special functions, floating dtypes only: ERFINV is NaN outside [-1, 1] and +-inf at +-1;
     * LGAMMA is log|gamma(x)| (+inf at 0 and the negative integers); DIGAMMA is -inf at +0, +inf
     * at -0, NaN at the negative integers */
    EMBER_UNARY_ERFINV = 31, EMBER_UNARY_LGAMMA = 32, EMBER_UNARY_DIGAMMA = 33,
    /* floating dtypes only: the exact GELU, x * Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2
     * (ABI 6: one pass instead of a composite's five) */
    EMBER_UNARY_GELU = 34,
    /* integers and floating: (a > 0) - (a < 0) in a's dtype, so NaN and -0.0 give 0, as PyTorch
     * (a plugin built before this code answers NOT_IMPLEMENTED: the host fallback runs it) */
    EMBER_UNARY_SIGN = 35, EMBER_UNARY_COUNT = 36
};

/* elementwise binary op codes: out = f(a, b) */
enum {
    EMBER_BINARY_ADD = 0, EMBER_BINARY_SUB = 1, EMBER_BINARY_MUL = 2,
    /* true division; integer dtypes never reach it */
    EMBER_BINARY_DIV = 3, EMBER_BINARY_MAXIMUM = 4, EMBER_BINARY_MINIMUM = 5, EMBER_BINARY_POW = 6,
    /* predicates: `out` is bool while a and b share any one dtype (NaN compares false, except
     * NE); logical ops read "nonzero" as true */
    EMBER_BINARY_EQ = 7, EMBER_BINARY_NE = 8, EMBER_BINARY_LT = 9, EMBER_BINARY_LE = 10,
    EMBER_BINARY_GT = 11, EMBER_BINARY_GE = 12, EMBER_BINARY_LOGICAL_AND = 13,
    EMBER_BINARY_LOGICAL_OR = 14, EMBER_BINARY_LOGICAL_XOR = 15,
    /* same dtype in and out again: ATAN2 on floats; FMOD has the dividend's sign (C fmod),
     * REMAINDER the divisor's (Python %); FLOOR_DIVIDE rounds toward -inf; FMAX/FMIN ignore a
     * NaN when the other operand is a number; integer division by zero in FMOD, REMAINDER or
     * FLOOR_DIVIDE returns EMBER_ERR_RUNTIME ("ZeroDivisionError") */
    EMBER_BINARY_ATAN2 = 16, EMBER_BINARY_FMOD = 17, EMBER_BINARY_REMAINDER = 18,
    EMBER_BINARY_FLOOR_DIVIDE = 19, EMBER_BINARY_FMAX = 20, EMBER_BINARY_FMIN = 21,
    /* integers and bool only; shifts by a negative or too-large count follow PyTorch (0 for left
     * shifts, the sign fill for right shifts) */
    EMBER_BINARY_BITWISE_AND = 22, EMBER_BINARY_BITWISE_OR = 23, EMBER_BINARY_BITWISE_XOR = 24,
    EMBER_BINARY_SHIFT_LEFT = 25, EMBER_BINARY_SHIFT_RIGHT = 26,
    /* floating dtypes only: GELU's gradient, out = a * (Phi(b) + b * phi(b)) with a the incoming
     * gradient, b the GELU's input, phi the standard normal density (ABI 6) */
    EMBER_BINARY_GELU_BACKWARD = 27, EMBER_BINARY_COUNT = 28
};

/* reductions over the trailing `nreduce` dims of `a`; out has a->ndim - nreduce dims */
enum {
    EMBER_REDUCE_SUM = 0,
    /* floating dtypes only; empty reduction gives NaN */
    EMBER_REDUCE_MEAN = 1, EMBER_REDUCE_PROD = 2, EMBER_REDUCE_MAX = 3, EMBER_REDUCE_MIN = 4,
    /* `out` is int64: the position of the first maximum/minimum within the reduced dims (row-
     * major over them); a NaN counts as the extreme (PyTorch); empty: the core errors */
    EMBER_REDUCE_ARGMAX = 5, EMBER_REDUCE_ARGMIN = 6, EMBER_REDUCE_COUNT = 7
};

/* scans along the LAST dim of `a` (the core moves the scanned dim there); out has a's shape and
 * dtype; CUMMAX/CUMMIN also write the position of the running extreme into `indices` (int64, a's
 * shape; NULL for the other ops); a NaN becomes and stays the extreme */
enum {
    EMBER_SCAN_CUMSUM = 0, EMBER_SCAN_CUMPROD = 1, EMBER_SCAN_CUMMAX = 2, EMBER_SCAN_CUMMIN = 3,
    EMBER_SCAN_COUNT = 4
};
/* ---- end of the generated op codes ---- */

/* the softmax family along the LAST dim (the core moves `dim` there); floating dtypes;
 * every operand has out's shape and dtype; rows are independent (each is computed in one
 * pass order, so results do not depend on the thread count).  With m = max(a), over a row:
 *   SOFTMAX:              out = exp(a - m) / sum(exp(a - m))             (b is NULL)
 *   LOG_SOFTMAX:          out = a - m - log(sum(exp(a - m)))             (b is NULL)
 *   SOFTMAX_BACKWARD:     a = grad_output, b = output: out = b * (a - sum(a * b))
 *   LOG_SOFTMAX_BACKWARD: a = grad_output, b = output: out = a - exp(b) * sum(a)
 * A NaN in a row makes the row NaN (as does an +inf, or a row of only -inf, in the forward
 * ops); out may alias a (in place).  float16/bfloat16 compute in float32. */
enum {
    EMBER_SOFTMAX = 0, EMBER_LOG_SOFTMAX = 1, EMBER_SOFTMAX_BACKWARD = 2,
    EMBER_LOG_SOFTMAX_BACKWARD = 3,
    EMBER_SOFTMAX_COUNT = 4
};

/* random fills, counter-based: the same (seed, offset) gives the same numbers for any
 * thread count; element i of the output (in row-major order of `out`) uses counter
 * offset + i.  The core advances its generator's offset by out's numel after each call. */
enum {
    EMBER_RANDOM_UNIFORM = 0,      /* U[p0, p1) */
    EMBER_RANDOM_NORMAL = 1,       /* N(mean=p0, std=p1) */
    EMBER_RANDOM_COUNT = 2
};

/* the index family: gather/scatter along one dim (`index`) and binary search (`search`).
 *
 * `index` is the one primitive behind gather, scatter(_add/_reduce), index_select/add/copy/
 * fill, take, put_, index_put_ and advanced indexing: the core expresses each as a gather
 * or scatter over strided views whose `index` view may have stride 0 (index_select's 1-d
 * index is viewed at out's shape with stride 0 outside `dim`; take/put_ run on a flat view).
 * In every case the walk covers the shape of `index`; at a position p, q is p with
 * q[dim] = index[p]:
 *   GATHER          out[p] = a[q]             out: index's shape; a: any sizes
 *   SCATTER         out[q] = a[p]             out updated in place; a: at least index's
 *   SCATTER_ADD     out[q] += a[p]              sizes in every dim (only index's part is
 *   SCATTER_MUL     out[q] *= a[p]              read); out: at least index's sizes outside
 *   SCATTER_AMAX    out[q] = max(out[q], a[p])  `dim` (a NaN wins, as torch.maximum)
 *   SCATTER_AMIN    out[q] = min(out[q], a[p])
 * out and a share one dtype (any of the ten; bool adds as `or`, multiplies as `and`);
 * index is int64, same ndim as out and a.  Scatter-mean and include_self=False are composed
 * by the core (a sum, a count through SCATTER_ADD of ones, identity pre-fills).
 * Duplicates in `index`: contributions to one out element are applied in the row-major
 * order of p, so SCATTER keeps the last and SCATTER_ADD gives the same bits for any thread
 * count (a kernel may parallelise only over positions that differ outside `dim`).
 * OR EMBER_INDEX_WRAP into `op` to read an index i < 0 as i + size (advanced indexing,
 * take, put_, index_fill); without it negatives are out of range (gather, scatter,
 * index_select, index_add, index_copy: as PyTorch).  An index outside the range returns
 * EMBER_ERR_INDEX with "index 5 is out of bounds for dimension 0 with size 3" (the index
 * as given, the size of a's (GATHER) or out's (SCATTER*) dim); elements before the bad
 * one may already be written. */
enum {
    EMBER_INDEX_GATHER = 0, EMBER_INDEX_SCATTER = 1, EMBER_INDEX_SCATTER_ADD = 2,
    EMBER_INDEX_SCATTER_MUL = 3, EMBER_INDEX_SCATTER_AMAX = 4, EMBER_INDEX_SCATTER_AMIN = 5,
    EMBER_INDEX_COUNT = 6,
    EMBER_INDEX_WRAP = 0x100       /* flag: negative indices count from the end */
};

/* binary search along the LAST dim of `sorted` ([..., M]; the leading dims may be stride 0)
 * for each element of `values` ([..., N], same leading sizes as sorted):
 *   SEARCH_LEFT   out = the first i with sorted[i] >= v (searchsorted, right=False)
 *   SEARCH_RIGHT  out = the first i with sorted[i] > v  (right=True)
 *   SEARCH_MULTINOMIAL: `sorted` holds a row of non-negative weights w (not sorted) and
 *                 values uniforms u in [0, 1): out = the first i with
 *                 w[0] + ... + w[i] > u * (w[0] + ... + w[M-1]), skipping zero weights
 *                 (sampling with replacement).  Every row is checked, even when N is 0:
 *                 a weight < 0, inf or NaN returns EMBER_ERR_RUNTIME "probability tensor
 *                 contains either `inf`, `nan` or element < 0"; a zero sum returns
 *                 EMBER_ERR_RUNTIME "invalid multinomial distribution (sum of probabilities
 *                 <= 0)".
 * sorted and values share one dtype (any but bool; NaN sorts last); out is int64 or int32
 * with values' shape.  LEFT/RIGHT assume each row is sorted ascending (the core sorts
 * through `sorter` first). */
enum {
    EMBER_SEARCH_LEFT = 0, EMBER_SEARCH_RIGHT = 1, EMBER_SEARCH_MULTINOMIAL = 2,
    EMBER_SEARCH_COUNT = 3
};

/* ---- ABI 5, norms and losses: op codes of the optional `norm` and `nll` entries ---- */

/* normalisation layers (`norm` entry).  `v` is an array of views whose layout each op
 * states (outputs first; a NULL slot means "absent": no affine weight/bias, or a gradient
 * not wanted).  Every view is C-contiguous (the core makes it so) and float32 or float64
 * (the core computes float16/bfloat16 in float32); all share one dtype.  Variances are
 * biased (divided by the count); rstd = 1 / sqrt(var + eps).  Results must not depend on
 * the thread count (fixed reduction order).
 *   LAYER_NORM           v = {y [M,N], mean [M], rstd [M], x [M,N], w [N], b [N]}
 *                        per row of x: y = (x - mean) * rstd * w + b
 *   LAYER_NORM_BACKWARD  v = {gx [M,N], gw [N], gb [N], g [M,N], x [M,N], mean [M],
 *                        rstd [M], w [N]}: with h = g * w and xhat = (x - mean) * rstd,
 *                        gx = rstd * (h - mean_row(h) - xhat * mean_row(h * xhat)),
 *                        gw = sum over rows of g * xhat, gb = sum over rows of g
 *   BATCH_NORM_STATS     v = {mean [C], rstd [C], x [B,C,L]}: statistics per channel
 *   BATCH_NORM_APPLY     v = {y [B,C,L], x [B,C,L], mean [C], rstd [C], w [C], b [C]}
 *   BATCH_NORM_BACKWARD  v = {gx [B,C,L], gw [C], gb [C], g [B,C,L], x [B,C,L], mean [C],
 *                        rstd [C], w [C]}: per channel, n = B * L, h = g * w,
 *                        gx = rstd * (h - mean(h) - xhat * mean(h * xhat)) (batch
 *                        statistics: training), gw = sum(g * xhat), gb = sum(g)
 *   BATCH_NORM_BACKWARD_EVAL  the same layout; gx = g * w * rstd (fixed statistics)
 * `eps` is read by LAYER_NORM and BATCH_NORM_STATS only. */
enum {
    EMBER_LAYER_NORM = 0, EMBER_LAYER_NORM_BACKWARD = 1, EMBER_BATCH_NORM_STATS = 2,
    EMBER_BATCH_NORM_APPLY = 3, EMBER_BATCH_NORM_BACKWARD = 4,
    EMBER_BATCH_NORM_BACKWARD_EVAL = 5,
    EMBER_NORM_COUNT = 6
};

/* negative log-likelihood over class-index targets (`nll` entry).  Rows r of a [R, C]
 * (classes along the last dim), target [R] int64, w [C] class weights (NULL: all 1); a row
 * whose target equals `ignore_index` contributes 0 and weighs 0; any other target outside
 * [0, C) returns EMBER_ERR_INDEX "Target 7 is out of bounds." before anything is written.
 * Views are C-contiguous, a/w/outputs share one dtype (float32 or float64); rows are
 * independent (results do not depend on the thread count).
 *   NLL                  v = {loss [R], wt [R], a [R,C], target, w}: a holds log-probs;
 *                        loss = -w[t] * a[t], wt = w[t]
 *   CROSS_ENTROPY        the same layout; a holds logits: log_softmax is fused in,
 *                        loss = -w[t] * (a[t] - logsumexp(a))
 *   NLL_BACKWARD         v = {gx [R,C], scale [R], NULL, target, w}:
 *                        gx = -scale * w[t] at class t, 0 elsewhere
 *   CROSS_ENTROPY_BACKWARD  v = {gx [R,C], scale [R], a [R,C] logits, target, w}:
 *                        gx = scale * w[t] * (softmax(a) - onehot(t)) */
enum {
    EMBER_NLL = 0, EMBER_CROSS_ENTROPY = 1, EMBER_NLL_BACKWARD = 2,
    EMBER_CROSS_ENTROPY_BACKWARD = 3,
    EMBER_NLL_COUNT = 4
};
/* ---- end of ABI 5 norms and losses op codes ---- */
/* --- conv and pooling (ABI 5; optional entries `conv` and `pool`) ---
 * Every operand is C-contiguous and float32 or float64 (the core makes them so: it casts
 * float16/bfloat16 to float32), N >= 1 and C >= 1; 1-d ops come as 2-d with H = 1.
 *
 * convolution over [N, C, H, W] with weight [Cout, Cin / groups, kH, kW]:
 *   CONV_FORWARD          out [N, Cout, Ho, Wo] = conv(a = input, b = weight) + c (bias
 *                         [Cout], or NULL)
 *   CONV_BACKWARD_INPUT   out = grad_input [N, Cin, H, W]; a = grad_output, b = weight
 *   CONV_BACKWARD_WEIGHT  out = grad_weight; a = grad_output, b = input; c: grad_bias
 *                         [Cout] to write as well, or NULL
 * Results must not depend on the thread count (the CPU plugin sums the batch in fixed
 * blocks combined in a fixed order). */
typedef struct {
    int64_t stride[2], padding[2], dilation[2];
    int64_t groups;
} ember_conv_params;

enum {
    EMBER_CONV_FORWARD = 0, EMBER_CONV_BACKWARD_INPUT = 1, EMBER_CONV_BACKWARD_WEIGHT = 2,
    EMBER_CONV_COUNT = 3
};

/* pooling over the planes of [N, C, H, W] (out's sizes give the output's):
 *   POOL_MAX                 out = max over each window of a (dilated, padded with -inf:
 *                            padding never wins); indices (int64, out's shape) = the flat
 *                            position h * W + w of the maximum in its input plane (the
 *                            first in row-major order); a NaN wins (the last NaN, as
 *                            PyTorch's kernels)
 *   POOL_MAX_BACKWARD        out = grad_input (a's plane size from out): zero, then
 *                            out[indices] += a (= grad_output), in row-major order of a
 *   POOL_AVG                 out = window sum / divisor: divisor_override when > 0, else
 *                            the window size clipped to the padded input
 *                            (count_include_pad) or to the input
 *   POOL_AVG_BACKWARD        out = grad_input; a = grad_output
 *   POOL_ADAPTIVE_AVG        windows [floor(i H / Ho), ceil((i + 1) H / Ho)) (params unused)
 *   POOL_ADAPTIVE_AVG_BACKWARD  out = grad_input; a = grad_output
 *   POOL_ADAPTIVE_MAX        as POOL_MAX over the adaptive windows (its backward is
 *                            POOL_MAX_BACKWARD)
 * `indices` is NULL except for POOL_MAX, POOL_MAX_BACKWARD and POOL_ADAPTIVE_MAX. */
typedef struct {
    int64_t kernel[2], stride[2], padding[2], dilation[2];
    int32_t count_include_pad;
    int32_t reserved;
    int64_t divisor_override;          /* 0: none */
} ember_pool_params;

enum {
    EMBER_POOL_MAX = 0, EMBER_POOL_MAX_BACKWARD = 1, EMBER_POOL_AVG = 2,
    EMBER_POOL_AVG_BACKWARD = 3, EMBER_POOL_ADAPTIVE_AVG = 4,
    EMBER_POOL_ADAPTIVE_AVG_BACKWARD = 5, EMBER_POOL_ADAPTIVE_MAX = 6,
    EMBER_POOL_COUNT = 7
};
/* --- end of conv and pooling --- */

/* --- ABI 6: the fused Adam/AdamW step (optional entry `adam`; NULL: per-tensor ops) ---
 * One call updates n parameters: v holds n groups of 5 views {param, grad, exp_avg,
 * exp_avg_sq, max_exp_avg_sq (NULL unless amsgrad)}; the views of a group share one shape,
 * every view is C-contiguous and every one has one floating dtype.  Scalars are rounded to
 * that dtype first; per element, in torch.optim.Adam's single-tensor order:
 *   g = maximize ? -grad : grad
 *   weight_decay != 0: decoupled ? p = p * (1 - lr * weight_decay) : g = g + weight_decay * p
 *   exp_avg = lerp(exp_avg, g, 1 - beta1)      (torch.lerp's two branches)
 *   exp_avg_sq = exp_avg_sq * beta2 + ((1 - beta2) * g) * g
 *   amsgrad: max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq), used below instead
 *   p = p + (-step_size * exp_avg) / (sqrt(exp_avg_sq) / bias_correction2_sqrt + eps)
 * with step_size = lr / (1 - beta1^step) and bias_correction2_sqrt = sqrt(1 - beta2^step).
 * A kernel may return EMBER_ERR_NOT_IMPLEMENTED for a dtype: the core then runs the ops. */
typedef struct {
    double lr, beta1, beta2, eps, weight_decay;
    double step_size, bias_correction2_sqrt;
    int32_t decoupled, amsgrad, maximize, reserved;
} ember_adam_params;

/* --- ABI 6.3: the fused SGD step (optional entry `sgd`; NULL: per-tensor ops) ---
 * One call updates n parameters: v holds n groups of 3 views {param, grad, momentum_buffer
 * (NULL when momentum is 0)}; the views of a group share one shape, every view is
 * C-contiguous and every one has one floating dtype.  Scalars are rounded to that dtype
 * first; per element, in torch.optim.SGD's single-tensor order, one rounding per operation:
 *   g = maximize ? -grad : grad
 *   weight_decay != 0: g = g + p * weight_decay
 *   momentum != 0: buf = first ? g : buf * momentum + g * (1 - dampening)
 *                  g = nesterov ? g + buf * momentum : buf
 *   p = p + g * (-lr)
 * (`first`: the buffers are new, as torch.optim.SGD clones the first gradient into them.)
 * The core also runs in-place add_/sub_(other, alpha=a) of same-shaped C-contiguous
 * operands of one floating dtype through it: lr = -a (a for sub_), nothing else set.
 * A kernel may return EMBER_ERR_NOT_IMPLEMENTED for a dtype: the core then runs the ops. */
typedef struct {
    double lr, momentum, dampening, weight_decay;
    int32_t nesterov, maximize, first, reserved;
} ember_sgd_params;

/* --- ABI 6.4: pointwise activations (optional entry `activation`; NULL: the core's
 * composites of primitives) ---
 * b NULL: the forward, out = f(a).  Otherwise the backward, out = b * f'(a): b is the
 * gradient of the forward's output, a the forward's input.  p[0..2] are the op's
 * parameters (those it does not use are 0).  out, a and b are C-contiguous views of one
 * shape and one floating dtype, and out may be a itself (the in-place forms: each element
 * is read before it is written); a kernel may answer EMBER_ERR_NOT_IMPLEMENTED for an op or
 * a dtype (the core then runs its composite).  Comparisons with NaN are false, so a NaN
 * input gives NaN forward (the selected branch computes with it) and the formulas below
 * decide its gradient.  Results must not depend on the thread count.
 * LEAKY_RELU   p0 negative_slope: a > 0 ? a : a * p0;  f' = a > 0 ? 1 : p0
 * HARDTANH     p0 min_val, p1 max_val: a <= p0 ? p0 : (a >= p1 ? p1 : a);
 *              f' = (a <= p0 || a >= p1) ? 0 : 1
 * CLAMP        p0 min, p1 max (-inf, inf: no bound): min(max(a, p0), p1), NaN kept;
 *              f' = (a >= p0 && a <= p1) ? 1 : 0
 * HARDSIGMOID  min(max(a + 3, 0), 6) / 6;  f' = (a > -3 && a < 3) ? 1/6 : 0 (1/6 rounded
 *              to float, as PyTorch's)
 * HARDSWISH    a * min(max(a + 3, 0), 6) / 6;  f' = a <= -3 ? 0 : (a < 3 ? a / 3 + 1/2 : 1)
 * SILU         a / (1 + exp(-a));  f' = s (1 + a (1 - s)), s = sigmoid(a)
 * ELU          p0 alpha, p1 scale, p2 input_scale: a <= 0 ? expm1(a p2) p0 p1 : a p1;
 *              f' = a <= 0 ? p0 p1 p2 exp(a p2) : p1
 * SOFTPLUS     p0 beta, p1 threshold: a p0 > p1 ? a : log1p(exp(a p0)) / p0;
 *              f' = a p0 > p1 ? 1 : z / (z + 1), z = exp(a p0)
 * LOG_SIGMOID  min(a, 0) - log1p(exp(-|a|));  f' = a < 0 ? 1 - z / (1 + z) : z / (1 + z),
 *              z = exp(-|a|)
 * HARDSHRINK   p0 lambd: (a >= -p0 && a <= p0) ? 0 : a;  f' = (a >= -p0 && a <= p0) ? 0 : 1
 * SOFTSHRINK   p0 lambd: a > p0 ? a - p0 : (a < -p0 ? a + p0 : a * 0);  f' as HARDSHRINK
 * MISH         a tanh(log1p(exp(a)));  f' = t + a s (1 - t^2), t = tanh(log1p(exp(a))),
 *              s = sigmoid(a) */
enum {
    EMBER_ACTIVATION_LEAKY_RELU = 0, EMBER_ACTIVATION_HARDTANH = 1,
    EMBER_ACTIVATION_CLAMP = 2, EMBER_ACTIVATION_HARDSIGMOID = 3,
    EMBER_ACTIVATION_HARDSWISH = 4, EMBER_ACTIVATION_SILU = 5, EMBER_ACTIVATION_ELU = 6,
    EMBER_ACTIVATION_SOFTPLUS = 7, EMBER_ACTIVATION_LOG_SIGMOID = 8,
    EMBER_ACTIVATION_HARDSHRINK = 9, EMBER_ACTIVATION_SOFTSHRINK = 10,
    EMBER_ACTIVATION_MISH = 11, EMBER_ACTIVATION_COUNT = 12
};

/* --- ABI 6.5: the ternary pointwise ops (optional entry `ternary`; NULL: the core's
 * composites of primitives) ---
 * out = f(a, b, w) elementwise, w = c[i], or the number p when c is NULL.  a, b and c have
 * out's dtype, a floating one, and are broadcast to out's shape (strides may be 0); out
 * may be a itself (the in-place forms), never a partial overlap of an operand.  float16,
 * bfloat16 and float32 compute in float32, float64 in double, and round once at the store;
 * p is first rounded to the compute type.  fma(x, y, z) is x * y + z rounded once (what
 * PyTorch's CPU kernels give, bit for bit):
 * LERP     fma(|w| < 0.5 ? w : w - 1, b - a, |w| < 0.5 ? a : b)   (w - 1 rounded)
 * ADDCMUL  fma(p * b, c, a)              c required (p * b rounded)
 * ADDCDIV  a + (p * b) / c               c required, true division
 * A kernel may answer EMBER_ERR_NOT_IMPLEMENTED for an op or a dtype (the core then runs
 * its composite).  Results must not depend on the thread count. */
enum {
    EMBER_TERNARY_LERP = 0, EMBER_TERNARY_ADDCMUL = 1, EMBER_TERNARY_ADDCDIV = 2,
    EMBER_TERNARY_COUNT = 3
};

/* --- ABI 6.2: recurrent layers (optional entry `rnn`; NULL: the core's per-step ops) ---
 * One call runs one LSTM layer in one direction over all T steps: the time loop lives in
 * the kernel (one GEMM per step with the hidden state, the gate arithmetic fused), so a
 * layer costs two calls (forward, backward) instead of ~30 ops per step.  Every view is
 * C-contiguous; all share one floating dtype (a kernel may answer EMBER_ERR_NOT_IMPLEMENTED
 * for a dtype: the core then runs its ops).  Gates are in PyTorch's order i, f, g, o;
 * `gi` [T,B,4H] holds x W_ih^T + b_ih + b_hh (the part not depending on h).  The steps run
 * t = 0 .. T-1, or T-1 .. 0 when `reverse` is nonzero (the backward direction of a
 * bidirectional layer); "the previous step" below is in that order, and h0/c0 feed the first.
 *   RNN_LSTM          v = {y [T,B,H], hn [B,H], cn [B,H], gates [T,B,4H], cs [T,B,H],
 *                     gi [T,B,4H], h0 [B,H], c0 [B,H], w_hh [4H,H]}:
 *                     z = gi[t] + h_prev w_hh^T; i, f, o = sigmoid(z_i, z_f, z_o),
 *                     g = tanh(z_g); c = f c_prev + i g; h = o tanh(c); y[t] = h, cs[t] = c,
 *                     gates[t] = (i, f, g, o) after their activations; hn, cn: the last
 *                     step's h and c.  gates and cs may be NULL (nothing will differentiate).
 *   RNN_LSTM_BACKWARD v = {dgi [T,B,4H], dh0 [B,H], dc0 [B,H], dw_hh [4H,H], dy [T,B,H],
 *                     dhn [B,H], dcn [B,H], gates, cs, y, h0, c0, w_hh} (the forward's
 *                     saved gates, cs and y; dy, dhn, dcn NULL: zeros): over the steps in
 *                     reverse, dh = dy[t] + (the later step's dh_prev, or dhn),
 *                     dc = dh o (1 - tanh(c)^2) + (the later step's dc_prev, or dcn);
 *                     dgi[t] = dz = (dc g i(1-i), dc c_prev f(1-f), dc i (1-g^2),
 *                     dh tanh(c) o(1-o)); dh_prev = dz w_hh, dc_prev = dc f;
 *                     dw_hh = sum over t of dz[t]^T h_prev; dh0, dc0: the first step's
 *                     dh_prev and dc_prev.
 * Results must not depend on the thread count. */
enum {
    EMBER_RNN_LSTM = 0, EMBER_RNN_LSTM_BACKWARD = 1,
    EMBER_RNN_COUNT = 2
};

/* ember_view.flags */
#define EMBER_VIEW_HOST_SCALAR 1      /* `data` is one element in host memory, strides 0 */

typedef struct {
    char *data;                       /* address of element [0, ..., 0] */
    int64_t sizes[EMBER_MAX_DIM];
    int64_t strides[EMBER_MAX_DIM];   /* in elements */
    int32_t ndim;
    int32_t dtype;                    /* an EMBER_<dtype> code */
    int32_t flags;                    /* EMBER_VIEW_* bits */
    int32_t reserved;
} ember_view;

/* ember_ctx.matmul_precision: ember.set_float32_matmul_precision (and PyTorch's
 * backends.cuda.matmul.allow_tf32) as a float32 matmul may read it */
enum {
    EMBER_MATMUL_HIGHEST = 0,         /* full float32 */
    EMBER_MATMUL_HIGH = 1,            /* TF32 (or a like format) allowed */
    EMBER_MATMUL_MEDIUM = 2           /* bfloat16 allowed */
};

typedef struct {
    int32_t deterministic;            /* ember.use_deterministic_algorithms state */
    int32_t device;                   /* index of the device the op runs on */
    int32_t matmul_precision;         /* an EMBER_MATMUL_* code */
    int32_t reserved;
    char error[EMBER_ERROR_LEN];      /* message when a kernel returns an error code */
} ember_ctx;

typedef struct {
    int32_t abi_version;              /* EMBER_ABI_VERSION the plugin was built against */
    int32_t abi_minor;                /* EMBER_ABI_MINOR the plugin was built against */
    int64_t size;                     /* sizeof(ember_kernel_table) the plugin was built with */

    /* memory: allocations on device ctx->device; `alloc` returns NULL on failure with a
     * message in ctx->error (the core raises ember.OutOfMemoryError with it); `free` may
     * be called from any thread, with or without the GIL */
    void *(*alloc)(ember_ctx *ctx, int64_t nbytes);
    void (*free)(int32_t device, void *ptr);
    /* out = a, elementwise, any dtypes on both sides (a cast), shapes equal */
    int (*copy)(ember_ctx *ctx, const ember_view *out, const ember_view *a);
    /* out[...] = *value, where `value` points at one element of out's dtype (host memory) */
    int (*fill)(ember_ctx *ctx, const ember_view *out, const void *value);
    /* copies between host memory and this device (contiguous, nbytes) */
    int (*to_host)(ember_ctx *ctx, void *host_dst, const void *device_src, int64_t nbytes);
    int (*from_host)(ember_ctx *ctx, void *device_dst, const void *host_src, int64_t nbytes);

    /* elementwise */
    int (*unary)(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a);
    int (*binary)(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                  const ember_view *b);
    /* reductions: out's dims are a's leading dims; a's trailing `nreduce` dims are reduced */
    int (*reduce)(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                  int32_t nreduce);
    /* batched matmul: out [B, M, N] = a [B, M, K] @ b [B, K, N]; 3-d views, any strides
     * (batch strides may be 0); floating dtypes */
    int (*matmul)(ember_ctx *ctx, const ember_view *out, const ember_view *a,
                  const ember_view *b);
    /* random fills, see EMBER_RANDOM_* */
    int (*random)(ember_ctx *ctx, int32_t op, const ember_view *out, uint64_t seed,
                  uint64_t offset, double p0, double p1);
    /* ternary select: out = cond ? a : b elementwise; cond is bool, a and b have out's
     * dtype (any of the ten); all three are broadcast to out's shape */
    int (*where)(ember_ctx *ctx, const ember_view *out, const ember_view *cond,
                 const ember_view *a, const ember_view *b);
    /* scans, see EMBER_SCAN_* */
    int (*scan)(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *indices,
                const ember_view *a);
    /* gather/scatter along `dim` (0 <= dim < index->ndim), see EMBER_INDEX_*; `out` is
     * written in place (scatters read it too) */
    int (*index)(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                 const ember_view *index, int32_t dim);
    /* binary search / multinomial sampling along the last dim, see EMBER_SEARCH_* */
    int (*search)(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *sorted,
                  const ember_view *values);

    /* optional fused kernels: NULL means "run the core's composite" */
    /* the softmax family, see EMBER_SOFTMAX_*; b is NULL for the forward ops */
    int (*softmax)(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                   const ember_view *b);
    /* ---- ABI 5, norms and losses (optional; NULL: the core's composites) ---- */
    /* normalisation layers, see EMBER_LAYER_NORM...; v's layout is the op's */
    int (*norm)(ember_ctx *ctx, int32_t op, const ember_view *const *v, double eps);
    /* nll / fused cross-entropy over class-index targets, see EMBER_NLL... */
    int (*nll)(ember_ctx *ctx, int32_t op, const ember_view *const *v, int64_t ignore_index);
    /* ---- end of ABI 5 norms and losses ---- */
    /* --- conv and pooling (ABI 5): see EMBER_CONV_* and EMBER_POOL_* --- */
    int (*conv)(ember_ctx *ctx, int32_t op, const ember_conv_params *p,
                const ember_view *out, const ember_view *a, const ember_view *b,
                const ember_view *c);
    int (*pool)(ember_ctx *ctx, int32_t op, const ember_pool_params *p,
                const ember_view *out, const ember_view *indices, const ember_view *a);
    /* --- end of conv and pooling --- */
    /* the fused optimizer step (ABI 6, optional), see ember_adam_params */
    int (*adam)(ember_ctx *ctx, const ember_adam_params *p, const ember_view *const *v,
                int64_t n);

    /* ---- ABI 6.1 (optional; NULL, or a table built for 6.0: the core sorts on the host) */
    /* sort every row of `a` along its LAST dim (the core moves the sorted dim there):
     * `values` (a's shape and dtype) gets the row's elements in order, `indices` (int64,
     * a's shape) their positions in the row.  Ascending, or descending when `descending`
     * is nonzero; NaN orders above every number (last ascending, first descending); equal
     * elements (NaNs among them) keep their order in the row, in both directions.  Any
     * dtype; views may be strided; outputs never alias a. */
    int (*sort)(ember_ctx *ctx, const ember_view *values, const ember_view *indices,
                const ember_view *a, int32_t descending);

    /* ---- ABI 6.2 (optional; NULL, or a table built for 6.0/6.1: the core's per-step ops) */
    /* one LSTM layer in one direction over every step, see EMBER_RNN_*; v's layout is the
     * op's */
    int (*rnn)(ember_ctx *ctx, int32_t op, const ember_view *const *v, int32_t reverse);

    /* ---- ABI 6.3 (optional; NULL, or a table built for 6.0-6.2: per-tensor ops) */
    /* the fused SGD step (and add_ with alpha), see ember_sgd_params */
    int (*sgd)(ember_ctx *ctx, const ember_sgd_params *p, const ember_view *const *v,
               int64_t n);

    /* ---- ABI 6.4 (optional; NULL, or a table built for 6.0-6.3: the composites) */
    /* a pointwise activation or its gradient, see EMBER_ACTIVATION_*; b NULL: the forward */
    int (*activation)(ember_ctx *ctx, int32_t op, const double *p, const ember_view *out,
                      const ember_view *a, const ember_view *b);

    /* ---- ABI 6.5 (optional; NULL, or a table built for 6.0-6.4: the composites) */
    /* lerp, addcmul or addcdiv, see EMBER_TERNARY_*; c NULL: the number p */
    int (*ternary)(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                   const ember_view *b, const ember_view *c, double p);
} ember_kernel_table;

#endif
