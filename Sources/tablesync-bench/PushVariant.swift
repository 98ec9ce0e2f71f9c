/// The ways `tablesync push` can send operations, as rows of P3.
///
/// Today's CLI has one path, one request per operation. The batch pipeline adds batches and a
/// `--no-batch` flag that forces the old path; once `tablesync push --help` offers that flag, P3 measures both
/// and reports the batched rate beside the single-request one, with no change here.
enum PushVariant: Hashable, CustomStringConvertible {
    case onePerOperation
    case batched

    static let noBatchFlag = "--no-batch"

    /// The variants the installed `tablesync` offers, judged from its `push --help` text.
    static func offered(helpText: String) -> [PushVariant] {
        helpText.contains(noBatchFlag) ? [.onePerOperation, .batched] : [.onePerOperation]
    }

    /// Extra `tablesync push` arguments; when batches exist they are the default, so the single path needs the flag.
    func arguments(offered: [PushVariant]) -> [String] {
        self == .onePerOperation && offered.contains(.batched) ? [Self.noBatchFlag] : []
    }

    var description: String {
        switch self {
        case .onePerOperation: return "one request per operation"
        case .batched: return "batched"
        }
    }
}
