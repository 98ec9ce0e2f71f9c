import CryptoExtras
import Foundation
import JWTKit
import SyncProtocol
import TestSupport

/// A1: what checking a JWT adds to a request, beside a static token in the same run: a page of 1,000 records and a
/// batch of 500 inserts, each sent with a static token, an HS256 JWT and an RS256 JWT (a key from a JWKS file) in
/// turn over kept-alive loopback connections, so drift hits all three alike. The server checks the token on every
/// request; nothing is cached between requests.
struct AuthCostBenchmark {
    var binaries: String
    var work: String
    /// Requests timed per kind of credential and per measurement.
    var samples: Int

    static let pageRecords = 1_000
    static let batchOperations = 500
    static let issuer = "https://issuer.bench.test/"
    static let audience = "tablesync-bench"

    /// The claims of the benchmark's JWTs.
    struct Claims: JWTPayload {
        var exp: ExpirationClaim
        var iss: IssuerClaim
        var aud: AudienceClaim
        var sub: SubjectClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    func run() async throws -> [ResultRow] {
        let directory = work + "/auth-cost"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let credentials = try await Self.writeCredentials(in: directory)
        let server = try ServerProcess(
            executable: binaries + "/tablesync-server", database: "sqlite:" + directory + "/auth.sqlite",
            tables: ["pages", "batches"],
            logFile: directory + "/server.log",
            options: [
                "--tokens-file", directory + "/tokens", "--jwt-hs256-key-file", directory + "/jwt-key", "--jwt-jwks",
                directory + "/jwks.json",
                "--jwt-issuer", Self.issuer, "--jwt-audience", Self.audience
            ])
        defer { server.stopWaiting() }
        let connections = try credentials.map { _ in try PageConnection(port: server.port) }
        let seed = try PageConnection(port: server.port)
        for part in 0..<2 {
            _ = try seed.request(
                "POST", "/batch", headers: ["Authorization: Bearer \(credentials[0].token)"],
                body: Self.batch(table: "pages", ids: (part * 500..<(part + 1) * 500).map { "p\($0)" }))
        }
        let pages = try measurePages(credentials, on: connections)
        let batches = try measureBatches(credentials, on: connections)
        /// A1's row for `what`, measured as `times`, against the same with the static token.
        func row(_ what: String, _ times: [Double], against baseline: [Double], baselineName: String) -> ResultRow {
            ResultRow(
                id: "A1", what: what, unit: "ms", value: Sample(times), baselineName: baselineName,
                baseline: Sample(baseline), target: "≤ 1.1×", met: Sample(times).median / Sample(baseline).median <= 1.1
            )
        }
        return credentials.enumerated().dropFirst().flatMap { index, credential in
            [
                row(
                    "page of \(Self.pageRecords) records, \(credential.name)", pages[index], against: pages[0],
                    baselineName: "the same page, static token"),
                row(
                    "batch of \(Self.batchOperations) inserts, \(credential.name)", batches[index],
                    against: batches[0], baselineName: "the same batch, static token")
            ]
        }
    }

    /// Writes the server's tokens file, HS256 key and JWKS into `directory`, and returns a credential of each kind
    /// it accepts, the static token first (the baseline).
    private static func writeCredentials(in directory: String) async throws -> [(name: String, token: String)] {
        let staticToken = "bench-static-" + UUID().uuidString
        try Data("\(staticToken) bench\n".utf8).write(to: URL(fileURLWithPath: directory + "/tokens"))
        let sharedKey = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        try Data(sharedKey.utf8).write(to: URL(fileURLWithPath: directory + "/jwt-key"))
        let rsa = try JWTKit.Insecure.RSA.PrivateKey(
            pem: try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation)
        let (modulus, exponent) = try rsa.publicKey.getKeyPrimitives()
        let jwks =
            #"{"keys":[{"kty":"RSA","kid":"bench","alg":"RS256","n":"\#(base64URL(modulus))","#
            + #""e":"\#(base64URL(exponent))"}]}"#
        try Data(jwks.utf8).write(to: URL(fileURLWithPath: directory + "/jwks.json"))
        let claims = Claims(
            exp: ExpirationClaim(value: Date().addingTimeInterval(3600)), iss: IssuerClaim(value: issuer),
            aud: AudienceClaim(value: [audience]), sub: SubjectClaim(value: "bench"))
        let hs256 = try await JWTKeyCollection().add(
            hmac: HMACKey(from: Array(sharedKey.utf8)), digestAlgorithm: .sha256
        ).sign(claims)
        let rs256 = try await JWTKeyCollection().add(rsa: rsa, digestAlgorithm: .sha256, kid: "bench").sign(
            claims, kid: "bench")
        return [("static token", staticToken), ("HS256 JWT", hs256), ("RS256 JWT", rs256)]
    }

    /// Milliseconds per page of ``pageRecords`` records, `samples` of them per credential after two warm-ups, each
    /// credential on its own connection.
    private func measurePages(
        _ credentials: [(name: String, token: String)], on connections: [PageConnection]
    ) throws -> [[Double]] {
        var pages = [[Double]](repeating: [], count: credentials.count)
        for sample in -2..<samples {
            for (index, credential) in credentials.enumerated() {
                let (seconds, body) = try connections[index].request(
                    "GET", "/tables/pages?$top=\(Self.pageRecords)",
                    headers: [
                        "Authorization: Bearer \(credential.token)",
                        // The whole page at once, as TableSync's own client asks for it.
                        "\(ProtocolHeader.extensions): \(ProtocolExtension.wholePages.rawValue)"
                    ])
                guard try JSONParser.parse(body)["items"]?.arrayValue?.count == Self.pageRecords else {
                    throw BenchError(
                        what: "A1",
                        detail: "a page with the \(credential.name) did not hold \(Self.pageRecords) records")
                }
                if sample >= 0 { pages[index].append(seconds * 1_000) }
            }
        }
        return pages
    }

    /// Milliseconds per batch of ``batchOperations`` inserts, `samples` of them per credential after a warm-up.
    private func measureBatches(
        _ credentials: [(name: String, token: String)], on connections: [PageConnection]
    ) throws -> [[Double]] {
        var batches = [[Double]](repeating: [], count: credentials.count)
        for sample in -1..<samples {
            for (index, credential) in credentials.enumerated() {
                let ids = (0..<Self.batchOperations).map { "b\(sample + 1)-\(index)-\($0)" }
                let (seconds, body) = try connections[index].request(
                    "POST", "/batch", headers: ["Authorization: Bearer \(credential.token)"],
                    body: Self.batch(table: "batches", ids: ids))
                guard let results = try JSONParser.parse(body)["results"]?.arrayValue,
                    results.count == Self.batchOperations,
                    results.allSatisfy({ $0["status"] == 201 })
                else {
                    throw BenchError(what: "A1", detail: "a batch with the \(credential.name) was not stored whole")
                }
                if sample >= 0 { batches[index].append(seconds * 1_000) }
            }
        }
        return batches
    }

    /// A batch inserting a record of about 500 bytes under each of `ids` into `table`.
    static func batch(table: String, ids: [String]) -> [UInt8] {
        let operations = ids.map { id in
            JSONValue.object([
                "op": "insert", "table": .string(table),
                "item": ["id": .string(id), "text": .string(ServerPagesBenchmark.filler)]
            ])
        }
        return CanonicalJSON.encode(.object(["operations": .array(operations)]), style: .compact)
    }

    static func base64URL(_ bytes: Data) -> String {
        bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
