/// Which `Content-Type` a request body may carry: JSON, as Datasync's server requires (415 otherwise).
///
/// ```swift
/// RequestContentType.isJSON("application/json; charset=utf-8")   // true
/// RequestContentType.isJSON("application/merge-patch+json")      // true
/// RequestContentType.isJSON(nil)                                 // true: a body without a type is read as JSON
/// RequestContentType.isJSON("text/html")                         // false
/// ```
enum RequestContentType {
    /// Whether a body of type `value` is read as JSON: `application/json` or a `+json` type of `application`, any
    /// case, with any parameters. A body without a `Content-Type` is read as JSON too: Azure Mobile Apps' older
    /// peers and hand-made requests leave it out, and a body that is not JSON is a 400 all the same.
    static func isJSON(_ value: String?) -> Bool {
        guard let value else { return true }
        let mediaType = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
            .trimmingCharacters(in: " ").lowercased()
        guard mediaType.hasPrefix("application/") else { return false }
        let subtype = mediaType.dropFirst("application/".count)
        return subtype == "json" || (subtype.hasSuffix("+json") && subtype.count > "+json".count)
    }
}
