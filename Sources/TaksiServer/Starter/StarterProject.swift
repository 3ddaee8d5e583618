public import Foundation

/// The project `taksi-server init DIR` writes: a folder a team owns, with one commented starter
/// screen, a custom component and its data, a configuration, a Dockerfile, a CI workflow that
/// validates the screens, a `.gitignore` and a short README. From that folder `taksi-server validate` and `taksi-server serve` work with no
/// flags. Nothing is ever written over an existing file.
///
/// ```swift
/// let written = try StarterProject.create(in: URL(fileURLWithPath: "/tmp/app"))
/// ```
public enum StarterProject {
    /// Every file, by its path relative to the project folder.
    public static let files: [(path: String, contents: String)] = [
        ("Screens/home.yaml", homeScreen),
        ("Screens/components/card_component.json", cardComponent),
        ("Screens/fixtures/home.json", homeData),
        ("config.json", configuration),
        ("Dockerfile", dockerfile),
        (".github/workflows/screens.yml", workflow),
        (".gitignore", gitignore),
        ("README.md", readme),
    ]

    /// Why a project was not created.
    public enum CreationError: Error, Sendable, CustomStringConvertible {
        /// These files exist already; nothing was written.
        case filesExist([String])
        /// A file could not be written (permissions, a file where a folder belongs).
        case unwritable(path: String, reason: String)

        public var description: String {
            switch self {
            case .filesExist(let paths):
                "these files exist already, and init never writes over a file: \(paths.joined(separator: ", ")); choose an empty or new folder"
            case .unwritable(let path, let reason):
                "cannot write \(path): \(reason)"
            }
        }
    }

    /// Writes the project into `directory` (made when missing).
    /// - Returns: the paths written, relative to `directory`.
    /// - Throws: ``CreationError/filesExist(_:)`` when any file exists already (then nothing is written).
    @discardableResult
    public static func create(in directory: URL) throws(CreationError) -> [String] {
        let manager = FileManager.default
        let existing = files.map(\.path).filter { manager.fileExists(atPath: directory.appendingPathComponent($0).path) }
        guard existing.isEmpty else { throw .filesExist(existing) }
        for (path, contents) in files {
            let url = directory.appendingPathComponent(path)
            do {
                try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                // withoutOverwriting: a file that appeared since the check above is still not replaced.
                try Data(contents.utf8).write(to: url, options: .withoutOverwriting)
            } catch {
                throw .unwritable(path: url.path, reason: error.localizedDescription)
            }
        }
        return files.map(\.path)
    }

    static let homeScreen = """
        # Your first screen. The app asks for it at GET /screens/home (the skeleton: layout and
        # placeholders), then at GET /screens/home/data (the values). Edit this file while
        # `taksi-server serve` runs: the server reloads it within a second, and refuses (keeping the
        # last good version) anything the app could not decode. `taksi-server validate` checks it too.
        name: home
        # The app opens this screen itself; other screens are reached by navigation actions.
        entry: true

        sources:
          # Values from a JSON file, read at start-up and on every reload.
          content:
            type: fixture
            file: fixtures/home.json
          # Values from the data request's query string: /screens/home/data?name=Ada
          query:
            type: request
            parameters:
              name: {type: string, default: there}

        components:
          # A built-in component. Its value comes from data, so the skeleton sends a placeholder.
          - name: label_component
            identifier: greeting
            content:
              value: {$template: "Hello, {query.name}!"}
              kind: title

          - name: label_component
            identifier: intro
            content:
              value: {$bind: content.intro}
              kind: body

          # A list of your own component (declared in components/card_component.json; the app
          # registers a Swift class for it). One card per element of content.cards.
          - name: collection_component
            identifier: cards
            content:
              component_name: card_component
              values:
                $each: content.cards
                as: card
                template:
                  title: {$bind: card.title}
                  subtitle: {$bind: card.subtitle}      # optional: left out when missing
                  image_url: {$bind: card.image}

          - name: spacer_component
            content: {}

          # A static button: "executable" actions are handled by the app, by name.
          - name: button_component
            identifier: refresh
            content:
              title: Refresh
              kind: secondary
              action: {identifier: executable, content: {name: refresh}}

        """

    static let cardComponent = """
        {
          "name": "card_component",
          "summary": "A card with a title, an optional subtitle and an image. The app registers a class named like it.",
          "fields": [
            {"name": "title", "type": "string", "required": true, "dynamic": true, "summary": "The card's title."},
            {"name": "subtitle", "type": "string", "required": false, "dynamic": true, "summary": "A line under the title."},
            {"name": "image_url", "type": "url", "required": true, "dynamic": true, "summary": "An absolute https URL."}
          ]
        }

        """

    static let homeData = """
        {
          "intro": "These cards come from Screens/fixtures/home.json. Point a source at your API to make them live.",
          "cards": [
            {"title": "Edit a screen", "subtitle": "Screens/home.yaml", "image": "https://images.example.com/cards/edit.png"},
            {"title": "Add a component", "subtitle": "Screens/components/", "image": "https://images.example.com/cards/component.png"},
            {"title": "Ship it", "image": "https://images.example.com/cards/ship.png"}
          ]
        }

        """

    static let configuration = """
        {
          "host": "127.0.0.1",
          "port": 8080,
          "screens": "Screens",
          "preview": true,
          "upstreams": {}
        }

        """

    static let dockerfile = """
        # Your screens on the taksi-server image. Build that image from the taksi-server repository
        # once (docker build -t taksi-server:\(TaksiServerVersion.current) -t taksi-server .), or
        # set TAKSI_IMAGE to your registry's copy of it (--build-arg TAKSI_IMAGE=...).
        #
        #   docker build -t my-screens .
        #   docker run -p 8080:8080 my-screens
        #
        # The base image listens on 0.0.0.0:8080 and logs JSON lines; its defaults are its own
        # /app/config.json, which the copy below replaces with yours (plus host, port and log format
        # set for a container, and the live preview turned off: it is for your desk, not production).
        # Or skip this file and mount your folder into the released image:
        #   docker run -p 8080:8080 -v "$PWD/Screens:/app/Screens:ro" taksi-server
        ARG TAKSI_IMAGE=taksi-server:\(TaksiServerVersion.current)
        FROM ${TAKSI_IMAGE}
        COPY Screens /app/Screens
        COPY config.json /app/config.json
        CMD ["serve", "--config", "/app/config.json", "--host", "0.0.0.0", "--log-format", "json", "--no-preview"]

        """

    /// A GitHub Actions workflow that validates the screens on every push and pull request.
    static let workflow = """
        # Checks the screens on every push and pull request with `taksi-server validate`: the checks
        # the server runs before it serves a set, each error at its file, line and column. On a pull
        # request, `taksi-server compat` also fails on a catalog change that can break an app build
        # already out (an enum value removed, a field retyped, ...). Written by taksi-server init.
        name: screens
        on:
          push:
          pull_request:
        env:
          # The taksi-server these screens are written for: built from this repository's tag v<version>.
          TAKSI_SERVER_REPOSITORY: https://github.com/taksi-br/taksi-server
          TAKSI_SERVER_VERSION: "\(TaksiServerVersion.current)"
        jobs:
          validate:
            runs-on: ubuntu-latest
            container: swift:6.3-bookworm
            steps:
              - uses: actions/checkout@v4
                with:
                  fetch-depth: 0              # the base branch too, for compat
              # Built from source once per version (about 7 minutes), then restored from the cache.
              - id: server
                uses: actions/cache@v4
                with:
                  path: /usr/local/bin/taksi-server
                  key: taksi-server-${{ env.TAKSI_SERVER_VERSION }}-${{ runner.os }}-${{ runner.arch }}
              - if: steps.server.outputs.cache-hit != 'true'
                run: |
                  git clone --depth 1 --branch "v$TAKSI_SERVER_VERSION" "$TAKSI_SERVER_REPOSITORY" /tmp/taksi-server
                  PREFIX=/usr/local /tmp/taksi-server/scripts/install.sh
              - run: taksi-server validate
              - if: github.event_name == 'pull_request'
                run: taksi-server compat "origin/$GITHUB_BASE_REF"

        """

    static let gitignore = """
        .build/
        .swiftpm/
        .DS_Store
        *.swp

        """

    static let readme = """
        # Screens

        Server-driven screens for our app, served by taksi-server to apps built on the Taksi client.

        - `taksi-server serve` serves them on http://127.0.0.1:8080 (`curl localhost:8080/screens/home`),
          reloading each edit; http://127.0.0.1:8080/preview/home shows each screen as the app draws it,
          redrawn on every save. `taksi-server validate` checks them, with the line and column of any error.
        - `Screens/*.yaml` (or `.json`) are screens; `Screens/components/` the custom components the app
          registers; `Screens/fixtures/` JSON that `fixture` sources read. `config.json` is the server's
          configuration (upstream APIs go under `upstreams`).
        - `docker build -t my-screens .` packs them into the server's image (see the Dockerfile).
          `taksi-server deploy kubernetes --config production.json --image REGISTRY/taksi-server:VERSION`
          prints a Kubernetes manifest that ships them in a ConfigMap instead.
        - `.github/workflows/screens.yml` runs `taksi-server validate` on every push and pull request.

        """
}
