import Testing

/// One script, run by the built binary in human and in JSON mode, with the exact output of each.
struct Scene: CustomTestStringConvertible, Sendable {
    var name: String
    var script: String
    /// Files beside the script, by relative path.
    var files: [String: String]
    /// The expected stdout without its final newline.
    var human: String
    var json: String
    var testDescription: String { name }
}

/// Every command of SPEC §3 (but `snapshot`, `restore`, `record`, `help`) in human and JSON mode,
/// with outputs checked by hand against SPEC §1.1, §2 and §4.
@Suite struct CommandsEndToEndTests {
    static let scenes: [Scene] = [
        // the clock: now, advance, at and what it runs
        Scene(
            name: "clock",
            script: #"""
            now
            advance 1h30m
            at 1s echo later
            pending
            advance 2s
            now
            """#,
            files: [:],
            human: #"""
            now:    2026-01-01T00:00:00.000Z
            now_ms: 0
            now:    2026-01-01T01:30:00.000Z
            now_ms: 5400000 (1h30m)
            scheduled at 2026-01-01T01:30:01.000Z: echo later
            due                       in   what  detail
            2026-01-01T01:30:01.000Z  +1s  at    echo later
            at 2026-01-01T01:30:01.000Z: echo later
              later
            now:    2026-01-01T01:30:02.000Z
            now_ms: 5402000 (1h30m2s)
            now:    2026-01-01T01:30:02.000Z
            now_ms: 5402000 (1h30m2s)
            """#,
            json: #"""
            {"command":"now","now":"2026-01-01T00:00:00.000Z","now_ms":0,"ok":true}
            {"command":"advance","now":"2026-01-01T01:30:00.000Z","now_ms":5400000,"ok":true}
            {"command":"at","due":"2026-01-01T01:30:01.000Z","id":1,"ok":true,"scheduled":"echo later"}
            {"command":"pending","ok":true,"pending":[{"command":"echo later","due":"2026-01-01T01:30:01.000Z","due_in_ms":1000,"id":1,"type":"at"}]}
            {"at":"2026-01-01T01:30:01.000Z","command":"echo","event":"at","ok":true,"text":"later"}
            {"command":"advance","now":"2026-01-01T01:30:02.000Z","now_ms":5402000,"ok":true}
            {"command":"now","now":"2026-01-01T01:30:02.000Z","now_ms":5402000,"ok":true}
            """#
        ),
        // the read path: fetch, fresh hit, stale hit with a background refresh, peek, keys, mget
        Scene(
            name: "read",
            script: #"""
            ns feed ttl=10m stale=1m
            server set feed:home [1]
            get feed:home
            get feed:home
            advance 1m
            get feed:home
            pending
            advance 100ms
            peek feed:home
            put a 1
            keys
            keys feed:*
            mget feed:home a b
            """#,
            files: [:],
            human: #"""
            ns feed ttl=10m stale=1m
            server: set feed:home
            key:           feed:home
            state:         fresh
            value:         [1]
            source:        server
            age_ms:        0
            expires_in_ms: 600000 (10m)
            tags:          []
            key:           feed:home
            state:         fresh
            value:         [1]
            source:        cache
            age_ms:        0
            expires_in_ms: 600000 (10m)
            tags:          []
            now:    2026-01-01T00:01:00.100Z
            now_ms: 60100 (1m)
            key:           feed:home
            state:         stale
            value:         [1]
            source:        cache
            age_ms:        60000 (1m)
            expires_in_ms: 540000 (9m)
            tags:          []
            pending:       true
            due                       in      what   detail
            2026-01-01T00:01:00.200Z  +100ms  fetch  feed:home
            now:    2026-01-01T00:01:00.200Z
            now_ms: 60200 (1m)
            key:           feed:home
            state:         fresh
            value:         [1]
            age_ms:        0
            expires_in_ms: 600000 (10m)
            tags:          []
            keys: a
            key        state  age_ms
            feed:home  fresh  0
            a          fresh  0
            key        state  age_ms
            feed:home  fresh  0
            key        state   source  age_ms  expires_in_ms  notes             value
            feed:home  fresh   cache   0       600000 (10m)                     [1]
            a          fresh   cache   0       300000 (5m)                      1
            b          absent  server  -       -              error: not found  null
            """#,
            json: #"""
            {"command":"ns","keys":[],"max":null,"name":"feed","ok":true,"policy":"lru","purgeable":false,"stale_if_error_ms":null,"stale_ms":60000,"timeout_ms":null,"ttl_ms":600000}
            {"command":"server","key":"feed:home","ok":true,"subcommand":"set"}
            {"age_ms":0,"command":"get","expires_in_ms":600000,"key":"feed:home","ok":true,"source":"server","state":"fresh","tags":[],"value":[1]}
            {"age_ms":0,"command":"get","expires_in_ms":600000,"key":"feed:home","ok":true,"source":"cache","state":"fresh","tags":[],"value":[1]}
            {"command":"advance","now":"2026-01-01T00:01:00.100Z","now_ms":60100,"ok":true}
            {"age_ms":60000,"command":"get","expires_in_ms":540000,"key":"feed:home","ok":true,"pending":true,"source":"cache","state":"stale","tags":[],"value":[1]}
            {"command":"pending","ok":true,"pending":[{"due":"2026-01-01T00:01:00.200Z","due_in_ms":100,"id":7,"keys":["feed:home"],"kind":"fetch","type":"request"}]}
            {"command":"advance","now":"2026-01-01T00:01:00.200Z","now_ms":60200,"ok":true}
            {"age_ms":0,"command":"peek","expires_in_ms":600000,"key":"feed:home","ok":true,"state":"fresh","tags":[],"value":[1]}
            {"command":"put","keys":["a"],"ok":true}
            {"command":"keys","entries":[{"age_ms":0,"key":"feed:home","state":"fresh"},{"age_ms":0,"key":"a","state":"fresh"}],"ok":true}
            {"command":"keys","entries":[{"age_ms":0,"key":"feed:home","state":"fresh"}],"ok":true}
            {"command":"mget","ok":true,"results":[{"age_ms":0,"expires_in_ms":600000,"key":"feed:home","source":"cache","state":"fresh","tags":[],"value":[1]},{"age_ms":0,"expires_in_ms":300000,"key":"a","source":"cache","state":"fresh","tags":[],"value":1},{"age_ms":null,"error":"not found","expires_in_ms":null,"key":"b","source":"server","state":"absent","tags":[],"value":null}]}
            """#
        ),
        // local writes: put with tags, expire, invalidate, evict, memory-warning, clear
        Scene(
            name: "write",
            script: #"""
            ns profile ttl=1h --purgeable
            put feed:1 {"id":1} tags=t,u
            put feed:2 2 tags=u
            put profile:42 {"name":"Ann"}
            put home 0
            expire feed:1 in=30s
            advance 30s
            keys
            expire feed:2
            invalidate tag:u
            invalidate profile:*
            invalidate home
            keys
            evict feed:1
            evict feed:1
            memory-warning
            clear feed
            clear
            keys
            """#,
            files: [:],
            human: #"""
            ns profile ttl=1h --purgeable
            keys: feed:1
            keys: feed:2
            keys: profile:42
            keys: home
            keys: feed:1
            now:    2026-01-01T00:00:30.000Z
            now_ms: 30000 (30s)
            key         state    age_ms
            feed:1      expired  30000 (30s)
            feed:2      fresh    30000 (30s)
            profile:42  fresh    30000 (30s)
            home        fresh    30000 (30s)
            keys: feed:2
            keys: (none)
            keys: profile:42
            keys: home
            key         state    age_ms
            feed:1      expired  30000 (30s)
            feed:2      expired  30000 (30s)
            profile:42  stale    30000 (30s)
            home        stale    30000 (30s)
            keys: feed:1
            keys: (none)
            keys: profile:42
            keys: feed:2
            keys: home
            (no entries)
            """#,
            json: #"""
            {"command":"ns","keys":[],"max":null,"name":"profile","ok":true,"policy":"lru","purgeable":true,"stale_if_error_ms":null,"stale_ms":null,"timeout_ms":null,"ttl_ms":3600000}
            {"command":"put","keys":["feed:1"],"ok":true}
            {"command":"put","keys":["feed:2"],"ok":true}
            {"command":"put","keys":["profile:42"],"ok":true}
            {"command":"put","keys":["home"],"ok":true}
            {"command":"expire","keys":["feed:1"],"ok":true}
            {"command":"advance","now":"2026-01-01T00:00:30.000Z","now_ms":30000,"ok":true}
            {"command":"keys","entries":[{"age_ms":30000,"key":"feed:1","state":"expired"},{"age_ms":30000,"key":"feed:2","state":"fresh"},{"age_ms":30000,"key":"profile:42","state":"fresh"},{"age_ms":30000,"key":"home","state":"fresh"}],"ok":true}
            {"command":"expire","keys":["feed:2"],"ok":true}
            {"command":"invalidate","keys":[],"ok":true}
            {"command":"invalidate","keys":["profile:42"],"ok":true}
            {"command":"invalidate","keys":["home"],"ok":true}
            {"command":"keys","entries":[{"age_ms":30000,"key":"feed:1","state":"expired"},{"age_ms":30000,"key":"feed:2","state":"expired"},{"age_ms":30000,"key":"profile:42","state":"stale"},{"age_ms":30000,"key":"home","state":"stale"}],"ok":true}
            {"command":"evict","keys":["feed:1"],"ok":true}
            {"command":"evict","keys":[],"ok":true}
            {"command":"memory-warning","keys":["profile:42"],"ok":true}
            {"command":"clear","keys":["feed:2"],"ok":true}
            {"command":"clear","keys":["home"],"ok":true}
            {"command":"keys","entries":[],"ok":true}
            """#
        ),
        // mutations, events and observers
        Scene(
            name: "realtime",
            script: #"""
            server set post:1 {"id":1,"likes":3,"tags":["a"]}
            server set feed:home [{"id":1,"likes":3}]
            mget post:1 feed:home
            watch *
            mutate post:1 {"likes":{"$inc":1}}
            pending
            advance 100ms
            event patch post:1 {"tags":{"$push":"b"}}
            event entity 1 {"likes":{"$inc":10}}
            event entity 1 {"likes":0} --own
            mutate entity 1 {"seen":true}
            unwatch *
            watch feed:*
            watch
            advance 100ms
            unwatch
            server show
            """#,
            files: [:],
            human: #"""
            server: set post:1
            server: set feed:home
            key        state  source  age_ms  expires_in_ms  notes  value
            post:1     fresh  server  0       300000 (5m)           {"id":1,"likes":3,"tags":["a"]}
            feed:home  fresh  server  0       300000 (5m)           [{"id":1,"likes":3}]
            watching *
            * 2026-01-01T00:00:00.100Z mutated post:1 fresh {"id":1,"likes":4,"tags":["a"]} (cache)
            keys: post:1
            due                       in      what    detail
            2026-01-01T00:00:00.200Z  +100ms  mutate  post:1
            * 2026-01-01T00:00:00.200Z confirmed post:1 fresh {"id":1,"likes":4,"tags":["a"]} (server)
            now:    2026-01-01T00:00:00.200Z
            now_ms: 200
            * 2026-01-01T00:00:00.200Z patched post:1 fresh {"id":1,"likes":4,"tags":["a","b"]} (server)
            keys: post:1
            * 2026-01-01T00:00:00.200Z patched feed:home fresh [{"id":1,"likes":13}] (server)
            * 2026-01-01T00:00:00.200Z patched post:1 fresh {"id":1,"likes":14,"tags":["a","b"]} (server)
            keys: feed:home post:1
            * 2026-01-01T00:00:00.200Z skipped feed:home fresh [{"id":1,"likes":13}] (server)
            * 2026-01-01T00:00:00.200Z skipped post:1 fresh {"id":1,"likes":14,"tags":["a","b"]} (server)
            keys: (none)
            * 2026-01-01T00:00:00.200Z mutated feed:home fresh [{"id":1,"likes":13,"seen":true}] (cache)
            * 2026-01-01T00:00:00.200Z mutated post:1 fresh {"id":1,"likes":14,"seen":true,"tags":["a","b"]} (cache)
            keys: feed:home post:1
            stopped watching *
            watching feed:*
            watching: feed:*
            * 2026-01-01T00:00:00.300Z confirmed feed:home fresh [{"id":1,"likes":13,"seen":true}] (server)
            now:    2026-01-01T00:00:00.300Z
            now_ms: 300
            watching nothing
            key        modified_at               value
            feed:home  2026-01-01T00:00:00.200Z  [{"id":1,"likes":13,"seen":true}]
            post:1     2026-01-01T00:00:00.200Z  {"id":1,"likes":14,"seen":true,"tags":["a","b"]}
            latency: 100ms
            """#,
            json: #"""
            {"command":"server","key":"post:1","ok":true,"subcommand":"set"}
            {"command":"server","key":"feed:home","ok":true,"subcommand":"set"}
            {"command":"mget","ok":true,"results":[{"age_ms":0,"expires_in_ms":300000,"key":"post:1","source":"server","state":"fresh","tags":[],"value":{"id":1,"likes":3,"tags":["a"]}},{"age_ms":0,"expires_in_ms":300000,"key":"feed:home","source":"server","state":"fresh","tags":[],"value":[{"id":1,"likes":3}]}]}
            {"command":"watch","ok":true,"watching":"*"}
            {"at":"2026-01-01T00:00:00.100Z","at_ms":100,"event":"mutated","key":"post:1","source":"cache","state":"fresh","value":{"id":1,"likes":4,"tags":["a"]}}
            {"command":"mutate","keys":["post:1"],"ok":true}
            {"command":"pending","ok":true,"pending":[{"due":"2026-01-01T00:00:00.200Z","due_in_ms":100,"id":6,"keys":["post:1"],"kind":"mutate","type":"request"}]}
            {"at":"2026-01-01T00:00:00.200Z","at_ms":200,"event":"confirmed","key":"post:1","source":"server","state":"fresh","value":{"id":1,"likes":4,"tags":["a"]}}
            {"command":"advance","now":"2026-01-01T00:00:00.200Z","now_ms":200,"ok":true}
            {"at":"2026-01-01T00:00:00.200Z","at_ms":200,"event":"patched","key":"post:1","source":"server","state":"fresh","value":{"id":1,"likes":4,"tags":["a","b"]}}
            {"command":"event","keys":["post:1"],"ok":true}
            {"at":"2026-01-01T00:00:00.200Z","at_ms":200,"event":"patched","key":"feed:home","source":"server","state":"fresh","value":[{"id":1,"likes":13}]}
            {"at":"2026-01-01T00:00:00.200Z","at_ms":200,"event":"patched","key":"post:1","source":"server","state":"fresh","value":{"id":1,"likes":14,"tags":["a","b"]}}
            {"command":"event","keys":["feed:home","post:1"],"ok":true}
            {"at":"2026-01-01T00:00:00.200Z","at_ms":200,"event":"skipped","key":"feed:home","source":"server","state":"fresh","value":[{"id":1,"likes":13}]}
            {"at":"2026-01-01T00:00:00.200Z","at_ms":200,"event":"skipped","key":"post:1","source":"server","state":"fresh","value":{"id":1,"likes":14,"tags":["a","b"]}}
            {"command":"event","keys":[],"ok":true}
            {"at":"2026-01-01T00:00:00.200Z","at_ms":200,"event":"mutated","key":"feed:home","source":"cache","state":"fresh","value":[{"id":1,"likes":13,"seen":true}]}
            {"at":"2026-01-01T00:00:00.200Z","at_ms":200,"event":"mutated","key":"post:1","source":"cache","state":"fresh","value":{"id":1,"likes":14,"seen":true,"tags":["a","b"]}}
            {"command":"mutate","keys":["feed:home","post:1"],"ok":true}
            {"command":"unwatch","ok":true,"unwatched":"*","was_watching":true}
            {"command":"watch","ok":true,"watching":"feed:*"}
            {"command":"watch","ok":true,"watching":["feed:*"]}
            {"at":"2026-01-01T00:00:00.300Z","at_ms":300,"event":"confirmed","key":"feed:home","source":"server","state":"fresh","value":[{"id":1,"likes":13,"seen":true}]}
            {"command":"advance","now":"2026-01-01T00:00:00.300Z","now_ms":300,"ok":true}
            {"command":"unwatch","ok":true,"unwatched":"all"}
            {"command":"server","data":{"feed:home":[{"id":1,"likes":13,"seen":true}],"post:1":{"id":1,"likes":14,"seen":true,"tags":["a","b"]}},"latencies_ms":{},"latency_ms":100,"ok":true,"online":true,"subcommand":"show"}
            """#
        ),
        // a configuration file, namespaces and push rules
        Scene(
            name: "config",
            script: #"""
            load app.json
            config
            ns
            ns page ttl=5m max=3 stale-if-error=1h timeout=2s policy=lfu
            ns feed stale=none
            get feed:home
            get profile:1
            push friend-blocked user=1
            push new-posts
            keys
            """#,
            files: ["app.json": #"""
                {
                  "namespaces": {
                    "feed": {"ttl": "45m", "stale": "5m", "max": 2, "policy": "sieve"},
                    "profile": {"ttl": "1h", "purgeable": true}
                  },
                  "push": {
                    "friend-blocked": {"invalidate": ["feed:*", "profile:{user}"]},
                    "new-posts": {}
                  },
                  "server": {"latency": "50ms", "latencies": {"profile:1": "1s"}, "data": {"profile:1": {"id": 1}, "feed:home": [1]}}
                }
                """#],
            human: #"""
            loaded app.json
            ns feed ttl=45m stale=5m max=2 policy=sieve
            ns profile ttl=1h --purgeable
            push friend-blocked -> {"invalidate":["feed:*","profile:{user}"]}
            push new-posts -> (notify only)
            id-field: id
            server latency: 50ms, profile:1 1s
            namespace  ttl  stale  max  policy  stale-if-error  timeout  purgeable  entries
            feed       45m  5m     2    sieve   -               -        no         0
            profile    1h   -      -    lru     -               -        yes        0
            ns page ttl=5m max=3 policy=lfu stale-if-error=1h timeout=2s
            ns feed ttl=45m max=2 policy=sieve
            key:           feed:home
            state:         fresh
            value:         [1]
            source:        server
            age_ms:        0
            expires_in_ms: 2700000 (45m)
            tags:          []
            key:           profile:1
            state:         fresh
            value:         {"id":1}
            source:        server
            age_ms:        0
            expires_in_ms: 3600000 (1h)
            tags:          []
            keys: feed:home profile:1
            keys: (none)
            key        state  age_ms
            feed:home  stale  1000 (1s)
            profile:1  stale  0
            """#,
            json: #"""
            {"command":"load","file":"app.json","keys":[],"ok":true}
            {"command":"config","id-field":"id","namespaces":{"feed":{"max":2,"policy":"sieve","purgeable":false,"stale_if_error_ms":null,"stale_ms":300000,"timeout_ms":null,"ttl_ms":2700000},"profile":{"max":null,"policy":"lru","purgeable":true,"stale_if_error_ms":null,"stale_ms":null,"timeout_ms":null,"ttl_ms":3600000}},"ok":true,"push":{"friend-blocked":{"invalidate":["feed:*","profile:{user}"]},"new-posts":{}},"server":{"latencies_ms":{"profile:1":1000},"latency_ms":50}}
            {"command":"ns","namespaces":{"feed":{"defined":true,"entries":0,"max":2,"policy":"sieve","purgeable":false,"stale_if_error_ms":null,"stale_ms":300000,"timeout_ms":null,"ttl_ms":2700000},"profile":{"defined":true,"entries":0,"max":null,"policy":"lru","purgeable":true,"stale_if_error_ms":null,"stale_ms":null,"timeout_ms":null,"ttl_ms":3600000}},"ok":true}
            {"command":"ns","keys":[],"max":3,"name":"page","ok":true,"policy":"lfu","purgeable":false,"stale_if_error_ms":3600000,"stale_ms":null,"timeout_ms":2000,"ttl_ms":300000}
            {"command":"ns","keys":[],"max":2,"name":"feed","ok":true,"policy":"sieve","purgeable":false,"stale_if_error_ms":null,"stale_ms":null,"timeout_ms":null,"ttl_ms":2700000}
            {"age_ms":0,"command":"get","expires_in_ms":2700000,"key":"feed:home","ok":true,"source":"server","state":"fresh","tags":[],"value":[1]}
            {"age_ms":0,"command":"get","expires_in_ms":3600000,"key":"profile:1","ok":true,"source":"server","state":"fresh","tags":[],"value":{"id":1}}
            {"command":"push","keys":["feed:home","profile:1"],"ok":true}
            {"command":"push","keys":[],"ok":true}
            {"command":"keys","entries":[{"age_ms":1000,"key":"feed:home","state":"stale"},{"age_ms":0,"key":"profile:1","state":"stale"}],"ok":true}
            """#
        ),
        // the simulated server, its failures and offline reads, statistics
        Scene(
            name: "server",
            script: #"""
            server set a {"n":1}
            server patch a {"n":{"$inc":1}}
            server show a
            server delete a
            server delete a
            server show a
            server set b 2
            server latency 250ms
            server latency 1s b
            server show
            get b
            server fail 1
            get c --force
            server set c 3
            server fail 1 c
            get c
            server offline
            get b --force
            get d
            server online
            server log
            server log clear
            server log
            stats
            stats default
            stats reset
            stats default
            """#,
            files: [:],
            human: #"""
            server: set a
            server: a = {"n":2}
            key:         a
            value:       {"n":2}
            modified_at: 2026-01-01T00:00:00.000Z
            server: deleted a
            server: no a to delete
            key:         a
            value:       null
            modified_at: 2026-01-01T00:00:00.000Z
            server: set b
            server: latency 250ms
            server: latency of b 1s
            key  modified_at               value
            b    2026-01-01T00:00:00.000Z  2
            latency: 250ms
            key:           b
            state:         fresh
            value:         2
            source:        server
            age_ms:        0
            expires_in_ms: 300000 (5m)
            tags:          []
            server: the next 1 request will fail
            key:           c
            state:         absent
            value:         null
            source:        server
            age_ms:        null
            expires_in_ms: null
            tags:          []
            error:         server error
            server: set c
            server: the next 1 request for c will fail
            key:           c
            state:         absent
            value:         null
            source:        server
            age_ms:        null
            expires_in_ms: null
            tags:          []
            error:         server error
            server: offline
            key:           b
            state:         fresh
            value:         2
            source:        cache
            age_ms:        500
            expires_in_ms: 299500 (4m59s)
            tags:          []
            offline:       true
            key:           d
            state:         absent
            value:         null
            source:        cache
            age_ms:        null
            expires_in_ms: null
            tags:          []
            offline:       true
            error:         offline
            server: online
            at_ms           kind   fate    keys
            0               fetch  stored  b
            1000 (1s)       fetch  failed  c
            1250 (1s250ms)  fetch  failed  c
            server: log cleared
            (no requests)
            counter           default  total
            hits              1        1
            stale_hits        0        0
            misses            4        4
            requests          3        3
            joined            0        0
            refreshes         0        0
            refresh_failures  0        0
            fetch_failures    2        2
            evictions         0        0
            expirations       0        0
            invalidations     0        0
            rollbacks         0        0
            hit_ratio         0.200    0.200
            hits:             1
            stale_hits:       0
            misses:           4
            requests:         3
            joined:           0
            refreshes:        0
            refresh_failures: 0
            fetch_failures:   2
            evictions:        0
            expirations:      0
            invalidations:    0
            rollbacks:        0
            hit_ratio:        0.200
            stats reset
            hits:             0
            stale_hits:       0
            misses:           0
            requests:         0
            joined:           0
            refreshes:        0
            refresh_failures: 0
            fetch_failures:   0
            evictions:        0
            expirations:      0
            invalidations:    0
            rollbacks:        0
            hit_ratio:        0.000
            """#,
            json: #"""
            {"command":"server","key":"a","ok":true,"subcommand":"set"}
            {"command":"server","key":"a","ok":true,"subcommand":"patch","value":{"n":2}}
            {"command":"server","key":"a","modified_at":"2026-01-01T00:00:00.000Z","ok":true,"subcommand":"show","value":{"n":2}}
            {"command":"server","deleted":true,"key":"a","ok":true,"subcommand":"delete"}
            {"command":"server","deleted":false,"key":"a","ok":true,"subcommand":"delete"}
            {"command":"server","key":"a","modified_at":"2026-01-01T00:00:00.000Z","ok":true,"subcommand":"show","value":null}
            {"command":"server","key":"b","ok":true,"subcommand":"set"}
            {"command":"server","latency_ms":250,"ok":true,"subcommand":"latency"}
            {"command":"server","key":"b","latency_ms":1000,"ok":true,"subcommand":"latency"}
            {"command":"server","data":{"b":2},"latencies_ms":{"b":1000},"latency_ms":250,"ok":true,"online":true,"subcommand":"show"}
            {"age_ms":0,"command":"get","expires_in_ms":300000,"key":"b","ok":true,"source":"server","state":"fresh","tags":[],"value":2}
            {"command":"server","fail":1,"ok":true,"subcommand":"fail"}
            {"age_ms":null,"command":"get","error":"server error","expires_in_ms":null,"key":"c","ok":true,"source":"server","state":"absent","tags":[],"value":null}
            {"command":"server","key":"c","ok":true,"subcommand":"set"}
            {"command":"server","fail":1,"key":"c","ok":true,"subcommand":"fail"}
            {"age_ms":null,"command":"get","error":"server error","expires_in_ms":null,"key":"c","ok":true,"source":"server","state":"absent","tags":[],"value":null}
            {"command":"server","ok":true,"online":false,"subcommand":"offline"}
            {"age_ms":500,"command":"get","expires_in_ms":299500,"key":"b","offline":true,"ok":true,"source":"cache","state":"fresh","tags":[],"value":2}
            {"age_ms":null,"command":"get","error":"offline","expires_in_ms":null,"key":"d","offline":true,"ok":true,"source":"cache","state":"absent","tags":[],"value":null}
            {"command":"server","ok":true,"online":true,"subcommand":"online"}
            {"command":"server","ok":true,"requests":[{"at_ms":0,"fate":"stored","keys":["b"],"kind":"fetch"},{"at_ms":1000,"fate":"failed","keys":["c"],"kind":"fetch"},{"at_ms":1250,"fate":"failed","keys":["c"],"kind":"fetch"}],"subcommand":"log"}
            {"command":"server","ok":true,"subcommand":"log"}
            {"command":"server","ok":true,"requests":[],"subcommand":"log"}
            {"command":"stats","evictions":0,"expirations":0,"fetch_failures":2,"hit_ratio":0.2,"hits":1,"invalidations":0,"joined":0,"misses":4,"namespaces":{"default":{"evictions":0,"expirations":0,"fetch_failures":2,"hit_ratio":0.2,"hits":1,"invalidations":0,"joined":0,"misses":4,"refresh_failures":0,"refreshes":0,"requests":3,"rollbacks":0,"stale_hits":0}},"ok":true,"refresh_failures":0,"refreshes":0,"requests":3,"rollbacks":0,"stale_hits":0}
            {"command":"stats","evictions":0,"expirations":0,"fetch_failures":2,"hit_ratio":0.2,"hits":1,"invalidations":0,"joined":0,"misses":4,"namespace":"default","ok":true,"refresh_failures":0,"refreshes":0,"requests":3,"rollbacks":0,"stale_hits":0}
            {"command":"stats","ok":true}
            {"command":"stats","evictions":0,"expirations":0,"fetch_failures":0,"hit_ratio":0.0,"hits":0,"invalidations":0,"joined":0,"misses":0,"namespace":"default","ok":true,"refresh_failures":0,"refreshes":0,"requests":0,"rollbacks":0,"stale_hits":0}
            """#
        ),
        // the validation handshake
        Scene(
            name: "validate",
            script: #"""
            server set feed:1 1
            server set profile:1 {"id":1}
            get feed:1
            get profile:1
            advance 1m
            server set feed:1 2
            validate
            server set profile:1 {"id":1,"n":2}
            validate --items
            peek profile:1
            """#,
            files: [:],
            human: #"""
            server: set feed:1
            server: set profile:1
            key:           feed:1
            state:         fresh
            value:         1
            source:        server
            age_ms:        0
            expires_in_ms: 300000 (5m)
            tags:          []
            key:           profile:1
            state:         fresh
            value:         {"id":1}
            source:        server
            age_ms:        0
            expires_in_ms: 300000 (5m)
            tags:          []
            now:    2026-01-01T00:01:00.200Z
            now_ms: 60200 (1m)
            server: set feed:1
            request:  {"feed":"2026-01-01T00:00:00.100Z","profile":"2026-01-01T00:00:00.200Z"}
            response: {"feed":{"invalidate":true},"profile":{"invalidate":false}}
            keys:     feed:1
            server: set profile:1
            request:  {"feed":"2026-01-01T00:00:00.100Z","profile":"2026-01-01T00:00:00.200Z"}
            response: {"feed":{"invalidate":true,"items":{"feed:1":2}},"profile":{"invalidate":true,"items":{"profile:1":{"id":1,"n":2}}}}
            keys:     feed:1 profile:1
            key:           profile:1
            state:         fresh
            value:         {"id":1,"n":2}
            age_ms:        0
            expires_in_ms: 300000 (5m)
            tags:          []
            """#,
            json: #"""
            {"command":"server","key":"feed:1","ok":true,"subcommand":"set"}
            {"command":"server","key":"profile:1","ok":true,"subcommand":"set"}
            {"age_ms":0,"command":"get","expires_in_ms":300000,"key":"feed:1","ok":true,"source":"server","state":"fresh","tags":[],"value":1}
            {"age_ms":0,"command":"get","expires_in_ms":300000,"key":"profile:1","ok":true,"source":"server","state":"fresh","tags":[],"value":{"id":1}}
            {"command":"advance","now":"2026-01-01T00:01:00.200Z","now_ms":60200,"ok":true}
            {"command":"server","key":"feed:1","ok":true,"subcommand":"set"}
            {"command":"validate","keys":["feed:1"],"ok":true,"request":{"feed":"2026-01-01T00:00:00.100Z","profile":"2026-01-01T00:00:00.200Z"},"response":{"feed":{"invalidate":true},"profile":{"invalidate":false}}}
            {"command":"server","key":"profile:1","ok":true,"subcommand":"set"}
            {"command":"validate","keys":["feed:1","profile:1"],"ok":true,"request":{"feed":"2026-01-01T00:00:00.100Z","profile":"2026-01-01T00:00:00.200Z"},"response":{"feed":{"invalidate":true,"items":{"feed:1":2}},"profile":{"invalidate":true,"items":{"profile:1":{"id":1,"n":2}}}}}
            {"age_ms":0,"command":"peek","expires_in_ms":300000,"key":"profile:1","ok":true,"state":"fresh","tags":[],"value":{"id":1,"n":2}}
            """#
        ),
        // source, output, echo, quit
        Scene(
            name: "session",
            script: #"""
            source lib/setup.cachesh
            echo   two  words  # not part of the text
            echo "quoted"
            output
            output json
            now
            output human
            now
            quit
            echo never printed
            """#,
            files: ["lib/setup.cachesh": #"""
                # sourced relative to the file that sources it
                put a 1
                echo from setup
                """#],
            human: #"""
            keys: a
            from setup
            two  words
            "quoted"
            output: human
            {"command":"output","mode":"json","ok":true}
            {"command":"now","now":"2026-01-01T00:00:00.000Z","now_ms":0,"ok":true}
            now:    2026-01-01T00:00:00.000Z
            now_ms: 0
            """#,
            json: #"""
            {"command":"put","keys":["a"],"ok":true}
            {"command":"echo","ok":true,"text":"from setup"}
            {"command":"source","commands":2,"file":"lib/setup.cachesh","ok":true}
            {"command":"echo","ok":true,"text":"two  words"}
            {"command":"echo","ok":true,"text":"\"quoted\""}
            {"command":"output","mode":"json","ok":true}
            {"command":"output","mode":"json","ok":true}
            {"command":"now","now":"2026-01-01T00:00:00.000Z","now_ms":0,"ok":true}
            now:    2026-01-01T00:00:00.000Z
            now_ms: 0
            """#
        ),
        // touch: an access without a read (LRU: page:1 is kept, page:2 evicted), its times
        // and the statistics unchanged; an absent or expired key is not touched
        Scene(
            name: "touch",
            script: #"""
            ns page max=2 ttl=1m
            put page:1 "a"
            put page:2 "b"
            advance 10s
            touch page:1
            put page:3 "c"
            keys
            peek page:1
            touch page:2
            touch nothere
            advance 1m
            touch page:3
            stats page
            """#,
            files: [:],
            human: #"""
            ns page ttl=1m max=2
            keys: page:1
            keys: page:2
            now:    2026-01-01T00:00:10.000Z
            now_ms: 10000 (10s)
            keys: page:1
            keys: page:3 page:2
            key     state  age_ms
            page:1  fresh  10000 (10s)
            page:3  fresh  0
            key:           page:1
            state:         fresh
            value:         "a"
            age_ms:        10000 (10s)
            expires_in_ms: 50000 (50s)
            tags:          []
            keys: (none)
            keys: (none)
            now:    2026-01-01T00:01:10.000Z
            now_ms: 70000 (1m10s)
            keys: (none)
            hits:             0
            stale_hits:       0
            misses:           0
            requests:         0
            joined:           0
            refreshes:        0
            refresh_failures: 0
            fetch_failures:   0
            evictions:        1
            expirations:      2
            invalidations:    0
            rollbacks:        0
            hit_ratio:        0.000
            """#,
            json: #"""
            {"command":"ns","keys":[],"max":2,"name":"page","ok":true,"policy":"lru","purgeable":false,"stale_if_error_ms":null,"stale_ms":null,"timeout_ms":null,"ttl_ms":60000}
            {"command":"put","keys":["page:1"],"ok":true}
            {"command":"put","keys":["page:2"],"ok":true}
            {"command":"advance","now":"2026-01-01T00:00:10.000Z","now_ms":10000,"ok":true}
            {"command":"touch","keys":["page:1"],"ok":true}
            {"command":"put","keys":["page:3","page:2"],"ok":true}
            {"command":"keys","entries":[{"age_ms":10000,"key":"page:1","state":"fresh"},{"age_ms":0,"key":"page:3","state":"fresh"}],"ok":true}
            {"age_ms":10000,"command":"peek","expires_in_ms":50000,"key":"page:1","ok":true,"state":"fresh","tags":[],"value":"a"}
            {"command":"touch","keys":[],"ok":true}
            {"command":"touch","keys":[],"ok":true}
            {"command":"advance","now":"2026-01-01T00:01:10.000Z","now_ms":70000,"ok":true}
            {"command":"touch","keys":[],"ok":true}
            {"command":"stats","evictions":1,"expirations":2,"fetch_failures":0,"hit_ratio":0.0,"hits":0,"invalidations":0,"joined":0,"misses":0,"namespace":"page","ok":true,"refresh_failures":0,"refreshes":0,"requests":0,"rollbacks":0,"stale_hits":0}
            """#
        ),
    ]

    @Test(arguments: scenes)
    func humanOutput(_ scene: Scene) async throws {
        let run = try await Cachesh.script(scene.script + "\n", files: scene.files)
        #expect(run.stdout == scene.human + "\n")
        #expect(run.stderr == "")
        #expect(run.status == 0)
    }

    @Test(arguments: scenes)
    func jsonOutput(_ scene: Scene) async throws {
        let run = try await Cachesh.script(scene.script + "\n", options: ["--json"], files: scene.files)
        #expect(run.stdout == scene.json + "\n")
        #expect(run.stderr == "")
        #expect(run.status == 0)
    }
}
