public import TaksiSchema

/// The values a data request gives its plan, one slot for each parameter the plan reads (see
/// ``DataPlan/RequestSlots``): what a data response is rendered from and kept by. Read from the
/// request with no table of names made (``DataPlan/readRequest(parameter:path:)``).
public struct RequestValues: Hashable, Sendable {
    /// Each slot's value, in the plan's slots' order; nil where the request has no value and the
    /// parameter no default.
    public var values: [JSONValue?]
}

extension DataPlan {
    /// Where each value a data request gives the plan goes: one slot for each query parameter of
    /// the plan's `request` sources and each path parameter of its `path` source, in the sources'
    /// sorted order and, within a source, the parameters'. Made once with the plan.
    public struct RequestSlots: Sendable {
        struct Slot: Sendable {
            var source: String
            var name: String
            var parameter: RequestParameter
            /// A path parameter: its value comes typed from the route, not from the query.
            var isPath: Bool
        }

        let slots: [Slot]

        init(sources: [String: SourceDefinition]) {
            var slots: [Slot] = []
            for (source, definition) in sources.sorted(by: { $0.key < $1.key }) {
                switch definition {
                case .request(let parameters), .path(let parameters):
                    let isPath = if case .path = definition { true } else { false }
                    for (name, parameter) in parameters.sorted(by: { $0.key < $1.key }) {
                        slots.append(Slot(source: source, name: name, parameter: parameter, isPath: isPath))
                    }
                case .fixture, .http:
                    continue
                }
            }
            self.slots = slots
        }

        /// The slot of `path`'s first step (`query.name`'s); nil when the path reads no single
        /// parameter (a whole source, another source).
        func slot(of path: ValuePath) -> Int? {
            guard case .key(let name)? = path.steps.segments.first else { return nil }
            return slots.firstIndex { $0.name == name && $0.source == path.root }
        }

        /// Whether `source` is one whose values are slots.
        func holds(_ source: String) -> Bool {
            slots.contains { $0.source == source }
        }

        /// The request sources' values as objects by source name, as a screen's expressions read
        /// them (`{"query": {"name": "Ada"}}`); a source with no value present is an empty object.
        func sourceValues(_ request: RequestValues) -> [String: JSONValue] {
            var objects: [String: [String: JSONValue]] = [:]
            for (slot, value) in zip(slots, request.values) {
                if let value {
                    objects[slot.source, default: [:]][slot.name] = value
                } else if objects[slot.source] == nil {
                    objects[slot.source] = [:]
                }
            }
            return objects.mapValues { .object($0) }
        }
    }

    /// The request's values in the plan's slots: each query parameter read by `parameter` (its
    /// text, decoded, or nil) and converted to its kind or given its default, each path parameter
    /// from `path` (typed by the route, ``ScreenPattern/values(_:)``).
    /// - Throws: ``DataRequestError`` for the first parameter, in the sources' and parameters'
    ///   sorted order, that is missing or does not convert.
    public func readRequest(
        parameter query: (String) -> String?, path: [String: JSONValue] = [:]
    ) throws(DataRequestError) -> RequestValues {
        let slots = requestSlots.slots
        var values: [JSONValue?] = []
        values.reserveCapacity(slots.count)
        // By index: a copy of a slot would retain each of its parts, shared by every event loop.
        for index in slots.indices {
            if slots[index].isPath {
                values.append(path[slots[index].name])
            } else {
                values.append(try Self.read(slots[index].name, slots[index].parameter, query: query))
            }
        }
        return RequestValues(values: values)
    }

    /// The values of the plan's request-dependent sources, by source name, as its expressions
    /// read them: a request source's query parameters (or defaults) as an object, the path
    /// source's path parameters.
    public func sourceValues(of request: RequestValues) -> [String: JSONValue] {
        requestSlots.sourceValues(request)
    }
}

/// Where an expression's paths are looked up when it is written as text
/// (``ContentExpression/writeText(in:into:)``): a table of values by source name, or one data
/// request's slots beside its plan's other sources (``PlanValues``).
protocol ValueLookup {
    /// The value at `path`, or why it is missing, as ``ContentExpression/resolve(_:in:)`` says it.
    func resolve(_ path: ValuePath) -> Result<JSONValue, ContentExpression.LookupFailure>
    /// Every source's value by name, for an expression evaluated whole.
    var sourceValues: [String: JSONValue] { get }
}

extension Dictionary: ValueLookup where Key == String, Value == JSONValue {
    func resolve(_ path: ValuePath) -> Result<JSONValue, ContentExpression.LookupFailure> {
        ContentExpression.resolve(path, in: self)
    }

    var sourceValues: [String: JSONValue] { self }
}

/// One data request's values as a plan's expressions read them: a parameter from its slot, any
/// other source from `named` (fixtures, upstream answers). A path that reads a parameter the
/// request left without a value, or a request source whole, is looked up in the table of every
/// source, so a missing value is explained as it always is.
struct PlanValues: ValueLookup {
    let slots: DataPlan.RequestSlots
    let request: RequestValues
    /// The other sources' values by name.
    let named: [String: JSONValue]

    func resolve(_ path: ValuePath) -> Result<JSONValue, ContentExpression.LookupFailure> {
        if let slot = slots.slot(of: path), let value = request.values[slot] {
            return ContentExpression.walk(path, from: value, at: 1)
        }
        return slots.holds(path.root) ? ContentExpression.resolve(path, in: sourceValues) : ContentExpression.resolve(path, in: named)
    }

    var sourceValues: [String: JSONValue] {
        named.merging(slots.sourceValues(request)) { _, request in request }
    }
}
