"""The scheduler: walks a captured graph in program order, lowers what it can to lazy values,
runs everything else as *extern* calls, and decides where values are written to memory.

A lazy value is realized (a fused kernel writes it) when an extern op, the graph's output or
an expensive second consumer needs it in memory, and before any op that writes memory in
place if it is read after that op.  Values realized together share a kernel when their loop
structure matches: the rows of a reduction they read (softmax, layer norm: one loop over
rows computing the reductions then the outputs), or a flat loop over all elements.

The result is the Python source of a wrapper ``call(*inputs)`` that allocates buffers,
launches kernels and calls the extern ops, plus the kernels' IR for a device's code
generator.
"""
import functools
import operator

import ember
from ember._inductor.kernel import KernelBuilder
from ember._inductor.lowering import LOWERINGS
from ember._inductor.values import Buffer, Pointwise, Reduction, Value, View
from ember.fx.node import Node, map_arg

__all__ = ["Scheduler"]


class _PyValue:
    """A non-tensor value of the wrapper (an int, a tuple of tensors...)."""

    def __init__(self, name, meta=None):
        self.name = name
        self.meta = meta


def _is_static(v):
    shape = getattr(v, "shape", None)
    return shape is None or all(isinstance(s, int) for s in shape)


class Scheduler:
    """Turns one GraphModule into wrapper source, its globals and kernels."""

    def __init__(self, gm, kernel_prefix="k", device=None):
        self.graph = gm.graph
        self.lines = []
        # the kernels' buffers live where the graph's inputs do
        self.globals = {"_empty": ember.empty if device is None or device.type == "cpu"
                        else functools.partial(ember.empty, device=device)}
        self.kernels = []               # (name, Kernel, argument names)
        self._names = 0
        self._prefix = kernel_prefix
        self._consts = {}
        self.env = {}
        self.externs = []               # names of the ops run as extern calls

    # ---- names -------------------------------------------------------------------------------
    def fresh(self, prefix="buf"):
        self._names += 1
        return f"{prefix}{self._names}"

    def const(self, value):
        """How the wrapper writes constant ``value``."""
        if value is None or isinstance(value, (bool, int, str)):
            return repr(value)
        if isinstance(value, float):
            return repr(value) if value == value and abs(value) != float("inf") else \
                f"float({str(value)!r})"
        if isinstance(value, (tuple, list)):
            inner = ", ".join(self.const(v) for v in value)
            return f"({inner},)" if isinstance(value, tuple) and len(value) == 1 else \
                (f"({inner})" if isinstance(value, tuple) else f"[{inner}]")
        key = id(value)
        if key not in self._consts:
            name = f"_c{len(self._consts)}"
            self._consts[key] = name
            self.globals[name] = value
        return self._consts[key]

    # ---- the walk ----------------------------------------------------------------------------
    def run(self):
        nodes = list(self.graph.nodes)
        pos = {n: i for i, n in enumerate(nodes)}
        params, out_line = [], None
        for node in nodes:
            if node.op == "placeholder":
                name = f"in_{node.name}"
                params.append(name)
                self.env[node] = self._input(name, node.meta.get("val"))
            elif node.op == "output":
                out_line = self._output(node.args[0])
            else:
                value = self._lower(node)
                if value is None:
                    value = self._extern(node, pos)
                parts = value if isinstance(value, tuple) else (value,)
                for i, v in enumerate(parts):
                    if isinstance(v, Value):
                        # a tuple's element is read through getitem nodes: their users count
                        users = _readers(node, i if isinstance(value, tuple) else None,
                                         len(parts))
                        v.users = max(v.users, len(users))
                        v.last_use = max((pos[u] for u in users), default=-1)
                        v.pos = pos[node]
                        v.sink = v.sink or any(self._needs_memory(u) for u in users)
                self.env[node] = value
        body = self.lines + [out_line]
        return f"def call({', '.join(params)}):\n" + "".join(f"    {ln}\n" for ln in body)

    @staticmethod
    def _input(name, meta):
        if meta is not None and hasattr(meta, "dtype") and hasattr(meta, "shape"):
            return Buffer(name, tuple(meta.shape), meta.dtype, tuple(meta.stride()) if
                          callable(meta.stride) else tuple(meta.stride))
        return _PyValue(name, meta)

    def _needs_memory(self, user):
        if user.op == "output":
            return True
        name = getattr(user.target, "__name__", "")
        return name not in LOWERINGS or user.is_impure()

    def _lower(self, node):
        if node.op != "call_function":
            return None
        if node.target is operator.getitem:
            base = self.env[node.args[0]]
            if isinstance(base, tuple):
                return base[node.args[1]]
            return None
        rule = LOWERINGS.get(getattr(node.target, "__name__", None))
        if rule is None or node.is_impure() or not hasattr(node.target, "_fx_qualname"):
            return None
        args = map_arg(node.args, lambda n: self.env[n])
        kwargs = map_arg(node.kwargs, lambda n: self.env[n])
        if any(isinstance(a, _PyValue) for a in _leaves((args, kwargs))):
            return None
        try:
            return rule(node, *args, **kwargs)
        except (TypeError, ValueError, ZeroDivisionError):
            return None                 # arguments the rule does not handle: run the op

    # ---- externs -----------------------------------------------------------------------------
    def _extern(self, node, pos):
        if node.is_impure():
            self._barrier(pos[node])
        self.externs.append(getattr(node.target, "__name__", str(node.target)))
        args = map_arg(node.args, lambda n: self.env[n])
        kwargs = map_arg(node.kwargs, lambda n: self.env[n])
        call_args = [self._arg(a) for a in args]
        call_args += [f"{k}={self._arg(v)}" for k, v in kwargs.items()]
        fn = self.const(_entry(node.target))
        name = self.fresh("ext")
        self.lines.append(f"{name} = {fn}({', '.join(call_args)})")
        meta = node.meta.get("val")
        if meta is not None and hasattr(meta, "dtype") and hasattr(meta, "shape"):
            stride = meta.stride() if callable(meta.stride) else meta.stride
            return Buffer(name, tuple(meta.shape), meta.dtype, tuple(stride))
        if isinstance(meta, (tuple, list)) and node.target is not operator.getitem:
            return _PyValue(name, meta)
        return _PyValue(name, meta)

    def _arg(self, a):
        if isinstance(a, (Value, _PyValue)):
            return self.materialize(a)
        if isinstance(a, (tuple, list)) and any(isinstance(x, (Value, _PyValue)) for x in a):
            inner = ", ".join(self._arg(x) for x in a)
            return f"({inner},)" if isinstance(a, tuple) else f"[{inner}]"
        if isinstance(a, Node):
            raise RuntimeError(f"inductor: unmapped node {a}")
        return self.const(a)

    def _barrier(self, p):
        """Before an op writing memory in place at position ``p``: write out every lazy value
        defined earlier and read later (it would otherwise see the write)."""
        live = [v for v in self._lazy_values() if v.pos < p < v.last_use]
        self.realize(live)

    def _lazy_values(self):
        for v in self.env.values():
            for x in (v if isinstance(v, tuple) else (v,)):
                if isinstance(x, Value) and x.realized is None:
                    yield x

    # ---- making tensors real -----------------------------------------------------------------
    def materialize(self, value):
        """The wrapper expression of ``value`` as a real tensor."""
        if isinstance(value, _PyValue):
            return value.name
        if isinstance(value, View) and value.realized is None:
            value.realized = self._view_of_real(value)
        if value.realized is None:
            self.realize([value])
        buf = value.realized
        if buf.view_of is not None:
            real = getattr(buf, "real_name", None)
            if real is None:
                base, target, node = buf.view_of
                args = [self.materialize(base)] + [
                    self._arg(map_arg(a, lambda n: self.env[n])) for a in node.args[1:]]
                kwargs = [f"{k}={self._arg(map_arg(v, lambda n: self.env[n]))}"
                          for k, v in node.kwargs.items()]
                real = self.fresh("view")
                self.lines.append(f"{real} = {self.const(_entry(target))}"
                                  f"({', '.join(args + kwargs)})")
                buf.real_name = real
            return real
        return buf.name

    def _view_of_real(self, view):
        """``view`` (a reshape, transpose, ... of a lazy value) as the same view of its base's
        buffer, or None: no kernel copies what is already in memory.  The base is used when
        a kernel wrote it already, or when the view covers all of it (writing the base then
        costs what writing the view would); a base that is itself such a view of a view
        becomes real the same way (a weight gradient's transpose of a reshape passes its
        operand to matmul as strides instead of a transposing copy)."""
        node, base = view.replay, view.base
        if base.realized is None:
            if not isinstance(base, Value) or \
                    _numel(base.shape) != _numel(view.shape) and not _expands(view):
                return None             # a part of a lazy value: a kernel writes that part
            if isinstance(base, View):  # a view of a view (a reshape, then a transpose)
                base.realized = self._view_of_real(base)
                if base.realized is None:
                    return None
            else:
                self.realize([base])
        args = map_arg(node.args[1:], lambda n: self.env[n])
        kwargs = map_arg(node.kwargs, lambda n: self.env[n])
        try:
            out = LOWERINGS[node.target.__name__](node, base.realized, *args, **kwargs)
        except (TypeError, ValueError, ZeroDivisionError):
            return None
        return out if isinstance(out, Buffer) else None

    def _output(self, outs):
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        values = [self.env[n] if isinstance(n, Node) else n for n in outs]
        for v in values:
            if isinstance(v, View) and v.realized is None and _expands(v):
                # an expand goes out as eager's stride-0 view of its base: a backward graph
                # reads it with those strides (written out whole, it ran op by op)
                v.realized = self._view_of_real(v)
        self.realize([v for v in values if isinstance(v, Value) and v.realized is None])
        names = [self.materialize(v) if isinstance(v, (Value, _PyValue)) else self.const(v)
                 for v in values]
        return f"return ({', '.join(names)}{',' if len(names) == 1 else ''})"

    # ---- kernels -----------------------------------------------------------------------------
    def realize(self, values):
        """Write the lazy ``values`` to memory, grouped into as few kernels as their loop
        structures allow."""
        groups = {}
        for v in values:
            if v.realized is None:
                groups.setdefault(self._structure(v), []).append(v)
        for (outer, inner), vs in groups.items():
            todo = [v for v in vs if v.realized is None]
            if todo:
                self._emit(outer, inner, todo)

    def _structure(self, v):
        """The loop structure (outer dims, inner dims) a kernel computing ``v`` uses."""
        red = _row_reduction(v)
        if red is not None:
            return red.outer, red.inner
        return (), tuple(v.shape)

    def _emit(self, outer, inner, values):
        name = self.fresh(self._prefix)
        kb = self._build(name, outer, inner, values)
        # strided loads: rows of the last dim keep index arithmetic out of the inner loop,
        # when every value fills the whole loop (a value of another shape, such as a
        # reduction realized meanwhile, is stored per element of the flat loop only)
        if not kb.reductions and kb.strided and len(kb.full_shape) > 1 and \
                all(tuple(v.shape) == kb.full_shape for v in values):
            shape = kb.full_shape
            kb = self._build(name, shape[:-1], shape[-1:], values)
        kernel, arg_names = kb.build()
        outs = []
        for buf, out in kb.buffers:
            if out:
                outs.append(buf)
                self.lines.append(f"{buf.name} = _empty({self.const(tuple(buf.shape))}, "
                                  f"dtype={self.const(buf.dtype)})")
        for v, buf in kb.outputs:
            v.realized = buf
        ptrs = ", ".join(f"{self._ptr_expr(n)}" for n in arg_names)
        self.lines.append(f"{name}(({ptrs}{',' if len(arg_names) == 1 else ''}))")
        self.kernels.append((name, kernel, arg_names))

    def _ptr_expr(self, name):
        return f"{name}.data_ptr()"

    def _build(self, name, outer, inner, values):
        kb = KernelBuilder(self, outer, inner, name)
        for v in values:
            kb.keep(v)
        # reductions computed here that something else needs in memory: store them too
        for red in list(kb.reduction_values):
            if red.sink and red.realized is None:
                kb.keep(red)
        return kb


def _entry(target):
    """What the wrapper calls for ``target``: an op's entry (the wrapper runs with autograd
    off and no mode key live, it checks, where dispatching from the top would only find the
    entry again), anything else as it is."""
    op = getattr(target, "_op", None)
    return op.entry if op is not None else target


def _readers(node, index=None, n=0):
    """The nodes reading ``node``, or element ``index`` of its ``n``-tuple (through getitem
    nodes; one that takes a slice reads every element)."""
    if index is None:
        return list(node.users)
    out = []
    for u in node.users:
        if u.target is not operator.getitem:
            out.append(u)
        elif not isinstance(u.args[1], int) or u.args[1] % n == index:
            out.extend(u.users)
    return out


def _row_reduction(v):
    """The first unrealized reduction ``v`` reads whose rows ``v`` can be computed over
    (same full shape as its source, or ``v`` is of its rows' shape)."""
    stack, seen = [v], set()
    while stack:
        x = stack.pop()
        if id(x) in seen or (x is not v and x.realized is not None):
            continue
        seen.add(id(x))
        if isinstance(x, Reduction):
            full = tuple(x.src.shape)
            rows = full[:len(full) - x.n_inner]
            if tuple(v.shape) == full or _squeeze1(v.shape) == _squeeze1(rows) and \
                    len(v.shape) >= len(rows) and tuple(v.shape[:len(rows)]) == rows:
                return x
            continue
        if isinstance(x, Pointwise):
            stack.extend(i for i in x.inputs if isinstance(i, Value))
        elif isinstance(x, View):
            stack.append(x.base)
    return None


def _expands(view):
    """Whether ``view`` is an expand of its base (more elements than the base holds)."""
    target = getattr(view.replay, "target", None)
    return getattr(target, "__name__", None) == "expand" and \
        _numel(view.shape) > _numel(view.base.shape)


def _squeeze1(shape):
    return tuple(s for s in shape if s != 1)


def _leaves(x):
    out = []
    map_arg(x, lambda n: n)

    def walk(a):
        if isinstance(a, (tuple, list)):
            for y in a:
                walk(y)
        elif isinstance(a, dict):
            for y in a.values():
                walk(y)
        else:
            out.append(a)
    walk(x)
    return out


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n
