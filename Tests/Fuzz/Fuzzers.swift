// libFuzzer entry points for SyncProtocol's parsers, built by scripts/fuzz.sh (`swiftc -sanitize=fuzzer`) together
// with SyncProtocol's sources; not part of the package. One binary per parser: FUZZ_FILTER or FUZZ_JSON.
// Besides crashes, each checks a property; a violation traps, so libFuzzer keeps the input.

#if FUZZ_FILTER
/// `$filter`: parsing never crashes; what parses prints as text that parses back to the same expression, and
/// evaluating it against a record never crashes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFilter(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let expression = try? FilterParser.parse(text) else { return 0 }
    let printed = FilterPrinter.print(expression)
    guard let reparsed = try? FilterParser.parse(printed) else { fatalError("printed filter does not parse: \(printed)") }
    if reparsed != expression { fatalError("round trip changed the filter: \(text) → \(printed)") }
    _ = FilterEvaluator.matches(expression, record: ["id": "a", "text": "b", "n": 1, "d": 2.5, "f": false, "z": nil])
    return 0
}
#endif

#if FUZZ_JSON
/// JSON: parsing never crashes; what parses writes canonically, and the canonical text parses to the same
/// value and writes to the same bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let value = try? JSONParser.parse(Array(UnsafeBufferPointer(start: data, count: size))) else { return 0 }
    let canonical = CanonicalJSON.encode(value)
    guard let reparsed = try? JSONParser.parse(canonical) else { fatalError("canonical JSON does not parse") }
    if CanonicalJSON.encode(reparsed) != canonical { fatalError("canonical JSON is not stable") }
    return 0
}
#endif
