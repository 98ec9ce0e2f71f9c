import SyncProtocol
import Testing

/// The batch envelope: what client and server exchange on `POST /batch`.
struct BatchEnvelopeTests {
    @Test("requests and responses read back what was written")
    func roundTrip() throws {
        let request = BatchRequest(operations: [
            BatchOperation(kind: .insert, table: "todo", item: ["id": "a", "text": "milk"]),
            BatchOperation(kind: .replace, table: "todo", id: "b", version: "AAAAAAAAB9E=", item: ["id": "b"]),
            BatchOperation(kind: .merge, table: "notes", id: "c", item: ["n": 1]),
            BatchOperation(kind: .delete, table: "todo", id: "d", version: "AAAAAAAAB9I=")
        ])
        let encoded = CanonicalJSON.encode(request.json, style: .compact)
        #expect(try BatchRequest.parse(try JSONParser.parse(encoded)) == request)
        let response = BatchResponse(results: [
            BatchResult(status: 201, body: ["id": "a"]), BatchResult(status: 412, body: ["id": "b"]),
            BatchResult(status: 404, body: ["error": "there is no record 'c'"]), BatchResult(status: 204, body: nil)
        ])
        #expect(try BatchResponse.parse(response.json, expectedCount: 4) == response)
        let minimal = BatchRequest(operations: request.operations, minimalAnswers: true)
        #expect(try BatchRequest.parse(try JSONParser.parse(CanonicalJSON.encode(minimal.json))) == minimal)
        #expect(try BatchRequest.parse(["operations": [], "return": "representation"]).minimalAnswers == false)
    }

    @Test("a body built from operations encoded one by one is the request's canonical encoding")
    func bodyFromEncodedOperations() throws {
        let operations = [
            BatchOperation(kind: .insert, table: "todo", item: ["id": "a", "text": "milk \u{e9} \"quoted\""]),
            BatchOperation(
                kind: .replace, table: "todo", id: "b", version: "AAAAAAAAB9E=", item: ["id": "b", "n": 1.5]),
            BatchOperation(kind: .delete, table: "todo", id: "d", version: "AAAAAAAAB9I=")
        ]
        for count in [0, 1, 3] {
            for minimal in [false, true] {
                let request = BatchRequest(operations: Array(operations.prefix(count)), minimalAnswers: minimal)
                let encoded = request.operations.map { CanonicalJSON.encode($0.json, style: .compact) }
                #expect(
                    BatchRequest.encodeBody(encodedOperations: encoded, minimalAnswers: minimal)
                        == CanonicalJSON.encode(request.json, style: .compact),
                    "\(count) operations, minimal \(minimal)")
            }
        }
    }

    @Test("a minimal result is the item sent with the system properties; a full one is its body")
    func minimalResults() throws {
        let system: [String: JSONValue] = [
            "id": "a", "version": "AAAAAAAAB9E=", "updatedAt": "2024-01-01T00:00:00.000Z",
            "createdAt": "2024-01-01T00:00:00.000Z", "deleted": false
        ]
        let result = BatchResult(status: 201, body: nil, systemProperties: system)
        let parsed = try BatchResponse.parse(BatchResponse(results: [result]).json, expectedCount: 1).results[0]
        #expect(parsed == result)
        #expect(
            parsed.body(sent: ["id": "a", "text": "milk"])
                == .object(system.merging(["text": "milk"]) { old, _ in old }))
        let full = BatchResult(status: 412, body: ["id": "a", "text": "bread"])
        #expect(full.body(sent: ["id": "a", "text": "milk"]) == ["id": "a", "text": "bread"])
        #expect(throws: BatchEnvelopeError.self) {
            try BatchResult.parse(["status": 201, "system": ["text": "not a system property"]], index: 0)
        }
        #expect(throws: BatchEnvelopeError.self) { try BatchResult.parse(["status": 201, "system": "a"], index: 0) }
    }

    @Test(
        "a malformed request is refused with the member at fault",
        arguments: [
            (#"[]"#, "an object with one member \"operations\""),
            (#"{"operations": {}}"#, "an object with one member \"operations\""),
            (#"{"operations": [], "extra": 1}"#, "unknown member \"extra\""),
            (#"{"operations": [], "return": "everything"}"#, "return must be \"minimal\" or \"representation\""),
            (#"{"operations": [5]}"#, "operations[0] must be an object"),
            (
                #"{"operations": [{"op": "upsert", "table": "t"}]}"#,
                "operations[0].op must be one of insert, replace, merge, delete"
            ),
            (#"{"operations": [{"op": "delete", "id": "a"}]}"#, "operations[0].table must be a string"),
            (
                #"{"operations": [{"op": "insert", "table": "t", "item": {}}, {"op": "delete", "table": "t"}]}"#,
                "operations[1].id is required for delete"
            ),
            (
                #"{"operations": [{"op": "replace", "table": "t", "id": "a"}]}"#,
                "operations[0].item is required for replace"
            ),
            (
                #"{"operations": [{"op": "insert", "table": "t", "item": {}, "version": "v"}]}"#,
                "operations[0].version has no meaning for insert"
            ),
            (#"{"operations": [{"op": "delete", "table": "t", "id": 5}]}"#, "operations[0].id must be a string"),
            (
                #"{"operations": [{"op": "delete", "table": "t", "id": "a", "If-Match": "v"}]}"#,
                "operations[0] has an unknown member \"If-Match\""
            )
        ])
    func malformedRequest(text: String, message: String) throws {
        let error = #expect(throws: BatchEnvelopeError.self) { try BatchRequest.parse(try JSONParser.parse(text)) }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
    }

    @Test("a response must hold one result per operation, each with a status")
    func malformedResponse() throws {
        let two: JSONValue = ["results": [["status": 200], ["status": 204]]]
        #expect(throws: BatchEnvelopeError("the batch answer holds 2 results for 3 operations")) {
            try BatchResponse.parse(two, expectedCount: 3)
        }
        #expect(throws: BatchEnvelopeError.self) {
            try BatchResponse.parse(["results": [["status": "ok"]]], expectedCount: 1)
        }
        #expect(throws: BatchEnvelopeError.self) { try BatchResponse.parse(["items": []], expectedCount: 0) }
    }

    @Test("limits are read from the health document when it has them")
    func limits() {
        let limits = BatchLimits(maxOperations: 1000, maxBytes: 4096)
        #expect(BatchLimits.parse(healthDocument: ["status": "ok", "batch": limits.json]) == limits)
        #expect(BatchLimits.parse(healthDocument: ["status": "ok"]) == nil)
        #expect(BatchLimits.parse(healthDocument: ["batch": ["maxOperations": 0, "maxBytes": 10]]) == nil)
    }
}
