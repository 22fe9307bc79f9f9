#!/usr/bin/env python3
"""The claims table from one or more `liftlab-cli claims` folders, each row saying at which tier it
was run, from which run, and when (the run's start in the machine's local time, from its folder's
name). For each claim the row comes from a full-tier folder when one holds it (the latest such),
else from the latest fast-tier folder; a claim in no folder is listed as not run, and a row whose
claim a check still runs at a higher tier (a folder with status "running" and `--only` naming it)
says so, with that check's start. A row read from a
reused run folder names that run's preset and seed count, so a full-tier row that reused a run of
another recipe says so. A claim checked with `--tune` also gets its verdict at each method's tuned
best; every row gives the time to a target loss (mean over seeds) beside the final metric and names
the command that re-makes it. Markdown on stdout. Only the standard library.

--brief gives the short table README carries (claim, tier and seeds, verdict, tuned verdict).
--into FILE writes the table into FILE between `<!-- claims-table begin -->` and
`<!-- claims-table end -->` (with --brief: `<!-- claims-table brief begin -->` …) instead of
printing it: README.md and docs/results.md are regenerated this way, never edited by hand.

usage: scripts/claims-table.py [--brief] [--into FILE] CLAIMS_DIR [CLAIMS_DIR ...]
"""
import json
import os
import re
import sys

TIER_RANK = {"full": 2, "fast": 1, "tiny": 0}


def load(claims_dir):
    with open(os.path.join(claims_dir, "claims.json"), encoding="utf-8") as f:
        return json.load(f)


def run_of(claim):
    """'<preset>, <n> seeds' of the claim's run folder, from its spec.json; '' when unreadable."""
    spec_path = os.path.join(claim.get("run_dir") or "", "spec.json")
    try:
        with open(spec_path, encoding="utf-8") as f:
            spec = json.load(f)
    except (OSError, ValueError):
        return ""
    seeds = spec.get("seeds")
    n = len(seeds) if isinstance(seeds, list) else seeds
    return f"{spec.get('name', '?')}, {n} seeds"


def run_started(claim, fallback):
    """When the claim's run began, from its folder's name (<preset>-YYYYMMDD-HHMMSS); a folder
    read mid-check is stamped when last written, which is not when an earlier row ran."""
    m = re.search(r"(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})\d{2}$",
                  os.path.basename(os.path.normpath(claim.get("run_dir") or "")))
    return f"{m[1]}-{m[2]}-{m[3]} {m[4]}:{m[5]}" if m else fallback


def command_of(claim, tier):
    """The command that re-makes the row: its sub-run's `liftlab-cli run …` when it ran one, else
    (a reused run) the claims check of that claim at the row's tier."""
    command = claim.get("command") or ""
    if command.startswith("liftlab-cli run "):
        return f"`{command}`"
    return f"`liftlab-cli claims --tier {tier} --only {claim['id']}`"


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def p_text(p):
    return "–" if p is None else (f"{p:.2g}" if p >= 1e-12 else "< 1e-12")


def verdict_text(row, with_needed=True):
    verdict = row.get("verdict", "?")
    shown = f"**{verdict}**" if verdict in ("holds", "refuted") else verdict
    if with_needed and row.get("needed"):
        shown += f" (to decide: {row['needed']})"
    return shown


def tuned_text(c, brief):
    """The verdict at each method's tuned best, with its p and settings; '–' when not tuned."""
    best = c.get("best")
    if not c.get("tuned") or not best:
        return "–"
    text = f"{verdict_text(best, not brief)}, p = {p_text(best.get('p'))}"
    if not brief:
        text += f": {best.get('ours', '')} (best: {c.get('best_settings', '')})"
    return text


def table(dirs, brief):
    """The table as a list of lines."""
    out = []
    chosen, order = {}, []
    running = {}  # claim id -> (tier, start) of a check still running it (no row yet)
    for d in dirs:
        folder = load(d)
        tier = folder.get("tier", "?")
        when = (folder.get("finished") or folder.get("started") or "?").replace("T", " ")[:16]
        if folder.get("status") == "running":
            done = {c["id"] for c in folder.get("claims", [])}
            for key in (folder.get("options") or {}).get("only") or []:
                if key not in done:
                    running[key] = (tier, run_started({"run_dir": d}, when))
        for c in folder.get("claims", []):
            key = c["id"]
            if key not in order:
                order.append(key)
            candidate = (TIER_RANK.get(tier, -1), run_started(c, when), tier, c, d)
            if key not in chosen or candidate[:2] > chosen[key][:2]:
                chosen[key] = candidate
    tiers = [chosen[k][2] for k in order]
    others = ", ".join(f"{tiers.count(t)} at the {t} tier" for t in ("fast", "tiny", "?")
                       if tiers.count(t))
    sources = ", ".join(f"`{os.path.basename(os.path.normpath(d))}`" for d in dirs)
    still = [k for k in order
             if k in running and TIER_RANK.get(running[k][0], -1) > TIER_RANK.get(chosen[k][2], -1)]
    if still:
        others += (", " if others else "") + f"{len(still)} of them running at a higher tier"
    out.append(f"{tiers.count('full')} of {len(order)} claims at the full tier" +
               (f" ({others})" if others else "") +
               ("; a row below the full tier ran at the reduced budget docs/cli.md names"
                if tiers.count("full") < len(order) else "") +
               f". Generated by `scripts/claims-table.py` from: {sources}.")
    out.append("")
    if brief:
        out.append("| claim | tier, seeds, when (local time) | verdict (p) | at the tuned best |")
        out.append("|---|---|---|---|")
    else:
        out.append("| claim | tier, run, when (local time) | seeds | measured | time to target "
                   "(mean over seeds) | test | p | verdict | at the tuned best | command |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
    for key in order:
        _, when, tier, c, _ = chosen[key]
        row = c.get("preset") or {}
        if brief:
            seeds = row.get("seeds", "")
            how = tier
            if tier == "full" and c.get("tier") == "reused" and run_of(c):
                how += f" (run: {run_of(c)})"
            how += f", seeds {seeds}, {when}" if seeds else f", {when}"
            verdict = verdict_text(row, with_needed=False)
            if row.get("p") is not None:
                verdict += f" ({p_text(row.get('p'))})"
            if key in still:
                verdict += f"; {running[key][0]} tier running since {running[key][1]}"
            cells = [f"`{key}`: {c.get('claim', '')}", how, verdict, tuned_text(c, brief)]
        else:
            how = tier
            if c.get("tier") == "reused":
                run = run_of(c)
                how += " (reused run" + (f": {run}" if run else "") + ")"
            verdict = verdict_text(row)
            if key in still:
                verdict += f"; {running[key][0]} tier running since {running[key][1]}"
            cells = [f"`{key}`: {c.get('claim', '')}", f"{how}, {when}", row.get("seeds", ""),
                     row.get("ours", ""), row.get("time_to_target") or "–",
                     row.get("test", ""), p_text(row.get("p")),
                     verdict, tuned_text(c, brief), command_of(c, tier)]
        out.append("| " + " | ".join(cell(x) for x in cells) + " |")
    return out


def splice(path, marker, lines):
    """Replace what lies between `<!-- MARKER begin -->` and `<!-- MARKER end -->` in `path`."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    begin, end = f"<!-- {marker} begin -->", f"<!-- {marker} end -->"
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise SystemExit(f"{path}: needs one '{begin}' before one '{end}'")
    head, rest = text.split(begin)
    tail = rest.split(end)[1]
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + begin + "\n" + "\n".join(lines) + "\n" + end + tail)


def main(args):
    brief = "--brief" in args
    into = None
    if "--into" in args:
        i = args.index("--into")
        if i + 1 >= len(args):
            print(__doc__, file=sys.stderr)
            return 2
        into = args[i + 1]
        args = args[:i] + args[i + 2:]
    dirs = [a for a in args if a != "--brief"]
    if not dirs:
        print(__doc__, file=sys.stderr)
        return 2
    lines = table(dirs, brief)
    if into:
        splice(into, "claims-table brief" if brief else "claims-table", lines)
    else:
        print("\n".join(lines))
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
