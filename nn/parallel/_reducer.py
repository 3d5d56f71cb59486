"""DistributedDataParallel's reducer: gradients averaged over the group in buckets, while
backward still runs.

Parameters are laid out in buckets (in reverse order of ``module.parameters()``, roughly the
order backward produces their gradients; one per dtype and device, at most ``bucket_cap``
bytes, the first one smaller so that communication starts early).  A post-accumulate-grad
hook copies each gradient into its bucket; a bucket whose gradients are all in starts its
all-reduce (non-blocking) — buckets start in index order, the same on every rank, as MPI
requires — and every later hook drives the ones in flight.  When the last bucket has started,
the reducer waits for all of them and writes the averages back into ``.grad``.

A communication hook (``register_comm_hook``) replaces the averaging all-reduce of each
bucket: it receives the bucket's gradients (not divided by the world size) as a GradBucket
and returns a Future of the reduced buffer, which is written back.  Under ``join()`` a rank
that ran out of inputs shadows the others' reductions with zero buckets (``shadow``)."""
import weakref

import ember

__all__ = []

_FIRST_BUCKET_BYTES = 1024 * 1024


class _Bucket:
    __slots__ = ("indices", "flat", "views", "pending", "work")

    def __init__(self, indices, params):
        p0 = params[indices[0]]
        total = sum(params[i].numel() for i in indices)
        self.indices = indices
        self.flat = ember.zeros(total, dtype=p0.dtype, device=p0.device)
        self.views = {}
        at = 0
        for i in indices:
            n = params[i].numel()
            self.views[i] = self.flat[at:at + n].view(params[i].shape)
            at += n
        self.pending = len(indices)
        self.work = None


def _assign_buckets(params, cap_bytes, first_cap_bytes):
    """Lists of parameter indices, in launch order."""
    open_, done = {}, []
    for i in reversed(range(len(params))):
        p = params[i]
        key = (p.dtype, str(p.device))
        indices, size = open_.get(key, ([], 0))
        indices.append(i)
        size += p.numel() * p.dtype.itemsize
        limit = first_cap_bytes if not done else cap_bytes
        if size >= limit:
            done.append(indices)
            open_.pop(key, None)
        else:
            open_[key] = (indices, size)
    done += [indices for indices, _ in open_.values()]
    order = {i: n for n, i in enumerate(reversed(range(len(params))))}
    return sorted(done, key=lambda b: order[b[0]])


class Reducer:
    """The gradient averaging of one DistributedDataParallel module."""

    def __init__(self, params, names, group, bucket_cap_bytes, gradient_as_bucket_view,
                 find_unused_parameters):
        from ember.distributed import _collectives, get_world_size
        self._all_reduce = _collectives._all_reduce_unchecked
        self.params = params
        self.names = names
        self.group = group
        self.world = get_world_size(group)
        self.as_view = gradient_as_bucket_view
        self.find_unused = find_unused_parameters
        self.buckets = [_Bucket(b, params) for b in
                        _assign_buckets(params, bucket_cap_bytes,
                                        min(_FIRST_BUCKET_BYTES, bucket_cap_bytes))]
        self.bucket_of = {i: b for b in self.buckets for i in b.indices}
        self.comm_hook = self.comm_state = None
        self.divisor = None            # join(): (work, tensor) counting the ranks still in
        self.divide_by_initial_world_size = True
        self.expect_hooks = False
        self.started = False           # a hook of this iteration ran
        self.ready = [False] * len(params)
        self.locally_used = [True] * len(params)
        self.next_bucket = 0
        self.handles = [p.register_post_accumulate_grad_hook(self._hook_for(i))
                        for i, p in enumerate(params)]
        if self.as_view:
            for i, p in enumerate(params):
                if p.grad is not None:
                    self._bind_view(i)

    def _hook_for(self, i):
        ref = weakref.ref(self)           # the hook must not keep a dropped DDP alive

        def hook(param):
            reducer = ref()
            if reducer is not None and reducer.expect_hooks:
                reducer._mark_ready(i)
        return hook

    # one iteration
    def ensure_prior_finished(self):
        """PyTorch's error when the previous backward left buckets unreduced."""
        if self.started:
            missing = [f"{i} ({self.names[i]})" for i, r in enumerate(self.ready) if not r]
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to "
                "`ember.nn.parallel.DistributedDataParallel`, and by making sure all `forward` "
                "function outputs participate in calculating loss. Parameter indices which "
                f"did not receive grad for rank {ember.distributed.get_rank()}: "
                + " ".join(missing))

    def prepare_for_backward(self, outputs):
        """Arm the hooks for the backward of ``outputs``; with find_unused_parameters, mark
        the parameters the graph does not reach as ready now."""
        self.expect_hooks = True
        self.started = False
        self.ready = [False] * len(self.params)
        self.locally_used = [True] * len(self.params)
        self.next_bucket = 0
        for b in self.buckets:
            b.pending, b.work = len(b.indices), None
        if self.find_unused:
            reached = _reachable_leaves(outputs)
            for i, p in enumerate(self.params):
                if id(p) not in reached:
                    self.locally_used[i] = False
                    self._mark_ready(i)

    def _bind_view(self, i):
        p, view = self.params[i], self.bucket_of[i].views[i]
        with ember.no_grad():
            view.copy_(p.grad)
        p.grad = view

    def _mark_ready(self, i):
        if self.ready[i]:
            raise RuntimeError(
                f"Expected to mark a variable ready only once. This error is caused by a "
                f"parameter ({self.names[i]}) receiving its gradient twice in one iteration "
                f"(a reentrant backward, or backward called twice on one forward's graph)")
        self.started = True
        self.ready[i] = True
        p, b = self.params[i], self.bucket_of[i]
        view = b.views[i]
        with ember.no_grad():
            if p.grad is None:
                view.zero_()
            elif self.as_view:
                if p.grad.data_ptr() != view.data_ptr():
                    self._bind_view(i)
            else:
                view.copy_(p.grad)
        b.pending -= 1
        while self.next_bucket < len(self.buckets) and \
                self.buckets[self.next_bucket].pending == 0:
            nb = self.buckets[self.next_bucket]
            nb.work = self._launch(self.next_bucket, nb.flat, nb)
            self.next_bucket += 1
        for bb in self.buckets[:self.next_bucket]:
            _poll(bb.work)                 # drive MPI's progress while backward runs
        if self.next_bucket == len(self.buckets):
            self._finalize()

    # the reduction of one bucket
    def register_comm_hook(self, state, hook):
        if self.comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        self.comm_hook, self.comm_state = hook, state

    def _launch(self, index, flat, bucket):
        """Start reducing ``flat`` (bucket ``index``'s gradients, or zeros shadowing it):
        a Work, or the comm hook's Future."""
        if self.comm_hook is None:
            with ember.no_grad():
                flat.div_(self._divisor())
            return self._all_reduce(flat, self.group)
        n, views = 0, []
        for i in bucket.indices:
            size = self.params[i].numel()
            views.append(flat[n:n + size].view(self.params[i].shape))
            n += size
        grad_bucket = ember.distributed.GradBucket(
            index, len(self.buckets), flat, views, [self.params[i] for i in bucket.indices])
        fut = self.comm_hook(self.comm_state, grad_bucket)
        if not isinstance(fut, ember.futures.Future):
            raise TypeError(f"a DDP communication hook must return an ember.futures.Future "
                            f"of the reduced bucket, got {type(fut).__name__}")
        return fut

    def _divisor(self):
        """What gradients are divided by: the world size, or under join() (with
        divide_by_initial_world_size=False) the number of ranks still training."""
        if self.divisor is None or self.divide_by_initial_world_size:
            return self.world
        work, count = self.divisor
        work.wait()
        return int(count.item())

    def _result(self, index, bucket):
        """Wait for bucket ``index``'s reduction; its reduced values in ``bucket.flat``."""
        work = bucket.work
        if not isinstance(work, ember.futures.Future):
            work.wait()
            return
        value = work.wait()
        if isinstance(value, (list, tuple)) and len(value) == 1:
            value = value[0]
        if not isinstance(value, ember.Tensor) or value.numel() != bucket.flat.numel():
            raise RuntimeError(
                f"the DDP communication hook's future for bucket {index} must hold one tensor "
                f"of the bucket's {bucket.flat.numel()} elements, got {_what(value)}")
        if value.data_ptr() != bucket.flat.data_ptr():
            with ember.no_grad():
                bucket.flat.copy_(value.reshape(-1))

    def shadow(self):
        """On a rank that has joined: the reductions of one backward pass, with zeros."""
        pending = [self._launch(i, ember.zeros_like(b.flat), b)
                   for i, b in enumerate(self.buckets)]
        for work in pending:
            work.wait()
        if self.find_unused:
            flags = ember.zeros(len(self.params), dtype=ember.int32)
            ember.distributed.all_reduce(flags, op=ember.distributed.ReduceOp.MAX,
                                         group=self.group)

    def _finalize(self):
        self.expect_hooks = False
        self.started = False
        for i, b in enumerate(self.buckets):
            self._result(i, b)
        self.divisor = None
        used = self._globally_used() if self.find_unused else None
        with ember.no_grad():
            for i, p in enumerate(self.params):
                if used is not None and not used[i]:
                    continue
                view = self.bucket_of[i].views[i]
                if self.as_view:
                    if p.grad is None or p.grad.data_ptr() != view.data_ptr():
                        p.grad = view
                elif p.grad is None:
                    p.grad = view.clone()
                else:
                    p.grad.copy_(view)

    def _globally_used(self):
        flags = ember.tensor([1 if u else 0 for u in self.locally_used], dtype=ember.int32)
        ember.distributed.all_reduce(flags, op=ember.distributed.ReduceOp.MAX,
                                     group=self.group)
        return [bool(f) for f in flags.tolist()]

    def __del__(self):
        for h in getattr(self, "handles", ()):
            h.remove()


def _poll(work):
    return work.done() if isinstance(work, ember.futures.Future) else work.is_completed()


def _what(value):
    if isinstance(value, ember.Tensor):
        return f"a tensor of {value.numel()} elements"
    return type(value).__name__


def _reachable_leaves(outputs):
    """ids of the leaf tensors whose gradients backward from ``outputs`` reaches."""
    stack, seen, leaves = [], set(), set()
    _collect_grad_fns(outputs, stack)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            leaves.add(id(var))
        stack.extend(n for n, _ in node.next_functions)
    return leaves


def _collect_grad_fns(obj, out):
    if isinstance(obj, ember.Tensor):
        if obj.grad_fn is not None:
            out.append(obj.grad_fn)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _collect_grad_fns(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _collect_grad_fns(o, out)
    elif hasattr(obj, "__dataclass_fields__"):
        for name in obj.__dataclass_fields__:
            _collect_grad_fns(getattr(obj, name), out)
