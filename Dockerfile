# taksi-server container image.
#
#   docker build -t taksi-server:1.0.0 -t taksi-server .   # the version `taksi-server --version` prints
#   docker run -p 8080:8080 taksi-server
#   docker run -p 8080:8080 -v "$PWD/Screens:/app/Screens:ro" -v "$PWD/config.json:/app/config.json:ro" taksi-server
#
# The image's defaults are a configuration file, /app/config.json (deploy/container-config.json:
# 0.0.0.0:8080, JSON logs, the example upstreams at their live URLs), not environment variables,
# so a config.json mounted over it is honoured whole. TAKSI_* variables and flags still override it.
# The offline upstream fixtures of upstreams/ are not in the image: mount them and a config.json
# naming them (file:upstreams/...) to use them.
#
# There is no Docker engine on the build machines: Benchmarks/container-check.sh proves the runtime
# stage is complete by running the binary, built the same way, in a debootstrapped Debian root
# filesystem holding only what the runtime stage installs.

# Build with the official Swift image; the Swift runtime and Foundation are linked in statically.
FROM swift:6.3-bookworm AS build
WORKDIR /build
COPY Package.swift ./
RUN swift package resolve
COPY Sources Sources
# docs/: the OpenAPI document the server embeds (Sources/TaksiServer/OpenAPI/openapi.yaml links to
# it). Tests/, docs/client-snippets and Examples/ (the sample app): SwiftPM loads the directory of
# every target Package.swift names, even to build one product (DockerfileTests checks this stage's
# files load as a package).
COPY docs docs
COPY Tests Tests
COPY Examples Examples
COPY Plugins Plugins
COPY Screens Screens
# Stripped: the symbols are half of the binary (147 MB unstripped, about 78 MB stripped).
RUN swift build -c release --product taksi-server --static-swift-stdlib \
    && mkdir /staging \
    && strip -o /staging/taksi-server "$(swift build -c release --show-bin-path)/taksi-server"

# Run on slim Debian with only what the binary needs at run time: glibc, libstdc++ and zlib are in
# the base image; CA certificates for https upstreams; curl for the health check.
FROM debian:bookworm-slim
# runtime-packages (read by Benchmarks/container-check.sh):
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin taksi
COPY --from=build /staging/taksi-server /usr/local/bin/taksi-server
WORKDIR /app
# The example screens and the container's configuration; mount your own over /app/Screens and
# /app/config.json (a config.json of yours needs "host": "0.0.0.0" to be reachable).
COPY Screens /app/Screens
COPY deploy/container-config.json /app/config.json
USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=2s --start-period=10s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
# SIGTERM drains requests in flight (drain_timeout, 30 s by default) and exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["taksi-server"]
CMD ["serve", "--config", "/app/config.json"]
