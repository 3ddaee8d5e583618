#!/usr/bin/env python3
"""A stand-in OpenTelemetry collector for tests: receives OTLP/HTTP trace and log exports and
prints each span and each log record as one JSON line, decoded with the official OpenTelemetry
protobuf definitions (pip install opentelemetry-proto).

    python3 scripts/otlp-receiver.py              # prints "port N" first, then one line per span
    python3 scripts/otlp-receiver.py --port 4318  # on a desk: where taksi-server exports by default

Each line has the span's ids, name, kind, status, attributes, event names and links, and the
headers of the export request that brought it (export_headers, names lowercased).

A log record's line has "signal": "log", the service, the body, the severity, the attributes and
the export headers.

POST /v1/traces with an ExportTraceServiceRequest and POST /v1/logs with an
ExportLogsServiceRequest (application/x-protobuf, gzip or not) are answered 200 with an empty
response of their kind; anything else 404.
"""
import gzip
import http.server
import json
import sys

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
STATUS = {0: "unset", 1: "ok", 2: "error"}


def value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind in ("string_value", "bool_value", "int_value", "double_value") else str(any_value)


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path not in ("/v1/traces", "/v1/logs"):
            self.send_error(404)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        if self.path == "/v1/logs":
            self.logs(body)
            return
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource_spans in request.resource_spans:
            resource = {a.key: value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    print(json.dumps({
                        "service": resource.get("service.name"),
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": KINDS.get(span.kind, str(span.kind)),
                        "status": STATUS.get(span.status.code, str(span.status.code)),
                        "attributes": {a.key: value(a.value) for a in span.attributes},
                        "events": [event.name for event in span.events],
                        "links": [{"trace_id": link.trace_id.hex(), "span_id": link.span_id.hex()} for link in span.links],
                        "export_headers": {name.lower(): value for name, value in self.headers.items()},
                    }), flush=True)
        self.answer(trace_service_pb2.ExportTraceServiceResponse().SerializeToString())

    def logs(self, body):
        request = logs_service_pb2.ExportLogsServiceRequest()
        request.ParseFromString(body)
        for resource_logs in request.resource_logs:
            resource = {a.key: value(a.value) for a in resource_logs.resource.attributes}
            for scope_logs in resource_logs.scope_logs:
                for record in scope_logs.log_records:
                    print(json.dumps({
                        "signal": "log",
                        "service": resource.get("service.name"),
                        "body": value(record.body) if record.HasField("body") else None,
                        "severity": record.severity_text,
                        "attributes": {a.key: value(a.value) for a in record.attributes},
                        "export_headers": {name.lower(): value for name, value in self.headers.items()},
                    }), flush=True)
        self.answer(logs_service_pb2.ExportLogsServiceResponse().SerializeToString())

    def answer(self, response):
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(response)))
        self.end_headers()
        self.wfile.write(response)

    def log_message(self, *arguments):
        pass


port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 0
server = http.server.HTTPServer(("127.0.0.1", port), Receiver)
print(f"port {server.server_address[1]}", flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
