"""One hishel (RFC 9111 client cache) behind a line protocol, run in hishel's own environment.

Reads one JSON request a line from stdin ({"method", "url", "headers": [[name, value], ...]}),
sends it through hishel's httpx client (a private cache, in memory), and writes one JSON line:
{"status", "from_cache", "revalidated", "stored"} as hishel reports them in the response's
extensions. Ends at end of input.
"""
import json
import sqlite3
import sys

import hishel
from hishel.httpx import SyncCacheClient


def main() -> None:
    storage = hishel.SyncSqliteStorage(connection=sqlite3.connect(":memory:", check_same_thread=False))
    policy = hishel.SpecificationPolicy(cache_options=hishel.CacheOptions(shared=False))
    with SyncCacheClient(storage=storage, policy=policy, timeout=10.0) as client:
        for line in sys.stdin:
            request = json.loads(line)
            response = client.request(request["method"], request["url"],
                                      headers=request.get("headers", []),
                                      content=request.get("body"))
            response.read()
            ext = response.extensions
            print(json.dumps({
                "status": response.status_code,
                "from_cache": bool(ext.get("hishel_from_cache")),
                "revalidated": bool(ext.get("hishel_revalidated")),
                "stored": bool(ext.get("hishel_stored")),
            }), flush=True)


if __name__ == "__main__":
    main()
