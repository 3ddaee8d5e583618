package import Foundation
import Logging
package import TaksiScreens
package import TaksiServer

/// The tests' own screen set, `Tests/Fixtures/Screens`: every kind of screen (versions, an
/// experiment, custom components, fixture, request and upstream sources). It began as a copy of
/// the examples and is frozen, so a team can replace `Screens/` without breaking these tests;
/// only `ExampleScreensTests` checks the examples.
package let fixtureScreensDirectory = repositoryRoot.appendingPathComponent("Tests/Fixtures/Screens")

/// ``fixtureScreensDirectory``, loaded once.
package let fixtureScreens: ScreenSet = {
    let load = ScreenSetLoader.load(directory: fixtureScreensDirectory.path)
    guard let set = load.screenSet else { preconditionFailure("the test screens do not load:\n\(load.diagnostics.report)") }
    return set
}()

/// The fixture set's upstreams: offline answers under `Tests/Fixtures/upstreams`.
package let fixtureUpstreams = [
    "citybikes": "file:" + repositoryRoot.appendingPathComponent("Tests/Fixtures/upstreams/citybikes").path,
    "github": "file:" + repositoryRoot.appendingPathComponent("Tests/Fixtures/upstreams/github").path,
]

extension ServerConfiguration {
    /// The defaults, for a server in a test: port 0 (a free one), one event loop, no access log.
    package static func forTests() -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.threads = 1
        configuration.accessLog = false
        return configuration
    }
}

/// An application over the fixture screens, bound to port 0 on loopback.
package func fixtureApplication(limits: ConnectionLimits = ConnectionLimits()) -> Application {
    var configuration = ServerConfiguration.forTests()
    configuration.upstreams = fixtureUpstreams
    configuration.limits = limits
    return buildApplication(configuration: configuration, screenSet: fixtureScreens, logger: testLogger("test"))
}
