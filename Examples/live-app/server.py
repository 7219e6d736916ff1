#!/usr/bin/env python3
"""The live example's API: a feed, profiles and likes, on 127.0.0.1 only.

    python3 server.py [--port N] [--port-file PATH]

Port 0 (the default) takes a free port; the port is printed on stdout and, with --port-file,
written to PATH once the server listens. Knobs are set by request:

    POST /control {"latency_ms": {"feed": 120, "profile": 60, "like": 30},
                   "fail_next": {"like": 1}}          # latency per endpoint; the next N fail (500)
    POST /control/change {"post": 2, "likes": 5}      # another user likes post 2 five times

Endpoints: GET /feed, GET /profile/ID, POST /posts/ID/like. Every answer is JSON.
"""
import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
POSTS = {
    1: {"id": 1, "author": 42, "title": "First light", "likes": 3},
    2: {"id": 2, "author": 7, "title": "Harbour at dawn", "likes": 10},
}
USERS = {42: {"id": 42, "name": "Ada"}, 7: {"id": 7, "name": "Bo"}}
LATENCY_MS = {"feed": 0, "profile": 0, "like": 0}
FAIL_NEXT = {"feed": 0, "profile": 0, "like": 0}


def profile(user_id):
    user = dict(USERS[user_id])
    user["posts"] = [dict(p) for p in POSTS.values() if p["author"] == user_id]
    return user


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, value):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        length = min(int(self.headers.get("Content-Length") or 0), 1 << 16)
        return json.loads(self.rfile.read(length) or b"{}")

    def endpoint(self, name):
        """Waits the endpoint's latency; True when this request must fail."""
        with LOCK:
            delay = LATENCY_MS[name] / 1000
            fail = FAIL_NEXT[name] > 0
            if fail:
                FAIL_NEXT[name] -= 1
        time.sleep(delay)
        return fail

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if parts == ["feed"]:
            if self.endpoint("feed"):
                return self.reply(500, {"error": "feed unavailable"})
            with LOCK:
                return self.reply(200, {"posts": [dict(p) for p in POSTS.values()]})
        if len(parts) == 2 and parts[0] == "profile" and parts[1].isdigit() and int(parts[1]) in USERS:
            if self.endpoint("profile"):
                return self.reply(500, {"error": "profile unavailable"})
            with LOCK:
                return self.reply(200, profile(int(parts[1])))
        self.reply(404, {"error": "not found"})

    def do_POST(self):
        parts = self.path.strip("/").split("/")
        try:
            body = self.body()
        except ValueError:
            return self.reply(400, {"error": "bad JSON"})
        if parts == ["control"]:
            with LOCK:
                LATENCY_MS.update({k: int(v) for k, v in body.get("latency_ms", {}).items() if k in LATENCY_MS})
                FAIL_NEXT.update({k: int(v) for k, v in body.get("fail_next", {}).items() if k in FAIL_NEXT})
            return self.reply(200, {"ok": True})
        if parts == ["control", "change"]:
            with LOCK:
                post = POSTS.get(int(body.get("post", 0)))
                if post is None:
                    return self.reply(404, {"error": "no such post"})
                post["likes"] += int(body.get("likes", 0))
                return self.reply(200, dict(post))
        if len(parts) == 3 and parts[0] == "posts" and parts[1].isdigit() and parts[2] == "like":
            if int(parts[1]) not in POSTS:
                return self.reply(404, {"error": "no such post"})
            if self.endpoint("like"):
                return self.reply(500, {"error": "like failed"})
            with LOCK:
                POSTS[int(parts[1])]["likes"] += 1
                return self.reply(200, dict(POSTS[int(parts[1])]))
        self.reply(404, {"error": "not found"})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    print(port, flush=True)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(f"{port}\n")
        import os
        os.replace(args.port_file + ".tmp", args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
