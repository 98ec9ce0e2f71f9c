import TableSync

/// The words of a progress line, as rsync and curl show them:
/// `pull todo: 30000/100000 records (30%), 4,210 records/s, 0:17 left`.
///
/// The same words serve the line rewritten on a terminal and the log lines written otherwise; log lines also name
/// the pull's page, which helps when a log is read after the fact.
enum ProgressText {
    /// The line for `progress`, with the rate and time left when `rate` is known.
    static func line(_ progress: SyncProgress, rate: ProgressRate?, showingPage: Bool = false) -> String {
        var parts: [String]
        let unit: String
        switch progress {
        case .pushed(let settled, let total):
            unit = "operations"
            parts = ["push: " + count(settled, of: total, unit: "operations settled")]
        case .pulledPage(let table, let page, let records, let total):
            unit = "records"
            parts = ["pull \(table): " + (showingPage ? "page \(page), " : "") + count(records, of: total, unit: unit)]
        }
        if let rate {
            parts.append("\(perSecond(rate.perSecond)) \(unit)/s")
            if let secondsLeft = rate.secondsLeft { parts.append("\(duration(secondsLeft)) left") }
        }
        return parts.joined(separator: ", ")
    }

    /// `30000/100000 records (30%)`, or `30000 records` without a total. The percentage never passes 100 (a server's
    /// count can fall behind while it takes writes) and is left out of a total of 0.
    static func count(_ done: Int, of total: Int?, unit: String) -> String {
        guard let total else { return "\(done) \(unit)" }
        let percent = total > 0 ? " (\(min(100, done * 100 / total))%)" : ""
        return "\(done)/\(total) \(unit)\(percent)"
    }

    /// A rate: whole numbers grouped by thousands from 10 up (`4,210`), one decimal below (`2.5`).
    static func perSecond(_ rate: Double) -> String {
        let tenths = Int((rate * 10).rounded())
        return tenths >= 100 ? grouped(Int(rate.rounded())) : "\(tenths / 10).\(tenths % 10)"
    }

    /// A time left, rounded up to the second: `0:17`, `12:05`, `1:02:03` (at most `99:59:59`).
    static func duration(_ seconds: Double) -> String {
        let total = Int(min(seconds, 359_999).rounded(.up))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(rest))" : "\(minutes):\(twoDigits(rest))"
    }

    /// `value` with a comma between groups of three digits: `4210` → `4,210`.
    static func grouped(_ value: Int) -> String {
        var digits = String(value.magnitude)
        var groups: [Substring] = []
        while digits.count > 3 {
            groups.insert(digits.suffix(3), at: 0)
            digits.removeLast(3)
        }
        groups.insert(Substring(digits), at: 0)
        return (value < 0 ? "-" : "") + groups.joined(separator: ",")
    }
}
