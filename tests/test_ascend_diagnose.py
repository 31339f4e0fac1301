"""Ascend diagnosis end to end: real compiles through the triton-ascend toolchain, a real Qdrant Edge index
holding a slice of the toolchain's own triton-ascend package (the offline corpus), the Ascend pass notes
and patterns, and the CLI in subprocesses. Needs `kopt toolchain add ascend` (the test command runs it)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kopt.diagnose.escalate import catalog_patterns, diagnose, for_target
from kopt.diagnose.l3_ascend import ascend_facts
from kopt.diagnose.l4 import escalate_l4
from kopt.harness.ascend import compile_ascend
from kopt.patterns import load_patterns
from kopt.toolchain import target_family, toolchain_home
from kopt.vocabulary import Evidence, Finding

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "ascend"
TOOLCHAINS = toolchain_home("ascend").parent  # resolved at collection, before the fixture moves KOPT_HOME
PYTHON = TOOLCHAINS / "ascend" / "bin" / "python"
PKG_SLICE = "backends/ascend/compiler.py"  # the adapter pipeline (ttir_to_linalg runs --triton-to-unstructure)

pytestmark = pytest.mark.skipif(not PYTHON.exists(),
                                reason=f"Ascend toolchain not set up at {PYTHON}: run `kopt toolchain add ascend`")


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    home = tmp_path_factory.mktemp("home")
    (home / "toolchains").symlink_to(TOOLCHAINS)  # the real toolchain, a fresh index
    mp.setenv("KOPT_HOME", str(home))
    mp.setenv("HF_HUB_OFFLINE", "1")
    site = next(TOOLCHAINS.glob("ascend/lib/python3*/site-packages/triton"))
    pkg = home / "pkg"
    (pkg / PKG_SLICE).parent.mkdir(parents=True)
    shutil.copy(site / PKG_SLICE, pkg / PKG_SLICE)
    from kopt.config import load_settings
    from kopt.ingest import ingest_corpus

    s = load_settings(workspace=home, target="ascend")
    ingest_corpus("triton-ascend-pkg", s, path=pkg, progress=False)
    yield s
    mp.undo()


def kopt(*args, cwd, timeout=300):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "kopt.cli", *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)


def test_diagnose_gather_explains_the_scalar_loop_with_cited_triton_ascend_source(settings):
    src = EXAMPLES / "gather.py"
    gather = line_of(src, "x = tl.load(x_ptr + idx")
    diag = diagnose(src, settings=settings)
    runs = {r.level: r for r in diag.levels}
    assert diag.target == "ascend:Ascend910B3"
    assert runs["L2"].status == "unavailable" and "NPU" in runs["L2"].reason
    assert runs["L3"].status == "used" and runs["L4"].status == "used"
    assert "no NPU here to measure a rewrite" in runs["L4"].reason  # why a grounded L3 did not stop it
    top = diag.root_cause
    assert (top.id, top.level, top.kernel_lines) == ("unstructured_access", "L4", [gather])
    assert "scalar loop" in top.message and "loaded index" in top.message
    notes = [e.location for e in top.evidence if e.source == "pass_note"]
    assert notes and all(n.startswith("corpora/passes/ascend/") and "@triton-ascend@eeb030e7" in n for n in notes)
    cited = [e for e in top.evidence if e.source == "compiler_source" and e.location]
    assert any(e.location.startswith(f"{PKG_SLICE}:") and e.data["corpus"] == "triton-ascend-pkg" for e in cited)
    assert any("ttir_to_linalg" in e.summary for e in cited)
    # Ascend patterns only, the gather one first; no NVIDIA pattern is offered for an NPU
    assert top.patterns[0] == "ascend_gather_rows_not_elements"
    assert all(p.startswith("ascend_") for f in diag.findings for p in f.patterns)


def test_modulo_gets_the_2d_block_pattern_and_contiguous_offsets_need_no_l4(settings):
    modulo = diagnose(EXAMPLES / "modulo.py", level="L3", settings=settings)
    top = next(f for f in modulo.findings if f.id == "unstructured_access")
    assert top.kernel_lines == [line_of(EXAMPLES / "modulo.py", "b = tl.load")]
    assert top.patterns[0] == "ascend_modulo_to_2d_block"
    clean = diagnose(EXAMPLES / "vector_add.py", settings=settings)
    runs = {r.level: r for r in clean.levels}
    assert not any(f.id == "unstructured_access" for f in clean.findings)
    assert runs["L4"].status == "not_needed"
    assert [k["mix_mode"] for k in clean.l3.kernels] == ["aiv"]
    facts = clean.l3.facts_at(line_of(EXAMPLES / "vector_add.py", "x = tl.load"), str(EXAMPLES / "vector_add.py"))
    assert facts and "one block copy of 1024 f32" in facts[0]["summary"]


MODULO_2D = '''
import torch, triton, triton.language as tl


@triton.jit
def tile_bias_2d(x_ptr, bias_ptr, out_ptr, rows, m, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    c = tl.arange(0, BC)[None, :]
    mask = (r < rows) & (c < m)
    x = tl.load(x_ptr + r * m + c, mask=mask)
    b = tl.load(bias_ptr + c, mask=c < m)
    tl.store(out_ptr + r * m + c, x + b, mask=mask)


def entry(x, bias):
    m = bias.numel()
    out = torch.empty_like(x)
    tile_bias_2d[(triton.cdiv(x.numel() // m, 8),)](x, bias, out, x.numel() // m, m, BR=8, BC=128)
    return out


def reference(x, bias):
    return (x.view(-1, bias.numel()) + bias).view(-1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(case["rows"] * case["m"], generator=g), torch.randn(case["m"], generator=g)


CASES = [{"rows": 8, "m": 96}]
'''


def test_the_modulo_pattern_rewrite_compiles_to_block_copies(tmp_path):
    """The ascend_modulo_to_2d_block guidance, applied to examples/ascend/modulo.py, really removes the loop."""
    task = tmp_path / "modulo_2d.py"
    task.write_text(MODULO_2D)
    (kernel,) = compile_ascend(task, python=PYTHON)
    accesses = ascend_facts(kernel).accesses
    assert len(accesses) == 3 and all(a.lowering == "block_copy" for a in accesses)
    bias = next(a for a in accesses if a.line == line_of(task, "b = tl.load"))
    assert bias.shape == [1, 128] and bias.mask == "bounded"


def test_catalog_is_split_by_target():
    catalog = load_patterns()
    ascend = {p.id for p in for_target(catalog, "ascend")}
    assert len(ascend) >= 4 and all(i.startswith("ascend_") for i in ascend)
    assert not ascend & {p.id for p in for_target(catalog, "nvidia")}
    assert catalog_patterns("modulo_indexing", set(), catalog)[0] == "remove_modulo_indexing"  # NVIDIA unchanged
    assert catalog_patterns("ub_overflow", set(), catalog, "ascend") == ["ascend_fit_unified_buffer"]
    assert catalog_patterns("masked_access", set(), catalog, "ascend")[0] == "ascend_bounded_masks"
    assert [target_family(t) for t in ("ascend", "ascend:Ascend910B4", "sm_90", "90", None)] == \
        ["ascend", "ascend", "nvidia", "nvidia", "nvidia"]


def test_l4_without_a_corpus_says_how_to_ingest_the_toolchain_package():
    f = Finding("unstructured_access", "L3", "gather_kernel: the load at line 15 is a scalar loop: its offsets come "
                "from a loaded index", 0.9, [Evidence("L3", "ttadapter", "scf.for", {"pass_name": "triton-to-unstructure"},
                                                      "g.py:15")], [15], ["no loaded offsets"])
    deep = escalate_l4(f, None, family="triton-ascend")
    assert {e.location.split(":")[0] for e in deep.evidence if e.source == "pass_note"} >= {
        "corpora/passes/ascend/triton-to-unstructure.md"}
    (missing,) = [e for e in deep.evidence if e.source == "compiler_source"]
    assert "`kopt ingest triton-ascend-pkg`" in missing.summary and "kopt toolchain add ascend" in missing.summary
    assert any("32 bytes" in c for c in deep.conditions)  # what the source must satisfy, from the notes


def test_cli_ask_diagnose_compile_for_ascend(settings, tmp_path):
    src = EXAMPLES / "gather.py"
    line = line_of(src, "x = tl.load(x_ptr + idx")
    done = kopt("ask", "why is this load a scalar loop", "--target", "ascend", "--kernel", f"{src}:{line}", "--offline",
                "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["line"] == line and "scalar loop" in answer["facts"][0] and "loaded index" in answer["facts"][0]
    assert answer["findings_text"][0].startswith("unstructured_access")
    assert any(c["cite"].startswith(f"{PKG_SLICE}:") and c["corpus"] == "triton-ascend-pkg" for c in answer["citations"])
    assert any("triton-to-unstructure" in m for m in answer["mechanism"])
    assert any(f.startswith("pattern ascend_gather_rows_not_elements") for f in answer["fix"])

    diag = kopt("diagnose", str(src), "--target", "ascend", "--json", cwd=tmp_path)
    assert diag.returncode == 0, diag.stderr
    assert json.loads(diag.stdout)["findings"][0]["id"] == "unstructured_access"

    compiled = kopt("compile", str(EXAMPLES / "modulo.py"), "--target", "ascend", "--json", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    (k,) = json.loads(compiled.stdout)["items"]
    loops = [a for a in k["ascend"]["accesses"] if a["lowering"] == "scalar_loop"]
    assert k["target"] == "ascend:Ascend910B3" and [(a["line"], a["cause"]) for a in loops] == [
        (line_of(EXAMPLES / "modulo.py", "b = tl.load"), "modulo")]
    table = kopt("compile", str(EXAMPLES / "vector_add.py"), "--target", "ascend", "--stage", "ttadapter", cwd=tmp_path)
    header = " ".join(table.stdout.split("┡")[0].split())  # piped output is 100 wide: column titles wrap
    assert table.returncode == 0 and "memref.copy" in table.stdout and "scalar" in header and "loops" in header

    for args, says in ((["compile", str(src), "--target", "ascend", "--stage", "ptx"], "not an Ascend stage"),
                       (["validate", str(src), "--target", "ascend"], "cannot validate on ascend"),
                       (["bench", str(src), "--target", "ascend"], "cannot bench on ascend")):
        bad = kopt(*args, cwd=tmp_path)
        assert bad.returncode == 1 and says in bad.stderr and "Traceback" not in bad.stderr, (args, bad.stderr)
    if not list(Path("/dev").glob("davinci[0-9]*")):
        assert "no Ascend NPU visible" in bad.stderr


def test_no_toolchain_makes_l3_unavailable_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.setenv("KOPT_HOME", str(tmp_path / "bare"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from kopt.config import load_settings

    diag = diagnose(EXAMPLES / "gather.py", settings=load_settings(workspace=tmp_path, target="ascend:Ascend910B4"))
    runs = {r.level: r for r in diag.levels}
    assert runs["L3"].status == "unavailable" and "kopt toolchain add ascend" in runs["L3"].reason
    assert runs["L4"].status == "not_needed"
