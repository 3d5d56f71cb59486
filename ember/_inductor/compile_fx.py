"""The "inductor" backend: fuse a captured graph into generated kernels.

``compile_fx`` lowers the graph (``lowering``), schedules kernels and extern calls
(``scheduler``), asks the device's plugin for its code generator (the
``ember_kernel_codegen`` hook: C with OpenMP on the CPU) and returns the wrapper.  Graphs
it cannot fuse (a device without a generator, ``fuse=False``) run op by op, exactly as
captured; graphs with symbolic sizes are fused per concrete shape (``specialize``).
"""
import sys

from ember._inductor import config

__all__ = ["InductorBackend", "compile_fx"]


def _device_of(example_inputs):
    """The one device the graph's tensor inputs live on (cpu without any), or None when
    they live on several (a CPU scalar beside GPU tensors: the kernels could not read it)."""
    import ember
    devices = {d for d in (getattr(x, "device", None) for x in example_inputs)
               if d is not None}           # tensors, fakes and tensor descriptions alike
    if len(devices) > 1:
        return None
    return devices.pop() if devices else ember.device("cpu")


def _static(gm):
    """Whether every size and stride the graph's values have is known: not so for a graph
    captured on fake tensors (dynamic shapes), whose inputs' strides are the fakes' own
    (contiguous) and whose guards do not check the real ones."""
    # fake tensors exist only once their module is loaded (it loads sympy: a real-tensor
    # capture must not pay that import)
    fake = sys.modules.get("ember._subclasses.fake_tensor")
    for node in gm.graph.nodes:
        v = node.meta.get("val")
        if node.op == "placeholder" and fake is not None and isinstance(v, fake.FakeTensor):
            return False
        shape = getattr(v, "shape", None)
        if node.op == "placeholder" and v is not None and shape is None and \
                not isinstance(v, (bool, int, float)):
            return False            # a symbolic size input
        if shape is not None and not all(isinstance(s, int) for s in shape):
            return False
    return True


def compile_fx(gm, example_inputs, config_patches=None):
    """Compile GraphModule ``gm``: a callable taking its inputs, returning its outputs."""
    opts = dict(config_patches or {})
    if not opts.get("fuse", config.fuse):
        return gm.forward
    if not _static(gm):
        from ember._inductor.specialize import SpecializingGraph
        return SpecializingGraph(gm, lambda static, args: compile_fx(static, args, opts))
    device = _device_of(example_inputs)
    if device is None:
        return gm.forward
    from ember.backends import kernel_codegen
    codegen = kernel_codegen(device.type)
    if codegen is None:
        return gm.forward
    from ember._inductor.kernel import KernelBoundsError
    from ember._inductor.scheduler import Scheduler
    sched = Scheduler(gm, device=device)
    try:
        src = sched.run()
    except KernelBoundsError as e:          # a lowering bug: never run such a kernel
        import warnings
        warnings.warn(f"{e}; this graph runs op by op", RuntimeWarning, stacklevel=2)
        return gm.forward
    kernels = [k for _, k, _ in sched.kernels]
    if not all(codegen.supports(k) for k in kernels):
        return gm.forward
    namespace = dict(sched.globals)
    if kernels:
        namespace.update(codegen.compile(kernels, device))
    if opts.get("debug", config.debug):
        print(src)
        if hasattr(codegen, "source"):
            print(codegen.source(kernels))
    from ember.core._autograd import _fw_scan
    from ember.core._dispatch import DispatchKey, live_mode_keys
    from ember.fx.graph_module import _exec_source
    source = src.replace("def call(", "def forward(", 1)
    fused = _exec_source(source, namespace)
    profiled = []                   # the same code with recorded kernels, made when first asked
    slow = gm.forward
    profiler_only = 1 << int(DispatchKey.Profiler)
    layouts = _input_layouts(gm)

    def call(*args):
        live = live_mode_keys()
        for i, strides in layouts:
            if args[i].stride() != strides:
                # the kernels index memory as the capture laid it out (a backward's saved
                # expand has stride 0 where the compiled forward wrote it out whole)
                from ember._dynamo.utils import counters
                counters["inductor"]["layout_fallbacks"] += 1
                return slow(*args)
        if live & ~profiler_only or max(_fw_scan(args)) >= 0:
            # another mode key (autocast, a Python mode, vmap) wants to see each op, or a
            # dual tensor carries a tangent (no mode key: forward-mode AD, jvp) that the
            # kernels would drop: replay the ops one by one, through the dispatcher
            return slow(*args)
        if not live:
            return fused(*args)
        # the profiler sees what runs: the compiled region, each fused kernel, and the
        # library ops (matmul, ...) the code calls through the dispatcher
        from ember.profiler import record_function
        if not profiled:
            profiled.append(_exec_source(source, {**namespace, **_recorded(namespace, kernels)}))
        with record_function("CompiledFunction"):
            return profiled[0](*args)
    call.source = src
    call.kernels = kernels
    call.externs = sched.externs
    return call


def _input_layouts(gm):
    """(position, strides) of the graph's tensor inputs, as its kernels read them."""
    out = []
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for i, node in enumerate(placeholders):
        v = node.meta.get("val")
        stride = getattr(v, "stride", None)
        if hasattr(v, "shape") and stride is not None:
            out.append((i, tuple(stride() if callable(stride) else stride)))
    return tuple(out)


def _recorded(namespace, kernels):
    """The kernels' launchers of ``namespace``, each recorded as a profiler event named as
    the kernel (``ember_fused_k4``)."""
    from ember.profiler import record_function

    def recorded(name, launch):
        label = f"ember_fused_{name}"

        def run(ptrs):
            with record_function(label):
                launch(ptrs)
        return run
    return {k.name: recorded(k.name, namespace[k.name]) for k in kernels}


class InductorBackend:
    """``ember.compile(backend="inductor", mode=..., options=...)``'s backend callable."""

    __name__ = "inductor"

    def __init__(self, mode=None, options=None, dynamic=None):
        options = dict(options or {})
        known = config.known_options()
        for key in options:
            if key not in known:
                raise RuntimeError(f"Unexpected optimization option {key}, known options are "
                                   f"{known}")
        self.mode, self.options, self.dynamic = mode, options, dynamic

    def __call__(self, gm, example_inputs):
        return compile_fx(gm, example_inputs, self.options)
