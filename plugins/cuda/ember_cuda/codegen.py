"""CUDA C for ember.compile's fused kernels on NVIDIA GPUs (the ``ember_kernel_codegen``
hook): each ``ember._inductor.ir.Kernel`` becomes an ``extern "C" __global__`` function
taking one pointer per argument; all kernels of a graph go into one module, compiled by
nvcc to a cubin for the device's architecture and cached on disk by source hash
(``ember.backends.kernel_cache``: a second process compiles nothing).

The math is the eager kernels': the module starts with ``common.cuh`` and
``scalar_ops.cuh`` (the ``ew`` family's ``f_unary``/``f_binary``, called with constant op
codes), so a fused chain computes each op as the eager op would, without the trips through
memory between them.

Loops: a flat kernel (no rows) is a grid-stride loop over the elements.  A row kernel gives
each row to one block (grid-stride over rows): the block's threads stride along the row
for each reduction, combine their partial results with ``block_reduce`` (a fixed tree: the
same bits every run), then write the row's per-element values.  Values that do not change
along a row are computed once per row, before the row's loops.  A row of up to
``TILE_MAX`` elements a thread is a register tile, as the eager row kernels (rowtile.cuh):
each thread's elements are read once and what a later loop reads again (a load, an exp, a
GELU) stays in registers between the loops.
"""
from ember.backends.c_codegen import (
    CTYPE,
    FLOAT,
    ExprRenderer,
    PassScope,
    Scope,
    can_render,
    decls,
    index,
    reduction_init,
)

__all__ = ["CudaKernelCodegen"]

THREADS = 256           # threads per block (the most a kernel is built for)
WAVES = 32              # blocks per multiprocessor a grid-stride launch asks for at most
TILE_MAX = 8            # elements of a row a thread holds in registers at most
SPLIT_MIN = 16384       # elements per row from which few rows split among blocks
MULTIPROCESSORS = 132   # what source() assumes when not told (an H100 or H200)

_UNARY = frozenset("neg exp log sin cos tan tanh sigmoid relu sqrt rsqrt abs reciprocal "
                   "square floor ceil trunc round exp2 expm1 log2 log10 log1p erf erfc gelu "
                   "asin acos atan sinh cosh sign".split())
_BINARY = frozenset("add sub mul div pow maximum minimum fmax fmin atan2 gelu_backward"
                    .split())
# what scalar_ops.cuh's int64 overloads compute (the rounding ops are the identity there)
_INT_UNARY = frozenset("neg relu abs square floor ceil trunc round sign".split())
_INT_BINARY = frozenset("add sub mul maximum minimum fmax fmin pow".split())


class _Renderer(ExprRenderer):
    """CUDA C expressions (see ``ember.backends.c_codegen``): the arithmetic and math go
    through scalar_ops.cuh in the compute type (float, double; int64 for the integers,
    wrapped back to the op's type)."""

    nan, inf = "CUDART_NAN", "CUDART_INF"

    def math(self, name, dt, xs):
        if dt in FLOAT:
            ct = CTYPE[dt]
            args = ", ".join(f"({ct})({x})" for x in xs)
            if len(xs) == 1 and name in _UNARY:
                return f"f_unary(U_{name.upper()}, {args})"
            if len(xs) == 2 and name in _BINARY:
                return f"f_binary(B_{name.upper()}, {args})"
        elif dt in CTYPE and dt != "bool":
            args = ", ".join(f"(i64)({x})" for x in xs)
            if len(xs) == 1 and name in _INT_UNARY:
                return f"({CTYPE[dt]})f_unary(U_{name.upper()}, {args})"
            if len(xs) == 2 and name in _INT_BINARY:
                return f"({CTYPE[dt]})f_binary(B_{name.upper()}, {args})"
        return super().math(name, dt, xs)


def block_threads(n):
    """Threads per block for loops of ``n`` elements per row: whole warps, at most
    THREADS."""
    return min(THREADS, max(32, (n + 31) // 32 * 32))


def _reads_reductions(e):
    if not isinstance(e, tuple):
        return False
    return e[0] == "reduced" or any(_reads_reductions(x) for x in e[1:])


def row_splits(k, multiprocessors):
    """Blocks per row for a kernel with few long rows (0: one block per row).  A row then
    splits into chunks reduced by blocks of their own into a scratch buffer, and a second
    kernel combines each row's partial results in order (the same bits every run) before
    its stores.  Only reductions that read no other reduction split (a softmax over one
    long row keeps one block: its sum needs the max first)."""
    O, N = k.outer_numel, k.inner_numel
    if not k.reductions or O >= multiprocessors or N < SPLIT_MIN or \
            any(_reads_reductions(r.expr) for r in k.reductions):
        return 0
    s = min(-(-N // (SPLIT_MIN // 4)), -(-2 * multiprocessors // O))
    return s if s >= 4 else 0


class _KernelWriter:
    def __init__(self, k, multiprocessors):
        self.k = k
        self.O, self.N = k.outer_numel, k.inner_numel
        self.flat = not k.outer and not k.reductions
        self.splits = 0 if self.flat else row_splits(k, multiprocessors)
        # rows of up to TILE_MAX elements a thread are held in registers (see _row_loop)
        self.tile = 0 if self.flat or self.splits else -(-self.N // THREADS)
        if self.tile > TILE_MAX:
            self.tile = 0
        self.threads = block_threads(-(-self.N // self.tile)) if self.tile else \
            THREADS if self.flat or self.splits else block_threads(self.N)
        self.chunk = -(-self.N // self.splits) if self.splits else self.N
        self.lines = []

    def emit(self, line, depth):
        self.lines.append("    " * depth + line)

    def source(self):
        if self.flat:
            self._header("")
            self._flat()
        elif not self.splits:
            self._header("")
            self._rows()
        else:
            self._header("_part", scratch=True)
            self._partials()
            self.emit("}", 0)
            self._header("", scratch=True)
            self._combine()
        self.emit("}", 0)
        return "\n".join(self.lines) + "\n"

    def _header(self, suffix, scratch=False):
        k = self.k
        params = [f"{'' if a.output else 'const '}{CTYPE[a.dtype]} *__restrict__ a{a.index}"
                  for a in sorted(k.args, key=lambda a: a.index)]
        if scratch:
            params.append("char *__restrict__ scratch")
        self.emit(f'extern "C" __global__ void __launch_bounds__({self.threads}) '
                  f'{k.name}{suffix}({", ".join(params)}) {{', 0)
        for i, red in enumerate(k.reductions):
            self.emit(f"__shared__ {CTYPE[red.dtype]} shared{i}[32];", 1)
            if scratch:
                # partial results: 8 bytes a slot, a row's splits side by side
                self.emit(f"{CTYPE[red.dtype]} *part{i} = ({CTYPE[red.dtype]} *)(scratch + "
                          f"{i * self.O * self.splits * 8}LL);", 1)

    def _flat(self):
        k, r = self.k, _Renderer()
        outer = Scope()
        inner = Scope(outer, inner=True)
        stores = [(s, r.expr(s.value, inner)) for s in k.stores]
        for ln in outer.lines:
            self.emit(ln, 1)
        self.emit(f"for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; "
                  f"j < {self.N}LL; j += (int64_t)gridDim.x * blockDim.x) {{", 1)
        for ln in decls("i", "j", k.inner) + inner.lines:
            self.emit(ln, 2)
        for s, v in stores:
            self.emit(f"a{s.arg}[{index(s.index)}] = {v};", 2)
        self.emit("}", 1)

    def _row_loop(self, body, depth, lo="0", hi=None):
        """``body`` once per element of the row (from ``lo`` to ``hi``): a register tile
        (``self.tile`` elements per thread, the loop unrolled so that kept values stay in
        registers) or the block's threads striding along it."""
        hi = hi or f"{self.N}LL"
        if self.tile:
            self.emit("#pragma unroll", depth)
            self.emit(f"for (int t = 0; t < {self.tile}; t++) {{", depth)
            self.emit(f"const int64_t j = threadIdx.x + (int64_t)t * {self.threads};",
                      depth + 1)
            self.emit(f"if (j < {hi}) {{", depth + 1)
            inner = depth + 2
        else:
            self.emit(f"for (int64_t j = {lo} + threadIdx.x; j < {hi}; j += blockDim.x) {{",
                      depth)
            inner = depth + 1
        for ln in decls("i", "j", self.k.inner) + body:
            self.emit(ln, inner)
        if self.tile:
            self.emit("}", depth + 1)
        self.emit("}", depth)

    def _block_reduce(self, i, red, depth):
        ct = CTYPE[red.dtype]
        init = reduction_init(red.kind, red.dtype, _Renderer.inf)
        self.emit(f"const {ct} r{i} = block_reduce(acc{i}, cg_{red.kind}<{ct}>(), "
                  f"({ct}){init}, shared{i});", depth)

    def _row_pass(self, depth, reduce=True, store=True, first="1", lo="0", hi=None):
        """A row's loops: each reduction (its part from ``lo`` to ``hi``) as ``r{i}``, every
        thread of the block holding it, then the stores, per row (by one thread of the
        ``first`` block) and per element.  Row values come before the first loop reading
        them; in a register tile every value a later loop reads again is kept in registers
        (loads included: the row is read from memory once), else computed again."""
        k, r, row = self.k, _Renderer(), Scope()
        loops = PassScope(row, keep=bool(self.tile), min_cost=1)
        reds = []
        for i, red in enumerate(k.reductions if reduce else ()):
            loop = loops.begin()
            reds.append((i, red, loop, r.expr(red.expr, loops), len(row.lines)))
        last = loops.begin()
        mine = [s for s in k.stores if store]
        outer = [(s, r.expr(s.value, row)) for s in mine if s.level == "outer"]
        inner = [(s, r.expr(s.value, loops)) for s in mine if s.level == "inner"]
        for ln in loops.arrays(self.tile):
            self.emit(ln, depth)
        emitted = 0
        for i, red, loop, v, mark in reds:
            for ln in row.lines[emitted:mark]:
                self.emit(ln, depth)
            emitted = mark
            ct = CTYPE[red.dtype]
            self.emit(f"{ct} acc{i} = {reduction_init(red.kind, red.dtype, r.inf)};", depth)
            self._row_loop(loops.body(loop, "t") + [f"acc{i} = cg_{red.kind}<{ct}>()(acc{i}, "
                                                    f"{v});"], depth, lo, hi)
            self._block_reduce(i, red, depth)
        for ln in row.lines[emitted:]:
            self.emit(ln, depth)
        if outer:
            self.emit(f"if (threadIdx.x == 0 && {first}) {{", depth)
            for s, v in outer:
                self.emit(f"a{s.arg}[{index(s.index)}] = {v};", depth + 1)
            self.emit("}", depth)
        if inner:
            self._row_loop(loops.body(last, "t") + [f"a{s.arg}[{index(s.index)}] = {v};"
                                                    for s, v in inner], depth, lo, hi)

    def _rows(self):
        self.emit(f"for (int64_t o = blockIdx.x; o < {self.O}LL; o += gridDim.x) {{", 1)
        for ln in decls("o", "o", self.k.outer):
            self.emit(ln, 2)
        self._row_pass(2)
        self.emit("}", 1)

    def _split_position(self, blocks):
        """The block's row ``o`` and chunk ``lo``..``hi`` of it (grid: rows x ``blocks``;
        one block a row: the whole row)."""
        if blocks == 1:
            self.emit("const int64_t o = blockIdx.x, lo = 0;", 1)
        else:
            self.emit(f"const int64_t o = blockIdx.x / {blocks}LL;", 1)
            self.emit(f"const int64_t lo = (blockIdx.x % {blocks}LL) * {self.chunk}LL;", 1)
            self.emit(f"const int64_t hi = lo + {self.chunk}LL < {self.N}LL ? lo + "
                      f"{self.chunk}LL : {self.N}LL;", 1)
        for ln in decls("o", "o", self.k.outer):
            self.emit(ln, 1)

    def _partials(self):
        """First kernel of a split row: each block reduces its chunk into the scratch."""
        self._split_position(self.splits)
        self._row_pass(1, store=False, lo="lo", hi="hi")
        self.emit("if (threadIdx.x == 0) {", 1)
        for i in range(len(self.k.reductions)):
            self.emit(f"part{i}[blockIdx.x] = r{i};", 2)
        self.emit("}", 1)

    def _combine(self):
        """Second kernel: each block combines its row's partial results (the same tree in
        every block of the row), then stores its chunk; one block a row when the row has
        only per-row values to store."""
        parts = self.splits
        self._split_position(parts if self._inner_stores() else 1)
        for i, red in enumerate(self.k.reductions):
            ct = CTYPE[red.dtype]
            self.emit(f"{ct} acc{i} = {reduction_init(red.kind, red.dtype, _Renderer.inf)};", 1)
            self.emit(f"for (int64_t t = threadIdx.x; t < {parts}LL; t += blockDim.x) "
                      f"acc{i} = cg_{red.kind}<{ct}>()(acc{i}, part{i}[o * {parts}LL + t]);",
                      1)
            self._block_reduce(i, red, 1)
        self._row_pass(1, reduce=False, first="lo == 0", lo="lo", hi="hi")

    def _inner_stores(self):
        return any(s.level == "inner" for s in self.k.stores)

    def grids(self, multiprocessors):
        """Blocks to launch, per function: one per row (or per THREADS elements), at most
        WAVES per multiprocessor (the loops stride over the rest); rows x splits for split
        rows (then rows, or rows x splits again with elements to store)."""
        if self.splits:
            return [self.O * self.splits, self.O * (self.splits if self._inner_stores()
                                                    else 1)]
        work = (self.N + THREADS - 1) // THREADS if self.flat else self.O
        return [max(1, min(work, WAVES * multiprocessors))]

    def scratch_bytes(self):
        return 8 * len(self.k.reductions) * self.O * self.splits


# reduction steps: sums wrap on integers; max and min keep a NaN (as the eager kernels)
_HEADER = """// generated by ember.compile (ember-cuda's kernel code generator)
#include <stdint.h>
template <typename T> struct cg_sum {
    __device__ __forceinline__ T operator()(T a, T b) const {
        return (T)((unsigned long long)a + (unsigned long long)b);
    }
};
template <> struct cg_sum<float> {
    __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
template <> struct cg_sum<double> {
    __device__ __forceinline__ double operator()(double a, double b) const { return a + b; }
};
template <typename T> struct cg_max {
    __device__ __forceinline__ T operator()(T a, T b) const {
        return (a > b || a != a) ? a : b;
    }
};
template <typename T> struct cg_min {
    __device__ __forceinline__ T operator()(T a, T b) const {
        return (a < b || a != a) ? a : b;
    }
};
"""


class CudaKernelCodegen:
    """ember-cuda's KernelCodegen (see ``ember.backends.hookspecs.KernelCodegen``)."""

    name = "cuda"

    def supports(self, kernel):
        from ember_cuda._cuda import LAUNCH_MAX_ARGS
        return len(kernel.args) <= LAUNCH_MAX_ARGS and can_render(_Renderer(), kernel)

    def source(self, kernels, multiprocessors=MULTIPROCESSORS):
        """The module's CUDA C: the shared headers, then the functions of each kernel (two
        for a kernel whose rows split, see ``row_splits``)."""
        return _module_source([_KernelWriter(k, multiprocessors) for k in kernels])

    def command(self, arch):
        from ember_cuda import _modules
        nvcc = _modules.nvcc_path()
        if nvcc is None:
            raise RuntimeError("ember.compile builds CUDA kernels with nvcc, which was not "
                               "found: put the CUDA toolkit's bin folder on PATH or set "
                               "EMBER_NVCC")
        return [nvcc, "--cubin", *_modules.OPTIONS, "-arch", arch, "{src}", "-o", "{out}"]

    def compile(self, kernels, device=None):
        """{kernel name: launch(pointers)} for ``kernels`` on ``device`` (an ember device of
        type "cuda"; the current one if None)."""
        from ember.backends import kernel_cache

        from ember_cuda import _cuda, runtime
        dev = runtime.current_device() if device is None or device.index is None \
            else device.index
        arch = "sm_%d%d" % _cuda.capability(dev)
        sms = _cuda.multiprocessors(dev)
        writers = [_KernelWriter(k, sms) for k in kernels]
        path = kernel_cache.build(_module_source(writers), self.command(arch), suffix=".cu",
                                  output=".cubin")
        with open(path, "rb") as f:
            module = _cuda.load_module(dev, f.read())
        launchers = {}
        for k, w in zip(kernels, writers):
            fns = [_cuda.get_function(dev, module, k.name + suffix)
                   for suffix in (("_part", "") if w.splits else ("",))]
            empty = k.outer_numel * k.inner_numel == 0
            launchers[k.name] = _launcher(dev, list(zip(fns, w.grids(sms))), w.threads,
                                          0 if empty else w.scratch_bytes(), empty)
        return launchers


def _module_source(writers):
    """The shared headers, then each writer's functions."""
    from ember_cuda import _modules
    return "".join(_modules.read(h) + "\n" for h in ("common.cuh", "scalar_ops.cuh")) + \
        _HEADER + "\n".join(w.source() for w in writers)


def _launcher(device, functions, threads, scratch, empty):
    """launch(pointers) for one kernel: its (function, grid), or its two for split rows
    (which get a scratch block, freed in stream order once both are queued)."""
    from ember_cuda._cuda import _alloc, _free
    from ember_cuda._cuda import launch as launch_

    if empty:
        return lambda ptrs: None
    if not scratch:
        (function, grid), = functions
        return lambda ptrs: launch_(device, function, grid, threads, ptrs)

    def launch(ptrs):
        p = _alloc(device, scratch)
        try:
            for function, grid in functions:
                launch_(device, function, grid, threads, ptrs + (p,))
        finally:
            _free(device, p)
    return launch
