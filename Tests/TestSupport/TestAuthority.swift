import Foundation
import HummingbirdTLS

/// A certificate authority made for one test with `openssl` (installed by `make deps`), and a server
/// certificate it signed for `localhost` and `127.0.0.1`: what a company's own authority and an internal
/// server's certificate look like to a client that was not told to trust them.
public struct TestAuthority: Sendable {
    /// The authority's certificate (PEM): what `SSL_CERT_FILE` or `CURL_CA_BUNDLE` names.
    public let authorityFile: String
    public let certificateFile: String
    public let keyFile: String

    /// Makes the authority and the server certificate in `directory`.
    public static func make(in directory: String) async throws -> TestAuthority {
        let authority = TestAuthority(
            authorityFile: directory + "/ca.pem", certificateFile: directory + "/server.pem",
            keyFile: directory + "/server.key")
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(
            toFile: directory + "/server.ext", atomically: true, encoding: .utf8)
        for arguments in [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", "/CN=TableSync test authority",
                "-keyout", directory + "/ca.key", "-out", authority.authorityFile
            ],
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", authority.keyFile, "-out",
                directory + "/server.csr"
            ],
            [
                "x509", "-req", "-in", directory + "/server.csr", "-CA", authority.authorityFile, "-CAkey",
                directory + "/ca.key",
                "-CAcreateserial", "-days", "30", "-extfile", directory + "/server.ext", "-out",
                authority.certificateFile
            ]
        ] {
            let run = try await runProgram("/usr/bin/openssl", arguments)
            guard run.status == 0 else { throw ProxyError("openssl \(arguments[0]) failed: \(run.stderr)") }
        }
        return authority
    }

    /// The server side of TLS with the signed certificate.
    public func serverConfiguration() throws -> TLSConfiguration {
        TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem)))
    }
}
