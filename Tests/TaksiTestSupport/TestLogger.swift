import Foundation
package import Logging

/// A logger for tests whose log no test reads: silent, so the lines a test provokes on purpose
/// (a broken reload, a refused bundle) do not bury a failure in the output. Set `TAKSI_TEST_LOGS=1`
/// to see them on standard error while debugging. Tests that check what is logged use ``LogRecorder``.
package func testLogger(_ label: String) -> Logger {
    if ProcessInfo.processInfo.environment["TAKSI_TEST_LOGS"] == "1" {
        return Logger(label: label) { StreamLogHandler.standardError(label: $0) }
    }
    return Logger(label: label) { _ in SwiftLogNoOpLogHandler() }
}
