import Foundation
import Testing

/// Paged lists from the command line (SPEC §1.1 Pages, `pages`): each page an entry of its own,
/// fetched page after page, read by its own freshness, refetched in one request, and a page
/// written or invalidated during the refetch keeping its write; `pages-marked-fresh` (§1.2).
@Suite struct PagesEndToEndTests {
    static let setup = """
        ns feed ttl=10m stale=1m
        server set feed:list@1 [{"id":1,"likes":0},{"id":2,"likes":0}]
        server set feed:list@2 [{"id":3,"likes":0}]

        """

    @Test func theNextPageIsFetchedUntilTheServerHasNoMore() async throws {
        let run = try await Cachesh.script(Self.setup + """
            pages feed:list --next
            pages feed:list --next
            pages feed:list --next
            keys feed:list@*
            """)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("key:           feed:list@2\nstate:         fresh\nvalue:         [{\"id\":3,\"likes\":0}]"), "\(run)")
        #expect(run.stdout.contains("key:           feed:list@3\nstate:         absent\nvalue:         null"), "\(run)")
        #expect(run.stdout.hasSuffix("""
            key          state  age_ms
            feed:list@1  fresh  200
            feed:list@2  fresh  100

            """), "\(run)")
    }

    @Test func aRefetchReplacesEveryPageButOneWrittenMeanwhile() async throws {
        let run = try await Cachesh.script(Self.setup + """
            pages feed:list --next
            pages feed:list --next
            server set feed:list@1 [{"id":0,"likes":0},{"id":1,"likes":0}]
            server set feed:list@2 [{"id":2,"likes":9}]
            pages feed:list --refetch --nowait
            advance 10ms
            put feed:list@2 [{"id":3,"likes":1}]
            advance 200ms
            expect peek feed:list@1 value.0.id=0 state=fresh
            expect peek feed:list@2 value.0.likes=1
            expect stats feed requests=3 misses=4
            pages feed:list
            """)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasSuffix("""
            key          state  source  age_ms  expires_in_ms   notes  value
            feed:list@1  fresh  cache   110     599890 (9m59s)         [{"id":0,"likes":0},{"id":1,"likes":0}]
            feed:list@2  fresh  cache   200     599800 (9m59s)         [{"id":3,"likes":1}]

            """), "\(run)")
    }

    @Test func aPageInvalidatedDuringTheRefetchIsStoredStale() async throws {
        let run = try await Cachesh.script(Self.setup + """
            pages feed:list --next
            pages feed:list --next
            pages feed:list --refetch --nowait
            invalidate feed:list@2
            advance 100ms
            expect peek feed:list@1 state=fresh
            expect peek feed:list@2 state=stale
            """)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasSuffix("expect: ok\nexpect: ok\n"), "\(run)")
    }

    @Test func explainShowsEachPagesStateAndWhy() async throws {
        let run = try await Cachesh.script(Self.setup + """
            pages feed:list --next
            pages feed:list --next
            advance 30s
            invalidate feed:list@2
            explain feed:list
            """)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasSuffix("""
            key:    feed:list
            state:  absent
            reason: feed:list is not cached (nothing happened to it this session)
            pages:  feed:list@1 fresh (fresh: stored 30s100ms ago; stale at 2026-01-01T00:01:00.100Z); \
            feed:list@2 stale (invalidated at 2026-01-01T00:00:30.200Z; it would turn stale by age at 2026-01-01T00:01:00.200Z)

            """), "\(run)")
    }

    @Test func pagesMarkedFreshKeepsALaterPagesOldValue() async throws {
        for (naive, likes) in [("pages-marked-fresh", 0), ("none", 5)] {
            let run = try await Cachesh.script(Self.setup + """
                ns feed naive=\(naive)
                pages feed:list --next
                pages feed:list --next
                server set feed:list@2 [{"id":3,"likes":5}]
                advance 2m
                pages feed:list --refetch
                expect peek feed:list@2 value.0.likes=\(likes) state=fresh
                """)
            #expect(run.status == 0, "\(naive): \(run)")
        }
    }

    @Test func nextPageDropsWritesRevertsAWriteToAnEarlierPage() async throws {
        for (naive, likes) in [("next-page-drops-writes", 0), ("none", 7)] {
            let run = try await Cachesh.script(Self.setup + """
                ns feed naive=\(naive)
                server set feed:list@3 [{"id":4,"likes":0}]
                server latency 1s feed:list@3
                pages feed:list --next
                pages feed:list --next
                pages feed:list --next --nowait
                advance 100ms
                put feed:list@1 [{"id":1,"likes":7}]
                advance 1s
                expect peek feed:list@3 value.0.id=4
                expect peek feed:list@1 value.0.likes=\(likes)
                """)
            #expect(run.status == 0, "\(naive): \(run)")
        }
    }

    /// Bad input: one line with file and line, nothing sent, nothing changed.
    @Test func badFormsAreOneErrorLineAndChangeNothing() async throws {
        let run = try await Cachesh.script(Self.setup + """
            pages feed:list --next --refetch
            pages feed:list extra
            pages
            pages feed:list --later
            expect stats feed requests=0 misses=0
            expect keys entries=[]
            """)
        #expect(run.status == 1, "\(run)")
        let errors = run.stderr.split(separator: "\n")
        #expect(errors.count == 4, "\(run)")
        #expect(errors.first == "script.cachesh:4: error: pages: --next and --refetch do not go together", "\(run)")
        #expect(errors.allSatisfy { $0.hasPrefix("script.cachesh:") }, "\(run)")
        #expect(run.stdout.hasSuffix("expect: ok\nexpect: ok\n"), "\(run)")
    }

    @Test func aListHasAtMostAThousandPages() async throws {
        let puts = (1...1000).map { "put l:x@\($0) \($0)" }.joined(separator: "\n")
        let run = try await Cachesh.script(puts + """

            pages l:x --next
            expect stats requests=0
            """)
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr == "script.cachesh:1001: error: pages: l:x has 1000 pages, the most a list may have; nothing was sent\n", "\(run)")
        #expect(run.stdout.hasSuffix("expect: ok\n"), "\(run)")
    }
}
