import Foundation
import Logging
import NIOPosix
import TaksiSchema
import TaksiServer
import TaksiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What operators rely on: metrics, the OpenAPI document, JSON logs and a draining shutdown.
@Suite("Operations")
struct OperationsTests {
    /// The value of one sample line of a Prometheus text exposition, `name{labels} value`.
    func sample(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    @Test("/metrics scrapes in Prometheus text format, and its counters move as requests are made")
    func metrics() async throws {
        try await withRunningServer { port in
            let connection = try RawConnection(port: port)
            // Twice in a row: the second is counted with the instruments the connection kept.
            connection.send("GET /screens/login HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /screens/login HTTP/1.1\r\nHost: a\r\n\r\n")
            let etag = try #require(await connection.receive(2).first?.header("ETag"))
            connection.send(
                "GET /screens/login HTTP/1.1\r\nHost: a\r\nIf-None-Match: \(etag)\r\n\r\n" + "GET /screens/nope HTTP/1.1\r\nHost: a\r\n\r\n"
                    + "GET /screens/bikes/stations/data?network=velib HTTP/1.1\r\nHost: a\r\n\r\n"
                    + "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n"
            )
            let responses = await connection.receive(4)
            #expect(responses.map(\.status) == [304, 404, 200, 200])
            let first = try #require(responses.last)
            #expect(first.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            let text = first.body
            #expect(sample(text, #"taksi_http_requests_total{route="skeleton",status="200"}"#) == 2)
            #expect(sample(text, #"taksi_http_requests_total{route="skeleton",status="304"}"#) == 1)
            #expect(sample(text, #"taksi_http_requests_total{route="error",status="404"}"#) == 1)
            #expect(sample(text, #"taksi_http_requests_total{route="data",status="200"}"#) == 1)
            #expect(sample(text, #"taksi_http_request_duration_seconds_count{route="skeleton"}"#) == 3)
            // The same latency by screen, for the responses that serve one (not the 404).
            #expect(sample(text, #"taksi_screen_request_duration_seconds_count{route="skeleton",screen="login"}"#) == 3)
            #expect(sample(text, #"taksi_screen_request_duration_seconds_count{route="data",screen="bikes/stations"}"#) == 1)
            #expect((sample(text, #"taksi_http_response_bytes_total{route="skeleton"}"#) ?? 0) > 1800)
            #expect(sample(text, "taksi_open_connections") == 1)
            #expect(sample(text, "taksi_screens_loaded") == 6)
            #expect(sample(text, #"taksi_upstream_requests_total{upstream="citybikes",source="citybikes",result="ok"}"#) == 1)
            #expect(sample(text, #"taksi_upstream_cache_total{result="miss"}"#) == 1)
            #expect(sample(text, #"taksi_variant_skeletons_total{screen="login",variant="login|*|default"}"#) == 3)
            // Every sample line is `name{labels} number` or `name number`; comments start with #.
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                #expect(line.split(separator: " ").last.flatMap { Double($0) } != nil, "\(line)")
            }

            connection.send(
                "GET /screens/bikes/stations/data?network=velib HTTP/1.1\r\nHost: a\r\n\r\nGET /metrics HTTP/1.1\r\nHost: a\r\n\r\n")
            let again = try #require(await connection.receive(2).last?.body)
            #expect(sample(again, #"taksi_http_requests_total{route="data",status="200"}"#) == 2)
            #expect(sample(again, #"taksi_http_requests_total{route="metrics",status="200"}"#) == 1)
            #expect(sample(again, #"taksi_upstream_cache_total{result="hit"}"#) == 1)
        }
    }

    @Test(
        "every family /metrics exports has # HELP and # TYPE and is listed, on the operations page too; the Grafana dashboard queries only exported families"
    )
    func metricFamilies() async throws {
        let known = Set(MetricFamilies.all.map(\.name))
        try await withRunningServer { port in
            let connection = try RawConnection(port: port)
            connection.send(
                "GET /screens/login HTTP/1.1\r\nHost: a\r\n\r\n"
                    + "GET /screens/bikes/stations/data?network=velib HTTP/1.1\r\nHost: a\r\n\r\n"
                    + "GET /screens/nope HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n")
            let text = try #require(await connection.receive(4).last?.body)
            let lines = text.split(separator: "\n").map(String.init)
            var exported: Set<String> = []
            for (index, line) in lines.enumerated() where line.hasPrefix("# TYPE ") {
                let name = String(line.dropFirst("# TYPE ".count).prefix { $0 != " " })
                exported.insert(name)
                #expect(known.contains(name), "\(name) is exported but not in MetricFamilies.all")
                #expect(index > 0 && lines[index - 1].hasPrefix("# HELP \(name) "), "\(name) has no # HELP line")
            }
            #expect(exported.count >= 10, "\(exported)")
        }
        let operations = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        for name in known.sorted() { #expect(operations.contains("`\(name)`"), "docs/operations.md's metrics table lacks \(name)") }

        let dashboard = try JSONDecoder().decode(
            JSONValue.self, from: Data(contentsOf: repositoryRoot.appendingPathComponent("deploy/grafana-dashboard.json")))
        let panels = try #require(dashboard["panels"]?.arrayValue)
        var queried: Set<String> = []
        for panel in panels {
            #expect(panel["title"]?.stringValue?.isEmpty == false)
            let targets = panel["targets"]?.arrayValue ?? []
            #expect(!targets.isEmpty, "\(panel["title"] ?? "")")
            for target in targets {
                let expression = try #require(target["expr"]?.stringValue)
                for match in expression.matches(of: /taksi_[a-z_]+/) {
                    var name = String(match.output)
                    for suffix in ["_bucket", "_count", "_sum"] where name.hasSuffix(suffix) && !known.contains(name) {
                        name = String(name.dropLast(suffix.count))
                    }
                    #expect(known.contains(name), "the dashboard queries \(name), which the server does not export")
                    queried.insert(name)
                }
            }
        }
        for name in [
            "taksi_http_requests_total", "taksi_http_request_duration_seconds", "taksi_screen_request_duration_seconds",
            "taksi_variant_data_total", "taksi_data_memo_lookups_total",
            "taksi_upstream_cache_total", "taksi_data_degraded_total", "taksi_action_requests_total", "taksi_screen_sets_kept",
            "taksi_access_log_dropped_lines_total",
        ] {
            #expect(queried.contains(name), "the dashboard has no panel over \(name)")
        }
    }

    @Test("/readyz answers 503 while the server drains, /healthz stays 200")
    func readiness() async throws {
        let application = fixtureApplication()
        #expect(try await application.execute(.GET, uri: "/readyz").status == .ok)
        application.draining.begin()
        let draining = try await application.execute(.GET, uri: "/readyz")
        #expect(draining.status == .serviceUnavailable)
        let body = try JSONDecoder().decode(JSONValue.self, from: Data(draining.body.readableBytesView))
        #expect(body["status"] == "draining")
        #expect(try await application.execute(.GET, uri: "/healthz").status == .ok)
    }

    @Test("the served OpenAPI document is docs/openapi.yaml, as YAML")
    func openAPIServed() async throws {
        let file = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        let served = try await fixtureApplication().execute(.GET, uri: "/openapi.yaml")
        #expect(served.headers["Content-Type"] == ["application/yaml; charset=utf-8"])
        #expect(
            String(buffer: served.body) == file,
            "the server embeds docs/openapi.yaml through the link Sources/TaksiServer/OpenAPI/openapi.yaml")
    }

    @Test(
        "the OpenAPI document is valid OpenAPI 3.1, real responses match it, and a set's actions add one valid operation each",
        .enabled(
            if: pythonHas("yaml", "jsonschema", "openapi_spec_validator"),
            "needs python3 -m pip install pyyaml jsonschema openapi-spec-validator (.ci/run installs them)"
        )
    )
    func openAPI() async throws {
        let application = fixtureApplication()

        // Real bodies, each with the path and status whose schema it must match.
        var samples: [JSONValue] = []
        for (uri, path, headers) in [
            ("/screens", "/screens", [(String, String)]()), ("/screens/home", "/screens/{name}", [("X-Taksi-Version", "2.1")]),
            ("/screens/home/data?name=Ada", "/screens/{name}/data", [("X-Taksi-Version", "2.1")]),
            ("/screens/bikes/stations/data?network=velib", "/screens/{name}/data", []), ("/screens/nope", "/screens/{name}", []),
            ("/screens/home/data?version=x", "/screens/{name}/data", []), ("/readyz", "/readyz", []), ("/healthz", "/healthz", []),
        ] {
            let response = try await application.execute(.GET, uri: uri, headers: .init(headers))
            let body = try JSONDecoder().decode(JSONValue.self, from: Data(response.body.readableBytesView))
            samples.append(["path": .string(path), "status": .string(String(response.status.code)), "body": body])
        }
        let samplesFile = Scratch.path("openapi", suffix: ".json")
        try Data(JSONWriter.bytes(.array(samples))).write(to: samplesFile)
        // A set with actions: the served document adds one operation per action to the file's.
        let upstream = try await TestUpstream()
        let withActions = try upstreamApplication(files: SharedScreens.actions, upstream: upstream).application
        let served = try await withActions.execute(.GET, uri: "/openapi.yaml")
        let servedFile = Scratch.path("openapi", suffix: ".yaml")
        try Data(served.body.readableBytesView).write(to: servedFile)
        try await upstream.stop()
        let actionPaths = ["submit", "ping", "hurry"].map { "/screens/signup/{plan}/actions/\($0)" }
        let script = """
            import json, sys
            try:
                import yaml, jsonschema
                from openapi_spec_validator import validate
            except ImportError:
                print("MISSING: python3 -m pip install openapi-spec-validator"); sys.exit(3)
            spec = yaml.safe_load(open(sys.argv[1]))
            validate(spec)
            def resolve(node):
                if isinstance(node, dict):
                    if "$ref" in node:
                        target = spec
                        for part in node["$ref"][2:].split("/"):
                            target = target[part]
                        return resolve(target)
                    return {key: resolve(value) for key, value in node.items()}
                if isinstance(node, list):
                    return [resolve(value) for value in node]
                return node
            failures = 0
            for sample in json.load(open(sys.argv[2])):
                response = resolve(spec["paths"][sample["path"]]["get"]["responses"][sample["status"]])
                schema = response["content"]["application/json"]["schema"]
                try:
                    jsonschema.Draft202012Validator(schema).validate(sample["body"])
                except jsonschema.ValidationError as error:
                    failures += 1
                    print("MISMATCH", sample["path"], sample["status"], error.message)
            # /openapi.yaml is YAML: validators parse it, so its schema describes the parsed document.
            document = spec["paths"]["/openapi.yaml"]["get"]["responses"]["200"]["content"]["application/yaml"]["schema"]
            try:
                jsonschema.Draft202012Validator(document).validate(spec)
            except jsonschema.ValidationError as error:
                failures += 1
                print("MISMATCH /openapi.yaml", error.message)
            # A key with no value is a YAML slip: an unquoted comma in a flow mapping
            # ({description: This document, parsed.}) makes a key of the rest.
            def empty_keys(node, path):
                if isinstance(node, dict):
                    for key, value in node.items():
                        if value is None:
                            yield path + "/" + str(key)
                        else:
                            yield from empty_keys(value, path + "/" + str(key))
                elif isinstance(node, list):
                    for index, value in enumerate(node):
                        yield from empty_keys(value, path + "/" + str(index))
            for path in empty_keys(spec, ""):
                failures += 1
                print("EMPTY KEY", path)
            # Read as data, a set's served document is the file's plus a POST per action.
            served = yaml.safe_load(open(sys.argv[3]))
            validate(served)
            added = {path: item for path, item in served["paths"].items() if path not in spec["paths"]}
            if sorted(added) != sorted(sys.argv[4].split(",")) or any(list(item) != ["post"] for item in added.values()):
                failures += 1
                print("ACTIONS", sorted(added), "expected", sys.argv[4])
            kept = dict(served, paths={path: item for path, item in served["paths"].items() if path in spec["paths"]})
            if kept != spec:
                failures += 1
                print("CHANGED: the served document differs from docs/openapi.yaml beyond the actions' operations")
            print("checked", len(json.load(open(sys.argv[2]))))
            sys.exit(1 if failures else 0)
            """
        let result = try await runTool([
            "python3", "-c", script, repositoryRoot.appendingPathComponent("docs/openapi.yaml").path, samplesFile.path, servedFile.path,
            actionPaths.joined(separator: ","),
        ])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("checked 8"))
    }

    @Test("SIGTERM lets slow requests in flight finish, then the process exits 0; JSON logs carry the request id")
    func drainOnSIGTERM() async throws {
        let upstream = try await TestUpstream()
        let directory = Scratch.path("drain")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("Screens"), withIntermediateDirectories: true)
        try Data(
            """
            {"name": "slow", "entry": true,
             "sources": {"api": {"type": "http", "upstream": "api", "path": "/slow/{n}", "parameters": {"n": {"required": true}}, "timeout": 60}},
             "components": [{"name": "label_component", "identifier": "text", "content": {"value": {"$bind": "api.text"}}}]}
            """.utf8
        ).write(to: directory.appendingPathComponent("Screens/slow.json"))
        try Data(#"{"port": 0, "screens": "Screens", "upstreams": {"api": "\#(upstream.baseURL)"}}"#.utf8)
            .write(to: directory.appendingPathComponent("config.json"))
        for n in 0..<5 { upstream.on("/slow/\(n)", .held(#"{"text": "slow \#(n)"}"#)) }

        let (process, reader, boundPort) = try await startServerProcess([
            "serve", "--config", directory.appendingPathComponent("config.json").path, "--log-format", "json", "--no-watch",
        ])

        let connections = try (0..<5).map { _ in try RawConnection(port: boundPort) }
        for (n, connection) in connections.enumerated() {
            connection.send("GET /screens/slow/data?n=\(n) HTTP/1.1\r\nHost: a\r\nX-Request-Id: drain-\(n)\r\n\r\n")
        }
        await upstream.waitForRequests(5)  // all five are in flight, waiting on the upstream
        kill(process.processIdentifier, SIGTERM)
        // The server stops accepting at once, but the requests in flight still get their answers.
        upstream.release()
        var responses: [RawResponse?] = []
        for connection in connections { responses.append(await connection.receive(1).first) }
        var lines: [JSONValue] = []
        while let line = await reader.nextLine() {
            if let record = try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)) { lines.append(record) }
        }
        // What the server said went wrong, for a failure's message (a degraded answer says why there).
        let problems = lines.filter { ["warning", "error"].contains($0["log.level"]?.stringValue ?? "") }.map { JSONWriter.string($0) }
        for (n, response) in responses.enumerated() {
            let response = try #require(response, "request \(n) got no answer")
            #expect(response.status == 200)
            #expect(
                response.json == ["interface_data": [["identifier": "text", "content": ["value": .string("slow \(n)")]]]],
                "\(problems)")
            #expect(response.header("X-Request-Id") == "drain-\(n)")
        }
        await exited(process)
        #expect(process.terminationStatus == 0)
        // The access log's lines of the drained requests are written before the process exits.
        let logged = Set(lines.compactMap { $0["event.dataset"] == "taksi.access" ? $0["http.request.id"]?.stringValue : nil })
        #expect(logged == Set((0..<5).map { "drain-\($0)" }))
        #expect(lines.contains { $0["message"] == "server stopped" })
        try await upstream.stop()
    }

    @Test("a span collector that takes connections and never answers cannot hold shutdown past drain_timeout: exit 0, and a warning")
    func exporterFlushBounded() async throws {
        // A collector that accepts (the kernel completes the handshake) and never answers.
        let collector = try BoundSocket(listening: true)
        defer { withExtendedLifetime(collector) {} }

        let directory = Scratch.path("flush")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"name": "home", "entry": true, "components": [{"name": "label_component", "content": {"value": "Hi"}}]}"#.utf8)
            .write(to: directory.appendingPathComponent("home.json"))
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAKSI_") && !$0.key.hasPrefix("OTEL_") }
        environment["TAKSI_TRACING"] = "true"
        environment["TAKSI_TRACING_ENDPOINT"] = "http://127.0.0.1:\(collector.port)"
        environment["TAKSI_DRAIN_TIMEOUT"] = "1"
        // Left to itself, the exporter would wait ten minutes for the collector.
        environment["OTEL_EXPORTER_OTLP_TIMEOUT"] = "600000"
        environment["OTEL_BSP_EXPORT_TIMEOUT"] = "600000"
        let (process, reader, port) = try await startServerProcess(
            ["serve", "--screens", directory.path, "--port", "0", "--log-format", "json", "--no-watch", "--no-preview"],
            environment: environment)
        let connection = try RawConnection(port: port)
        connection.send("GET /screens/home HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(await connection.receive(1).first?.status == 200)
        kill(process.processIdentifier, SIGTERM)
        // A hang guard, far past what the bounded shutdown takes: the process is killed, and fails the test.
        let guardTask = DispatchWorkItem { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: guardTask)
        // Read off the cooperative pool, to the end of the log: the process's exit.
        let messages = await withCheckedContinuation { continuation in
            let box = UncheckedBox((reader, process))
            Thread {
                var messages: [String] = []
                while let line = box.value.0.next() {
                    if let message = (try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)))?["message"]?.stringValue {
                        messages.append(message)
                    }
                }
                box.value.1.waitUntilExit()
                continuation.resume(returning: messages)
            }.start()
        }
        guardTask.cancel()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(process.terminationReason)")
        #expect(messages.contains { $0.hasPrefix("spans recorded before shutdown were not all exported") }, "\(messages)")
    }
}
