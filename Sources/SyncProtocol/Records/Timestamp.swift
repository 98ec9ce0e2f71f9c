/// A point in time as the table protocol writes it (`2024-05-01T10:20:30.123Z`), with the exact text it
/// was read from.
///
/// Parsing accepts 0–7 fraction digits and `Z` or a `±hh:mm` offset; the instant is kept in 100-nanosecond
/// ticks since the Unix epoch (the precision of .NET's `DateTimeOffset`). ``text`` keeps the server's
/// spelling, so a watermark saved from a server is sent back exactly as the server wrote it.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// 100-nanosecond ticks since 1970-01-01T00:00:00Z.
    public let ticks: Int64
    /// The text this value was parsed from, or its canonical form when it was computed.
    public let text: String

    /// Ticks per second.
    public static let ticksPerSecond: Int64 = 10_000_000

    /// A timestamp from ticks, with the canonical text (`yyyy-MM-ddTHH:mm:ss.fffZ`, more fraction digits
    /// only when the value needs them).
    public init(ticks: Int64) {
        self.ticks = ticks
        self.text = Self.format(ticks: ticks)
    }

    /// Parses `text`; `nil` when it is not an ISO 8601 date-time of the accepted form.
    public init?(parsing text: String) {
        guard let ticks = Self.parseTicks(text) else { return nil }
        self.ticks = ticks
        self.text = text
    }

    public static func == (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.ticks == rhs.ticks }
    public func hash(into hasher: inout Hasher) { hasher.combine(ticks) }
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.ticks < rhs.ticks }
    public var description: String { text }

    /// The same instant written canonically (UTC, `Z`, at least millisecond precision).
    public var canonical: Timestamp { Timestamp(ticks: ticks) }

    /// Calendar fields in UTC: year, month (1–12), day, hour, minute, second, and the 100-ns remainder.
    public var components: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, fraction: Int) {
        let (days, dayTicks) = Self.floorDivide(ticks, 86_400 * Self.ticksPerSecond)
        let (year, month, day) = Self.civilFromDays(days)
        let seconds = Int(dayTicks / Self.ticksPerSecond)
        return (year, month, day, seconds / 3600, seconds / 60 % 60, seconds % 60, Int(dayTicks % Self.ticksPerSecond))
    }

    // MARK: - Parsing and formatting

    static func parseTicks(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for offset in 0..<count {
                let byte = bytes[index + offset]
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            index += count
            return value
        }
        func expect(_ character: Character) -> Bool {
            guard index < bytes.count, bytes[index] == character.asciiValue! else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            index < bytes.count, bytes[index] == UInt8(ascii: "T") || bytes[index] == UInt8(ascii: "t")
        else { return nil }
        index += 1
        guard let hour = number(2), expect(":"), let minute = number(2) else { return nil }
        var second = 0
        if expect(":") {
            guard let parsed = number(2) else { return nil }
            second = parsed
        }
        var fractionTicks = 0
        if expect(".") {
            var digits = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                guard digits < 7 else { return nil }
                fractionTicks = fractionTicks * 10 + Int(bytes[index] - 48)
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<7 { fractionTicks *= 10 }
        }
        var offsetSeconds = 0
        if expect("Z") || expect("z") {
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let offsetHours = number(2) else { return nil }
            _ = expect(":")
            guard let offsetMinutes = number(2), offsetHours < 24, offsetMinutes < 60 else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        } else {
            return nil
        }
        guard index == bytes.count, (1...12).contains(month), day >= 1, day <= daysInMonth(year, month),
            hour < 24, minute < 60, second < 60
        else { return nil }
        let days = daysFromCivil(year, month, day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offsetSeconds)
        return seconds * ticksPerSecond + Int64(fractionTicks)
    }

    static func format(ticks: Int64) -> String {
        let (days, dayTicks) = floorDivide(ticks, 86_400 * ticksPerSecond)
        let (year, month, day) = civilFromDays(days)
        let seconds = Int(dayTicks / ticksPerSecond)
        // Seven fraction digits, trailing zeros dropped down to three.
        var fraction = Int(dayTicks % ticksPerSecond)
        var fractionDigits = 7
        while fractionDigits > 3, fraction % 10 == 0 {
            fraction /= 10
            fractionDigits -= 1
        }
        // Written byte by byte: the server formats two of these per record it sends.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        appendDigits(year, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(month, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(day, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(seconds / 3600, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(seconds / 60 % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(seconds % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDigits(fraction, width: fractionDigits, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the decimal digits of `value`, zero-padded to `width` (a negative value: `-` and its padded magnitude).
    private static func appendDigits(_ value: Int, width: Int, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0 || bytes.count - start < width
        bytes[start...].reverse()
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        var quotient = value / divisor
        var remainder = value % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }

    static func daysInMonth(_ year: Int, _ month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ days: Int64) -> (Int, Int, Int) {
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
