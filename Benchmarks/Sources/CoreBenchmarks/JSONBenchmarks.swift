import CacheCore
import Foundation

/// The JSON reader and printer against Foundation's `JSONSerialization`.
enum JSONBenchmarks {
    static let small = #"{"active":true,"id":42,"likes":3,"name":"Ada Lovelace","score":4.5,"tags":["math","code"]}"#
    static let page = "[" + (0..<20).map { i in
        #"{"author":{"id":\#(i % 7),"name":"user \#(i % 7)"},"body":"post number \#(i) with some text","id":\#(1000 + i),"likes":\#(i * 3),"liked":false}"#
    }.joined(separator: ",") + "]"

    static func run() {
        for (name, text, ops) in [("small object", small, 200_000), ("feed page (20 posts)", page, 10_000)] {
            Report.section("JSON \(name): \(text.utf8.count) bytes")
            let data = Data(text.utf8)
            let ours = Timing.nsPerOp(ops: ops) {
                var sum = 0
                for _ in 0..<ops {
                    if case .object(let o) = try! JSONValue(parsing: text) { sum &+= o.count }
                    else if case .array(let a) = try! JSONValue(parsing: text) { sum &+= a.count }
                }
                return sum
            }
            let foundation = Timing.nsPerOp(ops: ops) {
                var sum = 0
                for _ in 0..<ops {
                    let object = try! JSONSerialization.jsonObject(with: data)
                    sum &+= (object as? [String: Any])?.count ?? (object as? [Any])?.count ?? 0
                }
                return sum
            }
            Report.line("parse: JSONValue(parsing:)", Report.ns(ours))
            Report.line("parse: JSONSerialization.jsonObject", Report.ns(foundation), "ours is \(Report.ratio(ours / foundation)) Foundation")

            let value = try! JSONValue(parsing: text)
            let object = try! JSONSerialization.jsonObject(with: data)
            let oursPrint = Timing.nsPerOp(ops: ops) {
                var sum = 0
                for _ in 0..<ops { sum &+= value.compactText.utf8.count }
                return sum
            }
            let foundationPrint = Timing.nsPerOp(ops: ops) {
                var sum = 0
                for _ in 0..<ops { sum &+= try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).count }
                return sum
            }
            Report.line("print: compactText (sorted keys)", Report.ns(oursPrint))
            Report.line("print: JSONSerialization.data (.sortedKeys)", Report.ns(foundationPrint), "ours is \(Report.ratio(oursPrint / foundationPrint)) Foundation")
        }
    }
}
