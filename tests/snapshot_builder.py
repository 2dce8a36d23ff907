"""Synthetic PyTorch memory snapshots: a toy caching allocator that records what PyTorch records.

`SnapshotBuilder` keeps segments and blocks the way `torch.cuda.memory._snapshot()` reports them
and appends the trace events `_record_memory_history()` would; `record=False` changes the state
without an event, as happens before recording begins. `python -m tests.snapshot_builder` writes
the small snapshot in tests/data.
"""

from __future__ import annotations

import pickle
from pathlib import Path

TINY_SNAPSHOT = Path(__file__).parent / "data" / "tiny_snapshot.pickle"


def py_frame(filename: str, line: int, name: str) -> dict:
    return {"filename": filename, "line": line, "name": name}


def cpp_frame(name: str) -> dict:
    return {"filename": "??", "line": 0, "name": name}


class SnapshotBuilder:
    """Segments, blocks and one device's trace, consistent with each other."""

    def __init__(self, device: int = 0, devices: int = 1):
        self.device = device
        self.traces: list[list[dict]] = [[] for _ in range(devices)]
        self.segments: dict[int, dict] = {}  # address -> segment
        self.time_us = 1_000

    def _event(self, action: str, addr: int, size: int, stream: int, frames, record: bool):
        self.time_us += 10
        if record:
            self.traces[self.device].append({
                "action": action, "addr": addr, "size": size, "stream": stream,
                "time_us": self.time_us, "frames": list(frames)})

    def _block(self, addr: int) -> dict:
        for segment in self.segments.values():
            for block in segment["blocks"]:
                if block["address"] == addr:
                    return block
        raise KeyError(f"no block at {addr:#x}")

    def segment(self, addr: int, size: int, stream: int = 0, record: bool = True,
                segment_type: str = "large") -> None:
        """cudaMalloc of a new segment: one inactive block spanning it."""
        self.segments[addr] = {
            "device": self.device, "address": addr, "total_size": size, "stream": stream,
            "segment_type": segment_type, "frames": [],
            "blocks": [{"address": addr, "size": size, "requested_size": 0, "state": "inactive",
                        "frames": []}]}
        self._event("segment_alloc", addr, size, stream, (), record)

    def release(self, addr: int, record: bool = True) -> None:
        """cudaFree of a whole segment (as `torch.cuda.empty_cache()` does)."""
        segment = self.segments.pop(addr)
        self._event("segment_free", addr, segment["total_size"], segment["stream"], (), record)

    def alloc(self, addr: int, size: int, frames=(), stream: int = 0, record: bool = True):
        """A block at `addr` (splitting the inactive block that holds it)."""
        for segment in self.segments.values():
            for i, block in enumerate(segment["blocks"]):
                end = block["address"] + block["size"]
                if block["state"] == "inactive" and block["address"] <= addr and addr + size <= end:
                    pieces = [(block["address"], addr - block["address"], "inactive", 0, []),
                              (addr, size, "active_allocated", size, list(frames)),
                              (addr + size, end - addr - size, "inactive", 0, [])]
                    segment["blocks"][i:i + 1] = [
                        {"address": a, "size": s, "requested_size": r, "state": st, "frames": f}
                        for a, s, st, r, f in pieces if s]
                    self._event("alloc", addr, size, stream, frames, record)
                    return
        raise ValueError(f"no free room for {size} bytes at {addr:#x}")

    def free(self, addr: int, complete: bool = True, frames=(), record: bool = True) -> None:
        """free_requested, then free_completed unless the block waits on another stream."""
        block = self._block(addr)
        self._event("free_requested", addr, block["requested_size"], 0, frames, record)
        if complete:
            block.update(state="inactive", requested_size=0, frames=[])
            self._event("free_completed", addr, block["size"], 0, frames, record)
        else:
            block["state"] = "active_pending_free"

    def snapshot(self) -> dict:
        """The dictionary `torch.cuda.memory._snapshot()` would return."""
        return {"segments": list(self.segments.values()), "device_traces": self.traces,
                "allocator_settings": {}, "external_annotations": []}

    def write(self, path, protocol: int = pickle.HIGHEST_PROTOCOL) -> Path:
        """Pickle the snapshot to `path`."""
        path = Path(path)
        path.write_bytes(pickle.dumps(self.snapshot(), protocol=protocol))
        return path


def tiny() -> SnapshotBuilder:
    """Every case the reader distinguishes, in a few events on two streams.

    Segment A (4 KiB) exists before recording and holds `w`, allocated then and live to the end,
    and `old`, allocated then and freed in the trace. `x` is freed normally; segment B (2 KiB) is
    made for `y` (stream 1), whose free waits on its stream and never completes; `z` (C++ frames
    only) is live at the end; segment C (8 KiB) is made for `t` and released after it.
    """
    model = [py_frame("/src/model.py", 118, "forward"), cpp_frame("at::empty"),
             py_frame("/src/train.py", 7, "<module>"), cpp_frame("PyEval_EvalCode")]
    builder = SnapshotBuilder()
    builder.segment(0x10000, 4096, record=False)
    builder.alloc(0x10000, 1024, [py_frame("/src/model.py", 20, "__init__")], record=False)  # w
    builder.alloc(0x10400, 512, [py_frame("/src/model.py", 21, "__init__")], record=False)
    builder.alloc(0x10600, 512, model)                                     # x
    builder.free(0x10400, frames=[py_frame("C:\\src\\train.py", 9, "step")])  # old
    builder.segment(0x20000, 2048)
    builder.alloc(0x20000, 1536, model, stream=1)                          # y
    builder.free(0x10600)                                                  # x
    builder.alloc(0x10400, 512, [cpp_frame("autograd::Engine::evaluate_function")])  # z
    builder.free(0x20000, complete=False)                                  # y
    builder.segment(0x30000, 8192)
    builder.alloc(0x30000, 8192, model)                                    # t
    builder.free(0x30000)
    builder.release(0x30000)
    return builder


if __name__ == "__main__":
    TINY_SNAPSHOT.parent.mkdir(exist_ok=True)
    print(tiny().write(TINY_SNAPSHOT, protocol=2))
