import CacheCore
import CacheReplay
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The SVG chart `replay ... plot=FILE.svg` writes: two panels side by side against max, hit ratio
/// and requests to the server (the load a size puts on the origin), one line per policy (per
/// policy, ttl and stale when the sweep varies those too), and below them a legend sized from its
/// labels. Each series has its own colour, dash pattern and (hollow) marker, so curves that are
/// equal still show each one. Deterministic: the same rows give the same bytes.
enum ReplayPlot {
    static let fontSize = 12.0
    static let left = 70.0, gap = 90.0, right = 36.0, top = 56.0, panelBottom = 50.0
    static let panelWidth = 400.0, panelHeight = 300.0
    /// A legend entry: its swatch (a line with the series' dash and marker), then its label.
    static let swatch = 36.0, swatchGap = 8.0, entryGap = 24.0, legendRow = 20.0, legendTop = 16.0, margin = 20.0
    static let colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"]
    /// Dash patterns of the first ten series (the first solid); later ones add a segment of their own.
    static let dashes = ["", "8 4", "2 3", "12 4 2 4", "4 4", "12 3 3 3 3 3", "2 6", "16 6", "6 3 2 3", "10 3 2 3 2 3"]

    /// The width text takes at `size` px, estimated from its display columns (a CJK character or an
    /// emoji takes two) at 0.6 em each, a bound a sans-serif font's digits and letters stay within.
    static func textWidth(_ text: String, size: Double = fontSize) -> Double {
        Double(TextWidth.of(text)) * 0.6 * size
    }

    /// Series `i`'s dash pattern, distinct for every `i` (empty: solid).
    static func dash(_ i: Int) -> String {
        if i < dashes.count { return dashes[i] }
        let base = dashes[i % dashes.count]
        return (base.isEmpty ? "20 3" : base) + " \(i / dashes.count) 3"
    }

    /// The chart, or nil when no row has a max.
    static func svg(_ rows: [ReplayRow], title: String) -> String? {
        let plotted = rows.filter { $0.configuration.max != nil }
        guard !plotted.isEmpty else { return nil }
        // Series in first-seen order.
        let variesTimes = Set(plotted.map { [$0.configuration.ttl, $0.configuration.stale] }).count > 1
        var names: [String] = []
        var points: [String: [(x: Int, ratio: Double, requests: Int)]] = [:]
        for row in plotted {
            let c = row.configuration
            var name = c.policy.rawValue
            if variesTimes {
                name += " ttl=" + (c.ttl.map(TimeText.formatDuration) ?? "none")
                name += " stale=" + (c.stale.map(TimeText.formatDuration) ?? "none")
            }
            if points[name] == nil { names.append(name) }
            points[name, default: []].append((c.max!, row.counters.hitRatio, row.counters.requests))
        }
        let xs = plotted.map { Double($0.configuration.max!) }
        let lo = xs.min()!, hi = xs.max()!
        let logScale = hi / lo >= 10
        func xFraction(_ x: Double) -> Double {
            if hi == lo { return 0.5 }
            return logScale ? (log10(x) - log10(lo)) / (log10(hi) - log10(lo)) : (x - lo) / (hi - lo)
        }
        let requestsTop = niceCeiling(Double(plotted.map(\.counters.requests).max() ?? 0))

        // The legend: as many columns of entries as fit, as many rows as it takes; a label wider
        // than the panels widens the whole chart (as does a long title).
        let entryWidth = swatch + swatchGap + (names.map { textWidth($0) }.max() ?? 0) + entryGap
        let panelsWidth = left + panelWidth + gap + panelWidth + right
        let width = (max(panelsWidth, 2 * margin + entryWidth, left + textWidth(title, size: 14) + margin)).rounded(.up)
        let columns = max(1, Int((width - 2 * margin) / entryWidth))
        let legendRows = (names.count + columns - 1) / columns
        let legendY = top + panelHeight + panelBottom + legendTop
        let height = (legendY + Double(legendRows) * legendRow + margin).rounded(.up)

        var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(fmt(width))" height="\(fmt(height))" viewBox="0 0 \(fmt(width)) \(fmt(height))" font-family="sans-serif" font-size="\(fmt(fontSize))">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(fmt(left))" y="24" font-size="14">\(escape(title))</text>

        """
        let panels: [(id: String, name: String, top: Double, value: ((x: Int, ratio: Double, requests: Int)) -> Double,
                      text: ((x: Int, ratio: Double, requests: Int)) -> String)] = [
            ("hit-ratio", "hit ratio", 1, { $0.ratio }, { "hit ratio " + ReplayCommands.ratio($0.ratio) }),
            ("requests", "requests to the server", requestsTop, { Double($0.requests) }, { "\($0.requests) requests to the server" }),
        ]
        for (p, panel) in panels.enumerated() {
            let x0 = left + Double(p) * (panelWidth + gap)
            func px(_ x: Double) -> String { fmt(x0 + xFraction(x) * panelWidth) }
            func py(_ y: Double) -> Double { top + (1 - y / panel.top) * panelHeight }
            svg += "<g id=\"\(panel.id)\">\n"
            svg += "<text x=\"\(fmt(x0))\" y=\"\(fmt(top - 10))\" font-weight=\"bold\">\(panel.name)</text>\n"
            // Grid and y labels: ten steps of 0.1 for the ratio, five round steps for requests.
            let steps = p == 0 ? 10 : 5
            for i in 0...steps {
                let y = panel.top * Double(i) / Double(steps)
                svg += "<line x1=\"\(fmt(x0))\" y1=\"\(fmt(py(y)))\" x2=\"\(fmt(x0 + panelWidth))\" y2=\"\(fmt(py(y)))\" stroke=\"#e0e0e0\"/>\n"
                let label = p == 0 ? (i == 10 ? "1.0" : "0.\(i)") : count(y)
                svg += "<text x=\"\(fmt(x0 - 8))\" y=\"\(fmt(py(y) + 4))\" text-anchor=\"end\">\(label)</text>\n"
            }
            // X ticks at each distinct max, or at round numbers when there are many.
            for x in ticks(Set(xs).sorted(), logScale: logScale) {
                svg += "<line x1=\"\(px(x))\" y1=\"\(fmt(top))\" x2=\"\(px(x))\" y2=\"\(fmt(top + panelHeight))\" stroke=\"#f0f0f0\"/>\n"
                svg += "<text x=\"\(px(x))\" y=\"\(fmt(top + panelHeight + 18))\" text-anchor=\"middle\">\(label(x))</text>\n"
            }
            svg += "<rect x=\"\(fmt(x0))\" y=\"\(fmt(top))\" width=\"\(fmt(panelWidth))\" height=\"\(fmt(panelHeight))\" fill=\"none\" stroke=\"#444\"/>\n"
            svg += "<text x=\"\(fmt(x0 + panelWidth / 2))\" y=\"\(fmt(top + panelHeight + 38))\" text-anchor=\"middle\">max (entries\(logScale ? ", log scale" : ""))</text>\n"
            for (i, name) in names.enumerated() {
                let series = points[name]!.sorted { $0.x < $1.x }
                let path = series.map { "\(px(Double($0.x))),\(fmt(py(panel.value($0))))" }.joined(separator: " ")
                svg += "<polyline points=\"\(path)\" fill=\"none\" \(stroke(i)) stroke-width=\"2\"/>\n"
                for point in series {
                    let what = "\(name), max \(point.x): \(panel.text(point))"
                    svg += marker(i, x: x0 + xFraction(Double(point.x)) * panelWidth, y: py(panel.value(point)), title: what) + "\n"
                }
            }
            svg += "</g>\n"
        }
        svg += "<g id=\"legend\">\n"
        for (i, name) in names.enumerated() {
            let x = margin + Double(i % columns) * entryWidth
            let y = legendY + Double(i / columns) * legendRow + legendRow / 2
            svg += "<line x1=\"\(fmt(x))\" y1=\"\(fmt(y))\" x2=\"\(fmt(x + swatch))\" y2=\"\(fmt(y))\" \(stroke(i)) stroke-width=\"2\"/>\n"
            svg += marker(i, x: x + swatch / 2, y: y, title: nil) + "\n"
            svg += "<text x=\"\(fmt(x + swatch + swatchGap))\" y=\"\(fmt(y + 4))\">\(escape(name))</text>\n"
        }
        svg += "</g>\n</svg>\n"
        return svg
    }

    /// Series `i`'s stroke: its colour and dash pattern.
    private static func stroke(_ i: Int) -> String {
        let dash = dash(i)
        return "stroke=\"\(colours[i % colours.count])\"" + (dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\"")
    }

    /// Series `i`'s marker at (x, y), hollow so that markers of equal points show each other:
    /// a circle, square, triangle, diamond, upside-down triangle, cross or plus, in turn.
    private static func marker(_ i: Int, x: Double, y: Double, title: String?) -> String {
        let r = 4.0
        let shape: String
        switch i % 7 {
        case 0: shape = "M\(fmt(x - r)),\(fmt(y))a\(fmt(r)),\(fmt(r)) 0 1,0 \(fmt(2 * r)),0a\(fmt(r)),\(fmt(r)) 0 1,0 \(fmt(-2 * r)),0Z"
        case 1: shape = "M\(fmt(x - r)),\(fmt(y - r))h\(fmt(2 * r))v\(fmt(2 * r))h\(fmt(-2 * r))Z"
        case 2: shape = "M\(fmt(x)),\(fmt(y - r - 1))L\(fmt(x + r + 1)),\(fmt(y + r))L\(fmt(x - r - 1)),\(fmt(y + r))Z"
        case 3: shape = "M\(fmt(x)),\(fmt(y - r - 1))L\(fmt(x + r + 1)),\(fmt(y))L\(fmt(x)),\(fmt(y + r + 1))L\(fmt(x - r - 1)),\(fmt(y))Z"
        case 4: shape = "M\(fmt(x)),\(fmt(y + r + 1))L\(fmt(x + r + 1)),\(fmt(y - r))L\(fmt(x - r - 1)),\(fmt(y - r))Z"
        case 5: shape = "M\(fmt(x - r)),\(fmt(y - r))L\(fmt(x + r)),\(fmt(y + r))M\(fmt(x - r)),\(fmt(y + r))L\(fmt(x + r)),\(fmt(y - r))"
        default: shape = "M\(fmt(x - r - 1)),\(fmt(y))h\(fmt(2 * r + 2))M\(fmt(x)),\(fmt(y - r - 1))v\(fmt(2 * r + 2))"
        }
        let element = "<path d=\"\(shape)\" fill=\"none\" stroke=\"\(colours[i % colours.count])\" stroke-width=\"1.5\""
        guard let title else { return element + "/>" }
        return element + "><title>\(escape(title))</title></path>"
    }

    /// The top of the requests axis: 1, 2 or 5 times a power of ten, at least `value` (1 for 0).
    static func niceCeiling(_ value: Double) -> Double {
        var step = 1.0
        while step * 10 <= value { step *= 10 }
        for m in [1.0, 2, 5, 10] where step * m >= value { return step * m }
        return step * 10
    }

    /// A count on the requests axis, short: `750`, `2.5k`, `40k`, `1.2M`.
    static func count(_ value: Double) -> String {
        func short(_ v: Double, _ unit: String) -> String {
            let tenths = Int((v * 10).rounded())
            return (tenths % 10 == 0 ? String(tenths / 10) : "\(tenths / 10).\(tenths % 10)") + unit
        }
        if value >= 1e9 { return short(value / 1e9, "G") }
        if value >= 1e6 { return short(value / 1e6, "M") }
        if value >= 1e3 { return short(value / 1e3, "k") }
        return short(value, "")
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
        return tenths % 10 == 0 ? String(tenths / 10) : "\(tenths < 0 && tenths > -10 ? "-" : "")\(tenths / 10).\(abs(tenths % 10))"
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
