# The one strided-iteration driver every elementwise-style kernel runs on, the
# converters between storage dtypes and compute types, errors, and the thread count.
from libc.stdint cimport int64_t
from ember_cpu._abi cimport (
    ember_ctx, ember_view, EMBER_MAX_DIM, EMBER_UINT8, EMBER_INT8, EMBER_INT16,
    EMBER_INT32, EMBER_INT64, EMBER_FLOAT16, EMBER_FLOAT32, EMBER_FLOAT64, EMBER_BOOL,
    EMBER_BFLOAT16, EMBER_UINT16, EMBER_UINT32, EMBER_UINT64,
)

cdef enum:
    # below this many elements (of work) a kernel runs serially: a parallel region costs
    # ~1.7 us even for 10 elements.  The least cutoff: parallel_cutoff() raises it where
    # waking the team costs more
    PARALLEL_CUTOFF = 32768
    MAX_OPERANDS = 4     # where: out, cond, a, b
    MAX_CHUNKS = 256
    # elements per staging buffer: a block of a row loaded into a compute type
    BUF_LEN = 512

# compute types: integers and bool compute in int64 (wrapping, then truncated on store,
# which gives the same bits as wrapping in the narrow type), float16/bfloat16/float32 in
# float32, float64 in double
cdef enum:
    CT_I64 = 0
    CT_F32 = 1
    CT_F64 = 2

ctypedef fused ct_t:
    int64_t
    float
    double

ctypedef union StageBuf:
    int64_t i64[BUF_LEN]
    float f32[BUF_LEN]
    double f64[BUF_LEN]

# operands over a common shape; dims outermost first, strides in elements
ctypedef struct StridedIter:
    int nargs
    int ndim
    int64_t numel
    int64_t sizes[EMBER_MAX_DIM]
    int64_t strides[MAX_OPERANDS][EMBER_MAX_DIM]
    char *data[MAX_OPERANDS]
    int itemsize[MAX_OPERANDS]

# called for each run of `n` elements along the innermost dim: ptrs[k] points at operand
# k's first element, strides[k] is its inner stride (elements), `index` is the row-major
# linear index of the run's first element; returns EMBER_OK or an error code
ctypedef int (*row_fn)(void *arg, char **ptrs, const int64_t *strides, int64_t n,
                       int64_t index) noexcept nogil


cdef inline int dtype_itemsize(int dtype) noexcept nogil:
    if dtype == EMBER_UINT8 or dtype == EMBER_INT8 or dtype == EMBER_BOOL:
        return 1
    if dtype == EMBER_INT16 or dtype == EMBER_FLOAT16 or dtype == EMBER_BFLOAT16 \
            or dtype == EMBER_UINT16:
        return 2
    if dtype == EMBER_INT32 or dtype == EMBER_FLOAT32 or dtype == EMBER_UINT32:
        return 4
    if dtype == EMBER_INT64 or dtype == EMBER_FLOAT64 or dtype == EMBER_UINT64:
        return 8
    return 0

cdef inline bint is_floating(int dtype) noexcept nogil:
    return (dtype == EMBER_FLOAT16 or dtype == EMBER_FLOAT32 or dtype == EMBER_FLOAT64
            or dtype == EMBER_BFLOAT16)

cdef inline int compute_type(int dtype) noexcept nogil:
    if dtype == EMBER_FLOAT64:
        return CT_F64
    if is_floating(dtype):
        return CT_F32
    return CT_I64

# the dtype is stored as its compute type: kernels may work on it in place
cdef inline bint is_native(int dtype) noexcept nogil:
    return dtype == EMBER_INT64 or dtype == EMBER_FLOAT32 or dtype == EMBER_FLOAT64


cdef const char *dtype_name(int dtype) noexcept nogil
# write "<op>: <msg>" into ctx.error and return `code`
cdef int set_error(ember_ctx *ctx, int code, const char *op, const char *msg) noexcept nogil
# "<op>: not implemented for '<dtype>'", EMBER_ERR_NOT_IMPLEMENTED
cdef int error_dtype(ember_ctx *ctx, const char *op, int dtype) noexcept nogil

# the OpenMP team size of every parallel region in the package (global, so that kernels
# called from any Python thread use it)
cdef int num_threads() noexcept nogil
cdef void set_num_threads(int n) noexcept nogil
# the work (elements) from which a kernel splits among the threads: PARALLEL_CUTOFF, or
# more where waking the team costs more (measured once per team size, see _strided.pyx)
cdef int64_t parallel_cutoff() noexcept nogil

# one work item (a row, a block of rows, a channel, a product) of a kernel
ctypedef void (*item_fn)(void *job, int64_t i) noexcept nogil
# fn(job, i) for i in [0, n): over the team when `work` (elements) passes the cutoff, items
# handed out a chunk at a time (a teammate woken late takes what is left; thread 0
# finishes last, so it does not sleep at the region's closing barrier)
cdef void run_items(item_fn fn, void *job, int64_t n, int64_t work) noexcept nogil
# fn(job, lo, hi) over [0, size) cut into a range per thread (ends on multiples of 64
# elements), through run_items; one call over all of it when `work` is under the cutoff
ctypedef void (*range_fn)(void *job, int64_t lo, int64_t hi) noexcept nogil
cdef void run_ranges(range_fn fn, void *job, int64_t size, int64_t work) noexcept nogil

# whether v is C-contiguous (extent-1 dims may have any stride)
cdef bint contiguous(const ember_view *v) noexcept nogil

# fill `it` from views[0..nargs) (views[0] is out); checks ndim/sizes/dtypes; drops size-1
# dims, optionally orders dims by out's strides, and merges dims contiguous in all operands
cdef int iter_init(StridedIter *it, ember_ctx *ctx, const char *op, int nargs,
                   const ember_view **views, bint reorder) noexcept nogil
# the same on a StridedIter whose raw dims were filled by hand (no reordering)
cdef void iter_coalesce(StridedIter *it) noexcept nogil
# `it` over every dim but the last of views[0..nargs) (equal shapes, ndim >= 1, checked):
# the rows of a kernel that works along the last dim; inner[k] = view k's stride there
cdef int rows_init(StridedIter *it, ember_ctx *ctx, const char *op, int nargs,
                   const ember_view **views, int64_t *inner) noexcept nogil
# run `fn` over linear indices [start, end) of `it`, with operand k based at bases[k]
cdef int run_range(const StridedIter *it, char **bases, row_fn fn, void *arg,
                   int64_t start, int64_t end) noexcept nogil
# run `fn` over all of `it`: in parallel chunks when `work` >= parallel_cutoff()
cdef int iter_run(const StridedIter *it, row_fn fn, void *arg, int64_t work) noexcept nogil

# dst[i] = src[i * stride] converted to the compute type (strided gather)
cdef void load(ct_t *dst, const char *src, int dtype, int64_t n,
               int64_t stride) noexcept nogil
# dst[i * stride] = src[i] converted (rounded, truncated) to `dtype` (strided scatter)
cdef void store(char *dst, int dtype, const ct_t *src, int64_t n,
                int64_t stride) noexcept nogil
# the same, the compute type chosen at run time (CT_*)
cdef void load_ct(int ct, void *dst, const char *src, int dtype, int64_t n,
                  int64_t stride) noexcept nogil
cdef void store_ct(int ct, char *dst, int dtype, const void *src, int64_t n,
                   int64_t stride) noexcept nogil
