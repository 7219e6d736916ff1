import CacheReplay
@testable import CacheShell
import Testing

/// `replay ... plot=`'s chart: whatever the sweep, each series can be told apart and the legend fits.
@Suite struct ReplayPlotTests {
    @Test func everySeriesOfTheLargestSweepHasItsOwnDashPattern() {
        // 256 combinations at most: as many series when each has one max.
        let dashes = (0..<256).map(ReplayPlot.dash)
        #expect(Set(dashes).count == 256)
        #expect(dashes[0].isEmpty && !dashes.dropFirst().contains(""))
    }

    @Test func aTitleWiderThanThePanelsWidensTheChart() throws {
        // A long trace path makes a long title: the chart grows to hold it, and its labels.
        let rows = [Int64(3_153_600_000_001), 60_000].map { ttl in
            ReplayRow(configuration: ReplayConfiguration(policy: .lru, max: 10, ttl: ttl, stale: ttl / 2),
                      counters: ReplayCounters(requests: 4, hits: 2, misses: 2))
        }
        let svg = try #require(ReplayPlot.svg(rows, title: String(repeating: "t", count: 200)))
        let width = try #require(Double(svg.firstMatch(of: #/viewBox="0 0 ([0-9.]+) /#)!.output.1))
        // The title, at 14 px, and each label at 12 px fit inside the viewBox.
        #expect(width >= 70 + 200 * 0.6 * 14)
        let labels = svg.matches(of: #/<text x="([0-9.]+)" y="[0-9.]+">(lru [^<]*)</text>/#)
        #expect(labels.count == 2)
        for match in labels {
            #expect(Double(match.output.1)! + Double(match.output.2.count) * 0.6 * 12 <= width, "\(match.output.2)")
        }
    }

    @Test func theRequestsAxisEndsAtARoundNumber() {
        #expect([0, 1, 7, 10, 11, 250, 1_417, 18_000].map(ReplayPlot.niceCeiling) == [1, 1, 10, 10, 20, 500, 2_000, 20_000])
        #expect([0, 750, 2_500, 40_000, 1_200_000].map(ReplayPlot.count) == ["0", "750", "2.5k", "40k", "1.2M"])
    }
}
