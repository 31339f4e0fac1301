"""The LLM campaign's state between the GPU calls (evals/device/llm_campaign.sh) and here.

A campaign folder (e.g. evals/llm/campaign-2026-12-01/) travels with the working tree and holds
  store.tar.gz  the rounds store (compressed: the tree that travels is limited to 64 MiB),
  exchange/     the prompt exchange: requests written on the GPU machine, replies written here,
  .kopt/        the store unpacked, for `kopt eval report` and `kopt runs` here (ignored by git: it never travels).
On the GPU machine `restore` lays the store and the exchange into a fixed workspace, `pack` brings back one
campaign.tar.gz (store.tar.gz plus the exchange files that are new or changed), `summary` says what the call did;
here `unpack` lays that tarball over the campaign folder and `pending` lists the requests still to answer.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sqlite3
import sys
import tarfile
from pathlib import Path

MANIFEST = "exchange.manifest.json"  # sha256 per exchange file as it arrived: pack sends back what differs


def _digests(folder: Path) -> dict[str, str]:
    if not folder.is_dir():
        return {}
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def restore(campaign_dir: Path, ws: Path) -> None:
    """The carried store and exchange into the workspace (ws/.kopt, ws/exchange), and the exchange's manifest."""
    ws.mkdir(parents=True, exist_ok=True)
    store = campaign_dir / "store.tar.gz"
    if store.is_file():
        with tarfile.open(store) as tar:
            tar.extractall(ws, filter="data")
    if (campaign_dir / "exchange").is_dir():
        shutil.copytree(campaign_dir / "exchange", ws / "exchange", dirs_exist_ok=True)
    (ws / "exchange").mkdir(exist_ok=True)
    (ws / MANIFEST).write_text(json.dumps(_digests(ws / "exchange")))


def state(ws: Path) -> dict[str, dict]:
    """run id -> campaign, grounding arm, op, rounds, status and whether a request is pending, for every campaign's
    runs (read straight from SQLite: no kopt import)."""
    db = ws / ".kopt" / "rounds.sqlite"
    if not db.is_file():
        return {}
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT r.run_id, r.options, r.status, (SELECT COUNT(*) FROM rounds WHERE run_id = r.run_id) "
                           "FROM runs r").fetchall()
        has_pending = con.execute("SELECT 1 FROM sqlite_master WHERE name = 'pending'").fetchone()
        pending = {row[0] for row in con.execute("SELECT run_id FROM pending")} if has_pending else set()
    finally:
        con.close()
    out = {}
    for run_id, options, status, rounds in rows:
        opts = json.loads(options)
        if opts.get("campaign"):
            out[run_id] = {"campaign": opts["campaign"], "arm": opts.get("grounding", "full"), "op": opts.get("op"),
                           "rounds": rounds, "status": status, "pending": run_id in pending}
    return out


def pack(ws: Path, out: Path) -> dict[str, int]:
    """out (a .tar.gz): store.tar.gz (a consistent SQLite copy and the artifacts; no work/ scratch) and the exchange
    files that are new or changed since restore. Written beside, then renamed: a cut-off call leaves no half file."""
    stage = ws / ".pack"
    shutil.rmtree(stage, ignore_errors=True)
    (stage / ".kopt").mkdir(parents=True)
    src = sqlite3.connect(ws / ".kopt" / "rounds.sqlite")
    dst = sqlite3.connect(stage / ".kopt" / "rounds.sqlite")
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    if (ws / ".kopt" / "artifacts").is_dir():
        shutil.copytree(ws / ".kopt" / "artifacts", stage / ".kopt" / "artifacts")
    with tarfile.open(stage / "store.tar.gz", "w:gz") as tar:
        tar.add(stage / ".kopt", arcname=".kopt")
    before = json.loads((ws / MANIFEST).read_text()) if (ws / MANIFEST).is_file() else {}
    changed = [name for name, digest in _digests(ws / "exchange").items() if before.get(name) != digest]
    tmp = out.with_name(out.name + ".tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        tar.add(stage / "store.tar.gz", arcname="store.tar.gz")
        for name in changed:
            tar.add(ws / "exchange" / name, arcname=f"exchange/{name}")
    tmp.replace(out)
    return {"store_bytes": (stage / "store.tar.gz").stat().st_size, "exchange_files": len(changed),
            "bytes": out.stat().st_size}


def summary(ws: Path, arms: list[str], before: dict[str, dict], jobs: dict[str, list | None]) -> list[str]:
    """One line per arm (CAMPAIGN/GROUNDING), the failed jobs, then the requests waiting for a reply: the call's last
    words."""
    after = state(ws)
    lines = []
    for arm in arms:
        runs = {k: v for k, v in after.items() if f"{v['campaign']}/{v['arm']}" == arm}
        new = [k for k in runs if k not in before]
        advanced = [k for k, v in runs.items() if k in before and v["rounds"] > before[k]["rounds"]]
        status = {s: sum(v["status"] == s for v in runs.values()) for s in ("waiting", "done", "running", "failed")}
        done = jobs.get(arm)
        failed = [f"{j['op']}: {str(j.get('error', '?'))[:160]}" for j in done or [] if not j.get("ok")]
        lines.append(f"{arm}: {len(runs)} runs; {len(advanced)} advanced a round, {len(new)} started; "
                     f"{status['waiting']} waiting for a reply, {status['done']} done, "
                     f"{status['running']} cut short (resumable), {status['failed']} failed; "
                     + (f"{len(failed)} job(s) failed" if done is not None else "no job results (stopped at the budget)"))
        lines += [f"  failed {f}" for f in failed]
        cut = sorted(v["op"] for v in runs.values() if v["status"] == "running")
        if cut:
            lines.append(f"  cut short: {', '.join(cut)}")
    waiting = sum(v["pending"] for v in after.values() if f"{v['campaign']}/{v['arm']}" in arms)
    lines.append(f"requests waiting for a reply: {waiting}")
    return lines


def unpack(tar_path: Path, campaign_dir: Path) -> None:
    """Here, after a call: the new store.tar.gz and exchange files into the campaign folder, and the store unpacked
    into its .kopt/ for local reports."""
    campaign_dir.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tar_path) as tar:
        tar.extractall(campaign_dir, filter="data")
    shutil.rmtree(campaign_dir / ".kopt", ignore_errors=True)
    with tarfile.open(campaign_dir / "store.tar.gz") as tar:
        tar.extractall(campaign_dir, filter="data")


def pending(campaign_dir: Path) -> list[dict]:
    """The requests the campaign waits on, with the files here: read the .request.md, write the .reply.md."""
    db = campaign_dir / ".kopt" / "rounds.sqlite"
    if not db.is_file():
        return []
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT p.run_id, p.n, p.request_id, r.options FROM pending p JOIN runs r USING (run_id) "
                           "ORDER BY p.created").fetchall()
    finally:
        con.close()
    out = []
    for run_id, n, rid, options in rows:
        opts = json.loads(options)
        reply = campaign_dir / "exchange" / f"{rid}.reply.md"
        out.append({"campaign": opts.get("campaign"), "arm": opts.get("grounding", "full"), "op": opts.get("op"), "run_id": run_id, "round": n,
                    "request": str(campaign_dir / "exchange" / f"{rid}.request.md"), "reply": str(reply),
                    "answered": reply.is_file()})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("restore")
    p.add_argument("campaign_dir", type=Path)
    p.add_argument("ws", type=Path)
    p = sub.add_parser("state")
    p.add_argument("ws", type=Path)
    p = sub.add_parser("pack")
    p.add_argument("ws", type=Path)
    p.add_argument("out", type=Path)
    p = sub.add_parser("summary")
    p.add_argument("ws", type=Path)
    p.add_argument("arms", help="arms as CAMPAIGN/GROUNDING, comma-separated")
    p.add_argument("before", type=Path)
    p = sub.add_parser("unpack")
    p.add_argument("tarball", type=Path)
    p.add_argument("campaign_dir", type=Path)
    p = sub.add_parser("pending")
    p.add_argument("campaign_dir", type=Path)
    p.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.cmd == "restore":
        restore(args.campaign_dir, args.ws)
    elif args.cmd == "state":
        print(json.dumps(state(args.ws)))
    elif args.cmd == "pack":
        print(json.dumps(pack(args.ws, args.out)))
    elif args.cmd == "summary":
        arms = args.arms.split(",")
        jobs = {}
        for arm in arms:  # `kopt eval suite --json` of each arm; missing or cut off when stopped at the budget
            try:
                jobs[arm] = json.loads((args.ws / f"jobs-{arm.replace('/', '-')}.json").read_text())["jobs"]
            except (OSError, ValueError, KeyError):
                jobs[arm] = None
        print("\n".join(summary(args.ws, arms, json.loads(args.before.read_text()), jobs)))
    elif args.cmd in ("unpack", "pending"):
        if args.cmd == "unpack":
            unpack(args.tarball, args.campaign_dir)
        todo = pending(args.campaign_dir)
        if getattr(args, "json", False):
            print(json.dumps(todo, indent=1))
        else:
            for t in todo:
                mark = "answered" if t["answered"] else "to answer"
                print(f"{t['campaign']}/{t['arm']} {t['op']} round {t['round']}: {mark}: {t['request']} -> {t['reply']}")
            print(f"{sum(not t['answered'] for t in todo)} request(s) to answer, {len(todo)} pending in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
