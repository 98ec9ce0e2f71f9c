/// The two ways `tablesync push` sends operations, measured side by side in P3.
enum PushVariant: Hashable, CaseIterable, CustomStringConvertible {
    /// One request per operation, as against a server without the batch extension (`--no-batch`).
    case onePerOperation
    /// The batch pipeline: many operations per gzip-compressed request.
    case batched

    /// The `tablesync push` arguments that choose the variant.
    var arguments: [String] {
        self == .onePerOperation ? ["--no-batch"] : []
    }

    var description: String {
        switch self {
        case .onePerOperation: return "one request per operation"
        case .batched: return "batched"
        }
    }
}
