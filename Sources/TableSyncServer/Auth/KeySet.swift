import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JWTKit
import Logging
import NIOCore
import SyncProtocol

/// The RS256 and ES256 keys of a JWKS, each bound to the one algorithm it may check.
///
/// A key's algorithm is its `alg` when it names RS256 or ES256, otherwise what its type allows (RSA: RS256; EC on
/// P-256: ES256). Keys for encryption (`"use": "enc"`), without `kid`, or of other types and algorithms are left
/// out, so that a provider's key set with keys this server does not use still loads.
struct KeySet: Sendable {
    let keys: JWTKeyCollection
    /// The algorithm of each key, by `kid`.
    let algorithms: [String: TokenAlgorithm]

    /// The keys of a JWKS document's bytes; throws when it is not a JWKS.
    static func parse(_ bytes: [UInt8]) async throws -> KeySet {
        guard case .object(let document) = try JSONParser.parse(bytes), case .array(let entries)? = document["keys"]
        else {
            throw TokenRefusal("the key set is not a JWKS (an object with a \"keys\" array)")
        }
        let keys = JWTKeyCollection()
        var algorithms: [String: TokenAlgorithm] = [:]
        for entry in entries {
            guard case .object(let members) = entry, let kid = members["kid"]?.stringValue,
                members["use"]?.stringValue ?? "sig" == "sig",
                let algorithm = algorithm(of: members),
                var key = try? JWK(json: CanonicalJSON.string(entry, style: .compact))
            else { continue }
            key.algorithm = algorithm == .rs256 ? .rs256 : .es256
            guard (try? await keys.add(jwk: key)) != nil else { continue }
            algorithms[kid] = algorithm
        }
        return KeySet(keys: keys, algorithms: algorithms)
    }

    /// The algorithm a JWK's members allow, or `nil` for a key this server does not use.
    static func algorithm(of members: [String: JSONValue]) -> TokenAlgorithm? {
        let kty = members["kty"]?.stringValue
        let alg = members["alg"]?.stringValue
        switch (kty, alg) {
        case ("RSA", nil), ("RSA", "RS256"?): return .rs256
        case ("EC", nil), ("EC", "ES256"?): return members["crv"]?.stringValue == "P-256" ? .es256 : nil
        default: return nil
        }
    }

    /// The largest key set document read: far more keys than any provider publishes.
    static let maximumBytes = 1024 * 1024

    /// Reads the key set at `location`: a file, or a URL fetched with a 10-second limit. The fetch goes through
    /// Foundation's `URLSession` (the system's libcurl and certificate store on Linux): a key set is fetched rarely,
    /// so that its wait polls does not matter, and the server needs no HTTP client of its own.
    static func load(from location: JWTSettings.KeySetLocation) async throws -> KeySet {
        switch location {
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path), data.count <= maximumBytes else {
                throw TokenRefusal("cannot read the key set file \(path)")
            }
            return try await parse(Array(data))
        case .url(let url):
            guard let address = URL(string: url) else { throw TokenRefusal("the key set URL \(url) is not a URL") }
            var request = URLRequest(url: address, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 10)
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            let (body, response) = try await URLSession.shared.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 200 else { throw TokenRefusal("the key set URL \(url) answered \(status)") }
            guard body.count <= maximumBytes else { throw TokenRefusal("the key set at \(url) is larger than 1 MiB") }
            return try await parse(Array(body))
        }
    }
}

/// The key set of ``JWTSettings/keySet``, kept between requests: loaded at the first token, loaded again when a
/// token names a `kid` it does not hold (a provider's new key) but never more than once per
/// ``JWTSettings/keySetRefreshInterval``, and when it is older than ``maximumAge`` (so a key the provider removed
/// stops being accepted). A load that fails keeps the keys held; concurrent requests share one load.
actor KeySetCache {
    private let location: JWTSettings.KeySetLocation
    private let refreshInterval: Duration
    private let logger: Logger
    private var current: KeySet?
    private var loadedAt: ContinuousClock.Instant?
    private var loading: Task<KeySet?, Never>?

    /// The age after which the set is loaded again even when every `kid` is known: 1 hour.
    static let maximumAge = Duration.seconds(3600)

    init(location: JWTSettings.KeySetLocation, refreshInterval: Duration, logger: Logger) {
        self.location = location
        self.refreshInterval = refreshInterval
        self.logger = logger
    }

    /// The keys to check a token of `algorithm` whose header names `kid`; refuses a `kid` the set does not hold
    /// after a permitted reload, and a key of another algorithm than the header's.
    func keys(kid: String, algorithm: TokenAlgorithm) async throws(TokenRefusal) -> JWTKeyCollection {
        if loadedAt.map({ $0.duration(to: .now) >= Self.maximumAge }) ?? true { await load() }
        if current?.algorithms[kid] == nil, loadedAt.map({ $0.duration(to: .now) >= refreshInterval }) ?? true {
            await load()
        }
        guard let current, let known = current.algorithms[kid] else {
            throw TokenRefusal("no key of the key set has the JWT's kid")
        }
        guard known == algorithm else {
            throw TokenRefusal("the key with the JWT's kid is for \(known.rawValue), not \(algorithm.rawValue)")
        }
        return current.keys
    }

    /// Loads the set once, shared by every request that asks meanwhile.
    func load() async {
        if let loading {
            _ = await loading.value
            return
        }
        loadedAt = ContinuousClock.now
        let fallback = current == nil ? "no keys are held yet, so tokens are refused" : "keeping the keys held"
        let task = Task { [location, logger] () -> KeySet? in
            do {
                let set = try await KeySet.load(from: location)
                if set.algorithms.isEmpty {
                    logger.warning(
                        """
                        the JWT key set holds no RS256 or ES256 signing key with a kid; every token it should check \
                        is refused
                        """,
                        metadata: ["location": "\(location)"])
                }
                logger.info(
                    "loaded the JWT key set", metadata: ["location": "\(location)", "keys": "\(set.algorithms.count)"])
                return set
            } catch {
                logger.warning(
                    "cannot load the JWT key set; \(fallback)",
                    metadata: ["location": "\(location)", "error": "\(error)"])
                return nil
            }
        }
        loading = task
        if let loaded = await task.value { current = loaded }
        // The interval runs from the end of a load, however long the load took.
        loadedAt = ContinuousClock.now
        loading = nil
    }
}
