import CacheCore
import CacheReplay
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The SVG chart `replay ... plot=FILE.svg` writes: hit ratio against max, one line per policy
/// (per policy, ttl and stale when the sweep varies those too). Deterministic: the same rows give
/// the same bytes.
enum ReplayPlot {
    static let width = 720.0, height = 440.0
    static let left = 70.0, right = 170.0, top = 40.0, bottom = 60.0
    static let colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"]

    /// The chart, or nil when no row has a max.
    static func svg(_ rows: [ReplayRow], title: String) -> String? {
        let plotted = rows.filter { $0.configuration.max != nil }
        guard !plotted.isEmpty else { return nil }
        // Series in first-seen order.
        let variesTimes = Set(plotted.map { [$0.configuration.ttl, $0.configuration.stale] }).count > 1
        var names: [String] = []
        var points: [String: [(x: Int, y: Double)]] = [:]
        for row in plotted {
            let c = row.configuration
            var name = c.policy.rawValue
            if variesTimes {
                name += " ttl=" + (c.ttl.map(TimeText.formatDuration) ?? "none")
                name += " stale=" + (c.stale.map(TimeText.formatDuration) ?? "none")
            }
            if points[name] == nil { names.append(name) }
            points[name, default: []].append((c.max!, row.counters.hitRatio))
        }
        let xs = plotted.map { Double($0.configuration.max!) }
        let lo = xs.min()!, hi = xs.max()!
        let logScale = hi / lo >= 10
        func xFraction(_ x: Double) -> Double {
            if hi == lo { return 0.5 }
            return logScale ? (log10(x) - log10(lo)) / (log10(hi) - log10(lo)) : (x - lo) / (hi - lo)
        }
        let plotW = width - left - right, plotH = height - top - bottom
        func px(_ x: Double) -> String { fmt(left + xFraction(x) * plotW) }
        func py(_ y: Double) -> String { fmt(top + (1 - y) * plotH) }

        var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(fmt(left))" y="24" font-size="14">\(escape(title))</text>

        """
        // Grid and y labels: 0 to 1 by 0.1.
        for i in 0...10 {
            let y = Double(i) / 10
            svg += "<line x1=\"\(fmt(left))\" y1=\"\(py(y))\" x2=\"\(fmt(left + plotW))\" y2=\"\(py(y))\" stroke=\"#e0e0e0\"/>\n"
            svg += "<text x=\"\(fmt(left - 8))\" y=\"\(fmt(top + (1 - y) * plotH + 4))\" text-anchor=\"end\">\(i == 10 ? "1.0" : "0.\(i)")</text>\n"
        }
        // X ticks at each distinct max, or at round numbers when there are many.
        for x in ticks(Set(xs).sorted(), logScale: logScale) {
            svg += "<line x1=\"\(px(x))\" y1=\"\(fmt(top))\" x2=\"\(px(x))\" y2=\"\(fmt(top + plotH))\" stroke=\"#f0f0f0\"/>\n"
            svg += "<text x=\"\(px(x))\" y=\"\(fmt(top + plotH + 18))\" text-anchor=\"middle\">\(label(x))</text>\n"
        }
        svg += "<rect x=\"\(fmt(left))\" y=\"\(fmt(top))\" width=\"\(fmt(plotW))\" height=\"\(fmt(plotH))\" fill=\"none\" stroke=\"#444\"/>\n"
        svg += "<text x=\"\(fmt(left + plotW / 2))\" y=\"\(fmt(height - 16))\" text-anchor=\"middle\">max (entries\(logScale ? ", log scale" : ""))</text>\n"
        svg += "<text x=\"18\" y=\"\(fmt(top + plotH / 2))\" text-anchor=\"middle\" transform=\"rotate(-90 18 \(fmt(top + plotH / 2)))\">hit ratio</text>\n"
        for (i, name) in names.enumerated() {
            let colour = colours[i % colours.count]
            let series = points[name]!.sorted { $0.x < $1.x }
            let path = series.map { "\(px(Double($0.x))),\(py($0.y))" }.joined(separator: " ")
            svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\"/>\n"
            for p in series {
                svg += "<circle cx=\"\(px(Double(p.x)))\" cy=\"\(py(p.y))\" r=\"3\" fill=\"\(colour)\"/>\n"
            }
            let ly = top + 10 + Double(i) * 20
            svg += "<line x1=\"\(fmt(left + plotW + 12))\" y1=\"\(fmt(ly))\" x2=\"\(fmt(left + plotW + 32))\" y2=\"\(fmt(ly))\" stroke=\"\(colour)\" stroke-width=\"2\"/>\n"
            svg += "<text x=\"\(fmt(left + plotW + 38))\" y=\"\(fmt(ly + 4))\">\(escape(name))</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    /// Where to label the x axis: every size when there are few, else 1, 2 and 5 times powers of
    /// ten (log scale) or about six round steps (linear) within the sizes' range.
    static func ticks(_ sizes: [Double], logScale: Bool) -> [Double] {
        guard sizes.count > 8, let lo = sizes.first, let hi = sizes.last else { return sizes }
        var out: [Double] = []
        if logScale {
            var decade = 1.0
            while decade * 10 <= lo { decade *= 10 }
            while decade <= hi {
                for m in [1.0, 2, 5] where decade * m >= lo && decade * m <= hi { out.append(decade * m) }
                decade *= 10
            }
        } else {
            var step = 1.0
            while (hi - lo) / step > 6 {
                if (hi - lo) / (step * 2) <= 6 { step *= 2 } else if (hi - lo) / (step * 5) <= 6 { step *= 5 } else { step *= 10 }
            }
            var x = (lo / step).rounded(.up) * step
            while x <= hi { out.append(x); x += step }
        }
        return out
    }

    /// A size on the x axis as a whole number. The largest size, `Int.max`, is 2^63 as a double,
    /// which does not convert back to an `Int` (that trapped): it is written as itself.
    static func label(_ x: Double) -> String {
        x >= Double(Int.max) ? String(Int.max) : String(Int(x))
    }

    /// One decimal, without a trailing .0.
    private static func fmt(_ v: Double) -> String {
        let tenths = Int((v * 10).rounded())
        return tenths % 10 == 0 ? String(tenths / 10) : "\(tenths / 10).\(abs(tenths % 10))"
    }

    private static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}
