import HTTPTypes
import SyncProtocol

/// The methods each of the server's paths answers, for the `Allow` header of a 405: a path the server serves with
/// other methods is answered 405, not 404, so that a client learns its method is wrong rather than its URL.
enum RouteMethods {
    /// The methods `path` is served with, or `nil` when the server serves nothing there. `batch` says whether the
    /// batch endpoint is offered.
    static func allowed(path: String, batch: Bool) -> [HTTPRequest.Method]? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        switch segments.count {
        case 1 where "/\(segments[0])" == TablePath.health: return [.get]
        case 1 where "/\(segments[0])" == ServerMetrics.path: return [.get]
        case 1 where "/\(segments[0])" == TablePath.batch: return batch ? [.post] : nil
        case 1 where "/\(segments[0])" == TablePath.changes: return [.get]
        case 2 where "/\(segments.joined(separator: "/"))" == DatabaseAvailability.readinessPath: return [.get]
        case 2 where "/\(segments[0])" == TablePath.tablesPrefix: return [.get, .post]
        case 3 where "/\(segments[0])" == TablePath.tablesPrefix: return [.get, .patch, .put, .delete, .post]
        default: return nil
        }
    }
}
