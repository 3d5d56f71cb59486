"""``ember.export.save`` / ``load``: an ExportedProgram in a ``.pt2`` zip archive.

The archive has PyTorch's layout (``archive_format`` = ``pt2``, ``models/model.json``,
``data/...``, ``extra/<name>``) but ember's own program description: ``model.json`` holds
the graph in ember's operators (see ``_json_graph``), the signature, the symbolic size
ranges and the call structure; parameters, buffers, constants and the example inputs are
PyTorch zip checkpoints (``ember.save``) inside it, read back with ``weights_only=True``.
Loading never runs code from the file.  PyTorch's ``.pt2`` files describe graphs of ATen
operators, which ember does not have: ``load`` refuses them with that reason, and
PyTorch cannot load ember's.
"""
import io
import json
import os

from ember.export import _json_graph as J
from ember.export.graph_signature import (
    ConstantArgument,
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)

__all__ = ["load", "save"]

_PRODUCER = "ember"
_SCHEMA = 1


# ---- signature and checks -----------------------------------------------------------------

def _enc_arg(arg, arrays):
    if isinstance(arg, ConstantArgument):
        return {"constant": [arg.name, J.encode_value(arg.value, arrays)]}
    return {"tensor": arg.name}


def _dec_arg(j, arrays):
    if "constant" in j:
        name, value = j["constant"]
        return ConstantArgument(name, J.decode_value(value, {}, arrays))
    return TensorArgument(j["tensor"])


def _enc_signature(sig, arrays):
    return {"inputs": [{"kind": s.kind.name, "arg": _enc_arg(s.arg, arrays), "target": s.target,
                        "persistent": s.persistent} for s in sig.input_specs],
            "outputs": [{"kind": s.kind.name, "arg": _enc_arg(s.arg, arrays),
                         "target": s.target} for s in sig.output_specs]}


def _dec_signature(j, arrays):
    ins = [InputSpec(InputKind[s["kind"]], _dec_arg(s["arg"], arrays), s["target"],
                     s["persistent"]) for s in j["inputs"]]
    outs = [OutputSpec(OutputKind[s["kind"]], _dec_arg(s["arg"], arrays), s["target"])
            for s in j["outputs"]]
    return ExportGraphSignature(ins, outs)


def _enc_ranges(ranges):
    return {str(sym): [int(vr.lower), int(vr.upper) if vr.upper.is_finite else None]
            for sym, vr in ranges.items()}


def _dec_ranges(j):
    import sympy

    from ember.fx.experimental.symbolic_shapes import ValueRange
    out = {}
    for name, (lo, hi) in j.items():
        if not name.isidentifier() or type(lo) is not int or not (hi is None or type(hi) is int):
            raise J.FormatError(f"ember.export.load: invalid range constraint {name}: "
                                f"{[lo, hi]}")
        out[sympy.Symbol(name, integer=True, positive=True)] = ValueRange(
            sympy.Integer(lo), sympy.oo if hi is None else sympy.Integer(hi))
    return out


def _enc_checks(checks):
    return [[c.name, c.leaf, c.dtype.name, [d if isinstance(d, int) else list(d)
                                            for d in c.dims]] for c in checks]


def _dec_checks(j):
    from ember.core import _dtype as _dtypes
    from ember.export._unlift import InputCheck
    return [InputCheck(name, leaf, _dtypes._dtype_by_name[dtype],
                       [d if isinstance(d, int) else tuple(d) for d in dims])
            for name, leaf, dtype, dims in j]


# ---- the archive --------------------------------------------------------------------------

def _archive_name(f):
    if isinstance(f, (str, os.PathLike)):
        return os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    return "archive"


def _checkpoint(obj):
    import ember
    buf = io.BytesIO()
    ember.save(obj, buf)
    return buf.getvalue()


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2):
    """Write ExportedProgram ``ep`` to ``f`` (a path or a binary file object) as a ``.pt2``
    archive; ``extra_files`` (name -> str or bytes) are stored beside it."""
    import numpy as np

    import ember
    from ember.export.exported_program import ExportedProgram
    from ember.serialization._zipfile import ZipWriter
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', got "
                        f"'{type(ep).__name__}' instead.")
    arrays = []
    sig = ep.call_spec
    model = {"producer": _PRODUCER, "schema_version": _SCHEMA,
             "graph": J.encode_graph(ep.graph, arrays),
             "subgraphs": {name: J.encode_graph(gm.graph, arrays)
                           for name, gm in ep._subgraphs.items()},
             "signature": _enc_signature(ep.graph_signature, arrays),
             "range_constraints": _enc_ranges(ep.range_constraints),
             "in_spec": J.encode_spec(sig.in_spec), "out_spec": J.encode_spec(sig.out_spec),
             "forward_arg_names": ep.module_call_graph[0].signature.forward_arg_names,
             "submodules": [e.fqn for e in ep.module_call_graph[1:]],
             "input_leaves": list(ep._input_leaves),
             "input_checks": _enc_checks(ep._input_checks),
             "constant_inputs": [[i, J.encode_value(v, arrays)] for i, v in ep._constant_inputs],
             "training": ep.graph_module.training, "opset_version": opset_version or {}}
    state = {"state_dict": dict(ep.state_dict), "constants": dict(ep.constants),
             "arrays": [ember.from_numpy(np.ascontiguousarray(a)) for a in arrays]}

    def write(fh):
        w = ZipWriter(fh, _archive_name(f))
        w.write_record("archive_format", b"pt2")
        w.write_record("archive_version", b"0")
        w.write_record("models/model.json", json.dumps(model).encode())
        w.write_record("data/weights/model_state.pt", _checkpoint(state))
        w.write_record("data/sample_inputs/model.pt", _checkpoint(ep.example_inputs))
        for name, content in (extra_files or {}).items():
            w.write_record(f"extra/{name}",
                           content.encode() if isinstance(content, str) else bytes(content))
        w.write_record(".data/version", b"1\n")
        w.write_record("byteorder", b"little")
        w.close()
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            write(fh)
    else:
        write(f)


def _read(reader, name, what):
    if not reader.has_record(name):
        raise J.FormatError(f"ember.export.load: the archive has no {what} ({name})")
    return bytes(reader.record(name))


def load(f, *, extra_files=None, expected_opset_version=None):
    """The ExportedProgram ``save`` wrote to ``f`` (a path or a binary file object);
    ``extra_files`` (name -> anything) gets the stored extra files' contents (str)."""
    from ember.serialization._container import CorruptCheckpoint
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return load(io.BytesIO(fh.read()), extra_files=extra_files,
                        expected_opset_version=expected_opset_version)
    try:
        return _load(f, extra_files)
    except CorruptCheckpoint as e:
        raise RuntimeError(f"ember.export.load: {e}") from None
    except (KeyError, ValueError, TypeError) as e:
        raise J.FormatError(f"ember.export.load: the program description is invalid "
                            f"({type(e).__name__}: {e})") from None


def _load(f, extra_files):
    import ember
    from ember.serialization._zipfile import ZipReader
    reader = ZipReader(f)
    if _read(reader, "archive_format", "archive format record") != b"pt2":
        raise J.FormatError("ember.export.load: not a .pt2 archive")
    model = json.loads(_read(reader, "models/model.json", "program description"))
    if not isinstance(model, dict) or model.get("producer") != _PRODUCER:
        raise J.FormatError("ember.export.load: this .pt2 archive was not written by "
                            "ember.export.save (PyTorch's describe graphs of ATen operators, "
                            "which ember cannot run)")
    if model.get("schema_version") != _SCHEMA:
        raise J.FormatError(f"ember.export.load: unsupported schema version "
                            f"{model.get('schema_version')!r}")
    state = ember.load(io.BytesIO(_read(reader, "data/weights/model_state.pt", "weights")),
                       weights_only=True)
    example = ember.load(io.BytesIO(_read(reader, "data/sample_inputs/model.pt",
                                          "example inputs")), weights_only=True)
    arrays = [t.numpy() for t in state["arrays"]]
    for name in list(extra_files or {}):
        extra_files[name] = _read(reader, f"extra/{name}", f"extra file {name!r}").decode()
    return _program(model, state, example, arrays)


def _program(model, state, example, arrays):
    from ember.export.exported_program import ExportedProgram, ModuleCallEntry, ModuleCallSignature
    from ember.fx.graph_module import GraphModule
    subgraphs = {name: J._subgraph_module(J.decode_graph(g, arrays))
                 for name, g in model["subgraphs"].items()}
    gm = GraphModule(subgraphs, J.decode_graph(model["graph"], arrays))
    gm.training = bool(model["training"])
    call = ModuleCallSignature([], [], J.decode_spec(model["in_spec"]),
                               J.decode_spec(model["out_spec"]), model["forward_arg_names"])
    calls = [ModuleCallEntry("", call)] + [ModuleCallEntry(n) for n in model["submodules"]]
    ep = ExportedProgram(gm, None, _dec_signature(model["signature"], arrays),
                         state["state_dict"], _dec_ranges(model["range_constraints"]), calls,
                         example, state["constants"])
    ep._input_leaves = [int(i) for i in model["input_leaves"]]
    ep._input_checks = _dec_checks(model["input_checks"])
    ep._constant_inputs = [(i, J.decode_value(v, {}, arrays))
                           for i, v in model["constant_inputs"]]
    ep.validate()
    return ep
