"""swap_in_optimizer_params_and_state: run optimizer APIs against other parameter tensors
and state for the duration of a ``with`` block."""
import contextlib

__all__ = ["swap_in_optimizer_params_and_state"]


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Within the block, ``optimizer``'s parameters are the tensors of
    ``swapin_parameters`` (in the order of its own) and its state and group hyperparameters
    those of ``swapin_optim_state`` (an ``optimizer.state_dict()``-shaped dict); in-place
    edits of the supplied tensors are what the block leaves behind, the live optimizer is
    restored on exit."""
    new_params = list(swapin_parameters.values())
    old_params = [p for g in optimizer.param_groups for p in g["params"]]
    if len(new_params) != len(old_params):
        raise ValueError(f"swapin_parameters has {len(new_params)} tensors but the optimizer "
                         f"holds {len(old_params)} parameters")
    saved_groups = [dict(g) for g in optimizer.param_groups]
    saved_state = optimizer.state
    by_id = dict(zip(range(len(new_params)), new_params))
    state = type(saved_state)() if hasattr(saved_state, "default_factory") else {}
    for pid, s in swapin_optim_state.get("state", {}).items():
        state[by_id[int(pid)]] = s
    try:
        for group, packed in zip(optimizer.param_groups, swapin_optim_state["param_groups"]):
            group.update({k: v for k, v in packed.items() if k != "params"})
            group["params"] = [by_id[int(i)] for i in packed["params"]]
        optimizer.state = state
        yield
    finally:
        optimizer.state = saved_state
        for group, saved in zip(optimizer.param_groups, saved_groups):
            group.clear()
            group.update(saved)
