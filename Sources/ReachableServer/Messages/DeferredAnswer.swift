/// An answer that is not ready when the request is handled (a password being verified on another
/// thread). The daemon parks the connection, asks to be woken, and then asks for the answer on
/// one of its own threads: no request thread ever waits.
protocol DeferredAnswer: AnyObject, Sendable {
    /// Calls `wake` once, when `answer()` can be asked (at once if it already can).
    func whenReady(_ wake: @escaping @Sendable () -> Void)

    /// The answer, asked once after `wake`.
    func answer() -> HTTPResponse
}
