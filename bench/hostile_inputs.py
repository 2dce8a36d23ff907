"""The hostile and huge inputs of issue 38's attack round, made in a folder at full size: each
maker writes its files and returns the `slabscope` arguments that attack them.

`bench/safety_attacks.py` replays them under a time and memory cap beside the baseline.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MLP = ROOT / "tests" / "data" / "pt2" / "mlp.pt2"
MODEL = "mlp/models/model.json"


def _pt2(target: Path, model: bytes, method: int, file_size: int | None = None) -> Path:
    """mlp.pt2 with its model JSON replaced by `model`, compressed by `method`; `file_size`
    rewrites the size the directory declares (a header that lies)."""
    with zipfile.ZipFile(MLP) as source, zipfile.ZipFile(target, "w") as out:
        for info in source.infolist():
            if info.filename != MODEL:
                out.writestr(info.filename, source.read(info), compress_type=method)
        out.writestr(MODEL, model, compress_type=method)
    if file_size is not None:
        data = bytearray(target.read_bytes())
        central = data.rfind(b"PK\x01\x02", 0, data.rfind(MODEL.encode()))
        data[central + 24:central + 28] = file_size.to_bytes(4, "little")
        target.write_bytes(bytes(data))
    return target


def deflate_lists(folder: Path) -> list[str]:
    """Issue 38 #1: a model JSON of 120 MiB of `[],`, under the byte cap (there bzip2 and 300
    MiB, here deflate: bzip2 of it takes minutes to write)."""
    text = b'{"graph_module": [' + b"[]," * (40 << 20) + b"[]]}"
    return ["plan", str(_pt2(folder / "lists.pt2", text, zipfile.ZIP_DEFLATED))]


def bzip2_zeros(folder: Path) -> list[str]:
    """Issue 38 #1: 300 MiB of zeros in bzip2 (a few hundred bytes), its header lying 1 KiB."""
    return ["plan", str(_pt2(folder / "zeros.pt2", bytes(300 << 20), zipfile.ZIP_BZIP2, 1024))]


def wide_characters(folder: Path) -> list[str]:
    """Issue 38 #1: 600 MiB of one 4-byte character in a JSON string (deflate, 600 KB), under
    the old 1 GiB cap, its header truthful."""
    text = b'{"graph_module": "' + "\U0001F600".encode() * (150 << 20) + b'"}'
    return ["plan", str(_pt2(folder / "wide.pt2", text, zipfile.ZIP_DEFLATED))]


def lying_member_count(folder: Path) -> list[str]:
    """Issue 38 (smaller): 300,000 empty members whose end record claims 3."""
    target = folder / "many.pt2"
    with zipfile.ZipFile(MLP) as source, zipfile.ZipFile(target, "w") as out:
        for info in source.infolist():
            out.writestr(info.filename, source.read(info))
        for i in range(300_000):
            out.writestr(f"w{i}", b"")
    data = bytearray(target.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    data[end + 8:end + 12] = (3).to_bytes(2, "little") * 2
    end64 = data.rfind(b"PK\x06\x06")  # past 65,535 members the zip64 record counts them
    data[end64 + 24:end64 + 40] = (3).to_bytes(8, "little") * 2
    target.write_bytes(bytes(data))
    return ["plan", str(target)]


def repeated_member(folder: Path) -> list[str]:
    """Issue 38 (smaller): the model JSON twice, the second copy another program."""
    target = folder / "twice.pt2"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(MLP) as source, zipfile.ZipFile(target, "w") as out:
            for info in source.infolist():
                out.writestr(info.filename, source.read(info))
            out.writestr(MODEL, json.dumps({"graph_module": {}}))
    return ["plan", str(target)]


def _graph(folder: Path, name: str, data: dict) -> Path:
    path = folder / name
    path.write_text(json.dumps(data))
    return path


def ring_schedule(folder: Path) -> list[str]:
    """Issue 38 #2: 2,000 producers, each consumer reading two neighbours around a ring, with
    `--schedule best --budget 1`."""
    n = 2000
    data = {"nodes": [f"p{i}" for i in range(n)] + [f"c{i}" for i in range(n)],
            "edges": [[f"p{(i + k) % n}", f"c{i}"] for i in range(n) for k in (0, 1)],
            "buffers": [{"name": f"b{i}", "bytes": 1024 * (1 + i % 7),
                         "uses": [f"p{i}", f"c{i}", f"c{(i - 1) % n}"]} for i in range(n)]
            + [{"name": f"o{i}", "bytes": 512, "uses": [f"c{i}"]} for i in range(n)]}
    return ["plan", str(_graph(folder, "ring.json", data)), "--schedule", "best",
            "--budget", "1"]


def independent_schedule(n: int):
    """Issue 38 #2: `n` independent nodes with `--schedule best --budget 0`."""
    def make(folder: Path) -> list[str]:
        data = {"nodes": [f"n{i}" for i in range(n)], "edges": [],
                "buffers": [{"name": f"b{i}", "bytes": 256 * (1 + i % 13), "uses": [f"n{i}"]}
                            for i in range(n)]}
        return ["plan", str(_graph(folder, "independent.json", data)), "--schedule", "best",
                "--budget", "0"]
    return make


def relu_chain(n: int, node_name: str | None = "a", module: bool = False) -> dict:
    """mlp.pt2's program with its nodes replaced by a chain of `n` relus from the input `x`,
    every node called `node_name` (None: named by its result), without `nn_module_stack` unless
    `module` (an unrolled loop inside one module)."""
    with zipfile.ZipFile(MLP) as archive:
        program = json.loads(archive.read(MODEL))
    graph = program["graph_module"]["graph"]
    meta = graph["tensor_values"]["relu"]
    nodes = []
    for i in range(n):
        source = "x" if i == 0 else f"t{i - 1}"
        entry = {"target": "torch.ops.aten.relu.default",
                 "inputs": [{"name": "self", "arg": {"as_tensor": {"name": source}}, "kind": 1}],
                 "outputs": [{"as_tensor": {"name": f"t{i}"}}],
                 "metadata": {"nn_module_stack": "L__self__,,__main__.MLP"} if module else {}}
        if node_name is not None:
            entry["name"] = node_name
        nodes.append(entry)
        graph["tensor_values"][f"t{i}"] = meta
    graph["nodes"] = nodes
    graph["outputs"] = [{"as_tensor": {"name": f"t{n - 1}"}}]
    program["graph_module"]["signature"]["output_specs"] = [
        {"user_output": {"arg": {"as_tensor": {"name": f"t{n - 1}"}}}}]
    return program


def write_pt2(target: Path, program: dict | bytes) -> Path:
    """mlp.pt2 with `program` (a dict, or the JSON's bytes) as its model JSON."""
    text = program if isinstance(program, bytes) else json.dumps(program).encode()
    with zipfile.ZipFile(MLP) as source, zipfile.ZipFile(target, "w") as out:
        for info in source.infolist():
            data = text if info.filename == MODEL else source.read(info)
            out.writestr(info.filename, data, compress_type=zipfile.ZIP_DEFLATED)
    return target


def alike_names(folder: Path) -> list[str]:
    """Issue 38 #3: 20,000 relus all named "a"."""
    return ["plan", str(write_pt2(folder / "alike.pt2", relu_chain(20_000)))]


def no_module_stack(folder: Path) -> list[str]:
    """Issue 38 #3: 40,000 relus without `nn_module_stack` (an unrolled loop in one module)."""
    return ["plan", str(write_pt2(folder / "relus.pt2", relu_chain(40_000, node_name=None)))]


def streams_snapshot(streams: int) -> dict:
    """A snapshot in which each of `streams` streams makes a 2 MiB segment and allocates 512
    bytes in it, each allocation a new peak (issue 38 #4: `free_blocks` walked every stream)."""
    events, segments = [], []
    for s in range(streams):
        addr = (1 << 40) + s * (2 << 20)
        events.append({"action": "segment_alloc", "addr": addr, "size": 2 << 20, "stream": s,
                       "time_us": 2 * s, "frames": []})
        events.append({"action": "alloc", "addr": addr, "size": 512, "stream": s,
                       "time_us": 2 * s + 1, "frames": []})
        segments.append({"device": 0, "address": addr, "total_size": 2 << 20, "stream": s,
                         "segment_type": "small", "frames": [], "blocks": [
                             {"address": addr, "size": 512, "requested_size": 512,
                              "state": "active_allocated", "frames": []},
                             {"address": addr + 512, "size": (2 << 20) - 512,
                              "requested_size": 0, "state": "inactive", "frames": []}]})
    return {"segments": segments, "device_traces": [events], "allocator_settings": {},
            "external_annotations": []}


def many_streams(streams: int):
    """Issue 38 #4: `slabscope allocator` on a snapshot of `streams` streams."""
    def make(folder: Path) -> list[str]:
        path = folder / f"streams{streams}.pickle"
        path.write_bytes(pickle.dumps(streams_snapshot(streams)))
        return ["allocator", str(path)]
    return make


def million_nodes(folder: Path) -> list[str]:
    """Issue 38 #6: a `.pt2` program of 1,000,000 relus."""
    return ["plan", str(write_pt2(folder / "million.pt2", relu_chain(1_000_000, None)))]


def wide_transformer(folder: Path) -> list[str]:
    """Issue 38 #6: `generate transformer` with 1,024 heads: 74,000 nodes, a 28 MB graph."""
    path = folder / "transformer.json"
    subprocess.run([sys.executable, "-m", "slabscope.app.cli", "generate", "transformer",
                    "--seq", "16", "--width", "1024", "--ffn", "16", "--heads", "1024",
                    "--layers", "9", "-o", str(path)], check=True, capture_output=True)
    return ["plan", str(path)]


def fragmented_snapshot(blocks: int, pairs: int) -> dict:
    """One segment of `blocks` 4 KiB blocks allocated in the trace, every other one freed, then
    `pairs` alloc/free pairs inside one hole (issue 38 #5)."""
    base, size = 1 << 40, 4096
    events = [{"action": "segment_alloc", "addr": base, "size": blocks * size, "stream": 0,
               "time_us": 0, "frames": []}]

    def event(action: str, addr: int) -> None:
        events.append({"action": action, "addr": addr, "size": size, "stream": 0,
                       "time_us": len(events), "frames": []})

    for i in range(blocks):
        event("alloc", base + i * size)
    for i in range(0, blocks, 2):
        event("free_requested", base + i * size)
        event("free_completed", base + i * size)
    for _ in range(pairs):
        event("alloc", base + 2 * size)
        event("free_requested", base + 2 * size)
        event("free_completed", base + 2 * size)
    state = [{"address": base + i * size, "size": size, "requested_size": size if i % 2 else 0,
              "state": "active_allocated" if i % 2 else "inactive", "frames": []}
             for i in range(blocks)]
    return {"segments": [{"device": 0, "address": base, "total_size": blocks * size,
                          "stream": 0, "segment_type": "large", "frames": [], "blocks": state}],
            "device_traces": [events], "allocator_settings": {}, "external_annotations": []}


def fragmented(command: str):
    """Issue 38 #5: `command` on 200,000 blocks, every other freed, then 100,000 pairs in one
    hole (41 MB; the issue's was 300,000 pairs)."""
    def make(folder: Path) -> list[str]:
        path = folder / "fragmented.pickle"
        path.write_bytes(pickle.dumps(fragmented_snapshot(200_000, 100_000)))
        return [command, str(path)]
    return make


# (label, maker): every maker writes into the folder it is given and returns the arguments.
CASES = [
    ("#1 model JSON of 120 MiB of [], (deflate)", deflate_lists),
    ("#1 bzip2 300 MiB of zeros, header says 1 KiB", bzip2_zeros),
    ("#1 600 MiB of 4-byte characters (deflate)", wide_characters),
    ("member count that lies (300k members)", lying_member_count),
    ("member name given twice", repeated_member),
    ("#2 ring of 2,000, --schedule best --budget 1", ring_schedule),
    ("#2 20,000 independent nodes, --budget 0", independent_schedule(20_000)),
    ("#2 40,000 independent nodes, --budget 0", independent_schedule(40_000)),
    ("#3 20,000 .pt2 nodes all named a", alike_names),
    ("#3 40,000 relus without nn_module_stack", no_module_stack),
    ("#4 allocator, 8,000 streams", many_streams(8_000)),
    ("#4 allocator, 20,000 streams", many_streams(20_000)),
    ("#5 fragmented snapshot, plan", fragmented("plan")),
    ("#5 fragmented snapshot, allocator", fragmented("allocator")),
    ("#6 .pt2 of 1,000,000 nodes", million_nodes),
    ("#6 transformer of 1,024 heads (dag model)", wide_transformer),
]
