"""ember.fx: programs as graphs (``torch.fx``).

``symbolic_trace`` records a Module's forward as a Graph of Nodes; a GraphModule runs a
Graph through generated Python code (``.code``); Interpreter and Transformer run or rewrite
a graph node by node; ``ember.fx.passes`` holds graph passes.  ``ember.compile`` captures
its graphs through the dispatcher and hands them to backends as GraphModules.

``ember.fx.experimental`` holds symbolic shapes; importing ember.fx does not import SymPy.
"""
from ember.fx._symbolic_trace import PH as PH
from ember.fx._symbolic_trace import PHBase as PHBase
from ember.fx._symbolic_trace import Tracer as Tracer
from ember.fx._symbolic_trace import symbolic_trace as symbolic_trace
from ember.fx._symbolic_trace import wrap as wrap
from ember.fx.graph import Graph as Graph
from ember.fx.graph_module import GraphModule as GraphModule
from ember.fx.interpreter import Interpreter as Interpreter
from ember.fx.interpreter import Transformer as Transformer
from ember.fx.node import Node as Node
from ember.fx.node import has_side_effect as has_side_effect
from ember.fx.node import map_arg as map_arg
from ember.fx.proxy import Proxy as Proxy

__all__ = ["PH", "Graph", "GraphModule", "Interpreter", "Node", "PHBase", "Proxy", "Tracer",
           "Transformer",
           "has_side_effect", "map_arg", "symbolic_trace", "wrap"]
