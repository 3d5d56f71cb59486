"""What must be C, generated from the op table (core/optable.py): the op-code enums of
``ember/abi.h``, their Cython declarations in ``ember_abi.pxd`` and ``ember/abi_tables.h``.

``python -m ember.core.optable_codegen`` rewrites the three files in place (the two
hand-written ones between their markers); ``--check`` exits non-zero when one is stale,
which ``tests/core/test_optable.py`` runs in CI.  Imports nothing of ember but the table.
"""
import os
import sys
import textwrap

from ember.core import optable

_HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.path.join(_HERE, "include")
ABI_H = os.path.join(INCLUDE, "ember", "abi.h")
ABI_PXD = os.path.join(INCLUDE, "ember_abi.pxd")
TABLES_H = os.path.join(INCLUDE, "ember", "abi_tables.h")

C_BEGIN = ("/* ---- op codes of the uniform families: generated from core/optable.py by\n"
           " * `python -m ember.core.optable_codegen`; edit the table, not these lines ---- */\n")
C_END = "/* ---- end of the generated op codes ---- */\n"
PXD_BEGIN = "    # ---- generated from core/optable.py: python -m ember.core.optable_codegen ----\n"
PXD_END = "    # ---- end of the generated op codes ----\n"
WIDTH = 100


def _comment(text, indent):
    lines = textwrap.wrap(text, WIDTH - len(indent) - 6)
    if len(lines) == 1 and len(indent) + len(lines[0]) + 6 <= WIDTH:
        return f"{indent}/* {lines[0]} */\n"
    body = f"\n{indent} * ".join(lines)
    return f"{indent}/* {body} */\n"


def _packed(items, indent, sep=", ", end=","):
    """items joined on lines of at most WIDTH characters."""
    out, line = [], indent
    for i, item in enumerate(items):
        piece = item + (end if i == len(items) - 1 else sep.rstrip())
        if line != indent and len(line) + 1 + len(piece) > WIDTH:
            out.append(line)
            line = indent
        line += ("" if line == indent else " ") + piece
    out.append(line)
    return "\n".join(out) + "\n"


def c_enum(fam):
    """One family's enum, as abi.h declares it: each op's note above the codes it heads."""
    prefix = f"EMBER_{fam.name.upper()}_"
    groups = [[None, []]]                               # [note, codes] runs
    for d in fam.ops:
        if d.note:
            groups.append([d.note, []])
        groups[-1][1].append(f"{prefix}{d.enum} = {d.code}")
    groups[-1][1].append(f"{prefix}COUNT = {len(fam.ops)}")
    body = "".join((_comment(note, "    ") if note else "") + _packed(codes, "    ")
                   for note, codes in groups if codes)
    return _comment(fam.note, "") + "enum {\n" + body[:-2] + "\n};\n"   # no comma after COUNT


def abi_h_region():
    return C_BEGIN + "\n" + "\n".join(c_enum(f) for f in optable.FAMILIES) + C_END


def pxd_region():
    out = [PXD_BEGIN]
    for fam in optable.FAMILIES:
        prefix = f"EMBER_{fam.name.upper()}_"
        names = [prefix + d.enum for d in fam.ops] + [prefix + "COUNT"]
        lines = _packed(names, "        ", end="").replace(",\n", "\n")
        out.append("    enum:\n" + lines)
        out.append("\n")
    return "".join(out[:-1]) + PXD_END


def tables_h():
    """ember/abi_tables.h: each op's name and the dtypes its kernel takes, per family."""
    out = ["/* Op names and kernel dtypes of the uniform families, indexed by op code.\n"
           " * Generated from core/optable.py by `python -m ember.core.optable_codegen`: do\n"
           " * not edit.  A plugin may include it to name ops in its messages and to answer\n"
           " * EMBER_ERR_NOT_IMPLEMENTED for a dtype the core never passes. */\n"
           "#ifndef EMBER_ABI_TABLES_H\n#define EMBER_ABI_TABLES_H\n\n"
           "#include <stdint.h>\n\n#include \"ember/abi.h\"\n\n"
           "/* a set of dtypes: bit (1 << dtype code) */\n"
           "#define EMBER_DTYPE_BIT(code) (UINT32_C(1) << (code))\n"]
    for name, dts in optable.DTYPE_SETS.items():
        bits = [f"EMBER_DTYPE_BIT(EMBER_{d.upper()})" for d in dts]
        out.append(f"#define EMBER_DTYPES_{name.upper()} \\\n    ({_wrap_bits(bits)})\n")
    for fam in optable.FAMILIES:
        up = fam.name.upper()
        names = [f'"{d.enum.lower()}"' for d in fam.ops]     # as ember.backends names them
        out.append(f"\nstatic const char *const ember_{fam.name}_names[EMBER_{up}_COUNT] = {{\n"
                   + _packed(names, "    ", end="") + "};\n")
        sets = [f"EMBER_DTYPES_{d.dtypes.upper()}" for d in fam.ops]
        out.append(f"static const uint32_t ember_{fam.name}_dtypes[EMBER_{up}_COUNT] = {{\n"
                   + _packed(sets, "    ", end="") + "};\n")
    out.append("\n#endif\n")
    return "".join(out)


def _wrap_bits(bits):
    """`bits[0] | bits[1] | ...` over continued macro lines."""
    lines = _packed(bits, "     ", sep=" |", end="").rstrip("\n").split("\n")
    return " \\\n".join(lines).strip()


def _replace(text, begin, end, region, path):
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < 0:
        raise RuntimeError(f"{path}: the generated region's markers are missing")
    return text[:i] + region + text[j + len(end):]


def rendered():
    """{path: the file's text as the table makes it}."""
    with open(ABI_H, encoding="utf-8") as f:
        abi = _replace(f.read(), C_BEGIN, C_END, abi_h_region(), ABI_H)
    with open(ABI_PXD, encoding="utf-8") as f:
        pxd = _replace(f.read(), PXD_BEGIN, PXD_END, pxd_region(), ABI_PXD)
    return {ABI_H: abi, ABI_PXD: pxd, TABLES_H: tables_h()}


def stale():
    """The generated files whose text differs from what the table makes."""
    out = []
    for path, text in rendered().items():
        try:
            with open(path, encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = None
        if current != text:
            out.append(path)
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--check" in argv:
        bad = stale()
        for path in bad:
            print(f"stale: {path} (run python -m ember.core.optable_codegen)")
        return 1 if bad else 0
    for path, text in rendered().items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
