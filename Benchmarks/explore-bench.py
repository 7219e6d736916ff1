#!/usr/bin/env python3
"""explore on every scenario of Examples/explore, release build, in one run.

For each scenario:

  found       under its naive switch (the default search: depth 4), the time to the first
              failure, shrinking and the transcript's check included (the report's `seconds`),
              against the goal of 10 s
  commands    the shrunk transcript's length in commands (goal: at most 12), and whether
              `cachesh --verify` replays it (it must)
  depth 6     the default policy (naive=none) explored exhaustively to depth 6
              (strategy=exhaustive): clean or not, schedules run, orders skipped as reorderings
              of commuting steps, distinct states, seconds; and the same with por=off (every
              order run), for the schedules the reduction saves
  wide        Benchmarks/explore/three-screens.explore, three screens whose steps commute: depth 6
              with the reduction and without (stopped past --timeout); and schedules a second at
              depth 3 without the reduction (1,206 schedules) forked from a snapshot of the state
              after the setup (fork=on, the default) beside the setup run again for each schedule
              (fork=off), same run, same schedules

Times are wall seconds and CPU seconds (user + system) of the cachesh process: on a shared
machine the CPU seconds move less with the load.

Prints a Markdown table (Benchmarks/README.md keeps one) and the load average before and
after, as the machine may be shared.

Usage: Benchmarks/explore-bench.py [CACHESH] [--depth N] [--timeout S]   (builds the release cachesh when missing)
"""
import argparse
import glob
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from release_binary import binary  # noqa: E402

GOAL_SECONDS = 10
GOAL_COMMANDS = 12


def explore(cachesh, scenario, *options, timeout=None):
    """Runs `cachesh --json --explore SCENARIO OPTIONS...`: (exit status, report, wall seconds,
    CPU seconds of the process, user and system); (None, None, wall, None) past `timeout` seconds."""
    start = time.monotonic()
    process = subprocess.Popen([cachesh, "--json", "--explore", scenario, *options], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return None, None, time.monotonic() - start, None
    wall = time.monotonic() - start
    # The child is reaped by communicate; its CPU is what RUSAGE_CHILDREN grew by.
    if process.returncode not in (0, 1):
        sys.exit(f"{scenario}: exit {process.returncode}: {stderr.strip()}")
    return process.returncode, json.loads(stdout), wall, None


def cpu_of(call):
    """Runs `call()` and adds the CPU seconds (user + system) its child processes took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    status, report, wall, _ = call()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return status, report, wall, cpu


def load():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cachesh", nargs="?")
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--timeout", type=float, default=300, help="seconds a run without the reduction may take")
    args = parser.parse_args()
    sys.argv = sys.argv[:1] + ([args.cachesh] if args.cachesh else [])
    cachesh = binary()
    scenarios = sorted(glob.glob(os.path.join(ROOT, "Examples/explore/*.explore")))
    wide = os.path.join(ROOT, "Benchmarks/explore/three-screens.explore")
    depth = f"depth={args.depth}"
    print(f"cachesh: {cachesh}")
    print(f"load average before: {load()}")
    rows = []
    problems = []
    with tempfile.TemporaryDirectory() as scratch:
        for scenario in scenarios:
            name = os.path.basename(scenario)[: -len(".explore")]
            out = os.path.join(scratch, name + ".transcript")
            status, found, found_wall, found_cpu = cpu_of(lambda: explore(cachesh, scenario, f"transcript={out}"))
            failure = found.get("failure") or {}
            verify = subprocess.run([cachesh, "--verify", out], capture_output=True, text=True) if status == 1 else None
            verifies = verify is not None and verify.returncode == 0
            _, reduced, _, reduced_cpu = cpu_of(lambda: explore(cachesh, scenario, "naive=none", depth, "strategy=exhaustive"))
            _, plain, _, plain_cpu = cpu_of(lambda: explore(cachesh, scenario, "naive=none", depth, "strategy=exhaustive", "por=off"))
            row = {
                "name": name,
                "found": status == 1,
                "found_seconds": found["seconds"],
                "found_cpu": found_cpu,
                "commands": failure.get("commands"),
                "before": failure.get("commands_before_shrinking"),
                "verifies": verifies,
                "clean": reduced["clean"] and not reduced.get("stopped_at_bound") and reduced["depth"] == args.depth,
                "schedules": reduced["schedules"],
                "reordered": reduced["reordered"],
                "states": reduced["distinct_states"],
                "cpu": reduced_cpu,
                "plain_schedules": plain["schedules"],
                "plain_cpu": plain_cpu,
            }
            rows.append(row)
            if status != 1:
                problems.append(f"{name}: no failure found under its naive switch")
            elif row["found_seconds"] > GOAL_SECONDS:
                problems.append(f"{name}: first failure after {row['found_seconds']:.2f} s (goal {GOAL_SECONDS} s)")
            if status == 1 and row["commands"] > GOAL_COMMANDS:
                problems.append(f"{name}: shrunk to {row['commands']} commands (goal {GOAL_COMMANDS})")
            if status == 1 and not verifies:
                problems.append(f"{name}: the shrunk transcript does not verify")
            if not row["clean"]:
                problems.append(f"{name}: the default policy is not clean to depth {args.depth}")
        # A wider scenario: three screens whose steps commute, for the reduction and the rates.
        _, wide_reduced, wide_wall, wide_cpu = cpu_of(lambda: explore(cachesh, wide, "naive=none", depth, "strategy=exhaustive"))
        _, wide_plain, wide_plain_wall, wide_plain_cpu = cpu_of(
            lambda: explore(cachesh, wide, "naive=none", depth, "strategy=exhaustive", "por=off", timeout=args.timeout))
        rate_options = ["naive=none", "depth=3", "strategy=exhaustive", "por=off"]
        _, forked, forked_wall, forked_cpu = cpu_of(lambda: explore(cachesh, wide, *rate_options))
        _, again, again_wall, again_cpu = cpu_of(lambda: explore(cachesh, wide, *rate_options, "fork=off"))
    print(f"load average after: {load()}")
    print()
    print(f"| scenario | first failure (naive): wall, CPU | shrunk to (from) | verifies "
          f"| default, depth {args.depth}: schedules (reordered, states), CPU | without POR: schedules, CPU |")
    print("|---|---:|---:|---|---:|---:|")
    for r in rows:
        found = f"{r['found_seconds']:.2f} s, {r['found_cpu']:.2f} s" if r["found"] else "not found"
        shrunk = f"{r['commands']} ({r['before']})" if r["commands"] is not None else "-"
        clean = "clean" if r["clean"] else "NOT clean"
        print(f"| {r['name']} | {found} | {shrunk} | {'yes' if r['verifies'] else 'NO'} "
              f"| {clean}: {r['schedules']} ({r['reordered']}, {r['states']}), {r['cpu']:.2f} s "
              f"| {r['plain_schedules']}, {r['plain_cpu']:.2f} s |")
    print()
    name = os.path.basename(wide)
    clean = "clean" if wide_reduced["clean"] and wide_reduced["depth"] == args.depth else "NOT clean"
    print(f"{name}, default policy, depth {args.depth} exhaustive: with POR {clean}, {wide_reduced['schedules']} schedules "
          f"({wide_reduced['reordered']} reordered orders skipped, {wide_reduced['distinct_states']} distinct states), "
          f"{wide_wall:.2f} s wall, {wide_cpu:.2f} s CPU")
    if wide_plain is None:
        print(f"  without POR: stopped after {wide_plain_wall:.0f} s wall (--timeout)")
    else:
        print(f"  without POR: {wide_plain['schedules']} schedules ({wide_plain['distinct_states']} distinct states), "
              f"{wide_plain_wall:.2f} s wall, {wide_plain_cpu:.2f} s CPU")
    n = forked["schedules"]
    print(f"{name}, depth 3 without POR ({n} schedules, the same in both runs):")
    print(f"  forked from the state after the setup: {n / forked_wall:.0f} schedules/s wall, {n / forked_cpu:.0f} per CPU second")
    print(f"  the setup run again for each:          {n / again_wall:.0f} schedules/s wall, {n / again_cpu:.0f} per CPU second")
    if again["schedules"] != n or not forked["forked"] or again["forked"]:
        problems.append("the forked and the replayed runs differ in schedules, or did not fork as asked")
    for problem in problems:
        print("GOAL MISSED: " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
