/// Query-string parameters of `GET /tables/{table}`, in one place for client and server.
///
/// Names starting with `$` are OData system query options and matched exactly; `__includeDeleted` and
/// `ZUMO-API-VERSION` are matched without regard to case, as the Azure servers do.
public enum QueryOption {
    public static let filter = "$filter"
    public static let orderBy = "$orderby"
    public static let skip = "$skip"
    public static let top = "$top"
    public static let select = "$select"
    /// v2: `$inlinecount=allpages` asks for `{"results","count"}`.
    public static let inlineCount = "$inlinecount"
    /// The value of ``inlineCount`` that asks for a count.
    public static let inlineCountAllPages = "allpages"
    /// v3: `$count=true` asks for the `count` member.
    public static let count = "$count"
    /// `__includeDeleted=true` includes soft-deleted records (name and value in any case).
    public static let includeDeleted = "__includeDeleted"
}
