/// Extensions of the table protocol that a TableSync server advertises in the ``ProtocolHeader/extensions``
/// header of every response (and in the health document), so that a client can discover them.
///
/// Gzip responses need no advertisement: a server sends them whenever the client accepts them.
public enum ProtocolExtension: String, Sendable, Hashable, CaseIterable {
    /// Request bodies may be sent with `Content-Encoding: gzip`.
    case gzipRequests = "gzip-request"
    /// A batch endpoint: many operations in one request, each reconciled by version on its own.
    case batch = "batch"
    /// A batch may ask for minimal answers (``BatchRequest/minimalAnswers``): a written record that holds exactly
    /// the item sent comes back as its system properties only.
    case batchMinimalAnswers = "batch-minimal"
    /// A change feed (``ChangeFeed``): `GET /changes` answers once a listed table changes, a long poll.
    case changes = "changes"
    /// A v3 list request may ask for its `$top` in one page, up to the table's `maxTop`, by naming this extension in
    /// its own ``ProtocolHeader/extensions`` header. Without it a v3 page holds at most the table's page size, as
    /// Datasync serves them, and links to the rest: a client that pulls 1,000 records a page would make ten requests
    /// where one does.
    case wholePages = "whole-pages"

    /// Parses a header value such as `gzip-request, batch`, ignoring names it does not know.
    public static func parse(headerValue: String) -> Set<ProtocolExtension> {
        Set(
            headerValue.split(separator: ",").compactMap {
                ProtocolExtension(rawValue: String($0).trimmingSpaces().lowercased())
            })
    }

    /// The header value advertising `extensions`, in a stable order.
    public static func headerValue(_ extensions: Set<ProtocolExtension>) -> String {
        allCases.filter(extensions.contains).map(\.rawValue).joined(separator: ", ")
    }
}
