import Foundation
import SyncProtocol

/// Several measurements of one quantity.
struct Sample {
    var values: [Double]

    init(_ values: [Double]) { self.values = values }

    var median: Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
    /// The `percent`th percentile by nearest rank: the smallest value that `percent` % of the values do not
    /// exceed.
    func percentile(_ percent: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((percent / 100 * Double(sorted.count)).rounded(.up))
        return sorted[Swift.min(Swift.max(rank, 1), sorted.count) - 1]
    }
    var min: Double { values.min() ?? .nan }
    var max: Double { values.max() ?? .nan }
}

/// One line of the results: a figure, and beside it the baseline measured in the same run and their ratio
/// (figure median ÷ baseline median).
struct ResultRow {
    var id: String
    var what: String
    var unit: String
    var value: Sample
    var baselineName: String?
    var baseline: Sample?
    /// The target as people read it (`≥ 0.75×`), or `nil`.
    var target: String?
    /// Whether the target is met, or `nil` without a target.
    var met: Bool?

    var ratio: Double? { baseline.map { value.median / $0.median } }
}

/// Prints the results as one table and writes them as JSON.
struct ResultTable {
    var machine: String
    var records: Int
    var runs: Int
    var rows: [ResultRow] = []
    var notes: [String] = []

    func text() -> String {
        var lines = ["TableSync benchmarks: \(records) records, \(runs) runs each; \(machine)", ""]
        let header = [
            pad("id", 4), pad("benchmark", 50), pad("unit", 10), lpad("median", 11), lpad("min", 11), lpad("max", 11),
            "  " + pad("baseline (same run)", 44), lpad("median", 11), lpad("ratio", 8), "  " + pad("target", 19), "met"
        ]
        lines.append(header.joined(separator: " "))
        for row in rows {
            let ratio = row.ratio.map { Self.format($0, unit: "ratio") + "×" } ?? "—"
            let met = row.met.map { $0 ? "yes" : "NO" } ?? ""
            lines.append(
                [
                    pad(row.id, 4), pad(row.what, 50), pad(row.unit, 10),
                    lpad(Self.format(row.value.median, unit: row.unit), 11),
                    lpad(Self.format(row.value.min, unit: row.unit), 11),
                    lpad(Self.format(row.value.max, unit: row.unit), 11),
                    "  " + pad(row.baselineName ?? "—", 44),
                    lpad(row.baseline.map { Self.format($0.median, unit: row.unit) } ?? "—", 11), lpad(ratio, 8),
                    "  " + pad(row.target ?? "", 19), met
                ].joined(separator: " "))
        }
        if !notes.isEmpty {
            lines.append("")
            lines += notes.map { "note: " + $0 }
        }
        return lines.joined(separator: "\n")
    }

    func json() -> [UInt8] {
        func sample(_ sample: Sample) -> JSONValue {
            [
                "median": .double(sample.median), "min": .double(sample.min), "max": .double(sample.max),
                "values": .array(sample.values.map { .double($0) })
            ]
        }
        let rows: [JSONValue] = rows.map { row in
            var members: [String: JSONValue] = [
                "id": .string(row.id), "what": .string(row.what), "unit": .string(row.unit),
                "value": sample(row.value)
            ]
            if let name = row.baselineName { members["baselineName"] = .string(name) }
            if let baseline = row.baseline { members["baseline"] = sample(baseline) }
            if let ratio = row.ratio { members["ratio"] = .double(ratio) }
            if let target = row.target { members["target"] = .string(target) }
            if let met = row.met { members["met"] = .bool(met) }
            return .object(members)
        }
        return CanonicalJSON.encode([
            "machine": .string(machine), "records": .integer(Int64(records)), "runs": .integer(Int64(runs)),
            "date": .string(Timestamp(ticks: Int64(Date().timeIntervalSince1970 * 10_000_000)).text),
            "rows": .array(rows), "notes": .array(notes.map { .string($0) })
        ])
    }

    /// The results file `json` (what ``json()`` wrote) as a Markdown table for README and docs/bench.md, so their
    /// tables are generated from a run, never typed.
    static func markdown(_ json: JSONValue) -> String {
        var lines = [
            "| id | figure | median | min | max | baseline (same run) | baseline median | ratio | target | met |",
            "|---|---|---|---|---|---|---|---|---|---|"
        ]
        for row in json["rows"]?.arrayValue ?? [] {
            let unit = row["unit"]?.stringValue ?? ""
            func figure(_ sample: JSONValue?, _ key: String) -> String {
                (sample?[key]?.doubleValue).map { format($0, unit: unit) } ?? "—"
            }
            let ratio = (row["ratio"]?.doubleValue).map { format($0, unit: "ratio") + "×" } ?? "—"
            let met = row["met"]?.boolValue.map { $0 ? "yes" : "no" } ?? ""
            let cells = [
                row["id"]?.stringValue ?? "", "\(row["what"]?.stringValue ?? "") (\(unit))",
                figure(row["value"], "median"), figure(row["value"], "min"), figure(row["value"], "max"),
                row["baselineName"]?.stringValue ?? "—", figure(row["baseline"], "median"), ratio,
                row["target"]?.stringValue ?? "", met
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    static func format(_ value: Double, unit: String) -> String {
        guard value.isFinite else { return "—" }
        switch unit {
        case "s", "ratio": return String(format: value < 10 ? "%.3f" : "%.2f", value)
        case "MB": return String(format: value < 10 ? "%.3f" : "%.1f", value)
        default: return value >= 100 ? Self.grouped(Int(value.rounded())) : String(format: "%.2f", value)
        }
    }

    private static func grouped(_ value: Int) -> String {
        let digits = Array(String(value))
        var output = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { output.append(",") }
            output.append(digit)
        }
        return output
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
    private func lpad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
