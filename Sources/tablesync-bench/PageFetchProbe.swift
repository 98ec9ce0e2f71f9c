import ArgumentParser
import Foundation
import TableSync

/// The transports alone, without the store: `count` fetches of one gzip-compressed page of a table through each
/// transport, on kept-alive connections. Each fetch is the request a pull makes for its first keyset page; the answer is taken as it came off
/// the wire (not inflated), so only the transports differ.
struct PageFetchProbe {
    let baseURL: String
    let table: String
    let pageSize: Int
    let count: Int
    /// When set, each exchange instead POSTs this many bytes that are not JSON to the table (the server reads them
    /// and answers 400): the cost of sending a batch-sized body, without the batch.
    var uploadBytes: Int? = nil

    /// Fetches per second through each transport, one figure per round. Within a round the transports take turns
    /// fetch by fetch (the one going first changing each time), so that the server's drift hits both alike.
    func run(rounds: Int) async throws -> [TransportUnderTest: [Double]] {
        var rates: [TransportUnderTest: [Double]] = [:]
        // One fetch each first, so that both measure kept-alive connections, not the connect.
        for transport in TransportUnderTest.allCases { _ = try await fetch(through: transport.transport) }
        for _ in 1...rounds {
            var seconds: [TransportUnderTest: Double] = [:]
            for index in 0..<count {
                for transport in TransportUnderTest.order(run: index) {
                    let started = Clock.now()
                    _ = try await fetch(through: transport.transport)
                    seconds[transport, default: 0] += Clock.now() - started
                }
            }
            for (transport, total) in seconds { rates[transport, default: []].append(Double(count) / total) }
        }
        return rates
    }

    private func fetch(through transport: any HTTPTransport) async throws -> Int {
        if let uploadBytes {
            let answer = try await transport.exchange(TransportRequest(
                method: "POST", url: "\(baseURL)/tables/\(table)",
                headers: [("Accept", "application/json"), ("Content-Type", "application/json"), ("ZUMO-API-VERSION", "3.0.0")],
                body: [UInt8](repeating: UInt8(ascii: "x"), count: uploadBytes), timeout: 30, maxBodyBytes: 1 << 20))
            guard answer.status == 400 else { throw BenchError(what: "upload", detail: "HTTP \(answer.status)") }
            return answer.body.count
        }
        let url = "\(baseURL)/tables/\(table)?$orderby=updatedAt,id&$top=\(pageSize)"
        let answer = try await transport.exchange(TransportRequest(
            method: "GET", url: url,
            headers: [("Accept", "application/json"), ("Accept-Encoding", "gzip"), ("ZUMO-API-VERSION", "3.0.0")],
            body: nil, timeout: 30, maxBodyBytes: 256 << 20))
        guard answer.status == 200, answer.headers["content-encoding"] == "gzip", !answer.body.isEmpty else {
            throw BenchError(what: "page fetch", detail: "HTTP \(answer.status), \(answer.body.count) bytes, encoding \(answer.headers["content-encoding"] ?? "none")")
        }
        return answer.body.count
    }
}

/// `tablesync-bench page-fetch`: ``PageFetchProbe`` against a running server, printed.
struct PageFetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "page-fetch",
        abstract: "Fetch one page of TABLE COUNT times through each transport and print the rates.",
        shouldDisplay: false
    )

    @Option(help: "The server's base URL.") var url: String
    @Option(help: "The table.") var table: String
    @Option(help: "Records in the page.") var pageSize = 1000
    @Option(help: "Fetches per round and transport.") var count = 200
    @Option(help: "Rounds.") var rounds = 3
    @Option(help: "POST this many bytes instead of fetching a page.") var uploadBytes: Int?

    func run() async throws {
        let probe = PageFetchProbe(baseURL: url, table: table, pageSize: pageSize, count: count, uploadBytes: uploadBytes)
        let rates = try await probe.run(rounds: rounds)
        for transport in TransportUnderTest.allCases {
            print("\(transport): " + (rates[transport] ?? []).map { String(format: "%.1f", $0) }.joined(separator: " ") + " fetches/s")
        }
    }
}
