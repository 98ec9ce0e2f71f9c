import SyncProtocol

/// HTTP's date format (RFC 9110's IMF-fixdate, `Mon, 13 Nov 2023 13:30:05 GMT`), for `Last-Modified`,
/// `If-Modified-Since` and `If-Unmodified-Since`, to and from the server's 100-ns ticks.
enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `ticks` as an HTTP date: whole seconds, the fraction dropped (as .NET's `RFC1123Pattern` writes it).
    static func format(ticks: Int64) -> String {
        let parts = Timestamp(ticks: ticks).components
        let dayTicks = 86_400 * Timestamp.ticksPerSecond
        let days = ticks >= 0 ? ticks / dayTicks : -((-ticks - 1) / dayTicks) - 1
        // 1970-01-01 was a Thursday.
        let weekday = weekdays[Int(((days + 4) % 7 + 7) % 7)]
        func digits(_ value: Int, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return """
            \(weekday), \(digits(parts.day, 2)) \(months[parts.month - 1]) \(digits(parts.year, 4)) \
            \(digits(parts.hour, 2)):\(digits(parts.minute, 2)):\(digits(parts.second, 2)) GMT
            """
    }

    /// The ticks of an IMF-fixdate, or `nil` for any other text: a conditional header with a date that cannot be
    /// read is ignored, as RFC 9110 asks.
    static func parse(_ text: String) -> Int64? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count == 6, fields[0].count == 4, fields[0].hasSuffix(","),
            weekdays.contains(String(fields[0].dropLast())), fields[1].count == 2, let day = Int(fields[1]),
            let month = months.firstIndex(of: String(fields[2])), fields[3].count == 4, Int(fields[3]) != nil,
            fields[4].count == 8, fields[5] == "GMT"
        else { return nil }
        let monthText = month < 9 ? "0\(month + 1)" : "\(month + 1)"
        let dayText = day < 10 ? "0\(day)" : "\(day)"
        return Timestamp(parsing: "\(fields[3])-\(monthText)-\(dayText)T\(fields[4])Z")?.ticks
    }
}
