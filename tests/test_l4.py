"""L4 from the real pass notes: which notes explain a finding, what they say, where they are cited."""

from kopt.diagnose.l4 import bullets, compiler_corpus, escalate_l4, mechanism_of, notes_for
from kopt.vocabulary import Evidence, Finding


def misaligned() -> Finding:
    return Finding("misaligned_access", "L3", "line 15: tl.load of `x_ptr` is 32-bit wide; the stride `stride_x` is "
                   "not known divisible by 16, so each row start is not known 16-byte aligned", 0.83,
                   [Evidence("L3", "ptx", "ld.global.b32", {}, "k.py:15")], [15], ["pad the rows"])


def test_notes_for_ranks_the_central_note_first():
    notes = notes_for(misaligned())
    assert notes[0].pass_name == "axis-info"
    assert all("misaligned_access" in n.findings for n in notes)
    pipelining = Finding("no_software_pipelining", "L3", "num_stages=1 turns the pipeliner off", 0.8)
    assert notes_for(pipelining)[0].pass_name in {"tritongpu-pipeline", "tritongpu-schedule-loops",
                                                  "tritongpu-assign-latencies"}


def test_bullets_join_continuations():
    text = "- first point\n  continues here\n- second\n"
    assert bullets(text) == ["first point continues here", "second"]


def test_escalate_without_index_keeps_notes_and_says_what_to_ingest():
    deep = escalate_l4(misaligned(), None)
    assert deep.level == "L4" and deep.kernel_lines == [15] and deep.conditions[0] == "pad the rows"
    assert any("divisib" in m for m in mechanism_of(deep))
    note_ev = [e for e in deep.evidence if e.source == "pass_note"]
    assert note_ev[0].location.startswith("corpora/passes/axis-info.md:") and note_ev[0].location.endswith("@triton@7c56a5e4")
    missing = [e for e in deep.evidence if e.source == "compiler_source"]
    assert len(missing) == 1 and "kopt ingest triton-pkg" in missing[0].summary
    assert any("multiple_of" in c for c in deep.conditions[1:])
    assert compiler_corpus(None)[0] is None
