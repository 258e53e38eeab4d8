import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    WebConfigFuzz.run(&input)
    return 0
}

runFuzzer(testOneInput)
