"""Writes ``core/tensor.pyi``, the type stub of ``ember.Tensor``, so that IDEs and type
checkers see every method the class has at run time: its own body, the Cython base, the
methods built from the op table (core/optable.py) and the other tables, and PyTorch's other
spellings (method_forms).  Each entry has the signature Python reports for it (PyTorch's
argument names); parameters are typed ``Any``.  A method returns ``Tensor`` when it is one
of the op table's, an in-place form (it returns self) or a known tensor-valued method;
a known few return ``bool``/``int``/``Size``; the rest say ``Any``.

    python -m ember.core.tensor_stub            # rewrite core/tensor.pyi
    python -m ember.core.tensor_stub --check    # exit 1 if it is stale

tests/core/test_tensor_stub.py fails when the stub is stale."""
import inspect
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STUB = os.path.join(HERE, "tensor.pyi")

_PROPERTY_TYPES = {"shape": "Size", "dtype": "_dtype", "device": "_device", "ndim": "_int",
                   "itemsize": "_int", "nbytes": "_int", "is_cpu": "_bool", "is_cuda": "_bool",
                   "is_meta": "_bool", "is_leaf": "_bool", "requires_grad": "_bool",
                   "grad": "Optional[Tensor]", "data": "Tensor", "T": "Tensor", "mT": "Tensor",
                   "H": "Tensor", "mH": "Tensor", "real": "Tensor", "imag": "Tensor",
                   "output_nr": "_int", "retains_grad": "_bool"}
_RETURNS = {"dim": "int", "ndimension": "int", "numel": "int", "nelement": "int",
            "element_size": "int", "get_device": "int", "data_ptr": "int",
            "storage_offset": "int", "is_contiguous": "bool", "is_floating_point": "bool",
            "is_complex": "bool", "is_signed": "bool", "is_nonzero": "bool",
            "is_same_size": "bool", "is_set_to": "bool", "is_pinned": "bool",
            "is_shared": "bool", "is_inference": "bool", "is_conj": "bool", "is_neg": "bool",
            "equal": "bool", "allclose": "bool", "tolist": "Any", "item": "Any",
            "__len__": "int", "__bool__": "bool", "__int__": "int", "__float__": "float",
            "__index__": "int", "__hash__": "int", "__repr__": "str", "__str__": "str",
            "__format__": "str", "__contains__": "bool", "__iter__": "Iterator[Tensor]",
            "backward": "None", "__setitem__": "None", "__delitem__": "None"}
# tensor-valued methods outside the op table (views, shape ops, casts, products, ...)
_TENSOR_VALUED = frozenset("""
    abs absolute add addbmm addcdiv addcmul addmm addmv addr all amax amin any argmax argmin
    argsort as_strided baddbmm bernoulli bfloat16 bmm bool broadcast_to byte cdouble cfloat
    char chunk clamp clamp_max clamp_min clip clone contiguous cos cpu cross cuda cummax
    cumprod cumsum detach diag diag_embed diagonal div dot double exp expand expand_as
    flatten flip float gather half index_add index_copy index_fill index_put index_select
    int int_repr lerp log log_softmax logsumexp long masked_fill masked_scatter
    masked_select matmul mean mm movedim mul mv nan_to_num narrow neg new_empty new_full
    new_ones new_tensor new_zeros nonzero norm outer permute pow prod reciprocal relu
    repeat repeat_interleave reshape reshape_as roll rot90 rsqrt scatter scatter_add
    scatter_reduce select short sigmoid sign sin softmax sqrt square squeeze std sub sum
    swapaxes swapdims t take tanh tile to trace transpose tril triu type_as unflatten unfold
    unsqueeze var view view_as where
    __abs__ __add__ __and__ __floordiv__ __getitem__ __invert__ __lshift__ __matmul__
    __mod__ __mul__ __neg__ __or__ __pos__ __pow__ __radd__ __rand__ __rfloordiv__
    __rlshift__ __rmatmul__ __rmod__ __rmul__ __ror__ __rpow__ __rrshift__ __rshift__
    __rsub__ __rtruediv__ __rxor__ __sub__ __truediv__ __xor__ __eq__ __ne__ __lt__ __le__
    __gt__ __ge__ __iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__
    __iand__ __ior__ __ixor__ __ilshift__ __irshift__ __imatmul__""".split())
# dunders that object defines and Tensor leaves alone, or that a stub must not redeclare
_SKIP = frozenset(["__class__", "__dict__", "__doc__", "__module__", "__slots__",
                   "__init_subclass__", "__subclasshook__", "__weakref__", "__new__",
                   "__getattribute__", "__setattr__", "__delattr__", "__dir__",
                   "__reduce__", "__reduce_ex__", "__sizeof__", "__getstate__", "__init__",
                   "__pyx_vtable__", "__array_priority__"])


def _public_names(cls):
    own = [n for n in dir(cls) if not n.startswith("_")]
    dunders = [n for n in dir(cls) if n.startswith("__") and n.endswith("__")
               and n not in _SKIP and getattr(cls, n, None) is not getattr(object, n, None)]
    return sorted(own) + sorted(dunders)


def _default(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    return "..."


def _params(fn, is_method):
    """The stub's parameter list for fn (a method's starting with self), or None when Python
    reports no signature."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    out, kw_marked = [], False
    params = list(sig.parameters.values())
    for i, p in enumerate(params):
        if i == 0 and is_method:
            out.append("self")
            continue
        if p.kind is p.VAR_POSITIONAL:
            out.append(f"*{p.name}: Any")
            kw_marked = True
            continue
        if p.kind is p.VAR_KEYWORD:
            out.append(f"**{p.name}: Any")
            continue
        if p.kind is p.KEYWORD_ONLY and not kw_marked:
            out.append("*")
            kw_marked = True
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params)
                                            or params[i + 1].kind is not p.POSITIONAL_ONLY):
            suffix = ", /"
        else:
            suffix = ""
        text = f"{p.name}: Any" + ("" if p.default is p.empty else f" = {_default(p.default)}")
        out.append(text + suffix)
    if is_method and (not out or out[0] != "self"):
        out.insert(0, "self")
    return out


_UNARY_DUNDERS = frozenset(["__abs__", "__neg__", "__pos__", "__invert__"])
# the class's methods int(), bool(), float() hide the builtins inside its body
_BUILTINS = {"int": "_int", "bool": "_bool", "float": "_float", "str": "_str"}


def _returns(name, table):
    if name in _RETURNS:
        return _BUILTINS.get(_RETURNS[name], _RETURNS[name])
    if name in table or name in _TENSOR_VALUED:
        return "Tensor"
    if name.endswith("_") and not name.startswith("_"):
        return "Tensor"                  # in-place forms return self
    if name.startswith("is_"):
        return "_bool"
    return "Any"


def render():
    """The stub's text, from the class as it is now."""
    from ember.core import _tensor as _T
    from ember.core.tensor import Tensor as cls
    table = set(_T.table_functions())
    lines = ["# Generated by `python -m ember.core.tensor_stub` from ember.Tensor as it is at",
             "# run time; do not edit (tests/core/test_tensor_stub.py checks it is current).",
             "from builtins import bool as _bool",
             "from builtins import float as _float",
             "from builtins import int as _int",
             "from builtins import str as _str",
             "from typing import Any, Iterator, Optional", "",
             "from ember.core._device import device as _device",
             "from ember.core._dtype import dtype as _dtype",
             "from ember.core._tensor import Size", "",
             "class Tensor:",
             '    """A multi-dimensional array on a device; PyTorch\'s ``torch.Tensor``."""', ""]
    for name in _public_names(cls):
        attr = inspect.getattr_static(cls, name)
        if isinstance(attr, property) or type(attr).__name__ == "getset_descriptor":
            lines += ["    @property", f"    def {name}(self) -> "
                      f"{_PROPERTY_TYPES.get(name, 'Any')}: ..."]
            continue
        if not callable(getattr(cls, name, None)):
            lines.append(f"    {name}: Any")
            continue
        is_static = isinstance(attr, staticmethod)
        params = _params(getattr(cls, name), not is_static)
        if params == ["self", "*args: Any", "**kwargs: Any"] and name.endswith("_") \
                and callable(getattr(cls, name[:-1], None)):
            # an in-place form built as a wrapper takes its out-of-place form's arguments
            params = [p for p in _params(getattr(cls, name[:-1]), True) or params
                      if not p.startswith("out:")]
            params = params[:-1] if params[-1] == "*" else params
        if params is None:
            params = ["*args: Any", "**kwargs: Any"] if is_static else \
                ["self", "*args: Any", "**kwargs: Any"]
        if is_static:
            lines.append("    @staticmethod")
        ignore = ""
        if name in _TENSOR_VALUED and name.startswith("__") and name not in _UNARY_DUNDERS \
                and name != "__getitem__":
            params = ["self", "other: Any"]          # a binary operator, one way for all
            if name in ("__eq__", "__ne__"):
                ignore = "  # type: ignore[override]"   # elementwise, not object's bool
        lines.append(f"    def {name}({', '.join(params)}) -> {_returns(name, table)}: ...{ignore}")
    return "\n".join(lines) + "\n"


def write_or_check(path, text, argv, command):
    """Write a generated stub's ``text`` to ``path``; with ``--check`` in ``argv``, write
    nothing and return 1 if the file differs (``command`` regenerates it)."""
    if "--check" in argv:
        with open(path) as f:
            if f.read() != text:
                print(f"{path} is stale: run {command}")
                return 1
        return 0
    with open(path, "w") as f:
        f.write(text)
    return 0


def main(argv):
    return write_or_check(STUB, render(), argv, "python -m ember.core.tensor_stub")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
