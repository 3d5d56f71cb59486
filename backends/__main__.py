"""python -m ember.backends: list discovered plugins, their devices and availability.

python -m ember.backends new NAME [--dir PATH]: write a fresh plugin skeleton, ember-NAME."""
import argparse
import sys


def list_plugins():
    from importlib.metadata import version

    from ember.backends import GROUP, coverage, get_num_threads, plugins

    rows = plugins()
    print(f"ember {version('ember')}: {len(rows)} backend plugin(s) in entry-point group "
          f"'{GROUP}'")
    for row in rows:
        print(f"\n{row['name']}  ({row['dist']} {row['version']})")
        if row["error"]:
            print(f"  failed to load: {row['error']}")
            continue
        for d in row["devices"]:
            state = "available" if d["available"] else f"unavailable: {d['why']}"
            desc = f" - {d['description']}" if d["description"] else ""
            print(f"  device '{d['type']}' (dispatch key {d['key']}){desc}: {state}")
            if d["available"]:
                print_coverage(coverage(d["type"]))
    print(f"\nthreads: {get_num_threads()}")
    return 1 if any(r["error"] for r in rows) else 0


def print_coverage(c):
    """What a device's kernels leave to the core: the host fallback, composites."""
    print(f"    kernel ABI {c['abi']}; host fallback for: {', '.join(c['host_fallback']) or '-'}"
          f"; the core's own path for: {', '.join(c['composite']) or '-'}")
    if c["declared_unimplemented"]:
        print(f"    declared unimplemented: {', '.join(c['declared_unimplemented'])}")
    if c["table_composites"]:
        print(f"    composites on the device for: {', '.join(c['table_composites'])}")
    for key, n in sorted(c["fallbacks"].items()):
        print(f"    fell back to the host: {key} x{n}")


def new_plugin(name, directory):
    from ember.backends._skeleton import generate

    try:
        root = generate(name, directory)
    except (ValueError, FileExistsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {root}\n\nnext:\n  cd {root}\n  pip install --no-build-isolation -e .\n"
          f"  python -c \"import ember; print(ember.zeros(3, device='{name}').cpu())\"\n"
          f"  pytest tests")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ember.backends",
                                     description="ember's backend plugins")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("list", help="list discovered plugins and their devices (default)")
    new = commands.add_parser("new", help="write a fresh plugin skeleton, ember-NAME")
    new.add_argument("name", metavar="NAME", help="the device type (a lowercase identifier)")
    new.add_argument("--dir", default=".", metavar="PATH",
                     help="where to create ember-NAME (default: the current directory)")
    args = parser.parse_args(argv)
    if args.command == "new":
        return new_plugin(args.name, args.dir)
    return list_plugins()


if __name__ == "__main__":
    sys.exit(main())
