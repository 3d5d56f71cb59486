"""ember.backends._discovery: entry points read from *.dist-info folders without
importlib.metadata."""
import sys

from ember.backends import GROUP, _discovery
from ember.backends._discovery import EntryPoint, entry_points


def _dist(folder, dirname, text):
    d = folder / dirname
    d.mkdir(parents=True)
    if text is not None:
        (d / "entry_points.txt").write_text(text)
    return d


def test_parses_synthetic_dist_info(tmp_path):
    _dist(tmp_path, "foo_bar-1.2.dist-info", """\
# a comment
; another comment
[console_scripts]
foo-cli = foo_bar.cli:main

[ember.backends]
foo = foo_bar.plugin:hooks
  bar=foo_bar.other
# commented = not_a.plugin
baz = foo_bar.extra [fast]

[other.group]
ignored = nope.module
""")
    eps = entry_points(GROUP, path=[str(tmp_path)])
    assert [e.name for e in eps] == ["foo", "bar", "baz"]
    foo, bar, baz = eps
    assert foo == EntryPoint("foo", "foo_bar.plugin:hooks", "foo-bar", "1.2")
    assert foo.dist == "foo-bar" and foo.version == "1.2"
    assert foo.module == "foo_bar.plugin"
    assert bar.value == "foo_bar.other" and bar.module == "foo_bar.other"
    assert baz.value == "foo_bar.extra" and baz.module == "foo_bar.extra"   # extras dropped
    # other groups are read on request only
    assert entry_points("console_scripts", path=[str(tmp_path)]) == [
        EntryPoint("foo-cli", "foo_bar.cli:main", "foo-bar", "1.2")]
    assert [e.name for e in entry_points("other.group", path=[str(tmp_path)])] == ["ignored"]
    assert entry_points("no.such.group", path=[str(tmp_path)]) == []


def test_dist_name_normalised():
    assert _discovery._dist_of("foo_bar-1.2.dist-info") == ("foo-bar", "1.2")
    assert _discovery._dist_of("Foo_Bar-0.1.0.dist-info") == ("foo-bar", "0.1.0")
    assert _discovery._dist_of("ember_mps-0.1.0.dist-info") == ("ember-mps", "0.1.0")


def test_egg_info_is_read(tmp_path):
    _dist(tmp_path, "egg_plugin-3.0.egg-info", "[ember.backends]\negg = egg_mod\n")
    assert entry_points(GROUP, path=[str(tmp_path)]) == [
        EntryPoint("egg", "egg_mod", "egg-plugin", "3.0")]


def test_first_distribution_on_path_wins(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(first, "foo_bar-2.0.dist-info", "[ember.backends]\nfoo = new_mod\n")
    _dist(second, "foo_bar-1.0.dist-info", "[ember.backends]\nfoo = old_mod\nold = old_only\n")
    _dist(second, "other_dist-0.5.dist-info", "[ember.backends]\nother = other_mod\n")
    eps = entry_points(GROUP, path=[str(first), str(second)])
    assert [(e.name, e.value, e.dist, e.version) for e in eps] == [
        ("foo", "new_mod", "foo-bar", "2.0"),
        ("other", "other_mod", "other-dist", "0.5"),
    ]
    # the other order: the old one shadows the new one
    eps = entry_points(GROUP, path=[str(second), str(first)])
    assert [(e.name, e.value, e.version) for e in eps if e.dist == "foo-bar"] == [
        ("foo", "old_mod", "1.0"), ("old", "old_only", "1.0")]


def test_shadowing_dist_without_entry_points_hides_later_one(tmp_path):
    # as importlib.metadata: the first distribution of a name is the one that counts
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(first, "foo_bar-2.0.dist-info", None)
    _dist(second, "foo_bar-1.0.dist-info", "[ember.backends]\nfoo = old_mod\n")
    assert entry_points(GROUP, path=[str(first), str(second)]) == []


def test_missing_and_non_dir_path_entries_are_skipped(tmp_path):
    not_a_dir = tmp_path / "file.zip"
    not_a_dir.write_bytes(b"")
    _dist(tmp_path / "ok", "good-1.0.dist-info", "[ember.backends]\ngood = good_mod\n")
    eps = entry_points(GROUP, path=[str(tmp_path / "missing"), str(not_a_dir),
                                    str(tmp_path / "ok")])
    assert [e.name for e in eps] == ["good"]


def test_finds_installed_stubs_on_sys_path():
    eps = {e.name: e for e in entry_points(GROUP)}
    assert eps == {e.name: e for e in entry_points(GROUP, path=sys.path)}
    for name in ("mps", "xpu"):
        assert name in eps, f"stub plugin {name!r} not found in {sorted(eps)}"
        ep = eps[name]
        assert ep.dist == f"ember-{name}"
        assert ep.version == "0.1.0"
        assert ep.module == f"ember_{name}.plugin"
    names = [e.name for e in entry_points(GROUP)]
    assert len(names) == len(set(names)), names


def test_agrees_with_importlib_metadata():
    from importlib import metadata

    ours = {(e.name, e.value, e.dist, e.version) for e in entry_points(GROUP)}
    theirs = {(e.name, e.value, e.dist.name.replace("_", "-").lower(), e.dist.version)
              for e in metadata.entry_points(group=GROUP)}
    assert ours == theirs
