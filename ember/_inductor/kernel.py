"""Building one fused kernel: values are loaded into it through index maps, reductions over
its rows become per-row scalars, and what must be written out becomes stores.

The scheduler (``scheduler.Scheduler``) picks the loop structure: rows of a reduction
(outer dims, reduced trailing dims) when the values read such a reduction, else a flat loop
over all elements (or, when some access is not contiguous, rows of the last dim so that
index arithmetic stays out of the inner loop).
"""
from ember._inductor.ir import Kernel, Reduce, Store, index_add, index_mul, var
from ember._inductor.values import Buffer, numel

__all__ = ["KernelBoundsError", "KernelBuilder", "dtype_name"]

# a value read by more than one consumer is recomputed in each unless it costs more ops
RECOMPUTE_LIMIT = 12


def dtype_name(dt):
    return str(dt).replace("ember.", "")


class KernelBuilder:
    """Collects the arguments, reductions and stores of one kernel over rows ``outer`` x
    ``inner``."""

    def __init__(self, sched, outer, inner, name):
        self.sched = sched
        self.name = name
        self.outer, self.inner = tuple(outer), tuple(inner)
        self.full_shape = self.outer + self.inner
        self.identity = [var(f"o{d}") for d in range(len(self.outer))] + \
            [var(f"i{d}") for d in range(len(self.inner))]
        n = numel(self.inner)
        self.flat = var("j") if not self.outer else index_add(index_mul(var("o"), n), var("j"))
        self.buffers = []
        self._args = {}
        self._extent = {}               # arg -> element offsets its buffers may touch
        self.reductions = []
        self.reduction_values = []     # the Reduction values computed per row here
        self._reds = {}
        self.stores = []
        self._storing = set()           # values this kernel writes out: computed here
        self.strided = False            # some load is not the flat index (set by loads)
        self.outputs = []               # (value, buffer) of each value the kernel stores

    # ---- arguments ---------------------------------------------------------------------------
    def arg(self, buf, output=False):
        key = (buf.name, output)
        if key not in self._args:
            self._args[key] = len(self.buffers)
            self.buffers.append((buf, output))
        k = self._args[key]
        lo, hi = _extent(buf)
        old = self._extent.get(k)
        self._extent[k] = (lo, hi) if old is None else (min(lo, old[0]), max(hi, old[1]))
        return k

    # ---- loading values ----------------------------------------------------------------------
    def load(self, value, idx):
        if value.realized is not None:
            expr = value.realized.load(self, idx)
            if expr[2] != self.flat and not isinstance(expr[2], int):
                self.strided = True
            return expr
        return value.load(self, idx)

    def load_pointwise(self, pw, idx):
        if id(pw) not in self._storing and pw.realized is None:
            shared = pw.users > 1 and pw.cost() > RECOMPUTE_LIMIT
            if (pw.sink or shared) and self._here(pw, idx):
                # this kernel computes it anyway, once per element or per row, and something
                # needs it in memory or reads it again: store it here (a layer norm's input
                # and 1 / std, saved for its backward, took two kernels of their own, one
                # summing each row once more)
                self.keep(pw)
            elif shared:
                self.sched.realize([pw])
                return self.load(pw, idx)
        return pw.fn(self, idx)

    def _here(self, value, idx):
        """Whether ``value`` read at ``idx`` is this kernel's own element or its row's
        value."""
        if tuple(value.shape) == self.full_shape and list(idx) == self.identity:
            return True
        n = len(self.outer)
        return n > 0 and numel(self.inner) != 1 and tuple(value.shape[:n]) == self.outer and \
            all(s == 1 for s in value.shape[n:]) and list(idx[:n]) == self.identity[:n] and \
            all(i == 0 for i in idx[n:])

    def keep(self, value):
        """Store ``value`` as an output of this kernel (the scheduler marks it realized
        with the kernel's other outputs), unless it stores it already."""
        if id(value) in self._storing:
            return
        buf = Buffer(self.sched.fresh(), value.shape, value.dtype)
        self.outputs.append((value, buf))
        self.store(value, buf)

    def load_reduction(self, red, idx):
        n_out = len(red.outer)
        if red.outer == self.outer and red.inner == self.inner and \
                list(idx[:n_out]) == self.identity[:n_out] and all(i == 0 for i in idx[n_out:]):
            return self.reduced(red)
        self.sched.realize([red])
        return self.load(red, idx)

    def reduced(self, red):
        """The expression of ``red`` for the current row (adding it to this kernel)."""
        k = self._reds.get(id(red))
        if k is None:
            expr = self.load(red.src, self.identity)
            acc = dtype_name(red.acc_dtype)
            if dtype_name(red.src.dtype) != acc:
                expr = ("cast", acc, expr)
            k = self._reds[id(red)] = len(self.reductions)
            self.reductions.append(Reduce(red.kind, acc, expr))
            self.reduction_values.append(red)
        acc = dtype_name(red.acc_dtype)
        value = ("reduced", k, acc)
        if red.scale is not None:
            value = ("op", "mul", acc, value, ("const", red.scale, acc))
        out = dtype_name(red.dtype)
        return value if out == acc else ("cast", out, value)

    # ---- stores ------------------------------------------------------------------------------
    def store(self, value, buf):
        """Write ``value`` into the fresh contiguous ``buf``: once per element when it has
        the full shape, once per row when it has the rows' shape (a reduction, or a
        function of reductions, kept dims of size 1 allowed)."""
        self._storing.add(id(value))
        n = len(self.outer)
        per_row = tuple(value.shape[:n]) == self.outer and \
            all(s == 1 for s in value.shape[n:]) and numel(self.inner) != 1
        if not per_row:
            if numel(value.shape) != numel(self.full_shape):
                raise AssertionError(f"inductor: a {list(value.shape)} value cannot be stored "
                                     f"by a kernel over {list(self.full_shape)}")
            expr = self.load(value, self._index_of(value.shape))
            level, index = "inner", self.flat
        else:
            expr = self.load(value, self.identity[:n] + [0] * (len(value.shape) - n))
            level, index = "outer", var("o") if self.outer else 0
        if dtype_name(value.dtype) != _expr_dtype(expr):
            expr = ("cast", dtype_name(value.dtype), expr)
        self.stores.append(Store(self.arg(buf, True), index, expr, level))

    def _index_of(self, shape):
        if tuple(shape) == self.full_shape:
            return self.identity
        if tuple(shape) == self.outer and numel(self.inner) == 1:
            return self.identity[:len(shape)]       # rows of one element: a reduction's
        # same element count, other shape (a 0-d value in a [1] loop, ...): flat position
        from ember._inductor.lowering import unflatten_index
        return unflatten_index(self.flat, shape)

    def below(self, index, n):
        """Whether index expression ``index`` stays in [0, n) over this kernel's loops."""
        from ember._inductor.ir import _affine, _bounds
        ranges = self.ranges()
        lo, hi = _bounds(*_affine(index, ranges), ranges)
        return lo >= 0 and hi < n

    def ranges(self):
        """Each loop variable's values (one outer/inner dim: the same as its flat position)."""
        r = {"o": (0, max(numel(self.outer) - 1, 0)), "j": (0, max(numel(self.inner) - 1, 0))}
        for prefix, dims in (("o", self.outer), ("i", self.inner)):
            for d, s in enumerate(dims):
                r[f"{prefix}{d}"] = (0, max(s - 1, 0))
        return r

    def build(self):
        from ember._inductor.ir import Arg, simplify_expr, simplify_index
        args = [(buf.name, dtype_name(buf.dtype), out) for buf, out in self.buffers]
        ranges, memo = self.ranges(), {}
        reds = [Reduce(r.kind, r.dtype, simplify_expr(r.expr, ranges, memo))
                for r in self.reductions]
        stores = [Store(s.arg, simplify_index(s.index, ranges),
                        simplify_expr(s.value, ranges, memo), s.level) for s in self.stores]
        k = Kernel(self.name, self.outer, self.inner,
                   [Arg(i, dt, out) for i, (_, dt, out) in enumerate(args)], reds, stores)
        self._check_bounds(k, ranges)
        return k, [name for name, _, _ in args]

    def _check_bounds(self, kernel, ranges):
        """Every access stays inside the memory of the buffer it names (a lowering bug must
        not become an out-of-bounds write)."""
        from ember._inductor.ir import _affine, _bounds

        def check(arg, index):
            lo, hi = _bounds(*_affine(index, ranges), ranges)
            e_lo, e_hi = self._extent[arg]
            if lo < e_lo or hi > e_hi:
                raise KernelBoundsError(f"inductor: {kernel.name} would access elements "
                                        f"[{lo}, {hi}] of argument {arg}, which holds "
                                        f"[{e_lo}, {e_hi}]")

        def walk(e):
            if e[0] == "load":
                check(e[1], e[2])
            elif e[0] in ("op", "cast"):
                for a in e[2:] if e[0] == "cast" else e[3:]:
                    walk(a)
        for r in kernel.reductions:
            walk(r.expr)
        for s in kernel.stores:
            check(s.arg, s.index)
            walk(s.value)


class KernelBoundsError(AssertionError):
    """A kernel would read or write outside a buffer (the backend falls back to running the
    graph's ops)."""


def _extent(buf):
    lo = hi = buf.offset
    for size, stride in zip(buf.shape, buf.strides):
        if size == 0:
            return 0, -1
        lo += min(0, (size - 1) * stride)
        hi += max(0, (size - 1) * stride)
    return lo, hi


def expr_dtype(e):
    """The dtype name of IR expression ``e``."""
    tag = e[0]
    if tag in ("load", "reduced"):
        return e[-1]
    if tag in ("const", "op"):
        return e[2]
    return e[1]                     # cast


_expr_dtype = expr_dtype

