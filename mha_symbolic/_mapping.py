"""A read-only ordered mapping from step names, with an error that lists the names (private)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class StepMapping(Mapping):  # type: ignore[type-arg]
    """``name -> value`` in step order; a missing name raises ``KeyError`` listing the names."""

    def __init__(self, items: dict[str, Any]):
        self._items = dict(items)

    def __getitem__(self, key: str) -> Any:
        try:
            return self._items[key]
        except KeyError:
            raise KeyError(f"no step {key!r}; steps are {list(self._items)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
