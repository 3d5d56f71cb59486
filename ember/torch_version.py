"""TorchVersion (``torch.torch_version``): a version string that compares as a version."""
__all__ = ["TorchVersion"]


def _parts(text):
    """(release numbers, pre-release tag) of "1.2.3", "2.13.0+cpu", "2.1.0a0", ..."""
    import re
    core = str(text).split("+")[0]
    match = re.match(r"^(\d+(?:\.\d+)*)(.*)$", core)
    if not match:
        raise ValueError(f"invalid version: {text!r}")
    numbers = tuple(int(x) for x in match.group(1).split("."))
    return numbers, match.group(2)


class TorchVersion(str):
    """A ``str`` that also compares with version strings and tuples: ``ember.__version__ >=
    "0.1"``, ``TorchVersion("2.13.0") > (2, 1)``."""

    def _key(self, other):
        if isinstance(other, (tuple, list)):
            other = ".".join(str(x) for x in other)
        mine, theirs = _parts(self), _parts(other)
        width = max(len(mine[0]), len(theirs[0]))
        pad = lambda n: n + (0,) * (width - len(n))          # noqa: E731
        # a release sorts after its pre-releases ("" > "a0")
        return (pad(mine[0]), mine[1] == "", mine[1]), (pad(theirs[0]), theirs[1] == "",
                                                         theirs[1])

    def __lt__(self, other):
        a, b = self._key(other)
        return a < b

    def __le__(self, other):
        a, b = self._key(other)
        return a <= b

    def __gt__(self, other):
        a, b = self._key(other)
        return a > b

    def __ge__(self, other):
        a, b = self._key(other)
        return a >= b

    def __eq__(self, other):
        try:
            a, b = self._key(other)
        except ValueError:
            return str.__eq__(self, other)
        return a == b

    __hash__ = str.__hash__


internal_version = "0.1.0"
