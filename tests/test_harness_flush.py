"""The bench's L2 flush kernel: it must compile for the H200 and overwrite every element of its buffer."""

import subprocess
import sys

RUN_INTERPRETED = """
import os
os.environ["TRITON_INTERPRET"] = "1"
import torch
from kopt.harness import flush
flush.FLUSH_BLOCK = 64
buf = torch.zeros(1000, dtype=torch.int32)
flush.flush_l2(buf, 7)
print(int((buf == 7).sum()))
"""


def test_flush_overwrites_the_whole_buffer_including_a_partial_last_block():
    out = subprocess.run([sys.executable, "-c", RUN_INTERPRETED], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "1000"


def test_flush_compiles_for_sm90_to_wide_stores():
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kopt.harness.flush import FLUSH_BLOCK, kopt_l2_flush

    # as the JIT specializes it at run time: a 16-aligned buffer whose length is a multiple of 16
    src = ASTSource(kopt_l2_flush, signature={"ptr": "*i32", "n": "i32", "value": "i32", "BLOCK": "constexpr"},
                    constexprs={"BLOCK": FLUSH_BLOCK}, attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32))
    assert compiled.name == "kopt_l2_flush"
    assert "st.global.v4.b32" in compiled.asm["ptx"]
