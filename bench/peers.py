"""Figures for bench/peers.sh, every one checked before it is printed.

    peers.py nb OUT N        nostr-bench's output: prints its events/s
    peers.py rb JSON N       relaybench's results file: prints its events/s
    peers.py phase PERF N RATE  perf stat -I 100 -x, output: prints
                             "cpu_s wall_s syscalls ctxsw" over the publish
                             phase ("- - - -" for an empty file: no perf)
    peers.py table ROWS ...  the markdown table and the medians

A figure that is missing, not a number, or implausible against the run's
count and duration exits 1 with the reason: the caller prints the raw output.
"""
import json
import math
import re
import statistics
import sys


def die(msg):
    print(msg, file=sys.stderr)
    sys.exit(1)


def num(s, what):
    try:
        v = float(s)
    except (TypeError, ValueError):
        die(f"{what}: {s!r} is not a number")
    if not math.isfinite(v) or v < 0:
        die(f"{what}: {s!r} is not a plausible figure")
    return v


def one(pattern, text, what):
    found = re.findall(pattern, text, re.M)
    if not found:
        die(f"{what}: not in the output")
    return found[0]


def check_rate(rate, count, secs, what):
    if secs <= 0 or rate <= 0:
        die(f"{what}: rate {rate} over {secs} s")
    if abs(rate - count / secs) > 0.03 * rate + 1:
        die(f"{what}: {rate:.0f} events/s is not {count:.0f} events / {secs:.3f} s")


def nb(path, n):
    text = open(path, errors="replace").read()
    peak = text.split("=== Peak Throughput ===", 1)
    if len(peak) != 2:
        die("nostr-bench: no '=== Peak Throughput ===' section")
    text = peak[1]
    rate = num(one(r"^\s*Events/sec:\s*(\S+)\s*$", text, "Events/sec"), "Events/sec")
    total = num(one(r"^\s*Total Events:\s*(\S+)\s*$", text, "Total Events"), "Total Events")
    d, unit = one(r"^\s*Duration:\s*([0-9.]+)(ms|s)\s*$", text, "Duration (in s or ms)")
    secs = num(d, "Duration") / (1000 if unit == "ms" else 1)
    errors = num(one(r"^\s*Errors:\s*(\S+)\s*$", text, "Errors"), "Errors")
    success = one(r"^\s*Success Rate:\s*(\S+)%\s*$", text, "Success Rate")
    if total != n:
        die(f"nostr-bench: {total:.0f} events published, {n} asked (its -d duration cut the run?)")
    if errors != 0 or num(success, "Success Rate") != 100:
        die(f"nostr-bench: {errors:.0f} errors, success rate {success}%")
    # Duration is printed with 2 decimals: allow its rounding.
    if abs(rate * secs - total) > 0.03 * total + rate * (0.006 if unit == "s" else 0.00001):
        die(f"nostr-bench: {rate:.0f} events/s is not {total:.0f} events / {secs} s")
    print(f"{rate:.1f}")


def floor(path, n):
    text = open(path, errors="replace").read()
    m = re.search(r"^floor: \d+ conns, (\d+) events in ([0-9.]+)s: ([0-9.]+) events/s, .*, (\d+) OKs wrong", text, re.M)
    if not m:
        die("bench/floor: no result line")
    total, secs, rate, bad = (num(x, "floor") for x in m.groups())
    if total != n or bad != 0:
        die(f"bench/floor: {total:.0f} events of {n}, {bad:.0f} OKs wrong")
    if abs(rate * secs - total) > 0.03 * total + rate * 0.006:
        die(f"bench/floor: {rate:.0f} events/s is not {total:.0f} events / {secs} s")
    print(f"{rate:.1f}")


def rb(path, n):
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        die(f"relaybench results file: {e}")
    if doc.get("verdict", {}).get("status") != 0:
        die(f"relaybench verdict: {doc.get('verdict')}")
    phases = [p for r in doc.get("runs", []) for p in r.get("phases", []) if p.get("name") == "publish"]
    if len(phases) != 1:
        die(f"relaybench: {len(phases)} publish phases in the results file")
    p = phases[0]
    c = p.get("counts", {})
    accepted = num(c.get("accepted"), "counts.accepted")
    sent = num(c.get("sent"), "counts.sent")
    if accepted != n or sent != n:
        die(f"relaybench: {accepted:.0f} accepted of {sent:.0f} sent, {n} asked")
    secs = num(p.get("duration_ns"), "duration_ns") / 1e9
    rate = num(p.get("rates", {}).get("events_per_sec"), "rates.events_per_sec")
    check_rate(rate, accepted, secs, "relaybench")
    print(f"{rate:.1f}")


def phase(path, n, rate):
    """The publish phase: the run of round(n / rate / 0.1) consecutive
    intervals holding the most socket writes (both tools write each EVENT
    with one system call); they must hold at least 0.9 n of them."""
    iv = {}
    for line in open(path):
        f = line.strip().split(",")
        if line.startswith("#") or len(f) < 4:
            continue
        t, v, ev = float(f[0]), f[1], f[3]
        v = float(v) if re.fullmatch(r"[0-9.]+", v) else 0.0
        d = iv.setdefault(t, {"cpu": 0.0, "sc": 0.0, "cs": 0.0, "w": 0.0})
        if "task-clock" in ev:
            d["cpu"] = v
        elif "raw_syscalls" in ev:
            d["sc"] = v
        elif "context-switches" in ev:
            d["cs"] = v
        elif "sys_enter_" in ev:
            d["w"] += v
    if not iv:
        print("- - - -")
        return
    rows = [iv[t] for t in sorted(iv)]
    k = min(len(rows), max(1, round(n / rate / 0.1)))
    best = max(range(len(rows) - k + 1), key=lambda j: sum(r["w"] for r in rows[j:j + k]))
    win = rows[best:best + k]
    writes = sum(r["w"] for r in win)
    if writes < 0.9 * n:
        die(f"{path}: {writes:.0f} socket writes in the busiest {k * 0.1:.1f} s, fewer than 0.9 × {n} events")
    print(f"{sum(r['cpu'] for r in win) / 1000:.3f} {k * 0.1:.1f} "
          f"{sum(r['sc'] for r in win):.0f} {sum(r['cs'] for r in win):.0f}")


def fmt(v, spec):
    return "–" if v is None else format(v, spec)


NAMES = {"nb": "nostr-bench", "rb": "relaybench", "rbB": "relaybench B", "floor": "floor (bench/floor)"}


def table(paths):
    # ground pair tool rate cpu_s wall_s syscalls ctxsw relay_ticks relay_cs hz events load1
    by = {}
    for path in paths:
        for line in open(path):
            f = line.split()
            if f:
                by.setdefault((f[0], int(f[1])), {})[f[2]] = f
    print("| ground | pair | client | events/s | ratio to the pair's first | client CPU s over the phase "
          "| client CPU µs/event | client cores busy | client syscalls/event | client ctx switches/event "
          "| relay CPU µs/event | relay ctx switches/event | load 1 min |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ratios = {}
    for (g, i), t in by.items():
        tools = list(t)
        if len(tools) < 2:
            die(f"ground {g} pair {i}: only {tools} measured")
        base = figures(t[tools[0]])["rate"]
        for k in tools:
            c = figures(t[k])
            r = c["rate"] / base
            if k != tools[0]:
                ratios.setdefault((g, k, tools[0]), []).append((r, base, c["rate"]))
            print(f"| {g} | {i} | {NAMES.get(k, k)} | {c['rate']:,.0f} | {r:.2f}× | {fmt(c['cpu'], '.2f')} | "
                  f"{fmt(c['cpu_us'], '.2f')} | {fmt(c['busy'], '.2f')} | {fmt(c['sc'], '.2f')} | {fmt(c['cs'], '.2f')} | "
                  f"{c['rcpu']:.2f} | {c['rcs']:.2f} | {t[k][12]} |")
    print()
    for (g, k, b), rs in ratios.items():
        print(f"- {g}: {NAMES.get(k, k)} / {NAMES.get(b, b)} per pair {' / '.join(f'{x[0]:.2f}' for x in rs)}, "
              f"median **{statistics.median(x[0] for x in rs):.2f}×**; median rates {NAMES.get(b, b)} "
              f"{statistics.median(x[1] for x in rs):,.0f}, {NAMES.get(k, k)} {statistics.median(x[2] for x in rs):,.0f} events/s")


def figures(f):
    rate, events, hz = float(f[3]), float(f[11]), float(f[10])
    d = {"rate": rate, "cpu": None, "cpu_us": None, "busy": None, "sc": None, "cs": None}
    if f[4] != "-":
        cpu, wall = float(f[4]), float(f[5])
        d.update(cpu=cpu, cpu_us=cpu * 1e6 / events, busy=cpu / wall,
                 sc=float(f[6]) / events, cs=float(f[7]) / events)
    d["rcpu"] = float(f[8]) / hz * 1e6 / events
    d["rcs"] = float(f[9]) / events
    return d


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "nb":
        nb(args[0], int(args[1]))
    elif cmd == "floor":
        floor(args[0], int(args[1]))
    elif cmd == "rb":
        rb(args[0], int(args[1]))
    elif cmd == "phase":
        phase(args[0], int(args[1]), float(args[2]))
    elif cmd == "table":
        table(args)
    else:
        die(f"peers.py: unknown command {cmd}")
