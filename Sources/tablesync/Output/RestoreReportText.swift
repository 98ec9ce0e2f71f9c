import SyncProtocol
import TableSync

/// What `restore` and `revert` print.
enum RestoreReportText {
    static func print(_ report: RestoreReport, json: Bool) {
        if json {
            func keys(_ keys: [RecordKey]) -> JSONValue { .array(keys.map { .string($0.description) }) }
            CommandOutput.printJSON([
                "source": .string(report.source), "updated": keys(report.updated), "inserted": keys(report.inserted),
                "deleted": keys(report.deleted), "unchanged": keys(report.unchanged)
            ])
            return
        }
        let queued = report.updated.count + report.inserted.count + report.deleted.count
        var text = """
            Queued \(queued) change(s) from \(report.source): \(report.updated.count) updated, \
            \(report.inserted.count) brought back, \(report.deleted.count) deleted
            """
        if !report.unchanged.isEmpty { text += "; \(report.unchanged.count) already so" }
        text += queued > 0 ? ". The next push or sync sends them." : "."
        CommandOutput.printText(text)
    }
}
