#!/usr/bin/env python3
"""Writes the example traces of this directory (seeded: the same files on every machine).

  zipf.txt        20,000 reads of 2,000 posts, Zipf 0.9 (keys format: one key per line)
  scan-heavy.txt  20,000 reads: a hot set of 2,000 posts cut by scans of keys read once
  feed-day.csv    one phone's day in a social app: sessions of feed pages, posts and profiles,
                  with times (CSV: time in seconds since midnight, screen, key)

Run from anywhere: python3 Examples/traces/generate.py
"""
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "replay"))
import traces  # noqa: E402


def feed_day(seed=7):
    """Sessions through a day (more in the morning and evening): each opens the home feed,
    scrolls a few pages, opens posts (popular ones more often) and sometimes a profile."""
    rng = random.Random(seed)
    # Sessions per hour of the day.
    per_hour = [1, 0, 0, 0, 0, 1, 3, 6, 8, 5, 4, 4, 7, 5, 3, 3, 4, 6, 8, 9, 10, 8, 5, 2]
    posts = traces.zipf(5_000, 800, 1.0, seed + 1)
    post = iter(oid for _, oid in posts)
    rows = []
    for hour, sessions in enumerate(per_hour):
        starts = sorted(rng.uniform(hour * 3600, (hour + 1) * 3600) for _ in range(sessions))
        for start in starts:
            t = start
            page = 0
            for _ in range(rng.randint(5, 40)):
                r = rng.random()
                if r < 0.25 or page == 0:
                    page = page + 1 if page and rng.random() < 0.7 else 1
                    rows.append((t, "feed", f"feed:home:{page}"))
                elif r < 0.85:
                    rows.append((t, "post", f"post:{next(post)}"))
                else:
                    rows.append((t, "profile", f"profile:{rng.randint(1, 120)}"))
                t += rng.expovariate(1 / 8.0)
    rows.sort()
    return rows


def main():
    traces.write_keys(traces.zipf(20_000, 2_000, 0.9, seed=11), os.path.join(HERE, "zipf.txt"), prefix="post:")
    traces.write_keys(traces.scan_heavy(20_000, seed=12, hot=2_000, scan_every=2_500, scan_length=1_500),
                      os.path.join(HERE, "scan-heavy.txt"), prefix="post:")
    with open(os.path.join(HERE, "feed-day.csv"), "w") as f:
        f.write("time,screen,key\n")
        for t, screen, key in feed_day():
            f.write(f"{t:.3f},{screen},{key}\n")


if __name__ == "__main__":
    main()
