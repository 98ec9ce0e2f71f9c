import Foundation
import HTTPTypes
import HummingbirdTesting
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// Conditional requests on one record as Datasync's server answers them (issue 45, item 5), over a live server on
/// each database: `If-Match`, `If-None-Match`, `If-Modified-Since`, `If-Unmodified-Since`, weak tags and
/// `Last-Modified`.
@Suite("Conditional requests")
struct ConditionalRequestTests {
    /// An HTTP date an hour before and one an hour after now, around any record written by the test.
    static let hourBefore = httpDate(Date().addingTimeInterval(-3600))
    static let hourAfter = httpDate(Date().addingTimeInterval(3600))

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// Runs `body` with a live server on `backend` serving one table that holds the record `m1`; gives the table
    /// and the record's version.
    static func withMovie(
        _ backend: Backend, _ body: @Sendable (any TestClientProtocol, String, String) async throws -> Void
    ) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            let created = try await client.send(.post, "/tables/\(table)", json: ["id": "m1", "title": "Alien"])
            try #require(created.status == .created)
            let version = try #require(try created.json["version"]?.stringValue)
            try await body(client, table, version)
        }
    }

    static func headers(_ name: String, _ value: String) -> HTTPFields {
        var fields = HTTPFields()
        fields[HTTPField.Name(name)!] = value
        return fields
    }

    /// Read_Tests.cs, Read_WithVersioning_Works, and If-None-Match: * on a record that exists.
    @Test("Read_Tests.cs Read_WithVersioning_Works: If-Match and If-None-Match on a read", arguments: Backend.available)
    func readWithVersioning(backend: Backend) async throws {
        try await Self.withMovie(backend) { client, table, version in
            let cases: [(String, String?, HTTPResponse.Status)] = [
                ("If-Match", nil, .ok), ("If-Match", "\"dGVzdA==\"", .preconditionFailed),
                ("If-None-Match", nil, .notModified), ("If-None-Match", "\"dGVzdA==\"", .ok),
                ("If-None-Match", "*", .notModified)
            ]
            for (name, value, expected) in cases {
                let reply = try await client.send(
                    .get, "/tables/\(table)/m1", headers: Self.headers(name, value ?? "\"\(version)\""))
                #expect(reply.status == expected, "\(backend): \(name): \(value ?? "the version")")
                if expected == .notModified { #expect(reply.bytes.isEmpty) }
                if expected != .ok {
                    #expect(reply["ETag"] == "\"\(version)\"")
                }
            }
        }
    }

    /// Replace_Tests.cs and Delete_Tests.cs, Replace_WithVersioning_Works / Delete_WithVersioning_Works: on a write
    /// a matching If-None-Match is a 412 with the server's copy.
    @Test(
        "Replace_Tests.cs Replace_WithVersioning_Works: If-None-Match on a write is a 412 when it matches",
        arguments: Backend.available)
    func writeWithVersioning(backend: Backend) async throws {
        try await Self.withMovie(backend) { client, table, version in
            let matching = try await client.send(
                .put, "/tables/\(table)/m1", json: ["id": "m1", "title": "Aliens"],
                headers: Self.headers("If-None-Match", "\"\(version)\""))
            #expect(matching.status == .preconditionFailed)
            #expect(try matching.json["title"] == "Alien", "the answer carries the server's copy")
            let any = try await client.send(.delete, "/tables/\(table)/m1", headers: Self.headers("If-None-Match", "*"))
            #expect(any.status == .preconditionFailed)
            let other = try await client.send(
                .put, "/tables/\(table)/m1", json: ["id": "m1", "title": "Aliens"],
                headers: Self.headers("If-None-Match", "\"dGVzdA==\""))
            #expect(other.status == .ok)
        }
    }

    /// InternalExtensions_Tests.cs, EntityTagHeaderValue_Matches_Working: a weak tag never matches.
    @Test(
        "InternalExtensions_Tests.cs EntityTagHeaderValue_Matches_Working: weak tags never match",
        arguments: Backend.available)
    func weakTagsNeverMatch(backend: Backend) async throws {
        try await Self.withMovie(backend) { client, table, version in
            let read = try await client.send(
                .get, "/tables/\(table)/m1", headers: Self.headers("If-None-Match", "W/\"\(version)\""))
            #expect(read.status == .ok)
            let write = try await client.send(
                .put, "/tables/\(table)/m1", json: ["id": "m1", "title": "Aliens"],
                headers: Self.headers("If-Match", "W/\"\(version)\""))
            #expect(write.status == .preconditionFailed)
        }
    }

    /// InternalExtensions_Tests.cs, ParseConditionalRequest_Success and ParseConditionalRequest_Failure: the dates.
    @Test(
        "InternalExtensions_Tests.cs ParseConditionalRequest_Failure: If-Modified-Since and If-Unmodified-Since",
        arguments: Backend.available)
    func modifiedSince(backend: Backend) async throws {
        try await Self.withMovie(backend) { client, table, _ in
            let cases: [(HTTPRequest.Method, String, String, HTTPResponse.Status)] = [
                (.get, "If-Modified-Since", Self.hourBefore, .ok),
                (.get, "If-Modified-Since", Self.hourAfter, .notModified),
                (.get, "If-Unmodified-Since", Self.hourAfter, .ok),
                (.get, "If-Unmodified-Since", Self.hourBefore, .preconditionFailed),
                (.put, "If-Modified-Since", Self.hourAfter, .preconditionFailed),
                (.put, "If-Unmodified-Since", Self.hourBefore, .preconditionFailed),
                (.put, "If-Unmodified-Since", Self.hourAfter, .ok), (.put, "If-Modified-Since", Self.hourBefore, .ok)
            ]
            for (method, name, value, expected) in cases {
                let reply = try await client.send(
                    method, "/tables/\(table)/m1", json: method == .put ? ["id": "m1", "title": "Aliens"] : nil,
                    headers: Self.headers(name, value))
                #expect(reply.status == expected, "\(backend): \(method) \(name): \(value)")
            }
        }
    }

    /// InternalExtensions_Tests.cs, AddHeadersFromEntity_AddLastModifiedHeader: answers with a record carry
    /// `Last-Modified`, its `updatedAt` in whole seconds.
    @Test(
        "InternalExtensions_Tests.cs AddHeadersFromEntity_AddLastModifiedHeader: Last-Modified on record answers",
        arguments: Backend.available)
    func lastModified(backend: Backend) async throws {
        try await Self.withMovie(backend) { client, table, _ in
            let read = try await client.send(.get, "/tables/\(table)/m1")
            let updated = try await client.send(.put, "/tables/\(table)/m1", json: ["id": "m1", "title": "Aliens"])
            for reply in [read, updated] {
                let updatedAt = try #require(try reply.json["updatedAt"]?.stringValue)
                let instant = try #require(ISO8601DateFormatter.withFractions.date(from: updatedAt))
                #expect(reply["Last-Modified"] == Self.httpDate(instant), "\(backend)")
            }
        }
    }

    /// RFC 9110 (where this server differs from Datasync, docs/server.md): the `Last-Modified` a client read, sent
    /// back, finds the record unchanged: 304 for `If-Modified-Since`, the write goes on for `If-Unmodified-Since`.
    @Test("Last-Modified sent back finds the record unchanged", arguments: Backend.available)
    func lastModifiedSentBack(backend: Backend) async throws {
        try await Self.withMovie(backend) { client, table, _ in
            let read = try await client.send(.get, "/tables/\(table)/m1")
            let lastModified = try #require(read["Last-Modified"])
            let revalidated = try await client.send(
                .get, "/tables/\(table)/m1", headers: Self.headers("If-Modified-Since", lastModified))
            #expect(revalidated.status == .notModified, "\(backend)")
            let written = try await client.send(
                .put, "/tables/\(table)/m1", json: ["id": "m1", "title": "Aliens"],
                headers: Self.headers("If-Unmodified-Since", lastModified))
            #expect(written.status == .ok, "\(backend)")
        }
    }
}

extension ISO8601DateFormatter {
    /// Reads `2024-01-02T03:04:05.123Z`.
    static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
