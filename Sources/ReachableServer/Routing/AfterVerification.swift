/// A request waiting for its password to be verified (`PasswordVerifier`): answered as the
/// outcome says once it is known — the route's answer, `401`, or `429` when it was shed.
final class AfterVerification: DeferredAnswer {
    private let ticket: VerificationTicket
    private let request: HTTPRequest
    private let connection: any StreamConnection
    private let router: RequestRouter

    init(ticket: VerificationTicket, request: HTTPRequest, connection: any StreamConnection, router: RequestRouter) {
        self.ticket = ticket
        self.request = request
        self.connection = connection
        self.router = router
    }

    func whenReady(_ wake: @escaping @Sendable () -> Void) {
        ticket.whenSettled(wake)
    }

    func answer() -> HTTPResponse {
        switch ticket.outcome {
        case .allowed: router.respondAuthorized(to: request, on: connection)
        case .refused: router.refuse(request, .unauthorized)
        case .shed, nil: router.refuse(request, .tooManyVerifications)
        }
    }
}
