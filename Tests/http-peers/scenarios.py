"""The exchanges both clients make: each scenario sets what the origin serves and sends requests.

A step is ("set", path, status, headers, body) — the origin serves that from then on — or
("get", path, request_headers) / (METHOD, path, request_headers) — the app sends a request.
Headers are lists of (name, value). Staleness comes from an `Age` field the origin sends, never
from waiting. hishel leaves `Age` out of a response's age, so to it freshness is the wall time
between two requests: every `max-age` a scenario means to be fresh is 600 s or more, which no busy
machine spends between two steps (a `max-age=1` once made a slow run's decisions differ).
Each scenario names the RFC section that decides it.
"""

LAST_YEAR = "Tue, 03 Dec 2025 10:00:00 GMT"
LONG_AGO = "Mon, 01 Jan 2024 00:00:00 GMT"
# One `Date` for two responses: the origin changed within the second. Without it the origin's own
# clock decides whether they share a second, and hishel's choice between them with it.
SAME_SECOND = "Thu, 03 Dec 2026 10:00:00 GMT"

SCENARIOS = [
    ("fresh-max-age", "RFC 9111 §4.2.1", [
        ("set", "/fresh", 200, [("Cache-Control", "max-age=3600"), ("ETag", '"f1"')], b'{"feed":1}'),
        ("get", "/fresh", []),
        ("get", "/fresh", []),
    ]),
    ("stale-by-age-revalidated", "RFC 9111 §4.2.3, §4.3.1", [
        ("set", "/aged", 200, [("Cache-Control", "max-age=600"), ("Age", "1200"), ("ETag", '"a1"')], b'{"aged":1}'),
        ("get", "/aged", []),
        ("get", "/aged", []),
    ]),
    ("no-cache-revalidated", "RFC 9111 §5.2.2.4", [
        ("set", "/nocache", 200, [("Cache-Control", "no-cache"), ("ETag", '"n1"')], b'{"n":1}'),
        ("get", "/nocache", []),
        ("get", "/nocache", []),
    ]),
    ("no-store", "RFC 9111 §5.2.2.5", [
        ("set", "/nostore", 200, [("Cache-Control", "no-store")], b'{"s":1}'),
        ("get", "/nostore", []),
        ("get", "/nostore", []),
    ]),
    ("must-revalidate-last-modified", "RFC 9111 §4.2.4, §4.3.1", [
        ("set", "/mr", 200, [("Cache-Control", "max-age=0, must-revalidate"), ("Last-Modified", LONG_AGO)], b'{"mr":1}'),
        ("get", "/mr", []),
        ("get", "/mr", []),
    ]),
    ("changed-behind-same-url", "RFC 9111 §4.3.3", [
        ("set", "/img", 200, [("Cache-Control", "max-age=0"), ("ETag", '"v1"'), ("Date", SAME_SECOND)], b'{"img":1}'),
        ("get", "/img", []),
        ("set", "/img", 200, [("Cache-Control", "max-age=0"), ("ETag", '"v2"'), ("Date", SAME_SECOND)], b'{"img":2}'),
        ("get", "/img", []),
        ("get", "/img", []),
    ]),
    ("vary-accept-language", "RFC 9111 §4.1", [
        ("set", "/hello", 200, [("Cache-Control", "max-age=3600"), ("Vary", "Accept-Language")], b'{"hello":1}'),
        ("get", "/hello", [("Accept-Language", "en")]),
        ("get", "/hello", [("Accept-Language", "fr")]),
        ("get", "/hello", [("Accept-Language", "en")]),
    ]),
    ("vary-star", "RFC 9111 §4.1", [
        ("set", "/star", 200, [("Cache-Control", "max-age=3600"), ("Vary", "*")], b'{"star":1}'),
        ("get", "/star", []),
        ("get", "/star", []),
    ]),
    ("heuristic-freshness", "RFC 9111 §4.2.2", [
        ("set", "/heur", 200, [("Last-Modified", LONG_AGO)], b'{"h":1}'),
        ("get", "/heur", []),
        ("get", "/heur", []),
    ]),
    ("expires-in-the-past", "RFC 9111 §4.2.1, §5.3", [
        ("set", "/expired", 200, [("Expires", LAST_YEAR), ("ETag", '"e1"')], b'{"e":1}'),
        ("get", "/expired", []),
        ("get", "/expired", []),
    ]),
    ("unsafe-method-invalidates", "RFC 9111 §4.4", [
        ("set", "/inv", 200, [("Cache-Control", "max-age=3600")], b'{"inv":1}'),
        ("get", "/inv", []),
        ("get", "/inv", []),
        ("POST", "/inv", []),
        ("get", "/inv", []),
    ]),
    ("request-no-cache", "RFC 9111 §5.2.1.4", [
        ("set", "/rnc", 200, [("Cache-Control", "max-age=3600"), ("ETag", '"r1"')], b'{"r":1}'),
        ("get", "/rnc", []),
        ("get", "/rnc", [("Cache-Control", "no-cache")]),
    ]),
    ("request-max-age-0", "RFC 9111 §5.2.1.1", [
        ("set", "/rma", 200, [("Cache-Control", "max-age=3600"), ("ETag", '"m1"')], b'{"m":1}'),
        ("get", "/rma", []),
        ("get", "/rma", [("Cache-Control", "max-age=0")]),
    ]),
    ("private-in-a-private-cache", "RFC 9111 §5.2.2.7", [
        ("set", "/priv", 200, [("Cache-Control", "private, max-age=3600")], b'{"p":1}'),
        ("get", "/priv", []),
        ("get", "/priv", []),
    ]),
    ("s-maxage-ignored-by-a-private-cache", "RFC 9111 §5.2.2.10", [
        ("set", "/smax", 200, [("Cache-Control", "max-age=0, s-maxage=3600"), ("ETag", '"x1"')], b'{"x":1}'),
        ("get", "/smax", []),
        ("get", "/smax", []),
    ]),
    ("not-found-with-max-age", "RFC 9111 §3, RFC 9110 §15.1", [
        ("set", "/gone", 404, [("Cache-Control", "max-age=3600")], b'{"error":"not found"}'),
        ("get", "/gone", []),
        ("get", "/gone", []),
    ]),
    ("server-error-without-freshness", "RFC 9111 §3", [
        ("set", "/boom", 500, [], b'{"error":"boom"}'),
        ("get", "/boom", []),
        ("get", "/boom", []),
    ]),
    ("authorization-in-a-private-cache", "RFC 9111 §3.5", [
        ("set", "/me", 200, [("Cache-Control", "max-age=3600")], b'{"me":1}'),
        ("get", "/me", [("Authorization", "Bearer t0ken")]),
        ("get", "/me", [("Authorization", "Bearer t0ken")]),
    ]),
    ("stale-while-revalidate", "RFC 5861 §3", [
        ("set", "/swr", 200, [("Cache-Control", "max-age=600, stale-while-revalidate=86400"), ("Age", "1200"), ("ETag", '"w1"')], b'{"w":1}'),
        ("get", "/swr", []),
        ("get", "/swr", []),
    ]),
    ("expires-overridden-by-max-age", "RFC 9111 §5.3", [
        ("set", "/both", 200, [("Cache-Control", "max-age=3600"), ("Expires", LAST_YEAR)], b'{"b":1}'),
        ("get", "/both", []),
        ("get", "/both", []),
    ]),
]

# Examples/har/app.har: an app's session as its network log shows it (`run.py --example DIR`).
# The avatar changes on the server behind the same URL and the app keeps the old one for a week.
AVATAR_V1 = bytes(range(256)) * 4
AVATAR_V2 = bytes(reversed(range(256))) * 4
EXAMPLE = [
    ("app-session", "RFC 9111", [
        ("set", "/feed", 200, [("Cache-Control", "max-age=60"), ("ETag", '"feed-1"')], b'{"posts":[1,2,3]}'),
        ("set", "/img/avatar.png", 200, [("Cache-Control", "max-age=604800"), ("Content-Type", "image/png"),
                                         ("ETag", '"av-1"')], AVATAR_V1),
        ("set", "/me", 200, [("Cache-Control", "private, max-age=300"), ("Vary", "Authorization")],
         b'{"name":"Ada"}'),
        ("get", "/feed", []),
        ("get", "/img/avatar.png", []),
        ("get", "/me", [("Authorization", "Bearer app-token")]),
        ("get", "/feed", [("Cache-Control", "no-cache")]),
        ("set", "/img/avatar.png", 200, [("Cache-Control", "max-age=604800"), ("Content-Type", "image/png"),
                                         ("ETag", '"av-2"')], AVATAR_V2),
        ("get", "/img/avatar.png", []),
        ("POST", "/feed", []),
        ("get", "/feed", []),
        ("get", "/me", [("Authorization", "Bearer app-token")]),
    ]),
]
