import ReachdClient
import Testing

/// What `reachd check` prints for a failing health answer: each failing check, with what it saw.
struct HealthTextTests {
    static let failing = Array(
        """
        {"status":"fail","description":"ready when reachable,always,target:db","checks":{\
        "network:reachability":[{"status":"fail","componentType":"system","observedValue":"unreachable",\
        "time":"2026-11-23T14:14:18.574Z","output":"the network is unreachable"}],\
        "reachd:serving":[{"status":"pass","componentType":"component"}],\
        "target:db":[{"status":"fail","componentType":"component","observedValue":"unreachable",\
        "output":"target db is unreachable (no-route)"}]}}
        """.utf8)

    @Test func eachFailingCheckIsOneLineWithItsObservedValueAndWhy() {
        #expect(
            HealthText.failingChecks(Self.failing) == [
                "  network:reachability unreachable: the network is unreachable",
                "  target:db unreachable: target db is unreachable (no-route)",
            ])
        #expect(HealthText.status(Self.failing) == "fail")
    }

    @Test func aCheckWithoutObservedValueOrOutputShowsItsStatus() {
        let body = Array(#"{"status":"fail","checks":{"reachd:serving":[{"status":"fail"}]}}"#.utf8)
        #expect(HealthText.failingChecks(body) == ["  reachd:serving fail"])
    }

    @Test func aPassingDocumentHasNoFailingLines() {
        let body = Array(#"{"status":"pass","checks":{"reachd:serving":[{"status":"pass"}]}}"#.utf8)
        #expect(HealthText.failingChecks(body).isEmpty)
    }

    /// Something else on the port (an HTML 503, nothing): no lines, no crash.
    @Test(arguments: ["", "<html>503</html>", "{}", #"{"status":1}"#, "[]"])
    func aBodyThatIsNoHealthDocumentGivesNoLines(body: String) {
        #expect(HealthText.failingChecks(Array(body.utf8)).isEmpty)
    }

    /// A control character in a name or output (a target name, a reason) is shown escaped.
    @Test func controlCharactersAreEscaped() {
        let body = Array(#"{"status":"fail","checks":{"x":[{"status":"fail","output":"a\u001b[2Jb"}]}}"#.utf8)
        #expect(HealthText.failingChecks(body) == ["  x fail: a\\x1b[2Jb"])
    }
}
