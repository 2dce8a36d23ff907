"""Each tensor storage seen in a step, from its creation to the moment its last reference dies.

A storage is one buffer: views and in-place results share their base's storage, so they share
its buffer. A weak reference to the storage tells when it dies (its callback runs as the last
reference goes, as eager PyTorch frees it); the op running then, or the last one started, is the
buffer's last step.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import torch


@dataclass
class StorageRecord:
    """One storage: its bytes (the most it held), the ops that touched it and whether it was
    written there, and the steps it was born and died at (None: before / after the step)."""

    index: int
    bytes: int
    born: int | None
    died: int | None = None
    accesses: list[tuple[int, bool]] = field(default_factory=list)  # (op step, written)
    alive: bool = True


class StorageLedger:
    """Storages by identity; `step` is the op running now (or the last one started)."""

    def __init__(self):
        self.records: list[StorageRecord] = []
        self._by_id: dict[int, int] = {}
        self._refs: dict[int, weakref.ref] = {}
        self.step = -1

    def record(self, storage: torch.UntypedStorage, born: int | None) -> StorageRecord:
        """The record of `storage`, made when first seen (`born` None: it existed before)."""
        index = self._by_id.get(id(storage))
        if index is not None:
            record = self.records[index]
            record.bytes = max(record.bytes, storage.nbytes())
            return record
        index = len(self.records)
        record = StorageRecord(index, storage.nbytes(), born)
        self.records.append(record)
        key = id(storage)
        self._by_id[key] = index
        self._refs[index] = weakref.ref(storage, lambda _ref: self._died(key, index))
        return record

    def known(self, storage: torch.UntypedStorage) -> StorageRecord | None:
        """The record of `storage` if it was seen before."""
        index = self._by_id.get(id(storage))
        return None if index is None else self.records[index]

    def _died(self, key: int, index: int) -> None:
        record = self.records[index]
        record.alive = False
        record.died = self.step
        if self._by_id.get(key) == index:  # the id may already name a newer storage
            del self._by_id[key]

    def close(self) -> None:
        """Stop watching: storages alive now outlive the step."""
        self._refs.clear()
        self._by_id.clear()
