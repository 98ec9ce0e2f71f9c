import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import JWTKit
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// Credentials: JWTs as an identity provider signs them, each way a token can be wrong, access per table and
/// operation, a key set that rotates, and a client that renews its token after a 401.
@Suite("Authentication")
struct AuthenticationTests {
    /// `claims` as JSON text, for tokens the test forges by hand.
    static func json(_ claims: TestClaims) throws -> String {
        String(decoding: try JSONEncoder().encode(claims), as: UTF8.self)
    }

    /// A token of `header` and `payload` (JSON text) signed with HMAC-SHA256 and `key`.
    static func forged(header: String, payload: String, key: [UInt8]) -> String {
        let input = TestTokenIssuer.base64URL(Array(header.utf8)) + "." + TestTokenIssuer.base64URL(Array(payload.utf8))
        let signature = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(data: key))
        return input + "." + TestTokenIssuer.base64URL(Array(signature))
    }

    static func bearer(_ token: String?) -> HTTPFields {
        token.map { [.authorization: "Bearer \($0)"] } ?? [:]
    }

    @Test(
        """
        a token expired, not yet valid, of another issuer or audience, signed with another key, alg none, HS256 keyed \
        with the RSA public key, or tampered: each the same 401
        """
    )
    func refusedTokens() async throws {
        let issuer = try TestTokenIssuer(rsaKeyIDs: ["rsa-1"], ecKeyIDs: ["ec-1"])
        let impostor = try TestTokenIssuer(rsaKeyIDs: ["rsa-1"])
        let directory = TemporaryDirectory()
        try directory.write("jwks.json", try issuer.jwks(["rsa-1", "ec-1"]))
        let table = uniqueTableName()
        try await withServer(
            .sqlite, tables: [TableOptions(name: table)],
            configure: { $0.jwt = issuer.settings(keySet: .file(directory.file("jwks.json"))) }
        ) { client in
            let valid = TestClaims(sub: "ann")
            for token in [
                try await issuer.hs256(valid), try await issuer.signed(valid, kid: "rsa-1"),
                try await issuer.signed(valid, kid: "ec-1")
            ] {
                #expect(try await client.send(.get, "/tables/\(table)", headers: Self.bearer(token)).status == .ok)
            }
            var expired = valid
            expired.exp = ExpirationClaim(value: Date().addingTimeInterval(-5))
            var early = valid
            early.nbf = NotBeforeClaim(value: Date().addingTimeInterval(60))
            var otherIssuer = valid
            otherIssuer.iss = "https://elsewhere.test/"
            var otherAudience = valid
            otherAudience.aud = AudienceClaim(value: ["another-api"])
            var noExpiry = valid
            noExpiry.exp = nil
            let rsaToken = try await issuer.signed(valid, kid: "rsa-1").split(separator: ".").map(String.init)
            var mallory = valid
            mallory.sub = "mallory"
            let refused: [(String, String)] = [
                ("expired", try await issuer.hs256(expired)),
                ("not yet valid", try await issuer.signed(early, kid: "ec-1")),
                ("another issuer", try await issuer.signed(otherIssuer, kid: "rsa-1")),
                ("another audience", try await issuer.hs256(otherAudience)),
                ("no exp", try await issuer.hs256(noExpiry)),
                ("another HS256 key", try await impostor.hs256(valid)),
                ("another RSA key under a published kid", try await impostor.signed(valid, kid: "rsa-1")),
                (
                    "alg none, unsigned",
                    TestTokenIssuer.base64URL(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + rsaToken[1] + "."
                ),
                (
                    "alg none with a signature",
                    TestTokenIssuer.base64URL(Array(#"{"alg":"none"}"#.utf8)) + "." + rsaToken[1] + "." + rsaToken[2]
                ),
                (
                    "HS256 keyed with the RSA public key",
                    Self.forged(
                        header: #"{"alg":"HS256","kid":"rsa-1"}"#, payload: try Self.json(valid),
                        key: Array(try issuer.publicPEM("rsa-1").utf8))
                ),
                (
                    "RS256 header on the HS256 key's signature",
                    Self.forged(
                        header: #"{"alg":"RS256","kid":"rsa-1"}"#, payload: try Self.json(valid),
                        key: issuer.sharedKey)
                ),
                (
                    "ES256 header with the RSA key's kid",
                    TestTokenIssuer.base64URL(Array(#"{"alg":"ES256","kid":"rsa-1"}"#.utf8)) + "." + rsaToken[1] + "."
                        + rsaToken[2]
                ),
                (
                    "tampered payload",
                    rsaToken[0] + "." + TestTokenIssuer.base64URL(Array(try Self.json(mallory).utf8)) + "."
                        + rsaToken[2]
                ),
                ("not a JWT", "eyJhbGciOiJIUzI1NiJ9.e30")
            ]
            let baseline = try await client.send(.get, "/tables/\(table)")
            #expect(baseline.status == .unauthorized)
            for (what, token) in refused {
                for headers in [Self.bearer(token), [HTTPField.Name(ProtocolHeader.zumoAuth)!: token]] {
                    let reply = try await client.send(.get, "/tables/\(table)", headers: headers)
                    #expect(reply.status == .unauthorized, "\(what)")
                    #expect(
                        reply.bytes == baseline.bytes && reply[HTTPField.Name.wwwAuthenticate.rawName] == "Bearer",
                        "\(what): the answer says nothing of why")
                }
            }
        }
    }

    @Test(
        """
        a request with both Bearer and X-ZUMO-AUTH is checked on both: garbage in either, or two identities, is a 401
        """
    )
    func bothHeadersAreChecked() async throws {
        let table = uniqueTableName()
        let tokens = [
            StaticToken(secret: "ann-secret-0123456789", name: "ann"),
            StaticToken(secret: "bob-secret-0123456789", name: "bob")
        ]
        try await withServer(.sqlite, tables: [TableOptions(name: table)], tokens: tokens) { client in
            let (ann, bob) = ("ann-secret-0123456789", "bob-secret-0123456789")
            let cases: [(bearer: String, zumo: String, status: HTTPResponse.Status)] = [
                (ann, ann, .ok), (ann, "garbage", .unauthorized), ("garbage", ann, .unauthorized),
                (ann, bob, .unauthorized)
            ]
            for (bearer, zumo, status) in cases {
                var headers = Self.bearer(bearer)
                headers[HTTPField.Name(ProtocolHeader.zumoAuth)!] = zumo
                let reply = try await client.send(.get, "/tables/\(table)", headers: headers)
                #expect(reply.status == status, "Bearer \(bearer), X-ZUMO-AUTH \(zumo)")
            }
        }
    }

    @Test("access per table and operation: anonymous, authenticated, a role, disabled; in single requests and batches")
    func accessRules() async throws {
        let issuer = try TestTokenIssuer()
        let open = TableOptions(name: uniqueTableName("open"), read: .anonymous, write: .authenticated)
        let edited = TableOptions(name: uniqueTableName("edited"), read: .authenticated, write: .role("editor"))
        let archive = TableOptions(name: uniqueTableName("archive"), write: .disabled)
        try await withServer(
            .sqlite, tables: [open, edited, archive],
            tokens: [StaticToken(secret: "device-token-7c1", name: "device-7")],
            configure: { $0.jwt = issuer.settings() }
        ) { client in
            let reader = try await issuer.hs256(TestClaims(sub: "ann"))
            let editor = try await issuer.hs256(TestClaims(sub: "eve", roles: ["editor", "staff"]))
            func send(
                _ method: HTTPRequest.Method, _ path: String, _ token: String?, json: JSONValue? = nil
            ) async throws -> Reply {
                try await client.send(method, path, json: json, headers: Self.bearer(token))
            }
            #expect(try await send(.get, "/tables/\(open.name)", nil).status == .ok)
            #expect(
                try await send(.get, "/tables/\(open.name)", "wrong-token").status == .unauthorized,
                "credentials sent must be valid")
            #expect(try await send(.post, "/tables/\(open.name)", nil, json: ["id": "a"]).status == .unauthorized)
            #expect(
                try await send(.post, "/tables/\(open.name)", "device-token-7c1", json: ["id": "a"]).status == .created)
            #expect(try await send(.get, "/tables/\(edited.name)", nil).status == .unauthorized)
            #expect(try await send(.get, "/tables/\(edited.name)", reader).status == .ok)
            #expect(try await send(.post, "/tables/\(edited.name)", reader, json: ["id": "b"]).status == .forbidden)
            #expect(try await send(.post, "/tables/\(edited.name)", editor, json: ["id": "b"]).status == .created)
            let disabled = try await send(.post, "/tables/\(archive.name)", editor, json: ["id": "c"])
            #expect(disabled.status == .methodNotAllowed && disabled[HTTPField.Name.allow.rawName] == "GET")
            #expect(try await send(.delete, "/tables/\(archive.name)/c", editor)[HTTPField.Name.allow.rawName] == "GET")
            #expect(
                try await send(.get, "/tables/nothing", nil).status == .unauthorized,
                "table names are not told without credentials")
            #expect(try await send(.get, "/tables/nothing", reader).status == .notFound)

            let batch = BatchRequest(operations: [
                BatchOperation(kind: .insert, table: open.name, item: ["id": "d"]),
                BatchOperation(kind: .insert, table: edited.name, item: ["id": "e"]),
                BatchOperation(kind: .insert, table: archive.name, item: ["id": "f"])
            ]).json
            #expect(
                try await send(.post, "/batch", nil, json: batch).status == .unauthorized,
                "a batch without credentials is refused whole")
            let answered = try await send(.post, "/batch", reader, json: batch)
            #expect(
                try BatchResponse.parse(try answered.json, expectedCount: 3).results.map(\.status) == [201, 403, 405])
        }
    }

    @Test("a new kid is fetched from the provider's JWKS at once, an unknown one at most once per interval")
    func keySetRotation() async throws {
        let issuer = try TestTokenIssuer(rsaKeyIDs: ["2024-key", "2025-key", "never-published"])
        let provider = try await KeySetServer.start(serving: try issuer.jwks(["2024-key"]))
        let table = uniqueTableName()
        try await withServer(
            .sqlite, tables: [TableOptions(name: table)], setup: .live,
            configure: { configuration in
                configuration.jwt = issuer.settings(keySet: .url(provider.url))
                configuration.jwt?.keySetRefreshInterval = .seconds(1)
            }
        ) { client in
            let claims = TestClaims(sub: "ann")
            #expect(
                try await client.send(
                    .get, "/tables/\(table)", headers: Self.bearer(try await issuer.signed(claims, kid: "2024-key"))
                ).status == .ok)
            let loaded = provider.fetches
            #expect(loaded == 1, "loaded once at the start, then kept")

            provider.publish(try issuer.jwks(["2024-key", "2025-key"]))
            // Time is the behaviour: the key set may be fetched again once its 1 s refresh interval has passed;
            // 100 ms beyond it, and any lateness of the wake only lengthens the wait.
            try await Task.sleep(for: .milliseconds(1100))
            #expect(
                try await client.send(
                    .get, "/tables/\(table)", headers: Self.bearer(try await issuer.signed(claims, kid: "2025-key"))
                ).status == .ok)
            #expect(provider.fetches == loaded + 1, "the rotated key was fetched")

            let unknown = try await issuer.signed(claims, kid: "never-published")
            // One refresh interval past the fetch above, as before: the first unknown kid may fetch at once.
            try await Task.sleep(for: .milliseconds(1100))
            let start = ContinuousClock.now
            for _ in 0..<20 {
                #expect(
                    try await client.send(.get, "/tables/\(table)", headers: Self.bearer(unknown)).status
                        == .unauthorized)
            }
            let intervals = Int((ContinuousClock.now - start) / .seconds(1))
            #expect(
                provider.fetches - loaded - 1 <= 1 + intervals,
                "twenty tokens with an unknown kid cost one fetch per interval at most")
            #expect(provider.fetches > loaded + 1, "the first unknown kid was looked for")
        }
        await provider.stop()
    }

    /// Stands for the Azure Mobile Apps JavaScript client (azure-mobile-apps-js-client 2.x) with a login: it sends
    /// the token in `X-ZUMO-AUTH` on every request, and its `MobileServiceClient` filter answers a 401 by calling
    /// the app's login again and sending the same request once more with the new token. The real client cannot run
    /// here (it needs a browser or Cordova), so this test makes its requests in process, as it makes them.
    @Test("the Azure JS client's way: X-ZUMO-AUTH, and on a 401 a new token and the same request once more")
    func azureJSClientRenewsAfter401() async throws {
        let issuer = try TestTokenIssuer()
        let table = TableOptions(name: uniqueTableName(), perUser: true)
        try await withServer(.sqlite, tables: [table], setup: .live, configure: { $0.jwt = issuer.settings() }) {
            client in
            let logins = Counter()
            var token = try await issuer.hs256(TestClaims(sub: "ann", lifetime: 1))
            func request(_ method: HTTPRequest.Method, _ path: String, json: JSONValue? = nil) async throws -> Reply {
                let first = try await client.send(
                    method, path, version: .v2, json: json, headers: [HTTPField.Name(ProtocolHeader.zumoAuth)!: token])
                guard first.status == .unauthorized else { return first }
                await logins.increment()
                token = try await issuer.hs256(TestClaims(sub: "ann"))
                return try await client.send(
                    method, path, version: .v2, json: json, headers: [HTTPField.Name(ProtocolHeader.zumoAuth)!: token])
            }
            #expect(
                try await request(.post, "/tables/\(table.name)", json: ["id": "first", "text": "before expiry"]).status
                    == .created)
            // Time is the behaviour: past the token's 1 s lifetime (whole seconds in `exp`) by 200 ms or more.
            try await Task.sleep(for: .milliseconds(1200))
            #expect(
                try await request(.post, "/tables/\(table.name)", json: ["id": "second", "text": "after expiry"]).status
                    == .created)
            #expect(await logins.value == 1, "one login after the 401")
            let items = try await request(.get, "/tables/\(table.name)").json.arrayValue ?? []
            #expect(
                items.compactMap { $0["id"]?.stringValue }.sorted() == ["first", "second"],
                "each insert stored once, under the same user")
            #expect(items.allSatisfy { $0["owner"] == nil }, "the owner is not sent")
        }
    }
}

/// A count shared by concurrent code.
actor Counter {
    private(set) var value = 0
    func increment() { value += 1 }
}
