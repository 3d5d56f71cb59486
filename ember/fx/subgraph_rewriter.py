"""Pattern rewriting (``torch.fx.subgraph_rewriter``): find every non-overlapping copy of a
pattern graph in a GraphModule and put a replacement graph in its place.

A pattern's placeholders match any value; its other nodes must match op, target and argument
structure.  A match is only rewritten when nothing outside it reads its intermediate values,
since those values disappear with it.
"""
from typing import NamedTuple

from ember.fx.graph_module import GraphModule, _copy_attr
from ember.fx.node import Node

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    """One rewritten occurrence: ``anchor`` is the graph node that matched the pattern's
    output value; ``nodes_map`` maps each pattern node to the graph node it matched."""
    anchor: Node
    nodes_map: dict


def _as_graph_module(obj):
    if isinstance(obj, GraphModule):
        return obj
    from ember.fx._symbolic_trace import symbolic_trace
    return symbolic_trace(obj)


def _match_arg(pa, ga, nodes_map):
    if isinstance(pa, Node):
        return isinstance(ga, Node) and _match_node(pa, ga, nodes_map)
    if isinstance(pa, (list, tuple)):
        return (type(pa) is type(ga) and len(pa) == len(ga)
                and all(_match_arg(p, g, nodes_map) for p, g in zip(pa, ga)))
    if isinstance(pa, dict):
        return (isinstance(ga, dict) and pa.keys() == ga.keys()
                and all(_match_arg(pa[k], ga[k], nodes_map) for k in pa))
    return not isinstance(ga, Node) and type(pa) is type(ga) and pa == ga


def _match_node(pn, gn, nodes_map):
    """Whether the pattern rooted at ``pn`` matches the graph at ``gn`` (extends
    ``nodes_map`` in place; callers discard it on failure)."""
    if pn in nodes_map:
        return nodes_map[pn] is gn
    if pn.op == "placeholder":
        if gn in nodes_map.values():
            return False                # two pattern inputs cannot be one value
        nodes_map[pn] = gn
        return True
    if pn.op != gn.op or pn.target != gn.target:
        return False
    nodes_map[pn] = gn
    return (_match_arg(pn.args, gn.args, nodes_map)
            and _match_arg(pn.kwargs, gn.kwargs, nodes_map))


def _self_contained(nodes_map, anchor):
    """Only the anchor's value may be read outside the match."""
    inner = {g for p, g in nodes_map.items() if p.op != "placeholder"}
    for g in inner:
        if g is not anchor and any(u not in inner for u in g.users):
            return False
    return True


def replace_pattern(gm, pattern, replacement):
    """Replace each match of ``pattern`` in ``gm``'s graph with ``replacement`` (both
    callables, traced with ``symbolic_trace``, or GraphModules); returns the Matches.

    The pattern must return a single value.  ``gm`` is recompiled afterwards.
    """
    pattern_gm = _as_graph_module(pattern)
    replacement_gm = _as_graph_module(replacement)
    p_nodes = list(pattern_gm.graph.nodes)
    p_inputs = [n for n in p_nodes if n.op == "placeholder"]
    p_output = next(n for n in p_nodes if n.op == "output").args[0]
    if not isinstance(p_output, Node):
        raise NotImplementedError("replace_pattern: the pattern must return one value")
    r_nodes = list(replacement_gm.graph.nodes)
    r_inputs = [n for n in r_nodes if n.op == "placeholder"]
    if len(r_inputs) != len(p_inputs):
        raise ValueError(f"replace_pattern: the pattern takes {len(p_inputs)} inputs but the "
                         f"replacement takes {len(r_inputs)}")
    graph = gm.graph
    for n in r_nodes:
        if n.op in ("get_attr", "call_module"):
            _copy_attr(replacement_gm, gm, n.target)
    matches, used = [], set()
    for anchor in list(graph.nodes):
        if anchor in used or anchor.op in ("placeholder", "output"):
            continue
        nodes_map = {}
        if not _match_node(p_output, anchor, nodes_map) or not _self_contained(nodes_map,
                                                                               anchor):
            continue
        inner = [g for p, g in nodes_map.items() if p.op != "placeholder"]
        if any(g in used for g in inner):
            continue
        used.update(inner)
        val_map = {r: nodes_map[p] for r, p in zip(r_inputs, p_inputs)}
        with graph.inserting_before(anchor):
            out = graph.graph_copy(replacement_gm.graph, val_map)
        if not isinstance(out, Node):
            raise NotImplementedError("replace_pattern: the replacement must return one "
                                      "value")
        anchor.replace_all_uses_with(out)
        order = {n: i for i, n in enumerate(graph.nodes)}
        for g in sorted(inner, key=order.__getitem__, reverse=True):
            graph.erase_node(g)
        matches.append(Match(anchor, nodes_map))
    gm.recompile()
    return matches
