package import CoreMetrics
package import Foundation
package import Logging
package import TaksiScreens
package import TaksiServer

/// Screen sets and applications that an in-process suite and an end-to-end one share: the
/// in-process suite tests a feature through the responder, the end-to-end one the same screens
/// over a socket.
package enum SharedScreens {
    /// For experiments: `landing` (default, with a fixture's greeting) and its alternative `B`
    /// (another greeting and one more label), under experiment `landing-cta` weighing them 50/50;
    /// `experiment` adds lines to the experiment (indented two spaces: `  winner: B`).
    package static func experiment(_ experiment: String = "") -> [String: [UInt8]] {
        [
            "landing.yaml": Array(
                """
                name: landing
                entry: true
                experiment:
                  name: landing-cta
                  weights: {default: 50, B: 50}
                \(experiment)
                sources:
                  greeting: {type: fixture, value: {text: hello}}
                components:
                  - {name: label_component, identifier: title, content: {value: {$bind: greeting.text}}}
                """.utf8),
            "landing-b.yaml": Array(
                """
                name: landing
                alternative: B
                sources:
                  greeting: {type: fixture, value: {text: hi}}
                components:
                  - {name: label_component, identifier: title, content: {value: {$bind: greeting.text}}}
                  - {name: label_component, identifier: more, content: {value: B}}
                """.utf8),
        ]
    }

    /// For actions: `signup/{plan}` (inputs, a call to the upstream `api`, every outcome, `then`),
    /// `welcome/{id}` and `feed` (two http sources of `api` and a static label).
    package static let actions: [String: String] = [
        "signup.yaml": """
        name: signup/{plan}
        entry: true
        parameters: {plan: {type: string, one_of: [free, pro]}}
        components:
          - {name: label_component, identifier: message, content: {value: " "}}
          - {name: text_field_component, identifier: email, content: {placeholder: Email}}
          - {name: button_component, identifier: send, content: {title: Send, action: {identifier: executable, content: {name: submit}}}}
        actions:
          submit:
            inputs:
              email: {type: string, required: true, pattern: "[^@ ]+@[^@ ]+", max_length: 40, message: Enter an email.}
              age: {type: integer}
              news: {type: bool, default: false}
            call:
              upstream: api
              path: /signups/{plan}
              body: {email: {$bind: inputs.email}, age: {$bind: inputs.age}, news: {$bind: inputs.news}}
              headers: [Authorization]
              timeout: 60  # the most allowed: a hang guard, long enough that a busy test run does not reach it
            answers:
              success:
                then: {identifier: navigation, content: {interface_identifier: {$template: "welcome/{response.id}"}}}
                data: [{identifier: message, content: {value: {$template: "Welcome, {inputs.email}"}}}]
              "409": {data: [{identifier: message, content: {value: {$bind: response.message, default: Already signed up}}}]}
              4xx: {data: [{identifier: message, content: {value: Refused}}]}
              invalid: {data: [{identifier: message, content: {value: {$bind: errors.email, default: Check the form}}}]}
              timeout: {data: [{identifier: message, content: {value: Too slow}}]}
              failure: {data: [{identifier: message, content: {value: Try again later}}]}
          ping:
            answers: {success: {data: [{identifier: message, content: {value: pong}}]}}
          hurry:
            inputs: {email: {type: string}}
            call: {upstream: api, path: "/signups/{plan}", timeout: 0.3}
            answers:
              timeout: {data: [{identifier: message, content: {value: Too slow}}]}
        """,
        "welcome.yaml": "name: welcome/{id}\nentry: true\ncomponents: []",
        "feed.yaml": """
        name: feed
        entry: true
        sources:
          news: {type: http, upstream: api, path: /news}
          weather: {type: http, upstream: api, path: /weather}
        components:
          - {name: label_component, identifier: headline, content: {value: {$bind: news.title}}}
          - {name: label_component, identifier: forecast, content: {value: {$bind: weather.text}}}
          - {name: label_component, identifier: static, content: {value: Hello}}
          - {name: button_component, identifier: go, content: {title: Go, action: {identifier: navigation, content: {interface_identifier: feed}}}}
        """,
    ]

    /// For http sources of the upstream `api`: `feed` (paths, templates, a collection, a value of
    /// the wrong type), `pair` (failure isolation, a fallback), `retry` and `me` (forwarded headers).
    package static let upstreams: [String: String] = [
        "feed.json": """
        {"name": "feed", "entry": true,
         "sources": {"api": {"type": "http", "upstream": "api", "path": "/feed/{city}", "query": {"lang": "{lang}", "v": 2},
           "parameters": {"city": {"type": "string", "required": true}, "lang": {"type": "string", "default": "en"}},
           "ttl": 10, "stale_while_revalidate": 20, "stale_if_error": 100}},
         "components": [
           {"name": "label_component", "identifier": "title", "content": {"value": {"$bind": "api.feed.title"}, "kind": "title"}},
           {"name": "label_component", "identifier": "first", "content": {"value": {"$bind": "api.feed.items[0].name"}}},
           {"name": "label_component", "identifier": "summary", "content": {"value": {"$template": "{api.feed.count} places in {api.feed.city}"}}},
           {"name": "label_component", "identifier": "rating", "content": {"value": {"$bind": "api.feed.rating"}}},
           {"name": "label_component", "identifier": "broken", "content": {"value": {"$bind": "api.feed.object"}}},
           {"name": "collection_component", "identifier": "items", "content": {"component_name": "label_component",
             "values": {"$each": "api.feed.items", "as": "item", "limit": 2, "template": {"value": {"$template": "{item.name} ({item.stars})"}}}}}
         ]}
        """,
        // Timeouts that are hang guards: an answer (a 500, say) is waited for however busy the
        // machine; `slowpair` is the same with a short one, for the test that it fires.
        "pair.json": pair(name: "pair", timeout: 60),
        "slowpair.json": pair(name: "slowpair", timeout: 0.5),
        "retry.json": """
        {"name": "retry", "entry": true,
         "sources": {
           "once": {"type": "http", "upstream": "api", "path": "/once", "timeout": 60},
           "twice": {"type": "http", "upstream": "api", "path": "/twice", "timeout": 60, "stale_if_error": 0}},
         "components": [
           {"name": "label_component", "identifier": "a", "content": {"value": {"$bind": "once.text"}}},
           {"name": "label_component", "identifier": "b", "content": {"value": {"$bind": "twice.text"}}}
         ]}
        """,
        "me.json": """
        {"name": "me", "entry": true,
         "sources": {"me": {"type": "http", "upstream": "api", "path": "/me", "headers": ["Authorization", "Accept-Language"]}},
         "components": [{"name": "label_component", "identifier": "name", "content": {"value": {"$bind": "me.name"}}}]}
        """,
    ]

    /// What `/feed/{city}` answers for ``upstreams``'s `feed` screen.
    /// `good`, `bad` (`timeout`) and `backup` (`timeout`, with a fallback), each bound into a label.
    static func pair(name: String, timeout: Double) -> String {
        """
        {"name": "\(name)", "entry": true,
         "sources": {
           "good": {"type": "http", "upstream": "api", "path": "/good"},
           "bad": {"type": "http", "upstream": "api", "path": "/bad", "timeout": \(timeout), "max_bytes": 1000, "stale_if_error": 0},
           "backup": {"type": "http", "upstream": "api", "path": "/backup", "timeout": \(timeout), "max_bytes": 1000, "stale_if_error": 0, "fallback": {"text": "from the fallback"}}},
         "components": [
           {"name": "label_component", "identifier": "a", "content": {"value": {"$bind": "good.text"}}},
           {"name": "label_component", "identifier": "b", "content": {"value": {"$bind": "bad.text"}}},
           {"name": "label_component", "identifier": "c", "content": {"value": {"$bind": "backup.text"}}}
         ]}
        """
    }

    package static let feedBody = """
        {"feed": {"title": "Cafés", "city": "Oslo", "count": 3, "rating": 4.5, "object": {"a": 1},
          "items": [{"name": "A", "stars": 5}, {"name": "B", "stars": 4}, {"name": "C", "stars": 3}]}}
        """
}

/// An application over `files` (loaded as a screen set), whose upstream `api` is `upstream`,
/// bound to port 0 on loopback.
package func upstreamApplication(
    files: [String: String], upstream: TestUpstream, cache: UpstreamCache? = nil,
    logger: Logger = testLogger("test"),
    metrics: (any MetricsFactory)? = nil, parts: Application.Parts = Application.Parts()
) throws -> (application: Application, screenSet: ScreenSet) {
    let load = ScreenSetLoader.load(files: files.mapValues { Array($0.utf8) }, upstreams: ["api"])
    guard let screenSet = load.screenSet else { throw FixtureError.invalidScreens(load.diagnostics.report) }
    var configuration = ServerConfiguration.forTests()
    configuration.upstreams = ["api": upstream.baseURL]
    let application = buildApplication(
        configuration: configuration, screenSet: screenSet, logger: logger, metrics: metrics, cache: cache, parts: parts)
    return (application, screenSet)
}

/// An application over a fresh copy of the fixture screens in a temporary directory (which a
/// test may edit and reload), bound to port 0 on loopback.
package func fixtureCopyApplication(preview: Bool = false, label: String = "test") throws -> (Application, URL) {
    let directory = Scratch.path(label)
    try FileManager.default.copyItem(at: fixtureScreensDirectory, to: directory)
    var configuration = ServerConfiguration.forTests()
    configuration.screensDirectory = directory.path
    configuration.upstreams = fixtureUpstreams
    configuration.preview = preview
    return (try buildApplication(configuration: configuration, logger: testLogger(label)), directory)
}

package enum FixtureError: Error {
    /// A test's screens did not load, with the diagnostics.
    case invalidScreens(String)
}
