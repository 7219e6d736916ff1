"""The cachesh a benchmark script measures: the first argument, or the release build (built
when missing). Shared by the scripts here that take `[CACHESH]`."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def binary():
    if len(sys.argv) > 1:
        return sys.argv[1]
    path = os.path.join(ROOT, ".build/release/cachesh")
    if not os.path.exists(path):
        subprocess.run(["swift", "build", "-c", "release", "--package-path", ROOT], check=True)
    return path
