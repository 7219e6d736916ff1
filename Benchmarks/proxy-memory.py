#!/usr/bin/env python3
"""The peak memory of `cachesh proxy` as it serves many distinct URLs (SPEC §7.1: an HTTP
namespace keeps at most 256 MiB of responses).

A loopback origin answers every GET with SIZE bytes of text and `Cache-Control: max-age=600`, so
each URL is stored; the script fetches /b0 ... /b(N-1) through the proxy one after the other and
prints the proxy's peak resident size (VmHWM) after each fifth of them. Memory does not move with
the machine's load.

Usage: proxy-memory.py CACHESH [N] [SIZE]     (defaults 1500 URLs of 1 MiB)
"""
import http.server
import re
import subprocess
import sys
import threading
import urllib.request

binary = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
size = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 20
body = b"x" * size


class Origin(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Cache-Control", "max-age=600")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
threading.Thread(target=origin.serve_forever, daemon=True).start()
proxy = subprocess.Popen([binary, "proxy", "--upstream", f"http://127.0.0.1:{origin.server_address[1]}",
                          "--listen", "127.0.0.1:0", "--log", "/dev/null"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
try:
    first = proxy.stdout.readline()
    found = re.search(r"http://[0-9.:]+", first)
    if not found:
        sys.exit(f"proxy-memory: the proxy did not say where it listens: {first!r} {proxy.stderr.read()!r}")
    address = found.group(0)

    def peak_mib() -> int:
        with open(f"/proc/{proxy.pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM"):
                    return int(line.split()[1]) // 1024
        return -1

    print(f"cachesh proxy, {count} URLs of {size} bytes, each stored (max-age=600)")
    for i in range(count):
        with urllib.request.urlopen(f"{address}/b{i}", timeout=60) as answer:
            answer.read()
        if (i + 1) % max(1, count // 5) == 0:
            print(f"  {i + 1:>6} URLs: peak {peak_mib()} MiB", flush=True)
finally:
    proxy.terminate()
    proxy.wait(timeout=30)
