"""python -m ember.backends: list discovered plugins, their devices and availability."""
import sys


def main():
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
          f"; core composites for: {', '.join(c['composite']) or '-'}")
    if c["declared_unimplemented"]:
        print(f"    declared unimplemented: {', '.join(c['declared_unimplemented'])}")
    for key, n in sorted(c["fallbacks"].items()):
        print(f"    fell back to the host: {key} x{n}")


if __name__ == "__main__":
    sys.exit(main())
