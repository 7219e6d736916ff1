/// HTTP dates (RFC 9110 §5.6.7): the preferred IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`)
/// and, as a recipient must accept them, the obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`)
/// and asctime (`Sun Nov  6 08:49:37 1994`) forms. Times are ms since the Unix epoch, as the
/// virtual clock keeps them; an HTTP date has whole seconds.
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]

    /// The time `text` names, or nil when it is not an HTTP date (a cache treats an invalid
    /// `Expires` as a time in the past: RFC 9111 §5.3).
    public static func parse(_ text: String) -> Int64? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        // The grammar puts one space between the parts (asctime two before a one-digit day):
        // other spacing makes no date (`Thu, 18  Aug  2050 ...` is an invalid Expires).
        var trimmed = Substring(text)
        while let f = trimmed.first, f == " " || f == "\t" { trimmed.removeFirst() }
        while let l = trimmed.last, l == " " || l == "\t" { trimmed.removeLast() }
        let spaced = words.count == 5 && words[2].count == 1
            ? "\(words[0]) \(words[1])  \(words[2]) \(words[3]) \(words[4])" : words.joined(separator: " ")
        guard trimmed == spaced else { return nil }
        if words.count == 6, words[0].hasSuffix(","), words[5] == "GMT" {
            // IMF-fixdate: day-name, DD Mon YYYY HH:MM:SS GMT
            guard words[1].count == 2, let day = Int(words[1]), let month = month(words[2]),
                  words[3].count == 4, let year = Int(words[3]) else { return nil }
            return time(year: year, month: month, day: day, clock: words[4])
        }
        if words.count == 4, words[0].hasSuffix(","), words[3] == "GMT" {
            // RFC 850: day-name, DD-Mon-YY HH:MM:SS GMT (a two-digit year within 50 years: RFC 9110 §5.6.7)
            let parts = words[1].split(separator: "-").map(String.init)
            guard parts.count == 3, parts[0].count == 2, let day = Int(parts[0]), let month = month(parts[1]),
                  parts[2].count == 2, let yy = Int(parts[2]) else { return nil }
            let year = yy < 70 ? 2000 + yy : 1900 + yy
            return time(year: year, month: month, day: day, clock: words[2])
        }
        if words.count == 5 {
            // asctime: day-name Mon D HH:MM:SS YYYY
            guard let month = month(words[1]), (1...2).contains(words[2].count), let day = Int(words[2]),
                  words[4].count == 4, let year = Int(words[4]) else { return nil }
            return time(year: year, month: month, day: day, clock: words[3])
        }
        return nil
    }

    /// `ms` as an IMF-fixdate (whole seconds, rounded down).
    public static func format(_ ms: Int64) -> String {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let dayNumber = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - dayNumber * 86_400
        let (year, month, day) = civil(fromDays: dayNumber)
        let weekday = days[Int(((dayNumber % 7) + 7) % 7)]
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let monthName = months[Int(month) - 1].prefix(1).uppercased() + months[Int(month) - 1].dropFirst()
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(weekday), \(two(day)) \(monthName) \(yearText) \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    private static func month(_ name: String) -> Int? {
        months.firstIndex(of: name.lowercased()).map { $0 + 1 }
    }

    private static func time(year: Int, month: Int, day: Int, clock: String) -> Int64? {
        let parts = clock.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ $0.count == 2 }),
              let h = Int(parts[0]), let m = Int(parts[1]), let s = Int(parts[2]),
              h < 24, m < 60, s < 61, (1...31).contains(day), (1...12).contains(month) else { return nil }
        let days = daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day))
        return (days * 86_400 + Int64(h * 3600 + m * 60 + min(s, 59))) * 1000
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
