import ArgumentParser
import TableSyncServer

/// `--bulk-read-priority idle|normal`, parsed by the argument parser and listed in `--help` with what each value does.
/// The conformance lives here because the server library does not depend on the argument parser.
extension BulkReadPriority: ExpressibleByArgument {
    public static var allValueDescriptions: [String: String] {
        Dictionary(
            uniqueKeysWithValues: allCases.map { priority in
                let description =
                    switch priority {
                    case .idle:
                        "on SQLite, run only while nothing else wants a processor; small requests pass at once"
                    case .normal: "share the processors with every other thread"
                    }
                return (priority.rawValue, description)
            })
    }
}
