// A stand-in for the few SwiftUI declarations that the views of docs/client.md use, so that they
// compile on Linux, which has no SwiftUI (Package.swift declares this module on Linux only; on
// macOS the views build against the real SwiftUI). Written from SwiftUI's published interface,
// with the same names, generic shapes and initializers; nothing here draws anything.

public import Foundation

/// A view: its `body` is made by a `ViewBuilder`, on the main actor (SwiftUI's `View` since iOS
/// 15's SDK; Xcode 16's puts the whole protocol on the main actor).
public protocol View {
    associatedtype Body: View
    @ViewBuilder @MainActor var body: Body { get }
}

extension Never: View {
    public var body: Never { fatalError("a primitive view has no body") }
}

/// A view that SwiftUI draws itself.
public protocol PrimitiveView: View where Body == Never {}

extension PrimitiveView {
    public var body: Never { fatalError("a primitive view has no body") }
}

extension Optional: View where Wrapped: View {
    public var body: Never { fatalError("a primitive view has no body") }
}

@resultBuilder
public enum ViewBuilder {
    public static func buildExpression<Content: View>(_ content: Content) -> Content { content }
    public static func buildBlock() -> EmptyView { EmptyView() }
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    public static func buildBlock<C0: View, C1: View>(_ c0: C0, _ c1: C1) -> TupleView<(C0, C1)> { TupleView((c0, c1)) }
    public static func buildBlock<C0: View, C1: View, C2: View>(_ c0: C0, _ c1: C1, _ c2: C2) -> TupleView<(C0, C1, C2)> {
        TupleView((c0, c1, c2))
    }
    public static func buildBlock<C0: View, C1: View, C2: View, C3: View>(
        _ c0: C0, _ c1: C1, _ c2: C2, _ c3: C3
    ) -> TupleView<(C0, C1, C2, C3)> {
        TupleView((c0, c1, c2, c3))
    }
    public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
    public static func buildEither<TrueContent: View, FalseContent: View>(
        first: TrueContent
    ) -> _ConditionalContent<TrueContent, FalseContent> {
        _ConditionalContent(storage: .trueContent(first))
    }
    public static func buildEither<TrueContent: View, FalseContent: View>(
        second: FalseContent
    ) -> _ConditionalContent<TrueContent, FalseContent> {
        _ConditionalContent(storage: .falseContent(second))
    }
}

public struct EmptyView: PrimitiveView {
    public init() {}
}

public struct TupleView<T>: PrimitiveView {
    public var value: T
    public init(_ value: T) { self.value = value }
}

public struct _ConditionalContent<TrueContent: View, FalseContent: View>: PrimitiveView {
    public enum Storage {
        case trueContent(TrueContent)
        case falseContent(FalseContent)
    }
    let storage: Storage
}

public struct AnyView: PrimitiveView {
    public init<V: View>(_ view: V) {}
}

public struct Font: Hashable, Sendable {
    private let name: String
    public static let headline = Font(name: "headline")
    public static let subheadline = Font(name: "subheadline")
    public static let body = Font(name: "body")
    public static let caption = Font(name: "caption")
}

public struct HorizontalAlignment: Equatable, Sendable {
    private let name: String
    public static let leading = HorizontalAlignment(name: "leading")
    public static let center = HorizontalAlignment(name: "center")
    public static let trailing = HorizontalAlignment(name: "trailing")
}

public struct VerticalAlignment: Equatable, Sendable {
    private let name: String
    public static let top = VerticalAlignment(name: "top")
    public static let center = VerticalAlignment(name: "center")
    public static let bottom = VerticalAlignment(name: "bottom")
}

/// The key of a localized text; a string literal with interpolations makes one.
public struct LocalizedStringKey: ExpressibleByStringInterpolation, Equatable {
    private var key: String

    public init(_ value: String) { key = value }
    public init(stringLiteral value: String) { key = value }
    public init(stringInterpolation: StringInterpolation) { key = stringInterpolation.key }

    public struct StringInterpolation: StringInterpolationProtocol {
        var key = ""
        public init(literalCapacity: Int, interpolationCount: Int) {}
        public mutating func appendLiteral(_ literal: String) { key += literal }
        public mutating func appendInterpolation<T>(_ value: T) { key += "%@" }
        public mutating func appendInterpolation<T: BinaryFloatingPoint>(_ value: T, specifier: String) { key += specifier }
        public mutating func appendInterpolation<T: BinaryInteger>(_ value: T, specifier: String) { key += specifier }
    }
}

public struct Text: PrimitiveView, Equatable {
    public init(_ key: LocalizedStringKey) {}
    @_disfavoredOverload
    public init<S: StringProtocol>(_ content: S) {}
    public init(verbatim content: String) {}

    public func font(_ font: Font?) -> Text { self }
}

public struct HStack<Content: View>: PrimitiveView {
    public init(alignment: VerticalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {}
}

public struct VStack<Content: View>: PrimitiveView {
    public init(alignment: HorizontalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {}
}

public struct Spacer: PrimitiveView {
    public init(minLength: CGFloat? = nil) {}
}

public struct Button<Label: View>: PrimitiveView {
    public init(action: @escaping () -> Void, @ViewBuilder label: () -> Label) {}
}

public struct ScrollView<Content: View>: PrimitiveView {
    public init(@ViewBuilder content: () -> Content) {}
}

public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content: View>: PrimitiveView {
    public init(_ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder content: @escaping (Data.Element) -> Content) {}
}

/// A view with a modifier applied.
public struct ModifiedContent<Content: View>: PrimitiveView {
    let content: Content
}

extension View {
    public func font(_ font: Font?) -> ModifiedContent<Self> { ModifiedContent(content: self) }
    public func frame(width: CGFloat? = nil, height: CGFloat? = nil) -> ModifiedContent<Self> { ModifiedContent(content: self) }
    public func onAppear(perform action: (() -> Void)? = nil) -> ModifiedContent<Self> { ModifiedContent(content: self) }
}

/// A value a view owns: its setter is `nonmutating`, so a view's closures can assign it.
@propertyWrapper
public struct State<Value> {
    private final class Box {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    private let box: Box

    public init(wrappedValue value: Value) { box = Box(value) }

    public var wrappedValue: Value {
        get { box.value }
        nonmutating set { box.value = newValue }
    }
}

// For Examples/ShopApp: an app, its window, a navigation stack over a path.

/// An app: its `body` is its scenes; `main()` runs it.
public protocol App {
    associatedtype Body: Scene
    @SceneBuilder @MainActor var body: Body { get }
    @MainActor init()
}

extension App {
    @MainActor public static func main() {}
}

/// A part of an app's interface: a window group, say.
public protocol Scene {
    associatedtype Body: Scene
    @SceneBuilder @MainActor var body: Body { get }
}

extension Never: Scene {}

@resultBuilder
public enum SceneBuilder {
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
}

public struct WindowGroup<Content: View>: Scene {
    public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("a primitive scene has no body") }
}

/// A value and how to change it, for a view that edits what another owns.
@propertyWrapper @dynamicMemberLookup
public struct Binding<Value> {
    private let get: () -> Value
    private let set: (Value) -> Void

    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) {
        self.get = get
        self.set = set
    }

    public var wrappedValue: Value {
        get { get() }
        nonmutating set { set(newValue) }
    }

    public subscript<Subject>(dynamicMember keyPath: WritableKeyPath<Value, Subject>) -> Binding<Subject> {
        Binding<Subject>(
            get: { get()[keyPath: keyPath] },
            set: {
                var value = get()
                value[keyPath: keyPath] = $0
                set(value)
            })
    }
}

/// Bindings to the properties of an `@Observable` object.
@propertyWrapper @dynamicMemberLookup
public struct Bindable<Value: AnyObject> {
    public var wrappedValue: Value

    public init(_ wrappedValue: Value) { self.wrappedValue = wrappedValue }
    public init(wrappedValue: Value) { self.wrappedValue = wrappedValue }

    public subscript<Subject>(dynamicMember keyPath: ReferenceWritableKeyPath<Value, Subject>) -> Binding<Subject> {
        let object = wrappedValue
        return Binding(get: { object[keyPath: keyPath] }, set: { object[keyPath: keyPath] = $0 })
    }
}

public struct NavigationStack<Data, Root: View>: PrimitiveView {
    public init(path: Binding<Data>, @ViewBuilder root: () -> Root)
    where Data: MutableCollection & RandomAccessCollection & RangeReplaceableCollection, Data.Element: Hashable {}
}

extension View {
    public func navigationDestination<D: Hashable, C: View>(
        for data: D.Type, @ViewBuilder destination: @escaping (D) -> C
    )
        -> ModifiedContent<Self>
    { ModifiedContent(content: self) }
}

/// An image.
public struct Image: PrimitiveView {}

/// An image loaded from a URL (iOS 15).
public struct AsyncImage<Content: View>: PrimitiveView {
    public init(url: URL?, scale: CGFloat = 1) where Content == Image {}
}
