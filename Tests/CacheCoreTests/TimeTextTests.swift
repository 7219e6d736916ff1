import CacheCore
import Testing
import TestSupport

@Suite struct TimeTextTests {
    // MARK: Durations

    @Test(arguments: [
        ("250ms", 250),
        ("30s", 30_000),
        ("5m", 300_000),
        ("45m", 2_700_000),
        ("1h30m", 5_400_000),
        ("2d", 172_800_000),
        ("1d2h3m4s5ms", 93_784_005),
        ("0", 0),
        ("00", 0),
        ("0s", 0),
        ("0ms", 0),
        ("1h1ms", 3_600_001),
        ("05s", 5_000),
        ("9223372036854775807ms", Int64.max),
        ("106751991167d", 9_223_372_036_828_800_000),
    ] as [(String, Int64)])
    func parsesValidDurations(text: String, ms: Int64) {
        #expect(TimeText.parseDuration(text[...]) == ms)
        #expect(TimeText.durationError(text[...]) == "")
    }

    @Test(arguments: [
        ("", #"bad duration "": expected an amount and a unit, like 30s or 1h30m"#),
        ("5x", #"bad duration "5x": unknown unit "x" (use ms, s, m, h, d)"#),
        ("5sec", #"bad duration "5sec": unknown unit "sec" (use ms, s, m, h, d)"#),
        ("5S", #"bad duration "5S": unknown unit "S" (use ms, s, m, h, d)"#),
        ("-5s", #"bad duration "-5s": durations cannot be negative"#),
        ("5", #"bad duration "5": missing unit after "5" (use ms, s, m, h, d)"#),
        ("1h30", #"bad duration "1h30": missing unit after "30" (use ms, s, m, h, d)"#),
        ("ms", #"bad duration "ms": expected a number before "ms""#),
        ("1.5s", #"bad duration "1.5s": amounts must be whole numbers, like 1s500ms"#),
        ("30s1m", #"bad duration "30s1m": unit "m" is out of order (write d, h, m, s, ms from largest to smallest)"#),
        ("1s1s", #"bad duration "1s1s": unit "s" appears more than once"#),
        ("1ms1s", #"bad duration "1ms1s": unit "s" is out of order (write d, h, m, s, ms from largest to smallest)"#),
        ("9223372036854775808ms", #"bad duration "9223372036854775808ms": too large (the limit is about 292 million years)"#),
        ("106751991168d", #"bad duration "106751991168d": too large (the limit is about 292 million years)"#),
        ("106751991167d1d", #"bad duration "106751991167d1d": unit "d" appears more than once"#),
        ("106751991167d8h", #"bad duration "106751991167d8h": too large (the limit is about 292 million years)"#),
        ("5 s", #"bad duration "5 s": unexpected character " ""#),
        ("+5s", #"bad duration "+5s": unexpected character "+""#),
        ("5sé", #"bad duration "5sé": unexpected character "é""#),
    ])
    func rejectsInvalidDurationsWithAReason(text: String, message: String) {
        #expect(TimeText.parseDuration(text[...]) == nil)
        #expect(TimeText.durationError(text[...]) == message)
    }

    @Test(arguments: [
        (0, "0ms"),
        (250, "250ms"),
        (1_000, "1s"),
        (90_000, "1m30s"),
        (5_400_000, "1h30m"),
        (172_800_000, "2d"),
        (3_600_001, "1h1ms"),
        (93_784_005, "1d2h3m4s5ms"),
        (-1_500, "-1s500ms"),
        (Int64.max, "106751991167d7h12m55s807ms"),
        (Int64.min, "-106751991167d7h12m55s808ms"),
    ] as [(Int64, String)])
    func formatsShortestCanonicalDuration(ms: Int64, text: String) {
        #expect(TimeText.formatDuration(ms) == text)
    }

    @Test func formattedDurationsParseBack() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<10_000 {
            // Spread values over every magnitude, not just the huge ones.
            let ms = Int64(bitPattern: generator.next() >> (generator.next() % 64)) & Int64.max
            #expect(TimeText.parseDuration(TimeText.formatDuration(ms)[...]) == ms)
        }
    }

    // MARK: Instants

    @Test func virtualEpochIsNewYear2026() {
        #expect(TimeText.iso8601(ms: TimeText.virtualEpochMs) == "2026-01-01T00:00:00.000Z")
        #expect(TimeText.parseISO8601("2026-01-01T00:00:00.000Z") == TimeText.virtualEpochMs)
    }

    @Test(arguments: [
        (0, "1970-01-01T00:00:00.000Z"),
        (1, "1970-01-01T00:00:00.001Z"),
        (86_399_999, "1970-01-01T23:59:59.999Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"),  // divisible by 400: leap
        (951_868_800_000, "2000-03-01T00:00:00.000Z"),
        (1_709_164_800_000, "2024-02-29T00:00:00.000Z"),
        (1_767_225_600_000 + 5_400_000 + 250, "2026-01-01T01:30:00.250Z"),
        (4_107_456_000_000, "2100-02-28T00:00:00.000Z"),  // divisible by 100: not leap
        (4_107_542_400_000, "2100-03-01T00:00:00.000Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
    ] as [(Int64, String)])
    func writesAndReadsISO8601(ms: Int64, text: String) {
        #expect(TimeText.iso8601(ms: ms) == text)
        #expect(TimeText.parseISO8601(text[...]) == ms)
    }

    @Test func yearsOutsideFourDigitsCarryASign() {
        #expect(TimeText.iso8601(ms: 253_402_300_800_000) == "+10000-01-01T00:00:00.000Z")
        #expect(TimeText.iso8601(ms: -62_167_219_200_001) == "-0001-12-31T23:59:59.999Z")
        #expect(TimeText.iso8601(ms: -62_167_219_200_000) == "0000-01-01T00:00:00.000Z")
        #expect(TimeText.parseISO8601("0000-01-01T00:00:00.000Z") == -62_167_219_200_000)
    }

    @Test func iso8601RoundTripsAcross1970To9999() {
        let lastDay: Int64 = 2_932_896  // 9999-12-31
        var previous = ""
        // A step of 97 days (plus a drifting time of day) visits every month and weekday.
        for day in stride(from: Int64(0), through: lastDay, by: 97) {
            let ms = day * 86_400_000 + (day * 7_919_993) % 86_400_000
            let text = TimeText.iso8601(ms: ms)
            // The fixed-width form sorts like time.
            guard text.utf8.count == 24, text > previous, TimeText.parseISO8601(text[...]) == ms else {
                Issue.record("\(ms) wrote \(text) after \(previous), which does not read back in order")
                return
            }
            previous = text
        }
        #expect(previous.hasPrefix("9999-"))
    }

    @Test func everyYearHasItsGregorianLengthAndLeapDay() {
        let day: Int64 = 86_400_000
        var newYear: Int64 = 0
        for year in 1970...9999 {
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            let digits = String(year)
            let march = TimeText.parseISO8601("\(digits)-03-01T00:00:00.000Z"[...])
            guard TimeText.parseISO8601("\(digits)-01-01T00:00:00.000Z"[...]) == newYear,
                TimeText.iso8601(ms: newYear - 1) == "\(String(year - 1))-12-31T23:59:59.999Z",
                (TimeText.parseISO8601("\(digits)-02-29T00:00:00.000Z"[...]) != nil) == leap,
                march == newYear + (leap ? 60 : 59) * day,
                TimeText.iso8601(ms: march! - 1) == "\(digits)-02-\(leap ? 29 : 28)T23:59:59.999Z"
            else {
                Issue.record("calendar is wrong around \(year)")
                return
            }
            newYear += (leap ? 366 : 365) * day
        }
        #expect(newYear == 253_402_300_800_000)  // 10000-01-01
    }

    @Test(arguments: [
        "2025-02-29T00:00:00.000Z",  // not a leap year
        "2100-02-29T00:00:00.000Z",
        "2026-04-31T00:00:00.000Z",
        "2026-13-01T00:00:00.000Z",
        "2026-00-01T00:00:00.000Z",
        "2026-01-00T00:00:00.000Z",
        "2026-01-01T24:00:00.000Z",
        "2026-01-01T00:60:00.000Z",
        "2026-01-01T00:00:60.000Z",
        "2026-01-01T00:00:00.000",
        "2026-01-01T00:00:00Z",
        "2026-01-01 00:00:00.000Z",
        "2026-01-01T00:00:00.000+00:00",
        "2026-1-01T00:00:00.000Z",
        "+2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00.00aZ",
        "",
    ])
    func rejectsOtherTimeText(text: String) {
        #expect(TimeText.parseISO8601(text[...]) == nil)
    }
}

