#!/usr/bin/env bash
# Measures the micro-benchmarks again and rewrites Thresholds/ with their counts, after a change
# that moved them on purpose (review `git diff Thresholds` before committing it). Keeps only the
# checked metrics: allocations and valgrind's instruction count. `thresholds update` writes every
# metric it measured, and wall time (or the CPU's own instruction counter, which differs between
# machines) would fail every later check. Arguments go to `swift package benchmark`, e.g.
# `--filter json-parse-small-object` to measure one benchmark again.
set -euo pipefail
cd "$(dirname "$0")"
"${SWIFT:-swift}" package --allow-writing-to-package-directory benchmark thresholds update "$@"
python3 - <<'PY'
import glob, json
keep = ("mallocCountTotal", "valgrindInstructions")
for path in sorted(glob.glob("Thresholds/*.p90.json")):
    with open(path) as f:
        values = json.load(f)
    kept = {k: v for k, v in values.items() if k in keep}
    with open(path, "w") as f:
        f.write(json.dumps(kept, indent=2, sort_keys=True, separators=(",", " : ")) + "\n")
    print(path, kept)
PY
