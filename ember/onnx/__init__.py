"""``ember.onnx``: importable, so scripts that guard an export still run; exporting is not
implemented (ember has no ONNX graph builder yet)."""

__all__ = ["export", "is_in_onnx_export"]


def is_in_onnx_export():
    """Whether an ONNX export is running (never, in ember)."""
    return False


def export(model, args=(), f=None, *, kwargs=None, export_params=True, verbose=None,
           input_names=None, output_names=None, opset_version=None, dynamic_axes=None,
           dynamo=False, **options):
    """Not implemented: raises NotImplementedError saying what to use instead."""
    raise NotImplementedError(
        "ember.onnx.export: exporting a model to ONNX is not implemented in ember. Save the "
        "weights with ember.save(model.state_dict(), path) (or safetensors) and rebuild the "
        "model where it is needed.")
