import TableSync

/// The command-line flag that settles a library error, for the errors whose fix is an option: the library says
/// what to allow in its own terms ("pull again allowing mass deletes"), the command line names its flag.
enum FlagHint {
    /// The hint to append to `error`'s sentence, or `nil`.
    static func hint(for error: any Error) -> String? {
        switch error {
        case is MassDeleteRefused:
            return "--allow-mass-delete"
        case is PurgeRefused:
            return "--force"
        case let refused as GitStateRefused where refused.cause == .headBehindLastSync:
            return "--allow-older-head"
        case SyncError.protocolVersionRefused(_, _, let accepted, learnedForNextRun: false):
            return "for a new store: tablesync init --api-version \(accepted)"
        default:
            return nil
        }
    }

    /// `sentence` with the hint for `error` before its final full stop.
    static func adding(to sentence: String, for error: any Error) -> String {
        guard let hint = hint(for: error) else { return sentence }
        let body = sentence.hasSuffix(".") ? String(sentence.dropLast()) : sentence
        return "\(body) (\(hint))."
    }
}
