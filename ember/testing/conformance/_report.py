"""The coverage table (families x dtypes, passed/skipped/failed per cell), the one-line
verdict and the JSON report of a conformance run."""
import json
from collections import defaultdict

from ember.testing.conformance._abi import FAMILIES, UNCODED
from ember.testing.conformance._case import ANY
from ember.testing.conformance._data import DTYPES

__all__ = ["Tally", "ROWS"]

# ABI families first, then the behaviours that are not one kernel entry
ROWS = FAMILIES + UNCODED + ("large", "host", "inplace", "indexing", "autograd", "gradgrad",
                             "rng", "determinism", "devices", "errors", "training",
                             "selfcheck")
COLUMNS = DTYPES + (ANY,)
_SHORT = {"bool": "bool", "uint8": "u8", "int8": "i8", "int16": "i16", "int32": "i32",
          "int64": "i64", "float16": "f16", "bfloat16": "bf16", "float32": "f32",
          "float64": "f64", ANY: "-"}


class Tally:
    """Outcomes of the tagged tests of one run."""

    def __init__(self):
        self.cells = defaultdict(lambda: {"passed": 0, "skipped": 0, "failed": 0})
        self.declared = defaultdict(int)       # family -> cases skipped as unimplemented
        self.failures = []

    def add(self, family, dtype, outcome, nodeid="", key="", reason="", declared=False):
        self.cells[(family, dtype)][outcome] += 1
        if outcome == "skipped" and declared:
            self.declared[family] += 1
        if outcome == "failed":
            self.failures.append({"test": nodeid, "family": family, "dtype": dtype,
                                  "key": key, "reason": reason})

    def __bool__(self):
        return bool(self.cells)

    def verdict(self):
        failed = defaultdict(int)
        for f in self.failures:
            failed[f["family"]] += 1
        n_declared = sum(self.declared.values())
        if not failed:
            if not n_declared:
                return "conformant"
            return (f"conformant except {n_declared} cases declared unimplemented "
                    f"({_by_family(self.declared)})")
        line = f"not conformant: {len(self.failures)} failed ({_by_family(failed)})"
        if n_declared:
            line += f"; {n_declared} skipped as declared unimplemented"
        return line

    def table(self):
        """Text lines: one row per family seen, one column per dtype; a cell is the count
        passed, then "sN" skipped and "FN" failed when there are any; "." is no case."""
        rows = [r for r in ROWS if any((r, c) in self.cells for c in COLUMNS)]
        rows += sorted({f for f, _ in self.cells} - set(rows))
        cols = [c for c in COLUMNS if any((r, c) in self.cells for r in rows)]
        body = [[self._cell(r, c) for c in cols] for r in rows]
        widths = [max(len(_SHORT.get(c, c)), *(len(b[i]) for b in body))
                  for i, c in enumerate(cols)]
        head_w = max(len("family"), *(len(r) for r in rows))
        lines = ["family".ljust(head_w) + "  " +
                 "  ".join(_SHORT.get(c, c).rjust(w) for c, w in zip(cols, widths))]
        for r, b in zip(rows, body):
            lines.append(r.ljust(head_w) + "  " + "  ".join(v.rjust(w)
                                                           for v, w in zip(b, widths)))
        return lines

    def _cell(self, row, col):
        if (row, col) not in self.cells:
            return "."
        c = self.cells[(row, col)]
        text = str(c["passed"])
        if c["skipped"]:
            text += f" s{c['skipped']}"
        if c["failed"]:
            text += f" F{c['failed']}"
        return text

    def to_json(self, device, abi_version, ember_version):
        families = defaultdict(dict)
        for (family, dtype), counts in sorted(self.cells.items()):
            families[family][dtype] = dict(counts)
        return {"device": device, "abi_version": abi_version, "ember_version": ember_version,
                "verdict": self.verdict(),
                "conformant": not self.failures,
                "totals": {k: sum(c[k] for c in self.cells.values())
                           for k in ("passed", "skipped", "failed")},
                "declared_unimplemented": dict(self.declared),
                "families": families, "failures": self.failures}

    def write_json(self, path, **meta):
        with open(path, "w") as f:
            json.dump(self.to_json(**meta), f, indent=1, sort_keys=True)


def _by_family(counts):
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
