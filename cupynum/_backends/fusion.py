"""Implicit fusion: elementwise ops on device data wait as expressions and run as one kernel.

A device backend's elementwise entry points (the hot path's ``launch.new``, the layout
launchers, ``elementwise`` into a fresh output) call ``defer`` instead of launching: the
output Buffer gets ``pending = Node(op, args)`` and no allocation.  An argument is a leaf
(a view of a Buffer that holds data, with the Buffer's version: a tuple, made into a
``Leaf`` per distinct view when the graph runs), another ``Node`` (the whole result of a
pending op, read in its own layout) or a scalar of the op's loop dtype.  Each leaf's
Buffer keeps a weak reference to the Node in its ``readers``.

The expression is evaluated (``evaluate``: the backend's ``run_fused``, one kernel) when
its data is needed:

* at the one read point, ``Buffer.on(side)`` (the ``RESOLVE`` hook calls ``materialize``):
  every kernel, copy, transfer and library call reads device data through it;
* before a write to a Buffer that pending expressions read (``before_write``, from
  ``Buffer.will_write``): they must see the old data;
* past a cap (``MAX_NODES`` ops or ``MAX_LEAVES`` array inputs in one expression);
* when a stream's work is flushed (``flush``: synchronize, event record, leaving a
  ``with Stream`` block), and before the device pool reports that it is out of memory.

A reduction of a pending array (``reduce``) does not compute it first where the backend can
help it: ``run_fused_reduce`` computes the expression in the reduction's loads, and the
array stays pending.

Evaluation computes every node of the graph that is not computed yet once, writes the ones
whose Buffer is still alive (the root and any intermediate a user still holds) and
allocates nothing else: intermediates nobody keeps stay in registers.  A node, once
evaluated, drops its arguments (its inputs are freed when nobody else holds them) and is
read through ``result`` by the expressions that still refer to it.  Dropping a pending
array runs nothing: the Node goes with its Buffer.

Buffers that were exported (``pins`` set: DLPack, ``__cuda_array_interface__``, raw
addresses) may be written behind our back, so no expression reads them lazily: an op over
them runs at once.  Versions are checked at evaluation, as an assertion that the readers
mechanism worked.
"""
from __future__ import annotations

import threading
import weakref

from .. import _config
from .buffer import Buffer

ENABLED = _config.FUSION
_new = object.__new__

# Caps: past them an expression is evaluated at once.  Nodes count the ops of the tree
# (a shared subexpression counts each time it is used: kernels recompute it), leaves the
# array inputs with repeats; together they bound the kernel's size and what a pending
# expression keeps alive.
MAX_NODES = 48
MAX_LEAVES = 32
# Results of fewer elements run eagerly: at those sizes the deferral's Python cost per op
# exceeds the memory traffic it saves (CUPYNUM_FUSION_MIN_ELEMENTS, docs/guide/fusion.md).
MIN_ELEMENTS = _config.FUSION_MIN_ELEMENTS
_PRUNE_AT = 64  # a readers set is pruned of dead references at this size and its doublings


class Leaf:
    """A view of Buffer ``_buf`` read by pending expressions: the ndarray's field names (so
    the backends read it as they read an array) and the Buffer's ``version`` when the
    view was taken."""

    __slots__ = ("_buf", "_offset", "_shape", "_strides", "dtype", "_size", "_c_contig",
                 "_f_contig", "version")

    def __init__(self, buf, offset, shape, strides, dtype, size, c_contig, f_contig=False):
        self._buf = buf
        self._offset = offset
        self._shape = shape
        self._strides = strides
        self.dtype = dtype
        self._size = size
        self._c_contig = c_contig
        self._f_contig = f_contig
        self.version = buf.version


def _leaf(t, node) -> Leaf:
    """The Leaf of leaf tuple ``t`` (see ``defer``) read by ``node`` (of its shape), its
    version checked: the readers mechanism ran every write into it after this point."""
    buf, offset, strides, dtype, version, c_contig = t
    if buf.version != version:
        raise AssertionError("fusion: an input of a pending expression was written before "
                             "the expression ran")
    leaf = _new(Leaf)  # (Leaf(...), its slots set here: no __init__ frame per leaf)
    leaf._buf, leaf._offset, leaf._shape, leaf._strides = buf, offset, node._shape, strides
    leaf.dtype, leaf._size, leaf._c_contig, leaf._f_contig = dtype, node._size, c_contig, False
    leaf.version = version
    return leaf


class Node:
    """The pending result of one elementwise op: ``op`` (an ``ElementwiseOp`` with one
    output) over ``args``, written C- or F-ordered as ``_strides`` say into a whole new
    Buffer of ``_shape`` and ``dtype``.

    ``count``/``nleaves``: ops and array inputs of the tree (for the caps); ``backend``
    evaluates it, on ``stream`` (``(handle, owner)`` of the stream current at the call;
    None for the legacy default stream, and off CUDA); ``out``
    is a weak reference to the Buffer it computes; ``result`` is None until evaluated, then
    the Leaf holding its value (its Buffer, or a temporary when the Buffer was gone);
    ``quick``: for a node over data alone (no other node), the hot path's own
    ``launch.new``, which computes it as if it had never waited (``materialize``);
    ``uses``: how many times other nodes read it inline (then its computed value is
    protected from writes: ``_done``; and a write into one of its inputs stores it only
    when a node outside the graph then computed may read it: ``_evaluate_readers``)."""

    __slots__ = ("op", "args", "_shape", "_strides", "dtype", "_size", "_c_contig",
                 "_f_contig", "count", "nleaves", "backend", "stream", "out", "result",
                 "quick", "uses", "__weakref__")

    def leaf(self, buf) -> Leaf:
        """A Leaf of this node's layout over ``buf`` (its output, or a temporary)."""
        return Leaf(buf, 0, self._shape, self._strides, self.dtype, self._size,
                    self._c_contig, self._f_contig)


# Weak references to the nodes created since the last sweep, for ``flush``.
_created: list = []
_lock = threading.RLock()  # evaluation (an allocation inside may flush again: reentrant)
_SWEEP_AT = 4096
_sweep_at = _SWEEP_AT


def defer(backend, op, ins, out, stream=None, into=None, strides=None, quick=None) -> bool:
    """Make ``out`` (an array of one C- or F-ordered Buffer) the pending result of ``op``
    over ``ins`` (arrays or views of out's shape, and scalars of the loop dtypes; with
    ``strides``, the arrays' strides broadcast to out's shape, per operand).  ``into``:
    out's Buffer when it exists already (an ``out=`` array covering it), which then turns
    pending; else out gets a new pending Buffer.  False where the op must run now: an
    operand is not device data (host, exported) or is ``into`` itself, or out is smaller
    than ``MIN_ELEMENTS``."""
    if out._size < MIN_ELEMENTS:
        return False
    args = []
    bufs = []
    count = 1
    nleaves = 0
    shape = out._shape
    for i, x in enumerate(ins):
        buf = getattr(x, "_buf", None)
        if buf is None:  # a scalar
            args.append(x)
            continue
        st = x._strides if strides is None else strides[i]
        node = buf.pending
        if node is not None:
            if (st == node._strides and x._offset == 0 and shape == node._shape
                    and x.dtype == node.dtype and (node.stream is stream
                                                   or node.stream == stream)):
                args.append(node)  # the whole pending result, in its own layout: inline
                node.uses += 1
                count += node.count
                nleaves += node.nleaves
                continue
            materialize(buf)  # a part of a pending result, or one from another stream
        elif buf.device is None or buf.pins is not None or buf is into:
            return False
        # a leaf, as a tuple (cheaper than a Leaf: _collect makes one Leaf per distinct view)
        args.append((buf, x._offset, st, x.dtype, buf.version,
                     x._c_contig if strides is None else False))
        bufs.append(buf)
        nleaves += 1
    n = _new(Node)
    n.op = op
    n.args = args
    n._shape = shape
    n._strides = out._strides
    n.dtype = out.dtype
    n._size = out._size
    n._c_contig = out._c_contig
    n._f_contig = out._f_contig
    n.count = count
    n.nleaves = nleaves
    n.backend = backend
    n.stream = stream
    n.result = None
    n.quick = quick if count == 1 else None
    n.uses = 0
    if into is None:  # (a new Buffer, its slots set here: no __init__ frame per op)
        b = out._buf = _new(Buffer)
        b.host = b.device = b.readers = b.ledger = b.pins = None
        b.version = b.settled = 0
    else:
        b = into
        b.device = None  # the old data is overwritten whole: its allocation goes
        b.settled = 0
    b.pending = n
    n.out = weakref.ref(b)
    ref = weakref.ref(n)
    for buf in bufs:
        readers = buf.readers
        if readers is None:
            buf.readers = {ref}
        else:
            readers.add(ref)
            k = len(readers)
            if k >= _PRUNE_AT and not k & (k - 1):  # at powers of two: amortised O(1)
                _prune(readers)
    _created.append(ref)
    if len(_created) >= _sweep_at:
        _sweep()
    if count > MAX_NODES or nleaves > MAX_LEAVES:
        evaluate([n])
    return True


def deferring_new(backend, op, eager, stream=None):
    """``launch.new(*ins, out, n, nbytes)`` (the hot path's) that defers, else runs
    ``eager`` (the backend's own ``new``).  ``stream()``: the current stream (CUDA).
    ``new.now`` is ``eager``, as ``deferring_layout``'s."""
    def new(*args):  # (a small result runs at once, without the deferral's bookkeeping)
        if args[-2] >= MIN_ELEMENTS and args[-2] and defer(
                backend, op, args[:-3], args[-3], None if stream is None else stream(),
                quick=eager):
            return
        eager(*args)

    new.now = eager
    return new


def deferring_layout(backend, op, views, outs, eager, stream=None):
    """A layout launcher's ``launch(ins, outs)`` (see ``Backend.layout_launcher``) that
    defers, else runs ``eager``; ``views``: the operands as broadcast at its creation.
    ``launch.now`` is ``eager`` (callers run results below ``MIN_ELEMENTS`` through it)."""
    strides = [getattr(v, "_strides", None) for v in views]

    def launch(ins, outs):
        if outs[0]._size < MIN_ELEMENTS or not defer(
                backend, op, ins, outs[0], None if stream is None else stream(),
                strides=strides):
            eager(ins, outs)

    launch.now = eager
    launch.any_length = getattr(eager, "any_length", False)
    return launch if len(outs) == 1 else eager


def deferrable_into(out) -> bool:
    """Whether ``out`` (an ``elementwise`` output) covers its whole device Buffer, so that
    the Buffer may turn pending: nothing else reads it, nothing pins it, no host copy."""
    buf = out._buf
    raw = buf.device
    # (a Buffer not allocated yet, placement's new result, is taken when it is computed)
    nbytes = getattr(buf, "nbytes", None) if raw is None and buf.pending is None else \
        getattr(raw, "nbytes", None)
    return (buf.readers is None and buf.pins is None and buf.host is None
            and out._offset == 0 and (out._c_contig or out._f_contig) and out._size > 0
            and nbytes == out._size * out.dtype.itemsize)


def _prune(readers) -> None:
    for r in [r for r in readers if r() is None or r().result is not None]:
        readers.discard(r)


def _sweep() -> None:
    """Drop the references to nodes that are gone or evaluated (and sweep again when the
    live ones have doubled)."""
    global _sweep_at
    _created[:] = [r for r in _created if (n := r()) is not None and n.result is None]
    _sweep_at = max(_SWEEP_AT, 2 * len(_created))


def materialize(buf) -> None:
    """Compute pending Buffer ``buf`` (its data is then on the device).  A single op over
    data, made on the legacy stream, runs through the hot path's own launcher."""
    node = buf.pending
    if node is None:
        return
    if type(node) is not Node:  # a pending element read (elements.py)
        node.compute()
        return
    quick = node.quick
    if quick is None or node.stream is not None:
        evaluate([node])
        return
    with _lock:
        if buf.pending is not node:
            return
        args = [_leaf(a, node) if type(a) is tuple else a for a in node.args]
        out = node.leaf(buf)  # launch.new allocates it a Buffer of its own: moved to buf
        quick(*args, out, node._size, node._size * node.dtype.itemsize)
        buf.device = out._buf.device
        out._buf = buf
        _done(node, out, buf)


def evaluate(roots, forced=()) -> None:
    """Compute ``roots`` (pending nodes) and the nodes they need, in one backend call per
    root graph: the nodes whose Buffer is alive are written there; ``forced`` nodes whose
    Buffer is gone keep their value in a temporary (their readers need it)."""
    for root in roots:
        if root.result is None:
            if type(root) is Node:
                _run(root, forced)
            else:  # a pending element read (elements.py)
                root.compute()


def _evaluate_readers(waiting) -> None:
    """Compute the pending nodes ``waiting`` (they read a Buffer about to be written), the
    largest graph first: a reader inside it is computed in the same kernel, and stored only
    where a node outside the graph may read it (``u[1:-1] = u[1:-1] + r * (u[2:] - ...)``:
    five readers of ``u``, one kernel, one stored value)."""
    waiting.sort(key=_node_count, reverse=True)
    forced = set(waiting)
    computed = set()  # the nodes of the graphs run so far (kept, or needed by nobody)
    for root in waiting:
        if type(root) is not Node:  # a pending element read (elements.py)
            if root.result is None:
                root.compute()
        elif root not in computed and (graph := _run(root, forced)) is not None:
            computed.update(graph)


def _node_count(node) -> int:
    return node.count if type(node) is Node else 0


def sink(src, dst) -> bool:
    """``dst[...] = src`` (a device copy, dst told of the write already) where ``src`` is
    the whole of a pending result of dst's dtype and shape: the expression computes
    straight into dst, in one launch and no temporary; ``src`` itself stays pending (read
    later, it is computed again from inputs that readers protect).  False otherwise."""
    node = src._buf.pending
    if (node is None or src._offset != 0 or src._strides != node._strides
            or src._shape != node._shape or src.dtype != node.dtype or dst.dtype != node.dtype
            or dst._shape != node._shape or dst._buf.device is None):
        return False
    _run(node, (), Leaf(dst._buf, dst._offset, dst._shape, dst._strides, dst.dtype,
                        dst._size, dst._c_contig, dst._f_contig))
    return True


def reduce(method, src, args) -> bool:
    """A device backend's reduction ``method`` (``reduce``, ``arg_reduce``, ``sqdev_sum``)
    called with ``args``, whose input ``src`` is pending (any view of a pending result, of
    its dtype): the backend's ``run_fused_reduce`` computes the expression inside the
    reduction, so its value is never stored; the root stays pending, as in ``sink`` (read
    later, it is computed then).  Intermediates whose arrays are alive are computed first
    (into those arrays), then read as inputs.  False where the backend declines or ``src``
    is not such a view: the caller's reduction computes the expression when it reads it."""
    buf = src._buf
    node = buf.pending
    if node is None or src.dtype != node.dtype:
        return False
    with _lock:
        if buf.pending is not node:
            return False
        graph = _collect(node)
        kept = [n for n in graph[:-1] if (b := n.out()) is not None and b.pending is n]
        if kept:
            evaluate(kept)
            graph = _collect(node)
        return node.backend.run_fused_reduce(graph, method, src, args)


def _run(root, forced, sink_target=None):
    """Compute ``root``'s graph (see ``evaluate``) and return it (a ``Graph``; None where
    the root was computed already); with ``sink_target``, the root's value goes there and
    the root stays pending.  One thread at a time (``_lock``)."""
    with _lock:
        if root.result is None:
            return _run_locked(root, forced, sink_target)
    return None


def _run_locked(root, forced, sink_target):
    order = _collect(root)
    backend = root.backend
    outs = []
    inside = None  # per graph position, how many times the graph reads that node
    for position, node in enumerate(order):
        buf = node.out()
        if node is root and sink_target is not None:
            target = sink_target
        elif buf is not None and buf.pending is node:
            target = node.leaf(buf)
        elif node is root:
            target = node.leaf(backend.alloc(max(node._size * node.dtype.itemsize, 1)))
        elif forced:
            # (a write's readers: _evaluate_readers) kept where some node outside this graph
            # may read it (``uses`` counts every node that inlined it, this graph's among
            # them), whether it reads the written Buffer or holds a node that does: a node
            # not kept is read only by nodes of this graph, themselves kept or read only
            # inside it, up to the root
            if inside is None:
                inside = [0] * len(order)
                for code in order.code:
                    for t in code[1:]:
                        if t >= 0:
                            inside[t] += 1
            if node.uses <= inside[position]:
                continue
            target = node.leaf(backend.alloc(max(node._size * node.dtype.itemsize, 1)))
        else:
            continue
        outs.append((node, target))
    for node, target in outs:  # allocate the outputs
        if target._buf.pending is node:
            target._buf.device = backend.alloc(max(node._size * node.dtype.itemsize, 1)
                                               ).device
    backend.run_fused(order, outs)
    for node, target in outs:
        if target is not sink_target:
            _done(node, target, target._buf)
    return order


def _done(node, target, buf) -> None:
    """Node ``node`` is computed into Leaf ``target`` (over ``buf``)."""
    node.result = target
    node.args = None  # its inputs are free to go
    if buf.pending is node:
        buf.pending = None
        if not node.uses:
            return  # no expression reads this value through the node
        readers = buf.readers  # the nodes still reading this value: a write must wait
        ref = weakref.ref(node)
        if readers is None:
            buf.readers = {ref}
        else:
            readers.add(ref)


class Graph(list):
    """The nodes of a flushed graph still to compute, each after the nodes it reads, and
    its structure: ``ins``, the operands (each distinct Leaf view once, and the scalars, in
    order of first use); ``code``, per node ``(op, *tokens)``, a token ``t >= 0`` naming
    node ``t`` of the graph and ``t < 0`` operand ``~t`` of ``ins``; ``kinds``, per operand
    ``("a" | "s", dtype char)``.  Built in one walk (``_collect``), which also checks each
    leaf's version."""

    __slots__ = ("ins", "code", "kinds")


def _collect(root) -> Graph:
    g = Graph()
    ins, code, kinds = [], [], []
    g.ins, g.code, g.kinds = ins, code, kinds
    index = {}  # node -> its position
    views = {}  # leaf tuple (or a computed node's Leaf fields) -> operand index

    def visit(node):
        tokens = [node.op]
        for a in node.args:
            t = type(a)
            if t is tuple:  # a leaf: (buf, offset, strides, dtype, version, C-contiguous)
                i = views.get(a)
                if i is None:
                    i = views[a] = len(ins)
                    ins.append(_leaf(a, node))
                    kinds.append(("a", a[3].char))
                tokens.append(~i)
            elif t is Node:
                r = a.result
                if r is None:
                    j = index.get(a)
                    tokens.append(visit(a) if j is None else j)
                    continue
                # a computed node: its value, an operand like a leaf
                key = (r._buf, r._offset, r._strides, r.dtype, r.version, r._c_contig)
                i = views.get(key)
                if i is None:
                    i = views[key] = len(ins)
                    ins.append(r)
                    kinds.append(("a", r.dtype.char))
                tokens.append(~i)
            else:  # a scalar of the loop dtype
                tokens.append(~len(ins))
                ins.append(a)
                kinds.append(("s", a.dtype.char))
        j = index[node] = len(g)
        g.append(node)
        code.append(tuple(tokens))
        return j

    try:
        visit(root)
    finally:
        del visit  # (it refers to itself: a cycle only the garbage collector would break)
    return g


def before_write(buf) -> None:
    """Before a write to ``buf`` lands: compute it if it is pending (the write may cover
    part of it), then compute the pending expressions that read it, and move the values of
    computed ones that still have readers out of it."""
    if buf.pending is not None:
        materialize(buf)
    readers = buf.readers
    if readers is None:
        return
    buf.readers = None
    nodes = [n for r in readers if (n := r()) is not None]
    waiting = [n for n in nodes if n.result is None]
    if waiting:
        _evaluate_readers(waiting)
    for n in nodes:
        res = n.result
        if res is not None and res._buf is buf:  # expressions still read this value
            backend = n.backend
            copy = n.leaf(backend.alloc(max(n._size * n.dtype.itemsize, 1)))
            backend.copy(res, copy)
            n.result = copy


def flush(stream=None) -> None:
    """Compute every pending expression whose array is still alive: those made while
    stream handle ``stream`` was current (0: the legacy default stream), or all (None)."""
    refs = _created[:]
    _created.clear()
    for r in refs:
        n = r()
        if n is None or n.result is not None:
            continue
        if stream is not None and (0 if n.stream is None else n.stream[0]) != stream:
            _created.append(r)
            continue
        buf = n.out()
        if buf is not None and buf.pending is n:
            materialize(buf)


_flushing_for_memory = False


def flush_for_memory() -> bool:
    """Run every live pending expression (the device pool is out of memory: what they keep
    alive may then be freed); False when there was none, or when this is a nested call
    (an allocation of that very flush failed)."""
    global _flushing_for_memory
    if _flushing_for_memory or not pending_count():
        return False
    _flushing_for_memory = True
    try:
        flush()
    finally:
        _flushing_for_memory = False
    return True


def pending_count() -> int:
    """How many pending expressions are alive (tests, diagnostics)."""
    return sum(1 for r in _created if (n := r()) is not None and n.result is None
               and (b := n.out()) is not None and b.pending is n)
