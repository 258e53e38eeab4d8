import CProbeLibraries
import Glibc
import Testing

@testable import Probes

/// mimalloc, which curl and c-ares allocate from, gives an empty page back at once: with its
/// default delay the pages of a round of 1,000 transfers stayed resident between rounds (14 MB).
struct MimallocOptionsTests {
    @Test func emptyPagesAreGivenBackAtOnceUnlessTheOperatorSetADelay() throws {
        try #require(ProbeLibraries.failure == nil)
        let names = ["MIMALLOC_DECOMMIT_DELAY", "MIMALLOC_PURGE_DELAY", "MIMALLOC_RESET_DELAY"]
        let set = names.compactMap { name in getenv(name) }
        if let value = set.first {
            // The operator's setting is left to mimalloc.
            #expect(reachd_mimalloc_decommit_delay() == atol(value))
        } else {
            #expect(reachd_mimalloc_decommit_delay() == 0)
        }
    }
}
