"""The one way data leaves a sandboxed child: length-prefixed torch.save frames written to a file
descriptor the parent opened before any user code ran (an unlinked file, so there is no path to find).

The parent reads frames as data only (torch.load with weights_only=True: tensors, numbers, strings,
lists, dicts; no pickled objects), so a hostile child can send wrong numbers, never code or a verdict."""

from __future__ import annotations

import io
import struct
from typing import IO, Any

HEADER = struct.Struct("<Q")


def write_frame(stream: IO[bytes], obj: Any) -> None:
    import torch

    buffer = io.BytesIO()
    torch.save(obj, buffer)
    data = buffer.getvalue()
    stream.write(HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def read_frames(stream: IO[bytes]) -> tuple[list[Any], str | None]:
    """Every whole frame from the start of `stream`, and why reading stopped early (None at a clean end)."""
    import torch

    frames: list[Any] = []
    while True:
        header = stream.read(HEADER.size)
        if not header:
            return frames, None
        if len(header) < HEADER.size:
            return frames, "a truncated frame header"
        (size,) = HEADER.unpack(header)
        data = stream.read(size)
        if len(data) < size:
            return frames, f"a truncated frame ({len(data)} of {size} bytes)"
        try:
            frames.append(torch.load(io.BytesIO(data), weights_only=True))
        except Exception as exc:  # anything a hostile child wrote: report, never raise
            return frames, f"an unreadable frame ({type(exc).__name__})"


def to_host(value: Any) -> Any:
    """`value` with every tensor detached, copied to the CPU and compacted (a view never drags its storage along)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True).contiguous()
    if isinstance(value, (tuple, list)):
        return [to_host(v) for v in value]
    return value
