"""``ember.export`` (``torch.export``): a Module's forward as one whole graph.

``export(mod, args)`` captures ``mod(*args)`` on fake tensors through ember's dispatcher (the
capture ``ember.compile`` uses) and returns an ``ExportedProgram``: a graph of ember's
primitive ops that takes the parameters, buffers and inputs, its signature, its state, and
``module()``, a Module that computes what ``mod`` computes.  ``dynamic_shapes`` with
``Dim``s makes sizes symbolic; a program that branches on tensor data cannot be exported
(use ``ember.cond``).  ``save``/``load`` write and read ``.pt2`` archives.
"""
from ember.export._api import default_decompositions as default_decompositions
from ember.export._api import export as export
from ember.export._serialize import load as load
from ember.export._serialize import save as save
from ember.export.dynamic_shapes import Dim as Dim
from ember.export.dynamic_shapes import ShapesCollection as ShapesCollection
from ember.export.dynamic_shapes import dims as dims
from ember.export.exported_program import ExportedProgram as ExportedProgram
from ember.export.exported_program import ModuleCallEntry as ModuleCallEntry
from ember.export.exported_program import ModuleCallSignature as ModuleCallSignature
from ember.export.graph_signature import ExportBackwardSignature as ExportBackwardSignature
from ember.export.graph_signature import ExportGraphSignature as ExportGraphSignature

CustomDecompTable = dict            # an op -> decomposition mapping (ember's is a plain dict)

__all__ = ["CustomDecompTable", "Dim", "ExportBackwardSignature", "ExportGraphSignature",
           "ExportedProgram", "ModuleCallEntry", "ModuleCallSignature", "ShapesCollection",
           "default_decompositions", "dims", "export", "load", "save"]
