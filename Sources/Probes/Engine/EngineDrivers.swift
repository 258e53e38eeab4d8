/// The drivers the engine loop serves, each made the first time a task names its type and kept
/// until the engine stops; served in the order they were made. Engine thread only.
final class EngineDrivers {
    private let settings: EngineSettings
    private var byType: [ObjectIdentifier: any EngineDriver] = [:]
    /// Every driver made so far, in the order they were made.
    private(set) var all: [any EngineDriver] = []

    init(settings: EngineSettings) {
        self.settings = settings
    }

    /// The one driver of `type`, made now if no task named it before.
    subscript<Driver: EngineDriver>(_ type: Driver.Type) -> Driver {
        if let driver = byType[ObjectIdentifier(type)] { return unsafeDowncast(driver, to: Driver.self) }
        let driver = Driver(settings: settings)
        byType[ObjectIdentifier(type)] = driver
        all.append(driver)
        return driver
    }

    /// Ends every driver's work (its completions run, cancelled) and lets them all go.
    func shutdown() {
        for driver in all { driver.shutdown() }
        all = []
        byType = [:]
    }
}

/// Work one driver carries out — a kind's probe, a resolution, a question to one nameserver, a
/// file to follow — as the engine takes it from its inbox: started on the engine thread with the
/// driver, or, if the engine stopped first, cancelled (its completion called as cancelled).
struct EngineTask: Sendable {
    /// Which counter of `EngineStatistics` it adds to when it starts.
    let counted: EngineStatistics.Count?
    let start: @Sendable (EngineDrivers) -> Void
    let cancel: @Sendable () -> Void

    /// A task for the driver of `type`: `start` is given that driver.
    init<Driver: EngineDriver>(
        on type: Driver.Type, counted: EngineStatistics.Count?, cancel: @escaping @Sendable () -> Void = {},
        start: @escaping @Sendable (Driver) -> Void
    ) {
        self.counted = counted
        self.cancel = cancel
        self.start = { drivers in start(drivers[type]) }
    }
}
