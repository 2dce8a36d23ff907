"""Reading graphs: JSON, MiniMalloc CSV, ONNX, `torch.export` archives and PyTorch memory
snapshots, and `load`, which picks the reader by the file's name. The readers' safety layers
are in `safety/`."""
