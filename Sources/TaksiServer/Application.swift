public import CoreMetrics
import Foundation
public import Logging
public import NIOCore
import NIOPosix
import OTel
public import Prometheus
public import ServiceLifecycle
public import TaksiScreens
import UnixSignals

/// The assembled server: configuration, the loaded screens and the HTTP service.
///
/// ```swift
/// let application = try buildApplication(configuration: configuration, logger: logger)
/// try await application.run() // until SIGTERM or SIGINT
/// ```
public struct Application: Sendable {
    public let configuration: ServerConfiguration
    public let store: ScreenStore
    public let logger: Logger
    /// Where counters are created.
    public let metrics: any MetricsFactory
    /// Calls and caches the upstreams of `http` sources.
    public let resolver: DataResolver
    /// What `GET /metrics` exposes: every metric the application records, when it made its own
    /// factory (nil when the caller passed one, which then owns exporting).
    public let prometheus: PrometheusCollectorRegistry?
    /// Request, byte, latency and connection metrics of the HTTP server (exposed at `/metrics`
    /// with the rest when the application made its own registry, ``prometheus``).
    public let serverMetrics: ServerMetrics
    /// Data responses kept for their inputs, dropped when an upstream entry they used is refreshed.
    public let memo: ResponseMemo
    /// The live preview's event stream, fed by every reload; nil when the preview is off.
    public let previewEvents: PreviewEvents?
    /// The fleet's shared store (``ServerConfiguration/StoreSettings``), run as a service of the
    /// group; nil when the replica keeps everything in its own memory.
    public let fleetStore: (any FleetStore)?
    /// Keyed submits answered once per `Idempotency-Key`: through ``fleetStore`` for the whole
    /// fleet, or through a ``MemoryFleetStore`` of this process's for a server that runs alone
    /// (bounded by `idempotency_max_bytes`); nil when that bound is 0 and there is no fleet store,
    /// which runs every submit.
    public let fleetSubmits: FleetSubmits?
    /// Where the served screens come from, with what keeps them current.
    public let screensSource: ScreensSource
    /// Purges the CDN of what each reload changed, when `cdn` names purge targets.
    public let purger: CDNPurger?
    /// Set when shutdown begins; `/readyz` then answers 503.
    public let draining = Draining()
    /// Records which user was shown which alternative of an experiment (the application log's
    /// `exposure` lines); one for the application, so a user is recorded once per window.
    public let exposures: ExposureRecorder
    /// Spans of requests and their calls, and the service that exports them (run first in the
    /// service group, so it stops last and flushes what the drained requests recorded); nil when
    /// tracing is off.
    public let tracing: Tracing?
    /// The service that exports exposure records over OTLP (run first too), when
    /// `exposure_endpoint` is set.
    public let exposureExporter: (any Service)?
    /// Answers requests from the store; what the HTTP server calls, and what in-process tests call.
    public let responder: Responder

    /// Tracing's two halves: what makes spans, and what exports them.
    public struct Tracing: Sendable {
        public var requests: RequestTracing
        public var exporter: any Service

        public init(requests: RequestTracing, exporter: any Service) {
            self.requests = requests
            self.exporter = exporter
        }
    }

    /// Where the served screens come from, with what keeps them current.
    public enum ScreensSource: Sendable {
        /// The screens directory, which the watcher reloads when it changes (run with `watch` on).
        case files(ScreenWatcher)
        /// The fleet's store: the follower loads each bundle released, and the kept bundles
        /// answer data and submits for earlier revisions.
        case store(follower: PublishedScreens, kept: KeptBundles)
    }

    /// What this replica serves of the published screens, when they come from the store.
    public var published: PublishedScreens.State? {
        if case .store(let follower, _) = screensSource { follower.state } else { nil }
    }

    /// Published bundles loaded on demand for earlier revisions, when the screens come from the store.
    public var keptBundles: KeptBundles? {
        if case .store(_, let kept) = screensSource { kept } else { nil }
    }

    /// Reloads the screens directory into the store when it changes; nil when the screens come
    /// from the store.
    public var watcher: ScreenWatcher? {
        if case .files(let watcher) = screensSource { watcher } else { nil }
    }

    /// What an application runs with besides its configuration and screens: each part a
    /// deployment turns on. ``buildApplication(configuration:logger:metrics:store:published:environment:)``
    /// makes them from the configuration; a test or an embedding program sets those it needs.
    public struct Parts: Sendable {
        /// The fleet's shared store: keyed submits and experiments' exposure windows go through
        /// it, and with ``published`` the bundles of earlier revisions and the CDN purges the
        /// fleet agrees on; nil keeps everything in this replica's memory.
        public var fleetStore: (any FleetStore)? = nil
        /// What this replica serves of the published screens, when they come from the store
        /// (with ``fleetStore``; without one, the screens are the directory's).
        public var published: PublishedScreens.State? = nil
        /// Spans of requests and their calls (``makeTracing(_:logger:metrics:)``); nil: tracing off.
        public var tracing: Tracing? = nil
        /// Where exposure records go instead of the application log, and the service that exports
        /// them (``makeExposureExport(endpoint:_:logger:metrics:)``); nil: the log.
        public var exposureExport: (sink: any ExposureSink, service: any Service)? = nil
        /// The recorder of exposures; nil: one over the application log with the configuration's
        /// `exposure_window` (or over ``exposureExport``'s sink). Shared with ``fleetStore`` when
        /// there is one.
        public var exposures: ExposureRecorder? = nil
        /// The keys of ``ServerConfiguration/pageTokenKeys``, read; empty signs page tokens with a
        /// key made for this process.
        public var pageTokenKeys: [PageTokenKey] = []
        /// The screens directory as it was just before the served set was loaded from it.
        var screensFingerprint: [String: String]? = nil

        public init() {}
    }

    /// Everything made once: the parts the configuration turns on, and the responder over them.
    init(
        configuration: ServerConfiguration, store: ScreenStore, logger: Logger, metrics: any MetricsFactory, resolver: DataResolver,
        prometheus: PrometheusCollectorRegistry?, memo: ResponseMemo, previewEvents: PreviewEvents?, purger: CDNPurger?, parts: Parts
    ) {
        self.configuration = configuration
        self.store = store
        self.logger = logger
        self.metrics = metrics
        self.resolver = resolver
        self.prometheus = prometheus
        let serverMetrics = ServerMetrics(factory: metrics)
        self.serverMetrics = serverMetrics
        self.memo = memo
        self.previewEvents = previewEvents
        self.purger = purger
        self.tracing = parts.tracing
        self.exposureExporter = parts.exposureExport?.service
        var exposures =
            parts.exposures
            ?? ExposureRecorder(
                window: .milliseconds(Int64(configuration.exposureWindow * 1000)),
                sinks: [parts.exposureExport?.sink ?? LogExposureSink(logger: logger)], metrics: metrics, logger: logger)
        self.fleetStore = parts.fleetStore
        let submitClaims: (any SubmitClaims)?
        if let fleetStore = parts.fleetStore {
            exposures = exposures.sharing(fleetStore)
            submitClaims = fleetStore
        } else {
            // The same code as a fleet's, with a store of this process's own.
            submitClaims =
                configuration.idempotencyMaxBytes > 0
                ? MemoryFleetStore(window: configuration.idempotencyDuration, maxSubmitBytes: configuration.idempotencyMaxBytes) : nil
        }
        fleetSubmits = submitClaims.map {
            FleetSubmits(store: $0, window: configuration.idempotencyDuration, logger: logger, metrics: metrics)
        }
        if let fleetStore = parts.fleetStore, let published = parts.published {
            purger?.follow(fleetStore, state: published)
            screensSource = .store(
                follower: PublishedScreens(
                    store: fleetStore, screens: store, upstreams: Set(configuration.upstreams.keys), interval: PublishedScreens.interval,
                    state: published, logger: logger, metrics: metrics),
                kept: KeptBundles(store: fleetStore, screens: store, upstreams: Set(configuration.upstreams.keys), logger: logger))
        } else {
            screensSource = .files(
                ScreenWatcher(
                    directory: configuration.screensDirectory, interval: .milliseconds(Int64(configuration.watchInterval * 1000)),
                    upstreams: Set(configuration.upstreams.keys), upstreamDirectories: configuration.upstreamDirectories,
                    upstreamDocuments: configuration.upstreamDocuments, store: store, metrics: metrics, logger: logger,
                    loadedFingerprint: parts.screensFingerprint))
        }
        self.exposures = exposures

        var dependencies = Responder.Dependencies(store: store, logger: logger)
        dependencies.resolver = resolver
        dependencies.metrics = prometheus.map { MetricsExposition(registry: $0, server: serverMetrics) }
        dependencies.memo = memo
        dependencies.previewEvents = previewEvents
        dependencies.submits = fleetSubmits
        if case .store(let follower, let kept) = screensSource {
            dependencies.kept = kept
            dependencies.published = follower.state
        }
        dependencies.draining = draining
        dependencies.tracing = tracing?.requests
        dependencies.purger = purger
        dependencies.counting = serverMetrics
        dependencies.exposures = exposures
        let lifetime = Duration.seconds(configuration.pageTokenLifetime)
        dependencies.pageTokens =
            parts.pageTokenKeys.isEmpty
            ? .processLocal(lifetime: lifetime, maxPages: configuration.listMaxPages)
            : PageTokens(keys: parts.pageTokenKeys, lifetime: lifetime, maxPages: configuration.listMaxPages)
        if parts.pageTokenKeys.isEmpty, parts.fleetStore != nil {
            logger.warning(
                "page tokens are signed with a key made by this replica, which the others cannot read: a list's next page fails on another replica; give every replica the same page_token_keys"
            )
        }
        self.responder = Responder(dependencies)
    }

    /// The services that run what requests and reloads start and leave running, in the order the
    /// service group starts them (it stops them in the reverse order, after the HTTP server has
    /// drained): exposure records and submit answers bound for the store (which stops after
    /// them), the CDN's purges, upstream token fetches, and refreshes behind stale upstream
    /// values (stopped first: a refresh may wait for a token). A test door runs them beside
    /// the test.
    public var backgroundServices: [any BackgroundService] {
        var services: [any BackgroundService] = [exposures.writes]
        if let fleetSubmits { services.append(fleetSubmits.recordings) }
        if let purger { services.append(purger) }
        services.append(resolver.client.credentialFetches)
        services.append(resolver.cache.refreshes)
        return services
    }

    /// Runs `body` with the work of ``backgroundServices`` running beside it, then finishes what
    /// `body` left there, in the order the service group stops them, before it returns. For a
    /// program that serves with ``start(on:)`` instead of ``run()``, and for tests. Unlike the
    /// group's shutdown, it refuses nothing after: it can run again.
    public func withBackgroundServices<Value>(_ body: () async throws -> Value) async rethrows -> Value {
        try await Self.running(backgroundServices[...], body)
    }

    /// `body` inside the first of `services`' runs, inside the next one's, and so on: the last
    /// finishes what `body` left first.
    private static func running<Value>(
        _ services: ArraySlice<any BackgroundService>, _ body: () async throws -> Value
    ) async rethrows -> Value {
        guard let first = services.first else { return try await body() }
        return try await first.whileRunning { try await running(services.dropFirst(), body) }
    }

    /// Runs the server until SIGTERM or SIGINT, then drains in-flight requests and returns.
    public func run() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.threads)
        // Shut down in reverse order: the HTTP server drains first, then the work its requests
        // and the reloads left running in the background (``backgroundServices``), then the
        // store's connections close, then the spans are flushed.
        var services: [any Service] = []
        if let tracing { services.append(SpanExporterService(exporter: tracing.exporter, logger: logger)) }
        if let exposureExporter {
            services.append(SpanExporterService(exporter: exposureExporter, logger: logger, what: "exposure records"))
        }
        if let fleetStore { services.append(FleetStoreService(store: fleetStore)) }
        services += backgroundServices as [any Service]
        services.append(HTTPService(application: self, group: group))
        switch screensSource {
        case .store(let follower, _): services.append(follower)
        case .files(let watcher): if configuration.watch { services.append(watcher) }
        }
        var groupConfiguration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger
        )
        // Shutdown ends within drain_timeout of the signal (and a second for what drained requests
        // leave): the drain, then the span exporter's flush in what time remains, which is cancelled
        // past it, so a collector that does not answer cannot hold a pod past its grace period.
        groupConfiguration.maximumGracefulShutdownDuration = .milliseconds(Int64(configuration.drainTimeout * 1000) + 1000)
        let serviceGroup = ServiceGroup(configuration: groupConfiguration)
        do {
            try await serviceGroup.run()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    /// Binds the HTTP server on `group` and returns it running (tests bind port 0 this way).
    /// - Throws: ``AccessLog/OpenError`` when the access log file cannot be opened, or
    ///   ``ServerStartError`` when the address cannot be bound.
    public func start(on group: any EventLoopGroup) async throws -> HTTPServer {
        let accessLog =
            configuration.accessLog
            ? try AccessLog(
                format: configuration.accessLogFormat ?? configuration.logFormat, output: configuration.accessLogOutput,
                metrics: metrics, logger: logger
            ) : nil
        let server = try await HTTPServer.start(
            host: configuration.host, port: configuration.port, group: group, responder: responder, limits: configuration.limits,
            accessLog: accessLog, observer: serverMetrics, openConnections: serverMetrics.openConnections, logger: logger
        )
        if previewEvents != nil {
            let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
            let exposed = !["127.0.0.1", "::1", "localhost"].contains(configuration.host)
            let address = "http://\(host):\(server.port ?? configuration.port)/preview"
            if exposed {
                logger.warning(
                    "the live preview at \(address) is reachable from other machines; turn it off with --no-preview (\"preview\": false) outside your desk"
                )
            } else {
                logger.info("live preview at \(address)")
            }
        }
        return server
    }
}

/// The span exporter as a service of the group, whose flush at shutdown may be cut short (see
/// ``Application/run()``): cancelled then, it says so and ends like a finished service instead of
/// failing the process.
struct SpanExporterService: Service, CustomStringConvertible {
    let exporter: any Service
    let logger: Logger
    /// What it exports, as the warning says it.
    var what = "spans"

    func run() async throws {
        do {
            try await exporter.run()
        } catch  where Task.isCancelled {
            logger.warning(
                "\(what) recorded before shutdown were not all exported: the collector did not take them within drain_timeout",
                metadata: ["cause": .string(String(describing: error))]
            )
        }
    }
}

/// The fleet's store as a service of the group: its connections and housekeeping.
struct FleetStoreService: Service, CustomStringConvertible {
    let store: any FleetStore

    func run() async throws { try await store.run() }
}

/// The HTTP server as a service of the service group: serves until graceful shutdown, then drains.
struct HTTPService: Service, CustomStringConvertible {

    let application: Application
    let group: any EventLoopGroup

    func run() async throws {
        // SIGHUP reopens the access log file after a log rotator moved it (as nginx's USR1 does).
        // Trapped before the server listens, so a rotation right after start-up cannot kill it.
        let signals = application.configuration.accessLog ? await UnixSignalsSequence(trapping: .sighup) : nil
        // A replica that starts with nothing to serve listens once the store was looked at: with
        // the current bundle, as a rule; if none loads (or the store does not answer within its
        // timeout), it listens anyway, answering /healthz and /metrics, and /readyz with why not.
        if let published = application.published, application.store.snapshot.screenSet.isNone {
            let timeout = Duration.seconds(application.configuration.store.timeout) + .seconds(1)
            await cancelWhenGracefulShutdown { await published.firstLook(upTo: timeout) }
        }
        let server = try await application.start(on: group)
        await withTaskGroup(of: Void.self) { tasks in
            if let signals {
                // Ends when shutdown cancels the group.
                tasks.addTask {
                    for await _ in signals { await server.reopenAccessLog() }
                }
            }
            // Returns on graceful shutdown (SIGTERM/SIGINT), throws on cancellation: drain either way.
            try? await gracefulShutdown()
            tasks.cancelAll()
        }
        application.draining.begin()
        await server.shutdown(drainTimeout: .milliseconds(Int64(application.configuration.drainTimeout * 1000)))
    }
}

/// Why the application could not be built.
public enum ApplicationError: Error, Sendable, CustomStringConvertible {
    /// The screen set has errors; nothing is served from it.
    case invalidScreens([Diagnostic])
    /// Tracing is on, and its exporter cannot be made from the settings (or `OTEL_*` variables).
    case tracing(String)
    /// An upstream's credential names a secret that is not there (unset, empty, unreadable).
    case credentials([ConfigurationError])
    /// `exposure_endpoint` is set, and its exporter cannot be made from the settings (or `OTEL_*` variables).
    case exposures(String)

    public var description: String {
        switch self {
        case .invalidScreens(let diagnostics):
            let errors = diagnostics.filter { $0.severity == .error }.count
            return "the screen set has \(errors) error\(errors == 1 ? "" : "s"); nothing was served:\n" + diagnostics.report
        case .tracing(let reason):
            return "tracing is on, but its exporter could not be made: \(reason); check tracing_endpoint and the OTEL_* variables"
        case .exposures(let reason):
            return
                "exposure_endpoint is set, but its exporter could not be made: \(reason); check exposure_endpoint and the OTEL_* variables"
        case .credentials(let problems):
            return "an upstream's credential cannot be read; nothing was served:\n" + problems.map { "\($0)" }.joined(separator: "\n")
        }
    }
}

/// Loads and validates the screens named by the configuration and assembles the application.
/// - Throws: ``ApplicationError/invalidScreens(_:)`` with every diagnostic when the set has errors.
/// - Parameters:
///   - metrics: where metrics are recorded; by default a Prometheus registry of the
///     application's own, exposed at `GET /metrics`. The HTTP request metrics are counted per
///     event loop by ``Application/serverMetrics`` whatever the factory.
///   - store: the fleet's shared store, made from ``ServerConfiguration/store`` by the caller (the
///     `taksi-server` command makes a PostgreSQL one); nil keeps submits in memory.
///   - published: the store's current bundle, already loaded, when the screens come from the
///     store (``ServerConfiguration/ScreensSource/store``); the directory is not read then. Nil
///     with screens from the store starts with none (``ScreenSet/none``): the follower
///     (``PublishedScreens``) loads the current bundle as the application runs.
///   - environment: where upstream credentials named `{"env": ...}` are checked (the process's by
///     default); a missing one stops the start.
public func buildApplication(
    configuration: ServerConfiguration, logger: Logger, metrics: (any MetricsFactory)? = nil, store: (any FleetStore)? = nil,
    published: (name: String, screenSet: ScreenSet, bytes: Int?)? = nil,
    environment: [String: String]? = nil
) throws(ApplicationError) -> Application {
    let missing =
        UpstreamCredentials.problems(
            configuration.upstreamOptions.compactMapValues(\.credential), environment: environment ?? ProcessInfo.processInfo.environment)
        + CDNPurger.problems(configuration.cdn, environment: environment ?? ProcessInfo.processInfo.environment)
    let pageKeys = ServerConfiguration.PageTokenKeySetting.keys(
        configuration.pageTokenKeys, environment: environment ?? ProcessInfo.processInfo.environment)
    guard missing.isEmpty, pageKeys.problems.isEmpty else { throw .credentials(missing + pageKeys.problems) }
    let (metrics, registry) = metricsFactory(metrics)
    var parts = Application.Parts()
    parts.fleetStore = store
    parts.pageTokenKeys = pageKeys.keys
    let screenSet: ScreenSet
    let screenSetBytes: Int?
    if let published {
        (screenSet, screenSetBytes) = (published.screenSet, published.bytes)
        parts.published = PublishedScreens.State(replica: PublishedScreens.replicaName, serving: published.name)
        PublishedScreens.recordServed(published.name, previous: nil, metrics: metrics)
    } else if configuration.screensSource == .store {
        (screenSet, screenSetBytes) = (.none, nil)
        parts.published = PublishedScreens.State(replica: PublishedScreens.replicaName, serving: nil)
    } else {
        // Taken before the files are read: an edit made while they load is a change the watcher sees.
        parts.screensFingerprint = ScreenWatcher.fingerprint(of: configuration.screensDirectory)
        let (load, loadedBytes) = HeapUsage.measuring {
            ScreenSetLoader.load(
                directory: configuration.screensDirectory, upstreams: Set(configuration.upstreams.keys),
                upstreamDirectories: configuration.upstreamDirectories, upstreamDocuments: configuration.upstreamDocuments)
        }
        guard let loaded = load.screenSet else { throw .invalidScreens(load.diagnostics) }
        for warning in load.diagnostics where warning.severity == .warning {
            logger.warning("\(warning)")
        }
        logger.info(
            "screens loaded",
            metadata: ["count": .stringConvertible(loaded.screens.count), "directory": .string(configuration.screensDirectory)]
        )
        (screenSet, screenSetBytes) = (loaded, loadedBytes)
    }
    if let endpoint = configuration.exposureEndpoint {
        do {
            parts.exposureExport = try makeExposureExport(endpoint: endpoint, configuration.tracing, logger: logger, metrics: metrics)
        } catch {
            throw .exposures(String(describing: error))
        }
        logger.info("exposure records exported", metadata: ["endpoint": .string(endpoint)])
    }
    if configuration.tracing.enabled {
        do {
            parts.tracing = try makeTracing(configuration.tracing, logger: logger, metrics: metrics)
        } catch {
            throw .tracing(String(describing: error))
        }
        logger.info(
            "tracing on", metadata: ["endpoint": .string(configuration.tracing.endpoint), "sampling": "\(configuration.tracing.sampling)"])
    }
    return assemble(
        configuration: configuration, screenSet: screenSet, logger: logger, metrics: metrics, registry: registry,
        screenSetBytes: screenSetBytes, parts: parts)
}

/// The factory metrics are recorded in (`given`, else a Prometheus registry's) and the registry
/// `/metrics` exposes: the application's own, nil when the caller gave a factory (it then owns exporting).
private func metricsFactory(_ given: (any MetricsFactory)?) -> (any MetricsFactory, PrometheusCollectorRegistry?) {
    if let given { return (given, nil) }
    let registry = PrometheusCollectorRegistry()
    return (PrometheusMetricsFactory(registry: registry), registry)
}

/// Spans exported over OTLP/HTTP (protobuf) by swift-otel, from the settings and the standard
/// `OTEL_*` variables, which override them: a batch exporter whose service flushes at shutdown.
/// Only traces: logs and metrics have their own outputs.
/// - Parameters:
///   - logger: swift-otel's diagnostic logger (export failures); no request header reaches it.
///   - metrics: where refused trace context headers are counted
///     (`taksi_trace_context_refused_total`); nil counts nothing.
public func makeTracing(
    _ settings: ServerConfiguration.TracingSettings, logger: Logger, metrics: (any MetricsFactory)? = nil
) throws -> Application.Tracing {
    var configuration = OTel.Configuration.exporting(settings, logger: logger)
    configuration.traces.enabled = true
    configuration.traces.exporter = .otlp
    configuration.traces.otlpExporter.sending(to: settings.endpoint, path: "/v1/traces", headers: settings.headers)
    // The server decides which requests are recorded (``RequestTracing/init(tracer:sampling:)``),
    // so a request sampled out costs next to nothing, and the tracer records what it is given;
    // unless OTEL_TRACES_SAMPLER names a sampler, which then decides for every request.
    // (swift-otel reads the process's environment, so this does too.)
    let samplerNamed = ProcessInfo.processInfo.environment["OTEL_TRACES_SAMPLER"] != nil
    configuration.traces.sampler =
        samplerNamed ? .parentBasedTraceIDRatio(ratio: settings.sampling) ?? .parentBasedAlwaysOn : .parentBasedAlwaysOn
    let (tracer, service) = try OTel.makeTracingBackend(configuration: configuration)
    return Application.Tracing(
        requests: RequestTracing(tracer: tracer, sampling: samplerNamed ? nil : settings.sampling, metrics: metrics), exporter: service)
}

/// Exposure records as OTLP log records over OTLP/HTTP (protobuf), by swift-otel's logging
/// backend: a batch processor whose service flushes at shutdown. Sent with the tracing settings'
/// headers and service name; `OTEL_*` variables override them as they do for spans. Records the
/// collector does not take are counted in `metrics` (``ExposureExportFailures``).
public func makeExposureExport(
    endpoint: String, _ settings: ServerConfiguration.TracingSettings, logger: Logger, metrics: any MetricsFactory
) throws -> (sink: any ExposureSink, service: any Service) {
    let diagnostics = Logger(label: logger.label) { _ in ExposureExportFailures(forwardingTo: logger, metrics: metrics) }
    var configuration = OTel.Configuration.exporting(settings, logger: diagnostics)
    configuration.logs.enabled = true
    configuration.logs.level = .info
    configuration.logs.exporter = .otlp
    configuration.logs.otlpExporter.sending(to: endpoint, path: "/v1/logs", headers: settings.headers)
    let (factory, service) = try OTel.makeLoggingBackend(configuration: configuration)
    var exposures = Logger(label: "taksi.exposures", factory: factory)
    exposures.logLevel = .info
    return (LogExposureSink(logger: exposures), service)
}

extension OTel.Configuration {
    /// Nothing exported yet: the settings' service name, and `logger` for swift-otel's own
    /// messages (export failures); each caller turns on the one signal it exports.
    fileprivate static func exporting(_ settings: ServerConfiguration.TracingSettings, logger: Logger) -> Self {
        var configuration = Self.default
        configuration.serviceName = settings.serviceName
        configuration.traces.enabled = false
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        configuration.diagnosticLogger = .custom(logger)
        return configuration
    }
}

extension OTel.Configuration.OTLPExporterConfiguration {
    /// OTLP/HTTP with protobuf to `endpoint` (a collector's base URL, or the signal's own URL
    /// ending in `path`), with `headers` (a collector's credentials).
    fileprivate mutating func sending(to endpoint: String, path: String, headers: [String: String]) {
        self.protocol = .httpProtobuf
        self.endpoint = endpoint.hasSuffix(path) ? endpoint : endpoint.trimmingSuffix("/") + path
        self.headers = headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.hasSuffix(suffix) { text.removeLast(suffix.count) }
        return text
    }
}

/// Assembles the application around an already loaded screen set (tests, embedding).
/// - Parameters:
///   - metrics: where metrics are recorded; by default a Prometheus registry of the
///     application's own, exposed at `GET /metrics`.
///   - cache: the upstream response cache; tests pass one with a clock they control.
///   - screenSetBytes: how much the heap grew while `screenSet` was loaded, when measured: with
///     what preparing it adds, what it costs once it is kept after a reload.
///   - parts: the parts a deployment turns on (the fleet's store, tracing, exposure export);
///     none by default.
public func buildApplication(
    configuration: ServerConfiguration, screenSet: ScreenSet, logger: Logger, metrics: (any MetricsFactory)? = nil,
    cache: UpstreamCache? = nil, screenSetBytes: Int? = nil, parts: Application.Parts = Application.Parts()
) -> Application {
    let (metrics, registry) = metricsFactory(metrics)
    return assemble(
        configuration: configuration, screenSet: screenSet, logger: logger, metrics: metrics, registry: registry, cache: cache,
        screenSetBytes: screenSetBytes, parts: parts)
}

/// The application over `screenSet`, made once with everything it runs with.
private func assemble(
    configuration: ServerConfiguration, screenSet: ScreenSet, logger: Logger, metrics: any MetricsFactory,
    registry: PrometheusCollectorRegistry?, cache: UpstreamCache? = nil, screenSetBytes: Int?, parts: Application.Parts
) -> Application {
    let cache = cache ?? UpstreamCache(logger: logger)
    let memo = ResponseMemo(limits: ResponseMemo.Limits(maxBytes: configuration.dataMemoMaxBytes), metrics: metrics, following: cache)
    let store = ScreenStore(
        screenSet,
        options: .init(
            skeletonMaxAge: configuration.skeletonMaxAge, skeletonStaleWhileRevalidate: configuration.skeletonStaleWhileRevalidate,
            skeletonSharedMaxAge: configuration.cdn?.skeletonSharedMaxAge, cacheTags: configuration.cdn?.tags,
            appLinks: configuration.appLinks
        ),
        metrics: metrics, loadedBytes: screenSetBytes
    )
    var previewEvents: PreviewEvents?
    if configuration.preview {
        let events = PreviewEvents(status: store.status)
        store.onChange { status in events.publish(status) }
        previewEvents = events
    }
    var purger: CDNPurger?
    if let cdn = configuration.cdn, !cdn.targets.isEmpty {
        let made = CDNPurger(settings: cdn, logger: logger, metrics: metrics)
        store.onReplace { old, new in made.purge(screens: CDNPurger.changedScreens(from: old, to: new)) }
        purger = made
    }
    return Application(
        configuration: configuration,
        store: store,
        logger: logger,
        metrics: metrics,
        resolver: DataResolver(
            client: UpstreamClient(
                upstreams: configuration.upstreams,
                credentials: UpstreamCredentials(
                    configuration.upstreamOptions.compactMapValues(\.credential), environment: ProcessInfo.processInfo.environment,
                    http: upstreamHTTPClient, logger: logger, metrics: metrics)),
            cache: cache, logger: logger, metrics: metrics
        ),
        prometheus: registry,
        memo: memo,
        previewEvents: previewEvents,
        purger: purger,
        parts: parts
    )
}

// The service group logs its services at debug level, by their descriptions: a reflection of one
// would write what it holds there (the configuration with its tracing headers, the store's
// connection). Each is described by its name alone.
extension HTTPService {
    var description: String { "HTTPService" }
}

extension SpanExporterService {
    var description: String { "SpanExporterService" }
}

extension FleetStoreService {
    var description: String { "FleetStoreService" }
}
