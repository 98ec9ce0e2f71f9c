import SyncProtocol

/// What a server offers beyond the table protocol, as it advertises it (nothing, for a stock Azure Mobile Apps
/// or Datasync server).
struct ServerFeatures: Sendable, Equatable {
    /// `true` when the server sent the extensions header at all: a TableSync server, which pages by keyset.
    var isTableSyncServer = false
    /// The extensions advertised in `X-TableSync-Extensions`.
    var extensions: Set<ProtocolExtension> = []
    /// The batch limits announced in the health document, when there are any.
    var batchLimits: BatchLimits?
    /// The change feed's limits, when the server offers the feed (``ProtocolExtension/changes``) and announces them.
    var changeFeed: ChangeFeedLimits?
}

/// What a push put on the wire: requests made and body bytes each way, as transferred (after compression).
package struct WireTraffic: Sendable, Equatable {
    /// Requests made for operations.
    package var requests = 0
    /// Request body bytes sent.
    package var bytesSent = 0
    /// Response body bytes received.
    package var bytesReceived = 0

    /// Traffic of `requests` requests with these body sizes.
    package init(requests: Int = 0, bytesSent: Int = 0, bytesReceived: Int = 0) {
        self.requests = requests
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
    }

    /// Adds `other` to this traffic.
    package static func += (lhs: inout WireTraffic, rhs: WireTraffic) {
        lhs.requests += rhs.requests
        lhs.bytesSent += rhs.bytesSent
        lhs.bytesReceived += rhs.bytesReceived
    }
}
