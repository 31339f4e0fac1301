"""The MiniLM weights as int8 rows plus a float32 scale per row, so the device kit stays under the carry limit.

    python3 minilm_int8.py pack model.safetensors weights-int8.npz     (here: float32 2-D weights -> int8 rows)
    python3 minilm_int8.py unpack weights-int8.npz model.safetensors   (on the device: back to float32)

Only numpy and safetensors: the device image has both, and kopt may not be importable yet.
"""

import sys

import numpy as np
from safetensors.numpy import load_file, save_file


def pack(src: str, dst: str) -> None:
    out = {}
    for name, w in load_file(src).items():
        if w.dtype == np.float32 and w.ndim == 2:
            scale = np.maximum(np.abs(w).max(axis=1, keepdims=True), 1e-12) / 127
            out[f"{name}|q"], out[f"{name}|scale"] = np.round(w / scale).astype(np.int8), scale.astype(np.float32)
        else:
            out[name] = w
    np.savez_compressed(dst, **out)


def unpack(src: str, dst: str) -> None:
    packed = np.load(src)
    weights = {}
    for key in packed.files:
        name, _, part = key.partition("|")
        if part == "q":
            weights[name] = packed[key].astype(np.float32) * packed[f"{name}|scale"]
        elif not part:
            weights[name] = packed[key]
    save_file(weights, dst, metadata={"format": "pt"})


if __name__ == "__main__":
    {"pack": pack, "unpack": unpack}[sys.argv[1]](sys.argv[2], sys.argv[3])
