import Reachable
import Foundation
let m = try NetworkMonitor()
print(String(decoding: m.current.jsonBytes(), as: UTF8.self))
print(m.statistics)
