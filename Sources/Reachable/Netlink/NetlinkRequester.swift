import CMnl
import Glibc

/// Asks the kernel questions on a socket of its own — dumps and route lookups — so answers
/// never mix with the notifications on the event socket.
///
/// One request at a time: a second dump before the first is read fails with `EBUSY`.
final class NetlinkRequester {
    private let socket: NetlinkSocket
    private var sequence: UInt32 = 0
    private var parser = NetlinkParser()
    private var buffer: UnsafeMutableRawBufferPointer

    /// Messages the kernel sent that failed validation, across every answer.
    var malformedCount: Int { parser.malformedCount }

    init() throws {
        socket = try NetlinkSocket(groups: [], nonBlocking: false)
        // A stuck kernel answer must not hang the source thread for ever.
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(socket.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        buffer = .allocate(byteCount: 256 * 1024, alignment: 8)
    }

    deinit {
        buffer.deallocate()
    }

    /// Links, addresses and routes, each dump read to its end before the next is asked for.
    func dumpEverything() throws -> NetworkTable {
        var table = NetworkTable()
        for type in [RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE] {
            for message in try dump(Int32(type)) { table.apply(message) }
        }
        return table
    }

    /// Every message of one dump. A dump the kernel marks interrupted (the state changed
    /// while it was read) is asked again.
    func dump(_ type: Int32) throws -> [NetlinkMessage] {
        for _ in 0..<5 {
            let (messages, interrupted) = try dumpOnce(type)
            if !interrupted { return messages }
        }
        throw NetlinkError("dump stayed interrupted", code: EAGAIN)
    }

    private func dumpOnce(_ type: Int32) throws -> ([NetlinkMessage], Bool) {
        let sequence = nextSequence()
        try socket.send(NetlinkRequests.dump(type, sequence: sequence))
        var messages: [NetlinkMessage] = []
        var interrupted = false
        while true {
            for envelope in try receiveAnswer(sequence) {
                if envelope.flags & UInt16(NLM_F_DUMP_INTR) != 0 { interrupted = true }
                switch envelope.message {
                case .done:
                    return (messages, interrupted)
                case .error(let code) where code != 0:
                    throw NetlinkError("dump", code: -code)
                default:
                    messages.append(envelope.message)
                }
            }
        }
    }

    /// The kernel's route for one destination address.
    func lookup(_ destination: [UInt8]) -> RouteLookup {
        do {
            let sequence = nextSequence()
            try socket.send(NetlinkRequests.routeLookup(destination: destination, sequence: sequence))
            while true {
                for envelope in try receiveAnswer(sequence) {
                    switch envelope.message {
                    case .route(let route):
                        return .route(
                            type: route.type, outputInterface: route.outputInterfaces.first,
                            preferredSource: route.preferredSource
                        )
                    case .error(let code) where code != 0:
                        return .failed(errno: -code)
                    default:
                        continue
                    }
                }
            }
        } catch let error as NetlinkError {
            return .failed(errno: error.code)
        } catch {
            return .failed(errno: EIO)
        }
    }

    private func nextSequence() -> UInt32 {
        sequence &+= 1
        return sequence
    }

    /// The next datagram's messages that answer `sequence` (stale answers are dropped).
    private func receiveAnswer(_ sequence: UInt32) throws -> [NetlinkEnvelope] {
        guard let count = try socket.receive(into: buffer) else { throw NetlinkError("recvfrom", code: EAGAIN) }
        return parser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<count])).filter { $0.sequence == sequence }
    }
}
