/// Durations and instants as users write and read them.
///
/// Durations are whole milliseconds written as amounts with units, largest
/// first, each unit at most once: `250ms`, `30s`, `1h30m`, `1d2h3m4s5ms`, and
/// the lone `0`. Instants are milliseconds since the Unix epoch, written in
/// one fixed ISO 8601 form: `2026-01-01T00:00:00.000Z`. Everything here is
/// plain integer arithmetic, so it is the same on every platform.
public enum TimeText {
    /// The virtual clock's start, 2026-01-01T00:00:00.000Z, in milliseconds since the Unix epoch.
    public static let virtualEpochMs: Int64 = 1_767_225_600_000

    // MARK: Durations

    /// Parses a duration such as `250ms`, `1h30m` or `2d` into milliseconds.
    ///
    /// Units are `d`, `h`, `m`, `s` and `ms`, each used at most once and in
    /// that order, with whole non-negative amounts. A lone number is accepted
    /// only when it is zero (`0`).
    /// - Returns: The milliseconds, or nil when the text is not a duration or
    ///   its value does not fit in an `Int64`; ``durationError(_:)`` says why.
    /// - Complexity: O(n) in the length of `text`.
    public static func parseDuration(_ text: Substring) -> Int64? {
        if case .success(let ms) = scanDuration(text) { return ms }
        return nil
    }

    /// One sentence saying why ``parseDuration(_:)`` rejects `text`, e.g.
    /// `bad duration "5x": unknown unit "x" (use ms, s, m, h, d)`.
    ///
    /// Returns an empty string for text that is a valid duration.
    /// - Complexity: O(n) in the length of `text`.
    public static func durationError(_ text: Substring) -> String {
        guard case .failure(let problem) = scanDuration(text) else { return "" }
        let quoted = "bad duration \"\(text)\": "
        switch problem {
        case .empty:
            return quoted + "expected an amount and a unit, like 30s or 1h30m"
        case .negative:
            return quoted + "durations cannot be negative"
        case .missingAmount(let unit):
            return quoted + "expected a number before \"\(unit)\""
        case .missingUnit(let amount):
            return quoted + "missing unit after \"\(amount)\" (use ms, s, m, h, d)"
        case .fraction:
            return quoted + "amounts must be whole numbers, like 1s500ms"
        case .unknownUnit(let unit):
            return quoted + "unknown unit \"\(unit)\" (use ms, s, m, h, d)"
        case .repeatedUnit(let unit):
            return quoted + "unit \"\(unit)\" appears more than once"
        case .unitOutOfOrder(let unit):
            return quoted + "unit \"\(unit)\" is out of order (write d, h, m, s, ms from largest to smallest)"
        case .tooLarge:
            return quoted + "too large (the limit is about 292 million years)"
        case .unexpected(let character):
            return quoted + "unexpected character \"\(character)\""
        }
    }

    /// Writes milliseconds as the shortest duration ``parseDuration(_:)`` reads back.
    ///
    /// Zero units are left out, so 3,600,001 ms is `1h1ms` and 90,000 ms is
    /// `1m30s`; zero itself is `0ms`. A negative value gets a leading `-`
    /// (which ``parseDuration(_:)`` rejects: durations users write are never negative).
    /// - Complexity: O(1).
    public static func formatDuration(_ ms: Int64) -> String {
        if ms == 0 { return "0ms" }
        var rest = ms.magnitude
        var result = ms < 0 ? "-" : ""
        for unit in units {
            let amount = rest / unit.ms
            guard amount > 0 else { continue }
            result += String(amount)
            result += unit.name
            rest -= amount * unit.ms
        }
        return result
    }

    private static let units: [(name: String, ms: UInt64)] = [
        ("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1),
    ]

    private enum DurationProblem: Error {
        case empty
        case negative
        case missingAmount(unit: Substring)
        case missingUnit(amount: Substring)
        case fraction
        case unknownUnit(Substring)
        case repeatedUnit(Substring)
        case unitOutOfOrder(Substring)
        case tooLarge
        case unexpected(Character)
    }

    /// The one scanner behind ``parseDuration(_:)`` and ``durationError(_:)``.
    private static func scanDuration(_ text: Substring) -> Result<Int64, DurationProblem> {
        let bytes = text.utf8
        guard let first = bytes.first else { return .failure(.empty) }
        if first == UInt8(ascii: "-") { return .failure(.negative) }

        var total: Int64 = 0
        var previousRank = -1
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let chunkStart = i

            let amountStart = i
            var amount: Int64 = 0
            while i < bytes.endIndex, let digit = digitValue(bytes[i]) {
                let (times10, o1) = amount.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(digit)
                if o1 || o2 { return .failure(.tooLarge) }
                amount = sum
                i = bytes.index(after: i)
            }
            let amountText = text[amountStart..<i]

            let unitStart = i
            while i < bytes.endIndex, isASCIILetter(bytes[i]) { i = bytes.index(after: i) }
            let unitText = text[unitStart..<i]

            if amountText.isEmpty {
                if !unitText.isEmpty { return .failure(.missingAmount(unit: unitText)) }
                return .failure(.unexpected(text[i]))
            }
            if unitText.isEmpty {
                if i == bytes.endIndex {
                    // A lone `0` (or `00`) is the one unitless duration.
                    if amountStart == bytes.startIndex && amount == 0 { return .success(0) }
                    return .failure(.missingUnit(amount: amountText))
                }
                if bytes[i] == UInt8(ascii: ".") { return .failure(.fraction) }
                return .failure(.unexpected(text[i]))
            }

            guard let rank = units.firstIndex(where: { $0.name == unitText }) else {
                return .failure(.unknownUnit(unitText))
            }
            if rank == previousRank { return .failure(.repeatedUnit(unitText)) }
            if rank < previousRank { return .failure(.unitOutOfOrder(unitText)) }
            previousRank = rank

            let (part, o1) = amount.multipliedReportingOverflow(by: Int64(units[rank].ms))
            let (sum, o2) = total.addingReportingOverflow(part)
            if o1 || o2 { return .failure(.tooLarge) }
            total = sum
            assert(i > chunkStart, "duration scan made no progress")
        }
        return .success(total)
    }

    private static func digitValue(_ byte: UInt8) -> Int64? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int64(byte - UInt8(ascii: "0")) : nil
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    // MARK: Instants

    private static let msPerDay: Int64 = 86_400_000

    /// Writes milliseconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SS.sssZ` (UTC).
    ///
    /// Uses the proleptic Gregorian calendar. Years 0000–9999 have exactly four
    /// digits, the form ``parseISO8601(_:)`` reads; a year outside that range
    /// (only reachable from extreme values) is written with a sign, as in
    /// ISO 8601's expanded form: `-0001-…`, `+10000-…`.
    /// - Complexity: O(1).
    public static func iso8601(ms: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(26)
        appendISO8601(ms: ms, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends ``iso8601(ms:)``'s text to `bytes` (UTF-8), without making a string.
    /// - Complexity: O(1).
    public static func appendISO8601(ms: Int64, to bytes: inout [UInt8]) {
        let (days, msOfDay) = floorDivide(ms, msPerDay)
        let (year, month, day) = civil(fromDays: days)
        if year < 0 {
            bytes.append(UInt8(ascii: "-"))
            append(year.magnitude, width: 4, to: &bytes)
        } else if year > 9999 {
            bytes.append(UInt8(ascii: "+"))
            append(UInt64(year), width: 4, to: &bytes)
        } else {
            append(UInt64(year), width: 4, to: &bytes)
        }
        bytes.append(UInt8(ascii: "-"))
        append2(UInt64(month), to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        append2(UInt64(day), to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        append2(UInt64(msOfDay / 3_600_000), to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        append2(UInt64(msOfDay / 60_000 % 60), to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        append2(UInt64(msOfDay / 1_000 % 60), to: &bytes)
        bytes.append(UInt8(ascii: "."))
        let milli = UInt64(msOfDay % 1_000)
        bytes.append(UInt8(ascii: "0") + UInt8(milli / 100))
        append2(milli % 100, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Reads exactly the form ``iso8601(ms:)`` writes for years 0000–9999,
    /// `YYYY-MM-DDTHH:MM:SS.sssZ`, into milliseconds since the Unix epoch.
    ///
    /// - Returns: nil for any other text, including impossible dates
    ///   (`2025-02-29`) and times (`24:00:00.000`, leap seconds).
    /// - Complexity: O(1).
    public static func parseISO8601(_ s: Substring) -> Int64? {
        var s = s
        return s.withUTF8 { parseISO8601(utf8: $0) }
    }

    /// ``parseISO8601(_:)`` of UTF-8 bytes.
    /// - Complexity: O(1).
    public static func parseISO8601(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count == 24 else { return nil }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "."),
            bytes[23] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ start: Int, _ width: Int) -> Int64? {
            var value: Int64 = 0
            for k in start..<start + width {
                guard let digit = digitValue(bytes[k]) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            let milli = number(20, 3)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour < 24, minute < 60, second < 60
        else { return nil }
        let days = self.days(fromCivil: year, month, day)
        return days * msPerDay + hour * 3_600_000 + minute * 60_000 + second * 1_000 + milli
    }

    private static func isLeap(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Quotient rounded toward negative infinity and a remainder in `0..<divisor`.
    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let (q, r) = value.quotientAndRemainder(dividingBy: divisor)
        return r < 0 ? (q - 1, r + divisor) : (q, r)
    }

    /// Year, month and day of the day `days` after 1970-01-01, by the
    /// civil-from-days algorithm over 400-year eras (146,097 days each).
    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468  // days since 0000-03-01
        let (era, dayOfEra) = floorDivide(z, 146_097)
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // from March 1
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // 0 = March
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// Days from 1970-01-01 to the given date; the inverse of ``civil(fromDays:)``.
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let marchYear = month <= 2 ? year - 1 : year
        let (era, yearOfEra) = floorDivide(marchYear, 400)
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Two digits, `value` below 100.
    @inline(__always)
    private static func append2(_ value: UInt64, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "0") + UInt8(value / 10))
        bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    private static func append(_ value: UInt64, width: Int, to bytes: inout [UInt8]) {
        if width == 4 && value < 10_000 {
            append2(value / 100, to: &bytes)
            append2(value % 100, to: &bytes)
            return
        }
        var digits: [UInt8] = []
        var rest = value
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        if digits.count < width { bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - digits.count)) }
        bytes.append(contentsOf: digits.reversed())
    }
}
