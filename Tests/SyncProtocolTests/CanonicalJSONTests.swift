import Testing
@testable import SyncProtocol

@Suite struct CanonicalJSONTests {
    @Test func prettyLayout() throws {
        let value = try JSONParser.parse(#"{"b":[1,2,{}],"a":"x","c":{"z":null,"y":[]}}"#)
        let expected = """
            {
              "a": "x",
              "b": [
                1,
                2,
                {}
              ],
              "c": {
                "y": [],
                "z": null
              }
            }

            """
        #expect(CanonicalJSON.string(value) == expected)
        #expect(CanonicalJSON.string(value, style: .compact) == #"{"a":"x","b":[1,2,{}],"c":{"y":[],"z":null}}"#)
    }
}
