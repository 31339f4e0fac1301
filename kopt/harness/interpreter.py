"""The Triton interpreter as kopt's CPU device: TRITON_INTERPRET=1, plus what third-party kernels need from it.

- @triton.autotune kernels take their first config (after the kernel's own pruning) instead of benchmarking,
  which needs a GPU driver. Which config a GPU would pick is unknown here: the interpreter checks the kernel,
  not its tuning.
- libdevice functions are declarations the compiler resolves; the interpreter would call their empty bodies.
  The common ones get interpreter bodies made of triton.language operations (same math, not the same bits).
"""

from __future__ import annotations

import math
import os


def use_interpreter() -> None:
    """Call before the task is imported (kernels bind libdevice names at import)."""
    os.environ["TRITON_INTERPRET"] = "1"
    from triton.runtime.autotuner import Autotuner

    Autotuner.do_bench = property(lambda self: _no_timing)
    _fill_libdevice()


def _no_timing(kernel_call, quantiles=None):
    """Every config ties, so the autotuner keeps the first one; nothing is launched to time it."""
    return [0.0, 0.0, 0.0]


def _libdevice_bodies() -> dict:
    import triton.language as tl

    def tanh(x):
        return 1.0 - 2.0 / (tl.exp(2.0 * x) + 1.0)

    return {
        "rsqrt": lambda x: tl.math.rsqrt(x), "sqrt": lambda x: tl.sqrt(x), "exp": lambda x: tl.exp(x),
        "exp2": lambda x: tl.exp2(x), "log": lambda x: tl.log(x), "log2": lambda x: tl.log2(x),
        "log1p": lambda x: tl.log(1.0 + x), "expm1": lambda x: tl.exp(x) - 1.0, "erf": lambda x: tl.math.erf(x),
        "tanh": tanh, "floor": lambda x: tl.floor(x), "ceil": lambda x: tl.ceil(x), "abs": lambda x: tl.abs(x),
        "fast_expf": lambda x: tl.exp(x), "fast_logf": lambda x: tl.log(x), "fast_dividef": lambda x, y: x / y,
        "div_rn": lambda x, y: x / y, "fma": lambda x, y, z: x * y + z, "fma_rn": lambda x, y, z: x * y + z,
        "isnan": lambda x: x != x, "isinf": lambda x: tl.abs(x) == math.inf, "sigmoid": lambda x: 1.0 / (1.0 + tl.exp(-x)),
        "pow": lambda x, y: tl.exp(y * tl.log(x)),
    }


def _fill_libdevice() -> None:
    import importlib

    bodies = _libdevice_bodies()
    for name in ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for fn, body in bodies.items():
            if hasattr(module, fn):
                setattr(module, fn, body)
