"""ember.cuda.random (``torch.cuda.random``): the GPUs' generators (none without a GPU)."""
__all__ = ["default_generators", "get_rng_state_all", "set_rng_state_all"]  # noqa: F822


def _cuda():
    from ember import cuda
    return cuda


def get_rng_state_all():
    """The RNG state of every GPU ([] without one)."""
    cuda = _cuda()
    return [cuda.get_rng_state(i) for i in range(cuda.device_count())]


def set_rng_state_all(new_states):
    """Restore every GPU's RNG state from ``new_states``."""
    cuda = _cuda()
    for i, state in enumerate(new_states):
        cuda.set_rng_state(state, i)


def __getattr__(name):
    if name == "default_generators":          # one per GPU: () without one
        cuda = _cuda()
        if not cuda.is_available():
            return ()
        runtime = cuda._runtime()
        return tuple(getattr(runtime, "default_generators", ()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
