"""PyTorch's public API, walked name by name against ember (PyTorch 2.13 is the oracle).

The per-module table prints with ``python tests/api/_walk.py`` (``-v`` lists every gap).
The figures below are floors: raise them as names are filled, never lower them.
"""
import importlib.util
import pathlib

import pytest

pytest.importorskip("torch")


def _load(name):
    spec = importlib.util.spec_from_file_location(
        f"_ember_api_{name}", pathlib.Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_walk = _load("_walk")
_omissions = _walk._omissions

# percent of the non-omitted names present (names other work owns count as missing)
OVERALL_FLOOR = 99.8
# the same, over the names no other piece of work owns
OWN_FLOOR = 99.9
# per module: percent present.  Recorded against torch 2.13 with the in-tree ember-cuda
# plugin installed (its runtime module supplies ember.cuda's device and stream calls), after
# the special, distributions, serialization, distributed, compile and func work merged (torch:
# after export, cond and the zip file classes)
MODULE_FLOORS = {
    **dict.fromkeys([
        "torch.amp", "torch.cuda", "torch.fft", "torch.linalg", "torch.nn.functional",
        "torch.nn.init", "torch.nn.modules.activation", "torch.nn.modules.adaptive",
        "torch.nn.modules.channelshuffle", "torch.nn.modules.container",
        "torch.nn.modules.conv", "torch.nn.modules.distance", "torch.nn.modules.dropout",
        "torch.nn.modules.flatten", "torch.nn.modules.fold", "torch.nn.modules.instancenorm",
        "torch.nn.modules.lazy", "torch.nn.modules.linear",
        "torch.nn.modules.linear_cross_entropy_options", "torch.nn.modules.loss",
        "torch.nn.modules.module", "torch.nn.modules.normalization",
        "torch.nn.modules.padding", "torch.nn.modules.pixelshuffle",
        "torch.nn.modules.pooling", "torch.nn.modules.rnn", "torch.nn.modules.sparse",
        "torch.nn.modules.transformer", "torch.nn.modules.upsampling",
        "torch.nn.modules.utils", "torch.nn.utils", "torch.nn.utils.parametrizations",
        "torch.nn.utils.rnn", "torch.optim", "torch.optim.lr_scheduler", "torch.testing",
        "torch.utils.checkpoint", "torch.Tensor", "torch.autograd", "torch.utils.data",
        "torch.special", "torch.distributions", "torch.serialization", "torch.futures",
        "torch.nn.modules.batchnorm"
    ], 100.0),
    "torch": 99.8,
    "torch.nn": 100.0,
    "torch.nn.modules": 100.0,
}
# callables whose keyword names differ from PyTorch's, at most
KEYWORD_GAPS_CEILING = 78


@pytest.fixture(scope="module")
def rows():
    return _walk.collect()


def test_table_prints(rows, capsys):
    with capsys.disabled():
        print("\n" + _walk.format_table(rows))


def test_overall_floor(rows):
    assert _walk.overall(rows)[2] >= OVERALL_FLOOR
    assert _walk.overall(rows, exclude_pending=True)[2] >= OWN_FLOOR


def test_module_floors(rows):
    table = _walk.table(rows)
    low = {m: round(table[m][-1], 1) for m, floor in MODULE_FLOORS.items()
           if table[m][-1] < floor}
    assert not low, f"modules below their recorded coverage: {low}"


def test_keyword_gaps(rows):
    gaps = [f"{r.module}.{r.name}: {', '.join(r.kw_missing)}" for r in rows if r.kw_missing]
    assert len(gaps) <= KEYWORD_GAPS_CEILING, "\n".join(gaps)


def test_every_omission_category_has_a_reason_and_is_used(rows):
    used = {r.detail for r in rows if r.status == "omitted"}
    for cat, (reason, patterns) in _omissions.OMITTED.items():
        assert len(reason) > 30 and patterns, cat
        assert cat in used, f"omission category {cat!r} matches no PyTorch name"


def test_omitted_names_are_not_half_there(rows):
    """A name on the omission list that ember has after all belongs off the list."""
    import ember  # noqa: F401
    present = []
    for r in rows:
        if r.status != "omitted":
            continue
        emod = _walk._ember_module(_walk.ember_path(r.module))
        if emod is not None and hasattr(emod, r.name):
            present.append(f"{r.module}.{r.name}")
    assert not present, present


def test_classes_resolve_at_their_module_path(rows):
    """Pickles name a class by ``__module__`` + ``__qualname__``: that path gives it back."""
    import importlib
    import inspect
    wrong = []
    for r in rows:
        if r.status != "present":
            continue
        emod = _walk._ember_module(_walk.ember_path(r.module))
        obj = getattr(emod, r.name, None)
        if not inspect.isclass(obj) or r.module == "torch.Tensor":
            continue
        try:
            home = importlib.import_module(obj.__module__)
            found = home
            for part in obj.__qualname__.split("."):
                found = getattr(found, part)
        except Exception as e:          # noqa: BLE001  (any failure is the finding)
            found = e
        if found is not obj:
            wrong.append(f"{r.module}.{r.name} -> {obj.__module__}.{obj.__qualname__}")
    assert not wrong, wrong
