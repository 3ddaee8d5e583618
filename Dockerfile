# taksi-server container image.
#
#   docker build -t taksi-server .
#   docker run -p 8080:8080 taksi-server
#   docker run -p 8080:8080 -v "$PWD/Screens:/app/Screens:ro" -v "$PWD/config.json:/app/config.json:ro" taksi-server
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
COPY Plugins Plugins
COPY Screens Screens
RUN swift build -c release --product taksi-server --static-swift-stdlib \
    && mkdir /staging \
    && cp "$(swift build -c release --show-bin-path)/taksi-server" /staging/

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
# The example screens and configuration; mount your own over /app/Screens and /app/config.json.
COPY Screens /app/Screens
COPY upstreams /app/upstreams
COPY config.json /app/config.json
# Listen on every interface inside the container; logs as JSON lines for collectors.
ENV TAKSI_HOST=0.0.0.0 TAKSI_PORT=8080 TAKSI_LOG_FORMAT=json
USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=2s --start-period=10s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
# SIGTERM drains requests in flight (drain_timeout, 30 s by default) and exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["taksi-server"]
CMD ["serve", "--config", "/app/config.json"]
