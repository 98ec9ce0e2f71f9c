import SyncProtocol
import TableSyncStorage

/// A finding of `tablesync verify`.
package struct VerificationFinding: Sendable, Equatable, CustomStringConvertible {
    /// Errors keep the store from syncing correctly; notices are states the next run settles by itself.
    package enum Severity: String, Sendable {
        case error, notice
    }

    /// How serious the finding is.
    package var severity: Severity
    /// The file concerned, relative to the store.
    package var path: String
    /// What is wrong and what to do.
    package var message: String

    /// The finding as `path: message`.
    package var description: String { "\(path): \(message)" }
}

/// Checks the store's invariants (docs/store.md): settings and queries valid, journal readable and consistent
/// with the files, every record file valid, canonical and named after its id, nothing left behind by an
/// interrupted run. Reads only.
struct StoreVerifier {
    let layout: StoreLayout
    let settings: StoreSettings
    let journal: Journal

    func verify() throws -> [VerificationFinding] {
        var findings: [VerificationFinding] = []
        func add(_ severity: VerificationFinding.Severity, _ path: String, _ message: String) {
            findings.append(VerificationFinding(severity: severity, path: path, message: message))
        }
        do {
            _ = try QueryRegistry.load(
                from: try FileSystem.readFile(layout.queriesFile), file: StoreLayout.queriesFileName)
        } catch {
            add(.error, StoreLayout.queriesFileName, "\(error)")
        }
        for (name, _) in try FileSystem.listDirectory(layout.temporaryDirectory)
        where name.hasPrefix(TemporaryName.prefix) {
            add(.notice, ".tablesync/tmp/\(name)", "temporary file left by an interrupted run; the next run removes it")
        }
        if FileSystem.exists(layout.intentFile) {
            add(
                .notice, ".tablesync/intent",
                "an interrupted run was writing records; the next run completes its bookkeeping")
        }
        if FileSystem.exists(layout.settledFile) {
            add(
                .notice, ".tablesync/settled.jsonl",
                """
                an interrupted push settled operations that journal.jsonl still \
                lists; the next run rewrites the journal
                """
            )
        }
        for operation in journal.operations where !settings.tables.contains(operation.table) {
            add(
                .error, StoreLayout.journalFileName,
                "operation \(operation.sequence) is for table \"\(operation.table)\", which is not in tablesync.json")
        }
        for (table, status) in try FileSystem.listDirectory(layout.tablesDirectory)
        where status.isDirectory && !settings.tables.contains(table) {
            add(.notice, "tables/\(table)", "directory of a table that is not in tablesync.json; it is not synced")
        }
        for table in settings.tables {
            try verifyTable(table, add: add)
        }
        // In a fixed order, whatever order the directories were listed in.
        return findings.sorted { ($0.path, $0.message) < ($1.path, $1.message) }
    }

    private func verifyTable(_ table: String, add: (VerificationFinding.Severity, String, String) -> Void) throws {
        let directory = layout.tableDirectory(table)
        var present = Set<String>()
        let listing = try FileSystem.listDirectory(directory)
        let names = Set(listing.map(\.name))
        for (name, status) in listing {
            let relativePath = "tables/\(table)/\(name)"
            if !name.hasPrefix("."), LeftoverFileName.isLeftover(name, besideRecordFile: names.contains) {
                add(.notice, relativePath, LeftoverFileName.notice)
                continue
            }
            guard RecordFileName.looksLikeRecordFile(name), status.isRegularFile else {
                if !name.hasPrefix(".") {
                    add(.error, relativePath, "not a record file (record files are named <id>.json)")
                }
                continue
            }
            let bytes = try FileSystem.readFile(directory + "/" + name)
            switch RecordFile.check(bytes: bytes, fileName: name, relativePath: relativePath) {
            case .failure(let problem):
                add(
                    .error, problem.path,
                    (problem.line.map { "line \($0)" + (problem.column.map { ", column \($0)" } ?? "") + ": " } ?? "")
                        + problem.reason
                )
            case .success(let loaded):
                present.insert(loaded.id)
                if RecordFile.encode(loaded.record) != bytes {
                    add(.notice, relativePath, "not in canonical form (edited by hand); the next sync rewrites it")
                }
                if journal.pending(RecordKey(table: table, id: loaded.id))?.kind == .delete {
                    add(
                        .notice, relativePath,
                        """
                        the record's delete is pending but the file holds content (a delete merged over an edit?); the \
                        next push holds the delete back as a conflict for tablesync resolve
                        """
                    )
                }
            }
        }
        for operation in journal.operations(inTable: table)
        where operation.kind != .delete && !present.contains(operation.id) {
            if !FileSystem.exists(layout.recordFile(table: table, id: operation.id)) {
                add(
                    .notice, "tables/\(table)/\(RecordFileName.fileName(for: operation.id))",
                    """
                    the pending \(operation.kind.rawValue) has no record file (deleted by hand); the next push queues \
                    a delete
                    """
                )
            }
        }
    }
}
