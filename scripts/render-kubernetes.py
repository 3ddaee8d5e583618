#!/usr/bin/env python3
"""Writes deploy/kubernetes.yaml: the Deployment, Service, HorizontalPodAutoscaler and
PodDisruptionBudget below, and a ConfigMap holding every file of Screens/ and a production
config.json, so the manifest always ships the screens in the repository.

    scripts/render-kubernetes.py           # rewrite deploy/kubernetes.yaml
    scripts/render-kubernetes.py --check   # exit 1 when it is out of date (the examples' test runs this)
    scripts/render-kubernetes.py --stdout  # print it instead (the deployment test reads this)
"""
import json
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "deploy", "kubernetes.yaml")
APP = "taksi-server"
LABELS = {"app.kubernetes.io/name": APP}

# Production settings: every interface, JSON logs, the live upstream APIs, no preview.
CONFIG = {
    "host": "0.0.0.0",
    "port": 8080,
    "screens": "Screens",
    "log_format": "json",
    "drain_timeout": 20,
    "preview": False,
    "upstreams": {"citybikes": "https://api.citybik.es", "github": "https://api.github.com", "eats": "https://eats.example.com", "auth": "https://auth.example.com"},
}


class Literal(str):
    """A string written as a YAML block (|), so screen files stay readable in the manifest."""


yaml.SafeDumper.add_representer(Literal, lambda dumper, text: dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|"))


def screen_files():
    """(ConfigMap key, path under the mounted directory, content) for every file of Screens/."""
    files = []
    for directory, _, names in sorted(os.walk(os.path.join(ROOT, "Screens"))):
        for name in sorted(names):
            full = os.path.join(directory, name)
            relative = os.path.relpath(full, ROOT)  # Screens/bikes/stations.yaml
            key = relative.replace("/", "__")       # ConfigMap keys cannot hold "/"
            with open(full, encoding="utf-8") as handle:
                files.append((key, relative, handle.read()))
    return files


def documents():
    files = screen_files()
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{APP}-screens", "labels": LABELS},
        "data": {"config.json": Literal(json.dumps(CONFIG, indent=2) + "\n"), **{key: Literal(text) for key, _, text in files}},
    }
    probe = lambda path, period: {"httpGet": {"path": path, "port": "http"}, "periodSeconds": period, "timeoutSeconds": 2}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": APP, "labels": LABELS},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": LABELS},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
            "template": {
                "metadata": {"labels": LABELS},
                "spec": {
                    # Longer than drain_timeout (20 s) plus the preStop pause, so SIGTERM's drain completes.
                    "terminationGracePeriodSeconds": 30,
                    "securityContext": {
                        "runAsNonRoot": True, "runAsUser": 10001, "runAsGroup": 10001,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [{
                        "name": APP,
                        "image": "ghcr.io/taksi/taksi-server:1.0.0",
                        "args": ["serve", "--config", "/etc/taksi/config.json"],
                        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                        "resources": {
                            "requests": {"cpu": "250m", "memory": "64Mi"},
                            "limits": {"memory": "256Mi"},
                        },
                        "startupProbe": {**probe("/readyz", 1), "failureThreshold": 30},
                        "readinessProbe": {**probe("/readyz", 5), "failureThreshold": 2},
                        "livenessProbe": {**probe("/healthz", 10), "failureThreshold": 3},
                        # Give load balancers a moment to stop routing here before the drain begins.
                        "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
                        "securityContext": {
                            "allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]},
                        },
                        "volumeMounts": [{"name": "screens", "mountPath": "/etc/taksi", "readOnly": True}],
                    }],
                    "volumes": [{
                        "name": "screens",
                        "configMap": {
                            "name": f"{APP}-screens",
                            "items": [{"key": "config.json", "path": "config.json"}]
                            + [{"key": key, "path": path} for key, path, _ in files],
                        },
                    }],
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": APP, "labels": LABELS},
        "spec": {"selector": LABELS, "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]},
    }
    autoscaler = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": APP, "labels": LABELS},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": APP},
            "minReplicas": 3,
            "maxReplicas": 20,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}],
        },
    }
    disruption = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": APP, "labels": LABELS},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": LABELS}},
    }
    return [config_map, deployment, service, autoscaler, disruption]


def render():
    header = (
        "# Generated by scripts/render-kubernetes.py from Screens/ (edit the script or the screens, then run it).\n"
        "# kubectl apply -f deploy/kubernetes.yaml\n"
    )
    return header + yaml.safe_dump_all(documents(), sort_keys=False, allow_unicode=True, width=120)


def main():
    text = render()
    if "--stdout" in sys.argv:
        sys.stdout.write(text)
        return
    if "--check" in sys.argv:
        with open(OUTPUT, encoding="utf-8") as handle:
            if handle.read() != text:
                print("deploy/kubernetes.yaml is out of date; run scripts/render-kubernetes.py")
                sys.exit(1)
        print("deploy/kubernetes.yaml is up to date")
        return
    with open(OUTPUT, "w", encoding="utf-8") as handle:
        handle.write(text)


if __name__ == "__main__":
    main()
