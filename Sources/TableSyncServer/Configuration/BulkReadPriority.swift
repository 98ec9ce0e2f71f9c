/// The processor priority of a bulk read (``ReadWeight``) on SQLite, where the server's own threads run the
/// statement: `--bulk-read-priority`, `bulkReadPriority` in the configuration file.
public enum BulkReadPriority: String, Sendable, Hashable, CaseIterable {
    /// A thread of its own that runs only while nothing else on the machine wants a processor (Linux's
    /// `SCHED_IDLE`): small requests take the processor from a large page or a costly filter at once. On a machine
    /// whose processors other programs keep busy, a bulk read then waits until its statement time limit and is
    /// answered 503 with `Retry-After`. The default.
    case idle
    /// The priority of every other thread of the server: bulk reads share the processors with small requests and
    /// with every other program.
    case normal

    /// The priority of a server that names none.
    package static let `default`: BulkReadPriority = .idle

    /// Parses a configuration file's value, naming `setting` in the error.
    static func parse(_ text: String, setting: String) throws(ConfigurationError) -> BulkReadPriority {
        guard let priority = BulkReadPriority(rawValue: text) else {
            throw ConfigurationError(
                "\(setting) must be \(allCases.map(\.rawValue).joined(separator: " or ")), not '\(text)'")
        }
        return priority
    }
}
