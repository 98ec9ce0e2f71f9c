import SyncProtocol

/// Reading and checking one record file: the single place that decides whether a file is a valid record.
package enum RecordFile {
    /// A record file read and checked.
    package struct Loaded: Sendable {
        package var id: String
        package var record: [String: JSONValue]
        package var bytes: [UInt8]
        /// Whether `bytes` are known to be the canonical encoding of `record` (``encode(_:)``): `false` when they
        /// are not, or may not be (``JSONParser/parseNotingLayout(_:)``), and when the id came from the file's name.
        package var bytesAreCanonical = false
    }

    /// Parses `bytes` of the file `fileName` in `table` and checks that it is an object whose `id` matches the
    /// name. A file without `id` takes the id its name stands for. `relativePath` is used in problems.
    package static func check(
        bytes: [UInt8], fileName: String, relativePath: String
    ) -> Result<Loaded, RecordFileProblem> {
        object(in: bytes, relativePath: relativePath).flatMap { parsed in
            var record = parsed.record
            return identify(&record, fileName: fileName, relativePath: relativePath).map { id in
                Loaded(
                    id: id, record: record, bytes: bytes,
                    bytesAreCanonical: parsed.canonical && parsed.record[SystemProperty.id] != nil)
            }
        }
    }

    /// The JSON text of a record file's `bytes`: without the UTF-8 byte order mark that some editors (Windows
    /// Notepad among them) put before it, which JSON lets a parser ignore (RFC 8259, 8.1). A file read without one
    /// is not canonical, so the next write of the record (the server's copy after a push) leaves it out.
    package static func jsonText(_ bytes: [UInt8]) -> (text: [UInt8], hadByteOrderMark: Bool) {
        bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? (Array(bytes.dropFirst(3)), true) : (bytes, false)
    }

    /// The JSON object `bytes` hold, and whether they are known to be its canonical encoding; a problem when they
    /// are not JSON (with the merge conflict, when git left its markers in them) or hold another value.
    private static func object(
        in bytes: [UInt8], relativePath: String
    ) -> Result<(record: [String: JSONValue], canonical: Bool), RecordFileProblem> {
        let value: JSONValue
        var canonical: Bool
        do {
            let json = jsonText(bytes)
            (value, canonical) = try JSONParser.parseNotingLayout(json.text)
            canonical = canonical && !json.hadByteOrderMark
        } catch let error as JSONParseError {
            if let conflict = ConflictMarkers.firstConflict(in: String(decoding: bytes, as: UTF8.self)) {
                func side(_ lines: [String]) -> String {
                    lines.map { String($0.drop(while: { $0 == " " })) }.joined(separator: " ")
                }
                return .failure(
                    RecordFileProblem(
                        path: relativePath, line: conflict.line, column: 1,
                        reason:
                            """
                            an unsettled git merge conflict: ours has \(side(conflict.ours)) and theirs has \
                            \(side(conflict.theirs)); keep one side, delete the markers, and git add the file
                            """,
                        holdsConflictMarkers: true))
            }
            return .failure(
                RecordFileProblem(path: relativePath, line: error.line, column: error.column, reason: error.reason))
        } catch {
            return .failure(RecordFileProblem(path: relativePath, reason: "\(error)"))
        }
        guard case .object(let record) = value else {
            return .failure(
                RecordFileProblem(
                    path: relativePath, line: 1, column: 1,
                    reason:
                        """
                        a record file must hold a JSON object, not \(value.typeName == "array" ? "an" : "a") \
                        \(value.typeName)
                        """
                ))
        }
        if let problem = RecordNesting.problem(with: record) {
            return .failure(RecordFileProblem(path: relativePath, reason: problem))
        }
        return .success((record, canonical))
    }

    /// The id of `record`, read from the file `fileName`: its `id` when that is valid and names the file, or, when it
    /// has none, the id the name stands for, which is then set in `record`.
    private static func identify(
        _ record: inout [String: JSONValue], fileName: String, relativePath: String
    ) -> Result<String, RecordFileProblem> {
        switch record[SystemProperty.id] {
        case .string(let text)?:
            if let problem = RecordID.problem(with: text) {
                return .failure(RecordFileProblem(path: relativePath, reason: "invalid id: \(problem)"))
            }
            let expected = RecordFileName.fileName(for: text)
            guard expected == fileName else {
                return .failure(
                    RecordFileProblem(
                        path: relativePath,
                        reason: "the id \"\(text)\" belongs in a file named \(expected); rename the file or fix the id",
                        misnamedRecord: text)
                )
            }
            return .success(text)
        case nil:
            guard let derived = RecordFileName.id(forFileName: fileName) else {
                return .failure(
                    RecordFileProblem(
                        path: relativePath,
                        reason:
                            """
                            the record has no \"id\" and its file name is not one TableSync gives to any id; add an \
                            \"id\"
                            """
                    ))
            }
            record[SystemProperty.id] = .string(derived)
            return .success(derived)
        case let other?:
            return .failure(
                RecordFileProblem(path: relativePath, reason: "\"id\" must be a string, found \(other.typeName)"))
        }
    }

    /// The canonical bytes of a record.
    package static func encode(_ record: [String: JSONValue]) -> [UInt8] {
        CanonicalJSON.encode(.object(record))
    }
}
