import CFileSystem
import Crypto
import SyncProtocol

/// The mark a record file carries while it holds exactly the server's copy of the version it names:
/// `"@synced": "<22 characters>"`, the first 16 bytes of the SHA-256 of the file's canonical bytes (with the mark's
/// own value blanked), in base64url.
///
/// Every record file written from the server is stamped; a local change (a hand edit, `update`, a merge that
/// changed a property) leaves the mark stale or drops it. So any clone of a store can tell, offline and without the
/// machine-local index, a server copy at whatever version it carries (never an edit: it is brought up to date from
/// the server) from a change made on top of it (sent as an edit on its `version`). docs/store.md says why the mark
/// lives in each file rather than in a committed manifest.
///
/// The name is not a plain property name (``PropertyName/isPlain(_:)``), so no query can name it and no record
/// of a table is expected to use it; the mark is never sent (``ServerRecord/content(_:)``) and a record read
/// through the library comes without it.
package enum SyncedMark {
    /// The mark's property name.
    package static let property = "@synced"
    /// Characters in a mark.
    static let length = 22
    /// The value in the mark's place while its digest is computed. Its last character cannot end a real mark
    /// (22 base64url characters of 16 bytes end in one of `A`, `Q`, `g`, `w`), so no file is stamped with it.
    private static let blank = [UInt8](repeating: UInt8(ascii: "-"), count: length)

    /// The canonical file bytes of `record`, a copy as the server has it, stamped with its mark.
    package static func stamped(_ record: [String: JSONValue]) -> [UInt8] {
        var bytes = CanonicalJSON.encode(record, adding: (property, .string(String(decoding: blank, as: UTF8.self))))
        // The blank is found where the canonical form puts a top-level key: a deeper one is indented further,
        // and no string holds a raw line end.
        guard let range = valueRange(in: bytes, value: blank) else {
            preconditionFailure("a canonical record has its top-level \(property) property")
        }
        bytes.replaceSubrange(range, with: digest(bytes))
        return bytes
    }

    /// Whether `record`, read from the file `bytes`, carries a mark that its content still matches: the file is
    /// the server's copy of the version it names. A file stamped and not changed since is recognised from its
    /// bytes alone; one rewritten in another layout (re-indented by an editor, say) by its canonical form, which is
    /// not encoded again when `bytesAreCanonical` says the bytes are that form already.
    package static func isIntact(
        _ record: [String: JSONValue], bytes: [UInt8], bytesAreCanonical: Bool = false
    ) -> Bool {
        guard case .string(let text)? = record[property], text.utf8.count == length else { return false }
        let mark = Array(text.utf8)
        if let range = valueRange(in: bytes, value: mark), digest(blanking: range, of: bytes) == mark { return true }
        if bytesAreCanonical { return false }
        // The record's canonical bytes with the mark blanked, as ``stamped(_:)`` digests them: the mark is written
        // where the blank would be, being as long, so it is blanked in the encoding rather than in a copy of the
        // record. A mark that needs escaping is not found, and could not be a digest anyway.
        var canonical = RecordFile.encode(record)
        guard let range = valueRange(in: canonical, value: mark) else { return false }
        canonical.replaceSubrange(range, with: blank)
        return digest(canonical) == mark
    }

    /// The `id` and `version` of the file `bytes` when they are a stamped copy exactly as ``stamped(_:)`` wrote it,
    /// told from the bytes alone, without parsing them; `nil` otherwise (and for an id or version that needs
    /// escaping), where ``isIntact(_:bytes:bytesAreCanonical:)`` after a full read decides. The mark's digest
    /// vouches for the bytes: they are the canonical form of a checked server copy, so each top-level member is a
    /// line of its own at the top level's indent.
    package static func intactCopy(_ bytes: [UInt8]) -> (id: String, version: String)? {
        guard let prefix = range(of: valuePrefix, in: bytes) else { return nil }
        let markRange = prefix.upperBound..<prefix.upperBound + length
        guard markRange.upperBound < bytes.count, bytes[markRange.upperBound] == UInt8(ascii: "\"") else {
            return nil
        }
        guard digest(blanking: markRange, of: bytes).elementsEqual(bytes[markRange]),
            let id = topLevelString(idPrefix, in: bytes), let version = topLevelString(versionPrefix, in: bytes)
        else { return nil }
        return (id, version)
    }

    /// The value of the top-level string member whose line starts with `prefix` in canonical file bytes, when it
    /// holds no escape.
    private static func topLevelString(_ prefix: [UInt8], in bytes: [UInt8]) -> String? {
        guard let found = range(of: prefix, in: bytes),
            let end = bytes[found.upperBound...].firstIndex(where: {
                $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\")
            }),
            bytes[end] == UInt8(ascii: "\"")
        else { return nil }
        return String(decoding: bytes[found.upperBound..<end], as: UTF8.self)
    }

    /// Where `needle` first occurs in `bytes` (`memmem`: this runs a few times for each file a scan reads).
    private static func range(of needle: [UInt8], in bytes: [UInt8]) -> Range<Int>? {
        guard !needle.isEmpty, bytes.count >= needle.count else { return nil }
        return bytes.withUnsafeBytes { haystack in
            needle.withUnsafeBytes { needle in
                guard let base = haystack.baseAddress,
                    let found = tablesync_memmem(base, haystack.count, needle.baseAddress, needle.count)
                else { return nil }
                let start = base.distance(to: found)
                return start..<start + needle.count
            }
        }
    }

    /// What starts the lines of the top-level `id` and `version` in canonical file bytes, up to the value's text.
    private static let idPrefix = Array("\n  \"\(SystemProperty.id)\": \"".utf8)
    private static let versionPrefix = Array("\n  \"\(SystemProperty.version)\": \"".utf8)

    /// `record` without its mark: what the library hands out and what local changes start from.
    package static func removed(from record: [String: JSONValue]) -> [String: JSONValue] {
        guard record[property] != nil else { return record }
        var record = record
        record.removeValue(forKey: property)
        return record
    }

    /// Where the mark's value `value` is in canonical file bytes: after the line's indent, name and `": "`.
    private static func valueRange(in bytes: [UInt8], value: [UInt8]) -> Range<Int>? {
        guard let found = range(of: valuePrefix + value + [UInt8(ascii: "\"")], in: bytes) else { return nil }
        return found.lowerBound + valuePrefix.count..<found.lowerBound + valuePrefix.count + value.count
    }

    /// What stands before the mark's value in canonical file bytes: a line end, the indent of a top-level member, the
    /// name and `": "`.
    private static let valuePrefix = Array("\n  \"\(property)\": \"".utf8)

    /// The digits of base64url.
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The mark of `bytes`: the first 16 bytes of their SHA-256 in base64url, without padding.
    private static func digest(_ bytes: [UInt8]) -> [UInt8] { digest(of: [bytes[...]]) }

    /// The mark of `bytes` with the mark's place `range` blanked, hashed where they are, without a copy.
    private static func digest(blanking range: Range<Int>, of bytes: [UInt8]) -> [UInt8] {
        digest(of: [bytes[..<range.lowerBound], blank[...], bytes[range.upperBound...]])
    }

    /// The mark of the bytes of `parts` one after the other, hashed where they are.
    private static func digest(of parts: [ArraySlice<UInt8>]) -> [UInt8] {
        var hasher = Crypto.SHA256()
        for part in parts { hasher.update(data: part) }
        let hash = Array(hasher.finalize().prefix(16))
        var mark: [UInt8] = []
        mark.reserveCapacity(length)
        var bits = 0
        var count = 0
        for byte in hash {
            bits = bits << 8 | Int(byte)
            count += 8
            while count >= 6 {
                count -= 6
                mark.append(alphabet[(bits >> count) & 63])
            }
            bits &= (1 << count) - 1
        }
        mark.append(alphabet[(bits << (6 - count)) & 63])
        return mark
    }
}
