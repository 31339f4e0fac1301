"""A package corpus read from a toolchain's own environment: `kopt ingest triton-ascend-pkg` with no --path finds
the ascend toolchain's installed triton-ascend (a real child Python), and says how to set it up when it is absent."""

import os
import subprocess
import sys

import pytest

from kopt.ingest.manifest import load_manifest, resolve
from kopt.toolchain import toolchain_home

PYTHON = toolchain_home("ascend") / "bin" / "python"  # under the session's KOPT_HOME, linked to the real toolchains


@pytest.mark.skipif(not PYTHON.exists(), reason=f"Ascend toolchain not set up at {PYTHON}: run `kopt toolchain add ascend`")
def test_package_corpus_resolves_inside_the_toolchain():
    source = resolve(load_manifest("triton-ascend-pkg"))
    assert source.root.name == "triton" and "site-packages" in source.root.parts
    assert source.root.is_relative_to(toolchain_home("ascend").resolve())
    assert source.version.startswith("triton-ascend-") and source.version[len("triton-ascend-"):][0].isdigit()
    assert "backends/ascend/compiler.py" in source.files and all(
        f.startswith(("backends/ascend/", "triton_patch/")) for f in source.files)


def test_missing_toolchain_says_how_to_add_it(tmp_path):
    env = {**os.environ, "KOPT_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "kopt.cli", "ingest", "triton-ascend-pkg"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "`kopt toolchain add ascend`" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "index").exists()  # nothing half-made


def test_installed_package_corpus_leaves_out_what_crowds_answers():
    """triton-pkg reads the installed triton, minus Gluon's translator (it restates every tl op); Gluon itself and the
    profiler are in, weighed down unless a question is about them, as in the checkout corpus."""
    from kopt.index.hits import StoredChunk
    from kopt.index.search import prior

    source = resolve(load_manifest("triton-pkg"))
    assert {"language/core.py", "runtime/jit.py", "backends/nvidia/compiler.py"} <= set(source.files)
    assert [f for f in source.files if f.startswith("experimental/gluon/")]
    assert not [f for f in source.files if f.startswith(("tools/triton_to_gluon_translater/", "_C/"))]
    gluon = StoredChunk(corpus="triton-pkg", kind="function", path="experimental/gluon/language/_core.py")
    core = StoredChunk(corpus="triton-pkg", kind="function", path="language/core.py")
    assert prior("what does tl.load do with a mask", gluon) < prior("what does tl.load do with a mask", core) == 1.0
    assert prior("what does a Gluon layout mean", gluon) == 1.0
    profiler = StoredChunk(corpus="triton-pkg", kind="function", path="profiler/profile.py")
    assert prior("what does tl.load do with a mask", profiler) < 1.0 == prior("how do I profile a kernel", profiler)
