"""The commit-message miner (kopt.ingest.pairs.mine_commits) on a real git repository made here."""

import subprocess

from kopt.ingest import pairs as P

STEPS = "".join(f"  int step{i} = contiguity * {i};\n" for i in range(12))   # big enough to be a chunk of its own
WIDEN = f"""\
/// How many elements one thread reads at once.
static int widthFor(int contiguity, int elemBits) {{
{STEPS}  return contiguity;
}}

static int alignmentOf(int contiguity) {{
{STEPS}  return 16;
}}
"""


def _git(root, *args, author="Ada Lovelace <ada@example.invalid>"):
    name, email = author[:-1].split(" <")
    subprocess.run(["git", "-c", f"user.name={name}", "-c", f"user.email={email}", "-C", str(root), *args],
                   check=True, capture_output=True)


def _commit(root, files: dict, message: str, **kw):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", message, **kw)


def test_commit_messages_point_at_the_definitions_their_diff_changed(tmp_path):
    root = tmp_path / "triton"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _commit(root, {"lib/Widen.cpp": WIDEN}, "Add the widening helpers for vector loads")
    clamped = WIDEN.replace("  return contiguity;", "  return std::min(contiguity, 128 / elemBits);")
    _commit(root, {"lib/Widen.cpp": clamped},
            "[BACKEND] Clamp the load width to 128 bits (#4242)\n\nWider vectors split into several transactions.\n\n"
            "Signed-off-by: Ada Lovelace <ada@example.invalid>\n\n# New contributor declaration\n- [x] I am not trivial")
    _commit(root, {"lib/Widen.cpp": clamped.replace("return 16;", "return 32;")},
            "Raise the default alignment for all pointers", author="dependabot[bot] <bot@example.invalid>")
    _commit(root, {f"lib/gen/File{i}.cpp": f"int f{i}() {{ return {i}; }}\n" for i in range(P.COMMIT_MAX_FILES + 1)}
            | {"lib/Widen.cpp": clamped.replace("return 16;", "return 8;")},
            "Reformat the whole tree with the new style")
    _git(root, "checkout", "-qb", "side", "HEAD~1")
    _commit(root, {"lib/Side.cpp": "int side() { return 1; }\n"}, "A change on a side branch to merge")
    _git(root, "checkout", "-q", "main")
    _git(root, "merge", "-q", "--no-ff", "-m", "Merge branch side into main for the alignment", "side")

    corpus = P.load_corpus("triton", root)
    rows = [p for p in P.mine_commits(corpus, root) if p]
    by_query = {r["query"]: r["positive"]["symbol"] for r in rows}
    assert by_query["[BACKEND] Clamp the load width to 128 bits Wider vectors split into several transactions."] \
        == "widthFor", by_query
    assert not [q for q in by_query if "alignment" in q], "bot, huge and merge commits give no pair"
    assert "A change on a side branch to merge" in by_query   # the side branch's own commit does count
    assert "Add the widening helpers for vector loads" in by_query   # a new file: its definitions are what it added


def test_commit_message_keeps_prose_only():
    message = ("fix(ssbuf): fix the pipe flag\n\nCo-authored-by: someone\n\n# message auto-generated for no-merge-commit "
               "merge:\n!1579 merge fix_pipeS into main\n\nfix(ssbuf): fix the pipe flag\n\nCreated-by: x\n"
               "Description: The core Triton is a small number of people\n- [ ] checklist")
    assert P.commit_message(message) == "fix(ssbuf): fix the pipe flag"
