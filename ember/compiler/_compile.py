"""``ember.compile`` (``torch.compile``): argument checking and the choice of backend."""
import enum

__all__ = ["CompileMode", "compile"]


class CompileMode(str, enum.Enum):
    """The modes ``ember.compile`` accepts (a member or its string).  On the CPU they
    choose nothing yet: kernels are generated the same way in every mode."""

    DEFAULT = "default"
    REDUCE_OVERHEAD = "reduce-overhead"
    MAX_AUTOTUNE = "max-autotune"
    MAX_AUTOTUNE_NO_CUDAGRAPHS = "max-autotune-no-cudagraphs"

    def __str__(self):
        return self.value


def _check_mode(mode):
    if isinstance(mode, CompileMode):
        return mode.value
    valid = [m.value for m in CompileMode]
    if not isinstance(mode, str) or mode not in valid:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(valid)}")
    return mode


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, name=None, disable=False, recompile_limit=None,
            isolate_recompiles=False, shapes_spec=None):
    """Compile ``model`` (a function or a Module) so its calls run captured graphs.

    Args:
        model: the function or ``nn.Module``; None gives a decorator.
        fullgraph: raise ``ember._dynamo.exc.Unsupported`` (with the reason) instead of
            running a call eagerly when it cannot be captured whole.
        dynamic: True: sizes are symbolic from the first call; False: every size is
            specialised; None: specialised until a size changes, then symbolic.
        backend: ``"inductor"`` (fused C kernels, the default), ``"eager"``,
            ``"aot_eager"``, another registered name, or a callable
            ``backend(gm, example_inputs) -> callable``.
        mode: a ``CompileMode`` or its string ("default", "reduce-overhead",
            "max-autotune", "max-autotune-no-cudagraphs"); not together with ``options``.
        options: a dict of backend options (``ember._inductor.config`` names for
            inductor).
        name: an identifier for the compiled region (on the compiled function's
            ``CompiledFunction.name``, for debugging).
        disable: return ``model`` unchanged.
        recompile_limit: the most graphs this call keeps before running eagerly (default
            ``ember._dynamo.config.recompile_limit``).
        isolate_recompiles: accepted for PyTorch's signature: every ``compile()`` call in
            ember already keeps its own graphs and recompile count.
        shapes_spec: not supported (only None).

    A Module gives an ``OptimizedModule`` whose ``_orig_mod`` is ``model``; a function gives
    a function.
    """
    if model is None:
        def decorator(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, name=name, disable=disable,
                           recompile_limit=recompile_limit,
                           isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
        return decorator
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is None and options is None:
        mode = "default"
    if mode is not None:
        mode = _check_mode(mode)
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"compile(): options must be a dict, got {type(options).__name__}")
    if shapes_spec is not None:
        raise NotImplementedError("compile(): shapes_spec is not supported by ember")
    if recompile_limit is not None and (isinstance(recompile_limit, bool)
                                        or not isinstance(recompile_limit, int)
                                        or recompile_limit < 0):
        raise ValueError(f"compile(): recompile_limit must be a non-negative int, got "
                         f"{recompile_limit!r}")
    if dynamic not in (None, True, False):
        raise TypeError(f"compile(): dynamic must be True, False or None, got {dynamic!r}")
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is "
                             f"provided.")
    if disable:
        return model
    from ember._dynamo.eval_frame import optimize
    return optimize(_backend(backend, mode, options, dynamic), nopython=bool(fullgraph),
                    dynamic=dynamic, recompile_limit=recompile_limit, name=name)(model)


def _backend(backend, mode, options, dynamic):
    from ember._dynamo.backends.registry import lookup_backend
    if backend is None or backend == "inductor":
        from ember._inductor.compile_fx import InductorBackend
        return InductorBackend(mode, options, dynamic)
    fn = lookup_backend(backend)
    kwargs = {}
    if mode is not None and mode != "default":
        kwargs["mode"] = mode
    if options:
        kwargs["options"] = options
    if not kwargs:
        return fn

    def with_options(gm, example_inputs):
        return fn(gm, example_inputs, **kwargs)
    with_options.__name__ = getattr(fn, "__name__", "backend")
    return with_options
