import Foundation
import SyncProtocol
import TableSync

/// A transport T1 runs the same work through.
enum TransportUnderTest: CaseIterable, CustomStringConvertible {
    /// TableSync's own: libcurl's multi interface (``CurlTransport``).
    case libcurl
    /// The one it replaced.
    case asyncHTTPClient

    var transport: any HTTPTransport {
        self == .libcurl ? PlatformTransport.shared : AsyncHTTPClientTransport.shared
    }

    var description: String { self == .libcurl ? "libcurl" : "AsyncHTTPClient" }

    /// Both, the one going first changing run by run, so that drift on a shared machine hits both alike.
    static func order(run: Int) -> [TransportUnderTest] {
        run % 2 == 1 ? [.libcurl, .asyncHTTPClient] : [.asyncHTTPClient, .libcurl]
    }
}

/// T1: P1's initial pull, P3's pushes (batched and one request per operation, on loopback and over the slow link)
/// and P5's bytes on the wire, each run in this process through the libcurl transport and through
/// AsyncHTTPClient, with everything else the same code; first the transports alone (``PageFetchProbe``). The
/// other rows run the `tablesync` binary, which uses libcurl; these compare the two transports.
extension BenchmarkSuite {
    /// Page fetches per round of the probe.
    static let pageFetches = 200

    mutating func measureTransports(server: ServerProcess) async throws {
        progress("T1: \(Self.pageFetches) fetches of a page of \(Self.pullPageSize) records through each transport, \(runs) rounds")
        let fetches = try await PageFetchProbe(baseURL: server.url, table: Self.mainTable, pageSize: Self.pullPageSize,
                                               count: Self.pageFetches).run(rounds: runs)
        appendComparison(what: "\(Self.pageFetches) fetches of a page of \(Self.pullPageSize) records, gzip, kept alive", unit: "fetches/s", fetches)
        try await measureTransportPull(server: server)
        let link = try LinkProxy(upstreamPort: server.port, delay: configuration.slowLinkDelay)
        defer { link.stop() }
        let roundTrip = String(format: "%.0f ms round trip", configuration.slowLinkDelay * 2_000)
        for (remote, place, onePerOperationCount) in [(server.url, "loopback", configuration.pushRecords),
                                                      (link.url, roundTrip, configuration.slowLinkPushRecords)] {
            try await measureTransportPush(remote: remote, place: place, counts: [.batched: configuration.pushRecords,
                                                                                  .onePerOperation: onePerOperationCount])
        }
        let counting = try LinkProxy(upstreamPort: server.port)
        defer { counting.stop() }
        try await measureTransportWire(proxy: counting)
    }

    private mutating func measureTransportPull(server: ServerProcess) async throws {
        let store = work + "/transport-store"
        var rates: [TransportUnderTest: [Double]] = [:]
        for run in 1...runs {
            for transport in TransportUnderTest.order(run: run) {
                progress("T1 run \(run)/\(runs): initial pull of \(records) records in process, \(transport)")
                try freshStore(store, remote: server.url, table: Self.mainTable)
                let started = Clock.now()
                let report = try await Self.inProcess(store) {
                    try await $0.pull(table: Self.mainTable, queryID: Self.queryID, options: Self.options(transport))
                }
                rates[transport, default: []].append(Double(records) / (Clock.now() - started))
                try Self.expect(report.written, records, "T1 pull through \(transport): records written")
            }
        }
        try discard(store)
        appendComparison(what: "initial pull in process (\(records) records)", unit: "records/s", rates)
    }

    /// Pushes of hand edits of the small table's first records through each transport, each variant, `runs`
    /// times; `counts` says how many updates each variant pushes.
    private mutating func measureTransportPush(remote: String, place: String, counts: [PushVariant: Int]) async throws {
        let store = work + "/transport-push-store"
        try freshStore(store, remote: remote, table: Self.smallTable)
        try expect(try tablesync(["-C", store, "pull", Self.smallTable, "--json"]), member: "written", equals: configuration.smallRecords)
        var value: Int64 = 9_000_000
        for variant in PushVariant.allCases {
            let count = counts[variant]!
            var rates: [TransportUnderTest: [Double]] = [:]
            for run in 1...runs {
                for transport in TransportUnderTest.order(run: run) {
                    progress("T1 run \(run)/\(runs): push of \(count) updates, \(variant), \(place), \(transport)")
                    value += 1
                    let quantity = value
                    _ = try editRecords(store: store, table: Self.smallTable, indexes: 0..<count) { $0["quantity"] = .integer(quantity) }
                    let started = Clock.now()
                    let report = try await Self.inProcess(store) {
                        try await $0.push(options: Self.options(transport, batch: variant == .batched))
                    }
                    rates[transport, default: []].append(Double(count) / (Clock.now() - started))
                    try Self.expect(report.applied, count, "T1 push through \(transport): operations applied")
                }
            }
            appendComparison(what: "push \(count) updates, \(variant), \(place)", unit: "ops/s", rates)
        }
        try discard(store)
    }

    /// Every byte both ways through the counting proxy, headers included. The initial pulls run first, so both see
    /// the same server; then pushes through one store, in the order libcurl, AsyncHTTPClient, AsyncHTTPClient,
    /// libcurl, so that the versions and timestamps in the answers (which change a little with every write) favour
    /// neither.
    private mutating func measureTransportWire(proxy: LinkProxy) async throws {
        var pullBytes: [TransportUnderTest: [Double]] = [:], pushBytes: [TransportUnderTest: [Double]] = [:]
        let stores = Dictionary(uniqueKeysWithValues: TransportUnderTest.allCases.map { ($0, work + "/transport-wire-store-\($0)") })
        for transport in TransportUnderTest.allCases {
            progress("T1: initial pull through the counting proxy, \(transport)")
            try freshStore(stores[transport]!, remote: proxy.url, table: Self.mainTable)
            proxy.reset()
            let pull = try await Self.inProcess(stores[transport]!) {
                try await $0.pull(table: Self.mainTable, queryID: Self.queryID, options: Self.options(transport))
            }
            try Self.expect(pull.written, records, "T1 wire pull through \(transport): records written")
            pullBytes[transport] = [Double(proxy.counts.toServer + proxy.counts.toClient) / 1_000_000]
        }
        let store = stores[.libcurl]!
        for (index, transport) in [TransportUnderTest.libcurl, .asyncHTTPClient, .asyncHTTPClient, .libcurl].enumerated() {
            progress("T1: push of \(configuration.pushRecords) updates through the counting proxy, \(transport)")
            _ = try editRecords(store: store, table: Self.mainTable, indexes: 0..<configuration.pushRecords) {
                $0["quantity"] = .integer(Int64(8_000_000 + index))
            }
            proxy.reset()
            let push = try await Self.inProcess(store) { try await $0.push(options: Self.options(transport)) }
            try Self.expect(push.applied, configuration.pushRecords, "T1 wire push through \(transport): operations applied")
            pushBytes[transport, default: []].append(Double(proxy.counts.toServer + proxy.counts.toClient) / 1_000_000)
        }
        for store in stores.values { try discard(store) }
        appendComparison(what: "bytes on the wire, initial pull (both ways, headers included)", unit: "MB", pullBytes, bytes: true)
        appendComparison(what: "bytes on the wire, push of \(configuration.pushRecords) updates (two each)", unit: "MB", pushBytes, bytes: true)
    }

    /// A T1 row: libcurl's figure beside AsyncHTTPClient's. A rate is met when libcurl's median is no worse than
    /// AsyncHTTPClient's slowest run (not slower beyond the run-to-run noise); bytes, measured once, when they are
    /// within 1 % (the answers' timestamps and versions vary a little from run to run).
    private mutating func appendComparison(what: String, unit: String, _ samples: [TransportUnderTest: [Double]], bytes: Bool = false) {
        let libcurl = Sample(samples[.libcurl] ?? []), other = Sample(samples[.asyncHTTPClient] ?? [])
        let met = bytes ? libcurl.median <= other.median * 1.01 : libcurl.median >= other.min
        results.rows.append(ResultRow(id: "T1", what: "\(what), libcurl transport", unit: unit, value: libcurl,
                                      baselineName: "AsyncHTTPClient transport, same run", baseline: other,
                                      target: bytes ? "≤ 1.01×" : "≥ its slowest run", met: met))
    }

    private static func options(_ transport: TransportUnderTest, batch: Bool = true) -> SyncOptions {
        var options = SyncOptions(batch: batch)
        options.transport = transport.transport
        return options
    }

    /// `body` on the store at `path`, opened and closed as `tablesync` does.
    private static func inProcess<Result: Sendable>(_ path: String, _ body: (SyncContext) async throws -> Result) async throws -> Result {
        let context = try SyncContext(directory: path, purpose: "tablesync-bench")
        do {
            let result = try await body(context)
            await context.close()
            return result
        } catch {
            await context.close()
            throw error
        }
    }

    private static func expect(_ value: Int, _ expected: Int, _ what: String) throws {
        guard value == expected else { throw BenchError(what: "T1", detail: "\(what): \(value), expected \(expected)") }
    }
}
