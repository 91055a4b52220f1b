"""One index model: turn any ``x[index]`` index into the forms recipes need.

Every recipe takes the index a user would write in ``x[index] = value`` and
asks an :class:`IndexPlan` for the form it can use: a boolean mask of ``x``'s
shape, flat positions for ``index_put``/``scatter``, or a chain of
``(dim, int | slice)`` steps for ``select_scatter``/``slice_scatter``.
Recipes never parse indices themselves.

Torch itself does the hard part (the layout rules of mixed basic and advanced
indexing, bounds checks on index tensors): the plan indexes zero-stride
coordinate tensors with the user's own index, so the positions it returns are
exactly those that ``x[index]`` reads, in the same order.

>>> import torch
>>> plan = IndexPlan.of(torch.zeros(2, 3), (1, slice(None, None, 2)))
>>> plan.kind, tuple(plan.result_shape)
('basic', (2,))
>>> plan.flat_positions()
tensor([3, 5])
"""

from __future__ import annotations

import operator
import sys
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import Tensor

if sys.version_info >= (3, 12):
    from functools import cached_property
else:  # functools' takes an RLock before 3.12, which torch.compile cannot trace
    from collections.abc import Callable
    from typing import Generic, TypeVar

    _T = TypeVar("_T")

    class cached_property(Generic[_T]):
        """A lock-free ``functools.cached_property``."""

        def __init__(self, fn: Callable[[Any], _T]) -> None:
            self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

        def __get__(self, obj: Any, owner: Any = None) -> _T:
            if obj is None:
                return self  # type: ignore[return-value]
            if self.name not in obj.__dict__:
                obj.__dict__[self.name] = self.fn(obj)
            return obj.__dict__[self.name]  # type: ignore[no-any-return]


__all__ = ["IndexPlan", "Step", "as_value"]

Kind = Literal["basic", "mask", "advanced"]
#: One step of a basic index: ``(dim, position)`` or ``(dim, slice)``, where
#: ``dim`` counts the dimensions of the tensor left after the earlier steps.
Step = tuple[int, int | slice]


def _is_int(item: Any) -> bool:
    if isinstance(item, bool):  # Python bools index like masks, not like ints
        return False
    if isinstance(item, Tensor):
        return False
    try:
        operator.index(item)
    except TypeError:
        return False
    return True


def _canonical(index: Any) -> tuple[Any, ...]:
    """The index as a tuple, with lists and bools turned into tensors."""
    items = index if isinstance(index, tuple) else (index,)
    out = []
    for item in items:
        if isinstance(item, bool):
            item = torch.tensor(item)
        elif isinstance(item, list):
            item = torch.as_tensor(item)
            if item.dtype.is_floating_point or item.dtype.is_complex:
                raise IndexError(
                    "tensors used as indices must be long, int, byte or bool tensors; "
                    f"got a list of {item.dtype}"
                )
        elif isinstance(item, Tensor) and (item.is_floating_point() or item.is_complex()):
            raise IndexError(
                f"tensors used as indices must be long, int, byte or bool tensors; got {item.dtype}"
            )
        elif not (
            _is_int(item) or isinstance(item, (slice, Tensor)) or item is None or item is Ellipsis
        ):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                f"Variables are valid indices (got {type(item).__name__})"
            )
        if isinstance(item, Tensor) and item.dtype == torch.uint8:
            # getitem still takes (deprecated) byte masks; setitem no longer does
            raise IndexError("setitem takes bool masks, not torch.uint8 ones: use mask.bool()")
        out.append(item)
    return tuple(out)


@dataclass(frozen=True, eq=False)
class IndexPlan:
    """What ``x[index]`` selects, in every form a recipe may need.

    Build one with :meth:`IndexPlan.of`. ``kind`` is ``"basic"`` for ints,
    slices, one ``...`` and ``None`` alone; ``"mask"`` for one boolean tensor
    over the leading dimensions; ``"advanced"`` for anything with an index
    tensor (and for torch's rarely used several ``...``, left to torch).
    """

    shape: torch.Size
    device: torch.device
    index: tuple[Any, ...]
    kind: Kind

    @classmethod
    def of(cls, x: Tensor, index: Any) -> IndexPlan:
        """Plan ``x[index]``; raise torch's ``IndexError`` for a bad index.

        >>> IndexPlan.of(torch.zeros(3), 5)
        Traceback (most recent call last):
            ...
        IndexError: index 5 is out of bounds for dimension 0 with size 3
        """
        if not isinstance(x, Tensor):
            raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
        items = _canonical(index)
        kind: Kind
        simple = all(
            _is_int(i) or isinstance(i, slice) or i is None or i is Ellipsis for i in items
        )
        if simple and sum(1 for i in items if i is Ellipsis) <= 1:
            kind = "basic"
        elif (
            len(items) == 1
            and isinstance(items[0], Tensor)
            and items[0].dtype == torch.bool
            and items[0].ndim >= 1
        ):
            kind = "mask"
        else:
            kind = "advanced"
        plan = cls(x.shape, x.device, items, kind)
        plan._validate()
        return plan

    @staticmethod
    def items(ndim: int, index: Any) -> tuple[tuple[Any, int | None], ...]:
        """Each item of ``index`` (lists and bools as tensors) with the first
        dimension of an ``ndim``-dimensional ``x`` that it indexes (``None`` for
        ``None`` and ``...``). Bounds are not checked.

        >>> IndexPlan.items(3, (..., [0, 5]))
        ((Ellipsis, None), (tensor([0, 5]), 2))
        """
        items = _canonical(index)
        n_real = sum(
            i.ndim if isinstance(i, Tensor) and i.dtype == torch.bool else 1
            for i in items
            if i is not None and i is not Ellipsis
        )
        out: list[tuple[Any, int | None]] = []
        dim = 0
        for item in items:
            if item is None:
                out.append((item, None))
            elif item is Ellipsis:
                out.append((item, None))
                dim += max(ndim - n_real, 0)
            else:
                out.append((item, dim))
                is_mask = isinstance(item, Tensor) and item.dtype == torch.bool
                dim += item.ndim if is_mask else 1
        return tuple(out)

    # -- validation -------------------------------------------------------

    def _validate(self) -> None:
        if self.kind == "basic":
            self.steps  # noqa: B018 - parses and bounds-checks the index
        elif self.kind == "mask":
            mask = self.index[0]
            if mask.ndim > len(self.shape) or mask.shape != self.shape[: mask.ndim]:
                raise IndexError(
                    f"The shape of the mask {list(mask.shape)} at index 0 does not match "
                    f"the shape of the indexed tensor {list(self.shape)} at index 0"
                )
        else:
            self.result_shape  # noqa: B018 - torch checks bounds and mask shapes

    # -- basic indices ------------------------------------------------------

    @cached_property
    def steps(self) -> tuple[Step, ...]:
        """The basic index as ``select``/``slice`` steps, skipping full slices.

        >>> IndexPlan.of(torch.zeros(4, 5), (-1, slice(1, None))).steps
        ((0, 3), (0, slice(1, 5, 1)))
        """
        if self.kind != "basic":
            raise TypeError(f"only basic indices have steps; this index is {self.kind}")
        items = self.index
        n_real = sum(1 for i in items if i is not None and i is not Ellipsis)
        if n_real > len(self.shape):
            raise IndexError(f"too many indices for tensor of dimension {len(self.shape)}")
        steps: list[Step] = []
        dim = 0  # dimension of the original tensor
        out_dim = 0  # dimension of the tensor left after the steps so far
        for item in items:
            if item is None:
                continue
            if item is Ellipsis:
                skipped = len(self.shape) - n_real
                dim += skipped
                out_dim += skipped
                continue
            size = self.shape[dim]
            if isinstance(item, slice):
                if item.step is not None and item.step <= 0:
                    raise ValueError("step must be greater than zero")
                start, stop, step = item.indices(size)
                stop = max(stop, start)
                if (start, stop, step) != (0, size, 1):
                    steps.append((out_dim, slice(start, stop, step)))
                out_dim += 1
            else:
                position = operator.index(item)
                if not -size <= position < size:
                    raise IndexError(
                        f"index {position} is out of bounds for dimension {dim} with size {size}"
                    )
                steps.append((out_dim, position % size))
            dim += 1
        return tuple(steps)

    @cached_property
    def new_axes(self) -> tuple[int, ...]:
        """Dimensions of ``x[index]`` that ``None`` created (basic indices).

        >>> IndexPlan.of(torch.zeros(2, 3), (None, 0, None)).new_axes
        (0, 1)
        """
        if self.kind != "basic":
            raise TypeError(f"only basic indices have new axes; this index is {self.kind}")
        axes, out_dim = [], 0
        n_real = sum(1 for i in self.index if i is not None and i is not Ellipsis)
        for item in self.index:
            if item is None:
                axes.append(out_dim)
                out_dim += 1
            elif item is Ellipsis:
                out_dim += len(self.shape) - n_real
            elif isinstance(item, slice):
                out_dim += 1
        return tuple(axes)

    # -- every index ----------------------------------------------------------

    def _coordinate(self, dim: int) -> Tensor:
        """Coordinate ``dim`` of each element of ``x[index]``."""
        size = self.shape[dim]
        view = [1] * len(self.shape)
        view[dim] = size
        grid = torch.arange(size, device=self.device).view(view).expand(self.shape)
        return grid[self.index]

    @cached_property
    def result_shape(self) -> torch.Size:
        """The shape of ``x[index]``.

        >>> IndexPlan.of(torch.zeros(2, 3), (torch.tensor([[0, 1]]), slice(1, None))).result_shape
        torch.Size([1, 2, 2])
        """
        if self.kind == "mask":
            mask = self.index[0]
            return torch.Size((int(mask.sum()),)) + self.shape[mask.ndim :]
        probe = torch.zeros((), dtype=torch.bool, device=self.device).expand(self.shape)
        return probe[self.index].shape

    def flat_positions(self) -> Tensor:
        """Row-major positions in ``x.reshape(-1)`` of each element of ``x[index]``.

        The result has the shape of ``x[index]``.

        >>> IndexPlan.of(torch.zeros(2, 2), torch.tensor([[True, False], [False, True]])).flat_positions()
        tensor([0, 3])
        """
        given: Tensor | None = self.index[0] if self.kind == "mask" else None
        if given is not None and given.ndim == len(self.shape):
            return given.reshape(-1).nonzero().squeeze(1)
        if not self.shape:  # 0-d: index the single position 0
            return torch.zeros((), dtype=torch.long, device=self.device)[self.index]
        strides = torch.empty(self.shape, device="meta").stride()
        flat = None
        for dim, stride in enumerate(strides):
            term = self._coordinate(dim) * stride
            flat = term if flat is None else flat + term
        assert flat is not None
        return flat.contiguous()

    def mask(self) -> Tensor:
        """A boolean tensor broadcastable to ``x``'s shape, True where written.

        A mask index is returned as given (no copy); other indices build one.

        >>> IndexPlan.of(torch.zeros(3), slice(1, None)).mask()
        tensor([False,  True,  True])
        """
        if self.kind == "mask":
            given: Tensor = self.index[0]
            return given.view(given.shape + (1,) * (len(self.shape) - given.ndim))
        mask = torch.zeros(self.shape, dtype=torch.bool, device=self.device)
        mask[self.index] = True
        return mask

    def spread(self, value: Tensor) -> Tensor:
        """``value`` laid out over ``x``'s shape: equal to it at written positions.

        Values elsewhere are unspecified (zero or broadcast copies). A
        one-element value and a basic index of ints and full slices cost no
        copy; other values are scattered into a zero tensor.

        >>> IndexPlan.of(torch.zeros(2, 3), 1).spread(torch.tensor([7.0, 8.0, 9.0]))
        tensor([[7., 8., 9.]])
        """
        fitted = self.fit(value)
        if value.numel() == 1:
            return value.reshape(())
        value = fitted
        if self.kind == "basic" and all(not isinstance(s, slice) for _, s in self.steps):
            for axis in reversed(self.new_axes):
                value = value.squeeze(axis)
            for dim, _ in reversed(self.steps):
                value = value.unsqueeze(dim)
            return value
        zeros = torch.zeros(self.shape.numel(), dtype=value.dtype, device=value.device)
        return zeros.index_put((self.flat_positions(),), value).view(self.shape)

    def fit(self, value: Tensor) -> Tensor:
        """``value`` broadcast to the shape of ``x[index]``, as setitem does.

        Raise torch's ``RuntimeError`` naming both shapes when it does not fit.

        >>> plan = IndexPlan.of(torch.zeros(3), slice(None))
        >>> plan.fit(torch.ones(2))
        Traceback (most recent call last):
            ...
        RuntimeError: shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape [3]
        """
        target = self.result_shape
        shape = value.shape
        while len(shape) > len(target) and shape[0] == 1:  # setitem drops leading 1s
            shape = shape[1:]
        try:
            ok = torch.broadcast_shapes(shape, target) == target  # type: ignore[no-untyped-call]
        except RuntimeError:
            ok = False
        if not ok:
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
                f"broadcast to indexing result of shape {list(target)}"
            )
        return value.reshape(shape).expand(target)

    def has_duplicates(self) -> bool:
        """Whether two elements of ``x[index]`` are the same element of ``x``.

        >>> IndexPlan.of(torch.zeros(3), torch.tensor([0, 2, 0])).has_duplicates()
        True
        """
        if self.kind != "advanced":
            return False
        flat = self.flat_positions().reshape(-1)
        return bool(flat.numel() != torch.unique(flat).numel())


def as_value(value: Any, x: Tensor) -> Tensor:
    """``value`` as a tensor of ``x``'s dtype and device, as setitem casts it.

    Gradients flow through the cast, so a float64 value that requires grad
    still receives its gradient when written into a float32 ``x``. (Setitem
    casts too for ints and slices, but refuses another dtype with index
    tensors; recipes accept it for every index.)

    >>> as_value(2.7, torch.zeros(2, dtype=torch.int64))
    tensor(2)
    """
    if isinstance(value, Tensor):
        if value.is_complex() and not x.is_complex():
            raise TypeError(
                f"cannot write a {value.dtype} value into a {x.dtype} tensor: "
                "the imaginary part would be lost"
            )
        return value.to(dtype=x.dtype, device=x.device)
    if isinstance(value, complex) and not x.is_complex():
        raise TypeError(f"cannot write a complex value into a {x.dtype} tensor")
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(
            f"value must be a Python number or a torch.Tensor, got {type(value).__name__}"
        )
    return torch.tensor(value, dtype=x.dtype, device=x.device)
