#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SyncProtocol
import TestSupport

/// Change feed requests left waiting on a server (W3), standing for as many idle watchers: each on a loopback
/// connection of its own, `GET /changes` as a watch sends it, with the `ETag` of the current marks in
/// `If-None-Match`, so the server holds it until a change or the end of its wait. Their answers are never read; the
/// connections close with ``close()`` or when the value goes away.
final class FeedWaits {
    private var sockets: [Int32] = []

    /// Opens `count` connections to the server on `port`, each sending one change feed request for `tables` that
    /// waits up to `waitSeconds` on `eTag`.
    /// - Throws: ``BenchError`` when a connection cannot be made or the request cannot be sent (the connections
    ///   made so far are closed).
    init(port: UInt16, tables: [String], eTag: String, waitSeconds: Int, count: Int) throws {
        let listed = "\(ChangeFeed.tablesParameter)=\(tables.joined(separator: ","))"
        let target = "\(TablePath.changes)?\(listed)&\(ChangeFeed.waitParameter)=\(waitSeconds)"
        let lines = [
            "GET \(target) HTTP/1.1", "Host: 127.0.0.1:\(port)", "ZUMO-API-VERSION: 3.0.0", "Accept: application/json",
            "\(ProtocolHeader.ifNoneMatch): \(eTag)"
        ]
        let request = Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        sockets.reserveCapacity(count)
        do {
            for _ in 0..<count {
                guard let socket = LoopbackSocket.connected(port: Int(port), timeoutSeconds: nil) else {
                    throw BenchError(
                        what: "W3", detail: "connection \(sockets.count + 1) to 127.0.0.1:\(port): errno \(errno)")
                }
                sockets.append(socket)
                let sent = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
                guard sent == request.count else {
                    throw BenchError(what: "W3", detail: "sending request \(sockets.count): errno \(errno)")
                }
            }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Closes every connection; the server cancels the requests still waiting on them.
    func close() {
        for socket in sockets {
            #if canImport(Glibc)
            _ = Glibc.close(socket)
            #else
            _ = Darwin.close(socket)
            #endif
        }
        sockets = []
    }

    /// Makes sure this process, and the server it starts after, may hold `count` more descriptors than a few
    /// dozen: raises the soft limit on open files towards the hard one.
    /// - Throws: ``BenchError`` when the hard limit is too low (`ulimit -n`).
    static func allowOpenFiles(_ count: Int) throws {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else {
            throw BenchError(what: "getrlimit", detail: "errno \(errno)")
        }
        let needed = rlim_t(count + 256)
        guard limit.rlim_cur < needed else { return }
        guard limit.rlim_max >= needed else {
            throw BenchError(
                what: "W3",
                detail: """
                    \(count) connections need about \(needed) open files, and the hard limit is \(limit.rlim_max); \
                    raise it (ulimit -Hn) or lower --feed-waits
                    """)
        }
        limit.rlim_cur = needed
        guard setrlimit(resource, &limit) == 0 else {
            throw BenchError(what: "setrlimit", detail: "errno \(errno)")
        }
    }
}
