import Synchronization

/// A response made once and served to every request that asks for it (the `/status` document,
/// the page): a request neither encodes nor copies it. Plain bytes and headers; the daemon
/// turns them into its own response on first use and keeps that here, so it is prepared once
/// and released together with these bytes.
final class SharedResponse: Sendable {
    let headers: [HTTPField]
    /// A slice, so `/status` can serve the document where it lies in the SSE frame.
    let body: ArraySlice<UInt8>
    /// The daemon's response, once made.
    private let daemonResponse = Mutex<(any AnyObject & Sendable)?>(nil)

    init(headers: [HTTPField], body: ArraySlice<UInt8>) {
        self.headers = headers
        self.body = body
    }

    convenience init(headers: [HTTPField], body: [UInt8]) {
        self.init(headers: headers, body: body[...])
    }

    /// The daemon's form of this response: made by `make` on first use, the same object after.
    /// Made outside the lock (it calls the daemon); two first requests at once may both make
    /// one, and both use the one stored first.
    func prepared<Prepared: AnyObject & Sendable>(by make: (SharedResponse) -> Prepared) -> Prepared {
        if let existing = daemonResponse.withLock({ $0 }) as? Prepared { return existing }
        let made = make(self)
        return daemonResponse.withLock { stored in
            if let existing = stored as? Prepared { return existing }
            stored = made
            return made
        }
    }
}
