import Foundation
import TaksiScreens
import TaksiServer

/// The project `taksi-server init DIR` writes: a folder a team owns, with one commented starter
/// screen, a custom component and its data, a configuration, a Dockerfile, a CI workflow that
/// validates the screens, a `.gitignore` and a short README. From that folder `taksi-server validate` and `taksi-server serve` work with no
/// flags. Nothing is ever written over an existing file.
///
/// ```swift
/// let written = try StarterProject.create(in: URL(fileURLWithPath: "/tmp/app"))
/// ```
enum StarterProject {
    /// Every file, by its path relative to the project folder.
    static let files: [(path: String, contents: String)] = [
        ("Screens/home.yaml", homeScreen),
        ("Screens/components/card_component.json", cardComponent),
        ("Screens/fixtures/home.json", homeData),
        ("Screens/actions.json", appActions),
        ("config.json", configuration),
        ("Dockerfile", dockerfile),
        ("scripts/install-taksi-server.sh", installScript),
        (".github/workflows/screens.yml", workflow),
        (".vscode/settings.json", editorSettings),
        (".vscode/extensions.json", editorExtensions),
        (".gitignore", gitignore),
        ("README.md", readme),
    ]

    /// Why a project was not created.
    enum CreationError: Error, Sendable, CustomStringConvertible {
        /// These files exist already; nothing was written.
        case filesExist([String])
        /// A file could not be written (permissions, a file where a folder belongs).
        case unwritable(path: String, reason: String)

        var description: String {
            switch self {
            case .filesExist(let paths):
                "these files exist already, and init never writes over a file: \(paths.joined(separator: ", ")); choose an empty or new folder"
            case .unwritable(let path, let reason):
                "cannot write \(path): \(reason)"
            }
        }
    }

    /// The editor schemas written beside them, made from the starter's catalog.
    static let schemaFiles = [EditorSchemas.screenSchema, EditorSchemas.componentSchema].map { "\(EditorSchemas.folder)/\($0)" }

    /// Writes the project into `directory` (made when missing), then the editor schemas for its
    /// components (``EditorSchemas``).
    /// - Returns: the paths written, relative to `directory`.
    /// - Throws: ``CreationError/filesExist(_:)`` when any file exists already (then nothing is written).
    @discardableResult
    static func create(in directory: URL) throws(CreationError) -> [String] {
        let manager = FileManager.default
        let existing = (files.map(\.path) + schemaFiles).filter { manager.fileExists(atPath: directory.appendingPathComponent($0).path) }
        guard existing.isEmpty else { throw .filesExist(existing) }
        for (path, contents) in files {
            let url = directory.appendingPathComponent(path)
            do {
                try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                // withoutOverwriting: a file that appeared since the check above is still not replaced.
                try Data(contents.utf8).write(to: url, options: .withoutOverwriting)
                if path.hasSuffix(".sh") { try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path) }
            } catch {
                throw .unwritable(path: url.path, reason: error.localizedDescription)
            }
        }
        let screens = directory.appendingPathComponent("Screens").path
        let schemas = EditorSchemas.directory(besides: screens)
        do {
            try EditorSchemas.write(catalog: ScreenSetLoader.load(directory: screens).catalog, into: schemas)
        } catch {
            throw .unwritable(path: schemas.path, reason: error.localizedDescription)
        }
        return files.map(\.path) + schemaFiles
    }

    static let homeScreen = """
        # yaml-language-server: $schema=../schemas/screen.schema.json
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

          # A static button: an "executable" action the app runs itself, by the name actions.json declares.
          - name: button_component
            identifier: refresh
            content:
              title: Refresh
              kind: secondary
              action: {identifier: executable, content: {name: refresh}}

        """

    static let appActions = """
        {
          "executables": [
            {"name": "refresh", "summary": "The app loads the screen again."}
          ]
        }

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
        # Your screens on the taksi-server \(TaksiServerVersion.current) image, made here in two stages: the
        # server installed by scripts/install-taksi-server.sh (its release tarball, or built from
        # its source while none is published), then a slim Debian with your Screens/ and the
        # configuration to ship.
        #
        #   docker build -t my-screens .                                     # ships config.json
        #   docker build --build-arg CONFIG=production.json -t my-screens .  # ships production.json
        #   docker run -p 8080:8080 -e SHOP_TOKEN my-screens                 # each credential it names
        #
        # Ship the configuration you run in production (CONFIG): the build checks the screens
        # against it and refuses an upstream that answers from files, whose folder stays on your
        # desk. The server reads a credential the configuration names (an "env" of an upstream's
        # "auth") at start, so pass it to docker run with -e. The configuration is served with
        # host, port and log format set for a container, and the live preview off (it is for your
        # desk, not production).
        FROM swift:6.3-bookworm AS server
        COPY scripts/install-taksi-server.sh /tmp/install-taksi-server.sh
        RUN PREFIX=/usr/local /tmp/install-taksi-server.sh
        ARG CONFIG=config.json
        COPY Screens /app/Screens
        COPY ${CONFIG} /app/config.json
        RUN cd /app && taksi-server validate --config /app/config.json --production

        FROM debian:bookworm-slim
        # CA certificates for https upstreams; curl for the health check.
        RUN apt-get update \\
            && apt-get install -y --no-install-recommends ca-certificates curl \\
            && rm -rf /var/lib/apt/lists/* \\
            && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin taksi
        COPY --from=server /usr/local/bin/taksi-server /usr/local/bin/taksi-server
        COPY --from=server /app /app
        WORKDIR /app
        USER 10001:10001
        EXPOSE 8080
        HEALTHCHECK --interval=10s --timeout=2s --start-period=10s --retries=3 \\
            CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
        # SIGTERM drains requests in flight and exits 0.
        STOPSIGNAL SIGTERM
        ENTRYPOINT ["taksi-server"]
        CMD ["serve", "--config", "/app/config.json", "--host", "0.0.0.0", "--log-format", "json", "--no-preview"]

        """

    /// Installs the server version the project is written for, for its CI workflow and its
    /// Dockerfile: the release's tarball, checksummed, or the source built while there is none.
    static let installScript = """
        #!/usr/bin/env bash
        # Installs the taksi-server these screens are written for as $PREFIX/bin/taksi-server
        # (PREFIX: ~/.local by default). Used by .github/workflows/screens.yml and the Dockerfile;
        # written by taksi-server init. The version and commit below are the project's one place for the
        # server it runs: --upgrade moves them.
        #
        #   scripts/install-taksi-server.sh              # install
        #   scripts/install-taksi-server.sh --source-id  # print what it would install (a cache key)
        #   scripts/install-taksi-server.sh --upgrade    # pin the newest server, saying what changed
        #
        # It installs the release tarball of the version for this machine when the release has one, after
        # checking its SHA-256 checksum. Else it builds the server from its source (a release build, about
        # 10 minutes on two cores): the pinned commit, the one the server that wrote this project was
        # built from; with none pinned, the tag v$version, or, while that tag does not exist yet, the
        # repository's default branch, saying so. Building needs the Swift toolchain and git; downloading
        # needs curl or wget.
        set -euo pipefail

        version=${TAKSI_SERVER_VERSION:-\(TaksiServerVersion.current)}
        commit=${TAKSI_SERVER_COMMIT:-\(TaksiServerVersion.commit ?? "")}
        repository=${TAKSI_SERVER_REPOSITORY:-\(TaksiServerVersion.repository)}
        # Where releases keep their files: $releases/v<version>/<tarball>.
        releases=${TAKSI_SERVER_RELEASES:-$repository/releases/download}
        prefix=${PREFIX:-$HOME/.local}
        system=$(uname -s | tr '[:upper:]' '[:lower:]')
        tarball="taksi-server-$version-$system-$(uname -m).tar.gz"
        work=$(mktemp -d)
        trap 'rm -rf "$work"' EXIT

        download() { # URL FILE
            if command -v curl >/dev/null 2>&1; then
                curl -fsSL --retry 3 -o "$2" "$1" 2>/dev/null
            elif command -v wget >/dev/null 2>&1; then
                wget -q -O "$2" "$1"
            else
                return 1
            fi
        }

        sha256() { # FILE
            if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1
        }

        # The checksum file of the release's tarball: present when the release has one for this machine.
        released() {
            download "$releases/v$version/$tarball.sha256" "$work/$tarball.sha256"
        }

        # The commit to build: the pinned one, else the version's tag, else the default branch's head.
        source_commit() {
            local line
            if [ -n "$commit" ]; then echo "$commit"; return; fi
            # An annotated tag's commit is its peeled line (^{}), which sorts after the tag's own.
            line=$(git ls-remote "$repository" "refs/tags/v$version^{}" "refs/tags/v$version" | sort -r -k2 | head -n 1)
            [ -n "$line" ] || line=$(git ls-remote "$repository" HEAD | head -n 1)
            [ -n "$line" ] || { echo "install-taksi-server: $repository has neither the tag v$version nor a default branch" >&2; return 1; }
            echo "${line%%[[:space:]]*}"
        }

        # The repository's default branch and tags, fetched into $work/source (for a commit, or --upgrade).
        fetch_source() {
            git init --quiet "$work/source"
            git -C "$work/source" fetch --quiet "$repository" "+HEAD:refs/remotes/origin/HEAD" "+refs/tags/*:refs/tags/*"
        }

        # Moves the pin to the newest release's tag (else the default branch's head), printing the
        # CHANGELOG's lines added since the pinned commit, and rewrites the two lines above.
        upgrade() {
            fetch_source
            local newest target new_version
            newest=$(git -C "$work/source" tag --list 'v[0-9]*' --sort=-version:refname | head -n 1)
            target=$(git -C "$work/source" rev-parse "${newest:-origin/HEAD}^{commit}")
            new_version=$(git -C "$work/source" show "$target:Sources/TaksiServer/TaksiServerVersion.swift" \\
                | sed -n 's/.*static let current = "\\(.*\\)".*/\\1/p')
            [ -n "$new_version" ] || { echo "install-taksi-server: cannot read the version of $target" >&2; return 1; }
            if [ "$target" = "$commit" ]; then
                echo "install-taksi-server: already at the newest, $version ($commit)"
                return
            fi
            echo "install-taksi-server: $version (${commit:-not pinned}) -> $new_version ($target, ${newest:-the default branch}); CHANGELOG.md since:"
            if [ -n "$commit" ] && git -C "$work/source" cat-file -e "$commit^{commit}" 2>/dev/null; then
                git -C "$work/source" diff "$commit" "$target" -- CHANGELOG.md | sed -n 's/^+\\([^+]\\|$\\)/  \\1/p'
            else
                echo "  (the pinned commit is not in $repository's history: read CHANGELOG.md there)"
            fi
            sed -e "s/^version=\\${TAKSI_SERVER_VERSION:-[^}]*}/version=\\${TAKSI_SERVER_VERSION:-$new_version}/" \\
                -e "s/^commit=\\${TAKSI_SERVER_COMMIT:-[0-9a-f]*}/commit=\\${TAKSI_SERVER_COMMIT:-$target}/" "$0" >"$work/script"
            cat "$work/script" >"$0"
            echo "install-taksi-server: $0 now pins $new_version ($target): commit it; CI installs it once"
        }

        # A machine without curl or wget: a CI container (swift:*-bookworm has neither) gets curl.
        if ! command -v curl >/dev/null 2>&1 && ! command -v wget >/dev/null 2>&1 \\
            && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            echo "install-taksi-server: installing curl to download the release" >&2
            apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl ca-certificates >/dev/null || true
        fi

        if [ "${1:-}" = "--source-id" ]; then
            if released; then
                echo "release-$version-$(cut -d' ' -f1 "$work/$tarball.sha256")"
            else
                id=$(source_commit)  # an assignment, so that a failure stops the script
                echo "source-$id"
            fi
            exit 0
        elif [ "${1:-}" = "--upgrade" ]; then
            upgrade
            exit 0
        elif [ $# -gt 0 ]; then
            echo "usage: $0 [--source-id | --upgrade]" >&2
            exit 2
        fi

        mkdir -p "$prefix/bin"
        if released && download "$releases/v$version/$tarball" "$work/$tarball"; then
            expected=$(cut -d' ' -f1 "$work/$tarball.sha256")
            actual=$(sha256 "$work/$tarball")
            if [ "$expected" != "$actual" ]; then
                echo "install-taksi-server: $tarball has SHA-256 $actual, but the release says $expected; nothing installed" >&2
                exit 1
            fi
            tar -xzf "$work/$tarball" -C "$work"
            cp "$work/${tarball%.tar.gz}/taksi-server" "$prefix/bin/taksi-server"
            chmod 755 "$prefix/bin/taksi-server"
            echo "install-taksi-server: installed the release tarball $tarball"
        else
            id=$(source_commit)
            if [ -n "$commit" ]; then
                echo "install-taksi-server: no release tarball of $version for $system-$(uname -m); building the pinned commit $commit"
                fetch_source
                git -C "$work/source" cat-file -e "$commit^{commit}" 2>/dev/null \\
                    || git -C "$work/source" fetch --quiet "$repository" "$commit" \\
                    || { echo "install-taksi-server: $repository has no commit $commit; pin another with --upgrade" >&2; exit 1; }
                git -C "$work/source" checkout --quiet --detach "$commit"
            elif git ls-remote --exit-code "$repository" "refs/tags/v$version" >/dev/null 2>&1; then
                echo "install-taksi-server: no release tarball of $version for $system-$(uname -m); building the tag v$version ($id)"
                git clone --quiet --depth 1 --branch "v$version" "$repository" "$work/source"
            else
                echo "install-taksi-server: $version is not released yet (no tag v$version); building the default branch of $repository ($id)"
                git clone --quiet --depth 1 "$repository" "$work/source"
            fi
            PREFIX="$prefix" "$work/source/scripts/install.sh"
        fi
        installed=$("$prefix/bin/taksi-server" --version)
        echo "install-taksi-server: $prefix/bin/taksi-server is $installed"
        if [ "${installed%%+*}" != "$version" ]; then
            echo "install-taksi-server: note: the screens are written for $version; the server installed is $installed" >&2
        fi
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
        jobs:
          validate:
            runs-on: ubuntu-latest
            container: swift:6.3-bookworm
            steps:
              - uses: actions/checkout@v4
                with:
                  fetch-depth: 0              # the base branch too, for compat
              # The taksi-server these screens are written for: the version scripts/install-taksi-server.sh
              # names. Its key is the release's checksum, or the source commit while the version has no
              # release: installed once per key (downloaded, or built in about 10 minutes), then restored
              # from the cache. A script that fails fails the job (an assignment stops the step; a
              # command inside echo's arguments would not, and every failed run would share one key).
              - id: server-source
                run: |
                  key=$(scripts/install-taksi-server.sh --source-id)
                  echo "key=$key" >> "$GITHUB_OUTPUT"
              - id: server
                uses: actions/cache@v4
                with:
                  path: ~/.local/bin/taksi-server
                  key: taksi-server-${{ steps.server-source.outputs.key }}-${{ runner.os }}-${{ runner.arch }}
              - if: steps.server.outputs.cache-hit != 'true'
                run: scripts/install-taksi-server.sh
              - run: echo "$HOME/.local/bin" >> "$GITHUB_PATH"
              # In CI, validate changes nothing: a schema in schemas/ that lags the components fails.
              - run: taksi-server validate
              # The checkout belongs to the runner's user, not the container's root: compat reads it anyway.
              - if: github.event_name == 'pull_request'
                run: taksi-server compat "origin/$GITHUB_BASE_REF"

        """

    /// VS Code: the schemas for screen and component files (JSON through the built-in JSON
    /// language server, YAML through Red Hat's YAML extension, which the recommendations name).
    static let editorSettings = """
        {
          "json.schemas": [
            {"fileMatch": ["/Screens/components/*.json"], "url": "./schemas/component.schema.json"},
            {
              "fileMatch": [
                "/Screens/**/*.json", "!/Screens/components/**", "!/Screens/fixtures/**", "!/Screens/fragments/**",
                "!/Screens/strings/**", "!/Screens/actions.json", "!/Screens/links.json"
              ],
              "url": "./schemas/screen.schema.json"
            }
          ],
          "yaml.schemas": {
            "./schemas/component.schema.json": ["Screens/components/*.yaml"],
            "./schemas/screen.schema.json": [
              "Screens/**/*.yaml", "!Screens/components/**", "!Screens/fixtures/**", "!Screens/fragments/**",
              "!Screens/strings/**", "!Screens/actions.yaml", "!Screens/links.yaml", "!Screens/client.yaml"
            ]
          }
        }

        """

    static let editorExtensions = """
        {
          "recommendations": ["redhat.vscode-yaml"]
        }

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
        - `docker build -t my-screens .` packs them into an image with the server and `config.json`
          (`--build-arg CONFIG=production.json` ships another configuration; the build refuses one
          whose upstreams answer from files; see the Dockerfile).
          `taksi-server deploy kubernetes --config production.json --image REGISTRY/taksi-server:VERSION`
          prints a Kubernetes manifest that ships them in a ConfigMap instead.
        - `.github/workflows/screens.yml` runs `taksi-server validate` on every push and pull request,
          and `taksi-server compat` on pull requests.
        - `schemas/` holds the JSON Schemas of screen and component files, which `.vscode/settings.json`
          (and the `# yaml-language-server: $schema=` line of a screen) point editors at: completion of
          component types, fields and values, and mistakes underlined as you type. `taksi-server
          validate` rewrites the screen schema when a custom component changes.
        - `scripts/install-taksi-server.sh` installs the server they are written for (the release
          tarball of its version, or the exact commit it pins built from source while none is
          published), for CI, the Dockerfile and anyone's desk: it puts it in `~/.local/bin`.
          `scripts/install-taksi-server.sh --upgrade` pins the newest server and prints what its
          CHANGELOG gained; commit the script, and CI installs it once.

        """
}
