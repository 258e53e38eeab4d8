import CEpoll
import CEventFD
import Glibc
import Reachable

/// What owns a descriptor the engine loop watches: told when it is ready. Engine thread only.
protocol DescriptorOwner: AnyObject {
    /// `descriptor` can be read (or has hung up or failed: reading says how) or written. May come
    /// once for nothing (a number closed and reused within one wake-up): descriptors are
    /// non-blocking, so a read or write that finds nothing costs an `EAGAIN`.
    func ready(_ descriptor: Int32, readable: Bool, writable: Bool)
}

/// The engine loop's sleep: one epoll instance over every driver's descriptors, which each driver
/// adds and removes as its library opens and closes them (curl's socket callback, c-ares' socket
/// state callback, an ICMP socket, a file watch), and an eventfd any thread wakes it with.
/// Level-triggered, as poll(2) is: a descriptor left readable is told again on the next wait.
///
/// Unchecked `Sendable`: only `wake` is called from other threads; the rest is the engine thread's.
final class EventLoop: @unchecked Sendable {
    private let epoll: OwnedDescriptor
    private let wakeUp: OwnedDescriptor
    /// Everything that has watched a descriptor: a handful (the drivers, the c-ares channel sets),
    /// kept until `close` (strong: the engine stops them all at once).
    private var owners: [any DescriptorOwner] = []
    /// Per descriptor number, who watches it: 1 + its index in `owners`, or 0. An array, not a
    /// dictionary: every event and every change curl asks for looks here, and hashing the
    /// number was 0.4 % of a round of probes (callgrind).
    private var ownerOf: [UInt8] = []
    private var events = [epoll_event](repeating: epoll_event(), count: 256)

    init() throws(SystemError) {
        epoll = OwnedDescriptor(taking: try systemCall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) })
        wakeUp = OwnedDescriptor(
            taking: try systemCall("eventfd") { eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK)) })
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wakeUp.rawValue
        _ = try systemCall("epoll_ctl") { epoll_ctl(epoll.rawValue, EPOLL_CTL_ADD, wakeUp.rawValue, &event) }
    }

    /// Wakes the loop from any thread (an eventfd write: never blocks, never fails but for a
    /// counter at its maximum, which still wakes it).
    func wake() {
        var one: UInt64 = 1
        _ = write(wakeUp.rawValue, &one, MemoryLayout<UInt64>.size)
    }

    /// Watches `descriptor` for `owner`, for reading, writing or both; called again, it changes
    /// what is watched (and who owns it: a number its last owner closed unseen is someone else's now).
    func watch(_ descriptor: Int32, reading: Bool, writing: Bool, for owner: any DescriptorOwner) {
        guard descriptor >= 0 else { return }
        var event = epoll_event()
        event.events = (reading ? EPOLLIN.rawValue : 0) | (writing ? EPOLLOUT.rawValue : 0)
        event.data.fd = descriptor
        let number = Int(descriptor)
        if number >= ownerOf.count { ownerOf += repeatElement(0, count: number + 1 - ownerOf.count) }
        let known = ownerOf[number] != 0
        ownerOf[number] = mark(of: owner)
        // Known may still be gone from epoll (closed, so removed, then the number reused): add then.
        if !known || epoll_ctl(epoll.rawValue, EPOLL_CTL_MOD, descriptor, &event) != 0 {
            if epoll_ctl(epoll.rawValue, EPOLL_CTL_ADD, descriptor, &event) != 0, errno == EEXIST {
                _ = epoll_ctl(epoll.rawValue, EPOLL_CTL_MOD, descriptor, &event)
            }
        }
    }

    /// Stops watching `descriptor`, if `owner` still owns it. Before it is closed, or after:
    /// epoll forgets a closed descriptor by itself, and a number reused meanwhile is its new owner's.
    func unwatch(_ descriptor: Int32, for owner: any DescriptorOwner) {
        let number = Int(descriptor)
        guard number >= 0, number < ownerOf.count, ownerOf[number] == mark(of: owner) else { return }
        ownerOf[number] = 0
        _ = epoll_ctl(epoll.rawValue, EPOLL_CTL_DEL, descriptor, nil)
    }

    /// `owner`'s mark in `ownerOf`: 1 + its index in `owners`, which it joins the first time.
    private func mark(of owner: any DescriptorOwner) -> UInt8 {
        if let index = owners.firstIndex(where: { $0 === owner }) { return UInt8(index + 1) }
        precondition(owners.count < Int(UInt8.max), "more owners of descriptors than the drivers make")
        owners.append(owner)
        return UInt8(owners.count)
    }

    /// Sleeps until a descriptor is ready, `timeout` milliseconds pass (-1: until woken) or `wake`
    /// is called, then tells each ready descriptor's owner.
    ///
    /// - Returns: `false` when epoll_wait failed (not for a signal): the caller must not spin.
    func wait(timeout: Int32) -> Bool {
        let count = events.withUnsafeMutableBufferPointer { buffer in
            epoll_wait(epoll.rawValue, buffer.baseAddress, Int32(buffer.count), timeout)
        }
        guard count >= 0 else { return errno == EINTR }
        for index in 0..<Int(count) {
            let event = events[index]
            let descriptor = event.data.fd
            if descriptor == wakeUp.rawValue {
                var counter: UInt64 = 0
                _ = read(wakeUp.rawValue, &counter, MemoryLayout<UInt64>.size)
                continue
            }
            let number = Int(descriptor)
            guard number < ownerOf.count, ownerOf[number] != 0 else { continue }
            let failed = EPOLLERR.rawValue | EPOLLHUP.rawValue
            owners[Int(ownerOf[number]) - 1].ready(
                descriptor, readable: event.events & (EPOLLIN.rawValue | EPOLLPRI.rawValue | failed) != 0,
                writable: event.events & (EPOLLOUT.rawValue | EPOLLERR.rawValue) != 0)
        }
        return true
    }

    /// Forgets every owner (the engine stopped; its drivers closed their descriptors).
    func close() {
        owners = []
        ownerOf = []
    }
}
