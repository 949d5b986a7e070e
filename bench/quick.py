"""Prints bench/quick's table: each figure as a fraction of hello-world's requests/s in
the same run, beside the fraction committed in bench/baseline.md, flagging drops over 20 %.

    python3 bench/quick.py <run.tsv> <baseline.md> <load before> <load after> <busy before> <cores> <seconds> [save]

Exit status 3 when a figure dropped by more than 20 % (on a quiet machine a regression to
look at; on a busy one the warning above the table says the run proves nothing).
"""

import datetime
import re
import sys

DROP = 0.20
# Resident memory (MB): of a server on a fresh store 3 s after it answered its first request
# (the API description rendered), and of the read server after the read, list and
# deep-page loads. Flagged when it grew by more than GROW against the baseline, or passed
# its goal.
GROW = 0.20
MEMORY = {"idle": ("resident memory, idle (fresh store)", 50), "loaded": ("resident memory after the read loads", 200)}
# The list page with two expansions (a unit, and its property) against the plain page, in
# the same run: at least this share of its rate (docs/api.md, "Expanding related records").
EXPAND_GOAL = 0.6
# Other work's share of the CPUs in the seconds before the run above which it is "busy".
BUSY = 0.10

WHAT = {
    "read": "GET /v1/leases/{id}",
    "list": "filtered, sorted list page of 25",
    "deep": "the same list, deep page",
    "expand": "the list's page, expand[]=unit&expand[]=unit.property",
    "payments": "idempotent test payments /s (16 clients)",
    "deliveries": "webhook deliveries /s (backlog after restart)",
}


def main(run, baseline_path, load_before, load_after, busy_before, cores, seconds, save=""):
    rows = [line.rstrip("\n").split("\t") for line in open(run) if line.strip()]
    hello = next(float(v) for b, _, v in rows if b == "hello")
    figures = [(b, w, float(v)) for b, w, v in rows if b != "hello" and w not in MEMORY]
    memory = [(b, w, float(v)) for b, w, v in rows if w in MEMORY]
    baseline = read_baseline(baseline_path)
    load_before, load_after, busy_before, cores = float(load_before), float(load_after), float(busy_before), int(cores)

    busy = busy_before > BUSY
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print()
    print(f"Gable quick benchmark, {stamp}, {cores} cores, {seconds} s; hello-world {hello:,.0f} req/s")
    print(
        f"load average (1 min): {load_before:.2f} before, {load_after:.2f} after; "
        f"other work in the 2 s before the run: {busy_before:.0%} of the CPUs"
    )
    if busy:
        print(
            f"WARNING: the machine was busy before the run ({busy_before:.0%} of {cores} cores): "
            "other work skews every figure (up to 2x); compare only quiet runs."
        )
    print()
    print("| backend | figure | per s | of hello-world | baseline | change |")
    print("|---|---|---|---|---|---|")
    dropped = []
    for backend, what, value in figures:
        ratio = value / hello
        base = baseline.get((backend, what))
        if base:
            change = ratio / base - 1
            flag = "  DROPPED" if change < -DROP else ""
            if flag:
                dropped.append(f"{backend} {what}")
            cmp = f"{base:.4f} | {change:+.0%}{flag}"
        else:
            cmp = "- | (no baseline)"
        print(f"| {backend} | {what}: {WHAT.get(what, what)} | {value:,.0f} | {ratio:.4f} | {cmp} |")
    print()
    rate = {(b, w): v for b, w, v in figures}
    for backend in dict.fromkeys(b for b, _, _ in figures):
        if (backend, "list") in rate and (backend, "expand") in rate:
            share = rate[(backend, "expand")] / rate[(backend, "list")]
            flag = "" if share >= EXPAND_GOAL else "  BELOW GOAL"
            if flag:
                dropped.append(f"{backend} expand share")
            print(f"{backend}: the expanded page at {share:.2f} of the plain page's rate (goal ≥ {EXPAND_GOAL}){flag}")
    print()
    if memory:
        print("| backend | memory | MB | goal | baseline | change |")
        print("|---|---|---|---|---|---|")
    for backend, what, mb in memory:
        label, goal = MEMORY[what]
        base = baseline.get((backend, what))
        flag = "  OVER GOAL" if mb > goal else ""
        if base:
            change = mb / base - 1
            if change > GROW:
                flag += "  GREW"
            cmp = f"{base:.0f} | {change:+.0%}{flag}"
        else:
            cmp = f"- | (no baseline){flag}"
        if flag.strip():
            dropped.append(f"{backend} memory {what}")
        print(f"| {backend} | {what}: {label} | {mb:.0f} | ≤ {goal} | {cmp} |")
    if memory:
        print()
    if save:
        write_baseline(baseline_path, stamp, cores, hello, busy_before, figures, memory)
        print(f"saved as the baseline: {baseline_path}")
    if dropped:
        print(f"dropped by more than {DROP:.0%} against the baseline (memory: grew by more than {GROW:.0%}, or over its goal): {', '.join(dropped)}")
        if busy:
            print("(the machine was busy: run again on a quiet machine before believing it)")
        return 3
    print("no figure dropped by more than 20 % against the baseline, and memory within its goals")
    return 0


def read_baseline(path):
    """(backend, figure) → ratio, from the baseline's table rows `| backend | figure | per s | ratio |`."""
    out = {}
    try:
        text = open(path).read()
    except FileNotFoundError:
        return out
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0] in ("sqlite", "postgres") and cells[1].split(":")[0] in MEMORY:
            out[(cells[0], cells[1].split(":")[0])] = float(cells[2])
        elif len(cells) >= 4 and re.fullmatch(r"[0-9.]+", cells[3]) and cells[0] in ("sqlite", "postgres"):
            out[(cells[0], cells[1].split(":")[0])] = float(cells[3])
    return out


def write_baseline(path, stamp, cores, hello, busy, figures, memory):
    with open(path, "w") as f:
        f.write("# The quick benchmark's baseline\n\n")
        f.write(
            "Written by `BENCH_QUICK_SAVE=1 make bench-quick` (bench/quick); `make bench-quick` compares each\n"
            "run with the ratios below (a figure divided by hello-world's requests/s in the same run)\n"
            "and flags any that dropped by more than 20 %. Save a new baseline only from a quiet\n"
            "machine, and commit it with the change that moved it, saying why in docs/benchmarks.md.\n\n"
        )
        f.write(f"Run: {stamp}, {cores} cores, other work {busy:.0%} of the CPUs before it; hello-world {hello:,.0f} req/s.\n\n")
        f.write("| backend | figure | per s | of hello-world |\n|---|---|---|---|\n")
        for backend, what, value in figures:
            f.write(f"| {backend} | {what}: {WHAT.get(what, what)} | {value:.0f} | {value / hello:.4f} |\n")
        if memory:
            f.write("\n| backend | memory | MB |\n|---|---|---|\n")
            for backend, what, mb in memory:
                f.write(f"| {backend} | {what}: {MEMORY[what][0]} | {mb:.0f} |\n")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
