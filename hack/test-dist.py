#!/usr/bin/env python3
"""Tests the Helm chart and the OLM bundle (run through hack/test-dist.sh).

helm lint --strict and helm template over every values file in helm/soko/ci/ with assertions on the
rendered objects; values the schema must refuse; operator-verify on the bundle (its exit code says
nothing, so its log lines are read); the CSV's permissions, deployment and images equal the chart's.
Prints one PASS/FAIL line per check and "N passed, M failed" last; --junit FILE also writes them as
JUnit XML.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHART = os.path.join(ROOT, "helm/soko")
BUNDLE = os.path.join(ROOT, "olm-bundle")
CSV = os.path.join(BUNDLE, "manifests/soko-operator.clusterserviceversion.yaml")
results = {"passed": 0, "failed": 0}
junit = ElementTree.Element("testsuite", name="dist")


def check(name, function):
    case = ElementTree.SubElement(junit, "testcase", name=name)
    try:
        function()
        results["passed"] += 1
        print(f"PASS {name}")
    except Exception as e:  # every failure is reported, the run goes on
        results["failed"] += 1
        ElementTree.SubElement(case, "failure", message="failed").text = str(e)
        print(f"FAIL {name}\n    " + str(e).replace("\n", "\n    "))


def run(*command):
    return subprocess.run(command, capture_output=True, text=True)


def template(helm, *args):
    result = run(helm, "template", "soko", CHART, "--namespace", "soko-system", *args)
    if result.returncode != 0:
        raise AssertionError(f"helm template {' '.join(args)} failed:\n{result.stderr}")
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def one(docs, kind, name=None):
    found = [doc for doc in docs
             if doc["kind"] == kind and name in (None, doc["metadata"]["name"])]
    assert len(found) == 1, f"expected one {kind} {name or ''}, got {len(found)}"
    return found[0]


def expect(actual, wanted, what):
    assert actual == wanted, f"{what}: expected {wanted!r}, got {actual!r}"


def version():
    return re.search(r"<version>([^<]+)</version>", open(os.path.join(ROOT, "pom.xml")).read())[1]


RBAC_FILE = os.path.join(ROOT, "operator/src/main/resources/rbac/operator-rbac.yaml")
CRD_ROLE = "soko-operator-crds"


def rbac_cluster_role(name):
    return next(doc for doc in yaml.safe_load_all(open(RBAC_FILE))
                if doc and doc["kind"] == "ClusterRole" and doc["metadata"]["name"] == name)


def namespace_rules():
    """The Role rules of the operator's RBAC file (the chart renders a Role only when there are)."""
    path = os.path.join(ROOT, "operator/src/main/resources/rbac/operator-rbac.yaml")
    return [rule for doc in yaml.safe_load_all(open(path))
            if doc and doc["kind"] == "Role" for rule in doc.get("rules") or []]


def container(docs):
    return one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]


# --- per values file ---------------------------------------------------------------------------


def default_values(docs):
    kinds = sorted(doc["kind"] for doc in docs)
    wanted = ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment"]
    wanted += ["ClusterRole", "ClusterRoleBinding"]  # crds.upgrade: the CRDs' own role
    if namespace_rules():
        wanted += ["Role", "RoleBinding"]
    expect(kinds, sorted(wanted), "kinds rendered by default")
    expect(container(docs)["image"], f"soko-operator:{version()}", "operator image")
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    # The Pod Security "restricted" level (helm --create-namespace makes a namespace at the
    # cluster's default level; HelmChartIT has the API server judge the same pod).
    expect(pod["securityContext"]["runAsNonRoot"], True, "runAsNonRoot")
    expect(pod["securityContext"]["seccompProfile"], {"type": "RuntimeDefault"}, "seccompProfile")
    security = container(docs)["securityContext"]
    expect(security["allowPrivilegeEscalation"], False, "allowPrivilegeEscalation")
    expect(security["capabilities"]["drop"], ["ALL"], "capabilities dropped")
    assert not security["capabilities"].get("add"), "no capabilities added"
    for name in ("soko-operator", CRD_ROLE):
        expect(one(docs, "ClusterRoleBinding", name)["subjects"][0]["name"],
               pod["serviceAccountName"], f"ClusterRoleBinding {name} subject")
        expect(one(docs, "ClusterRole", name)["rules"], rbac_cluster_role(name)["rules"],
               f"ClusterRole {name} rules vs RBAC file")
    args = container(docs)["args"]
    assert "--upgrade-crds" in args, "the operator upgrades the CRDs by default"
    expect(args[0], "run", "operator command")
    assert "--no-leader-election" not in args, "leader election off by default"
    assert "--rollout-deadline=10m" in args, "the rollout deadline is the operator's default"
    names = [env["name"] for env in container(docs)["env"]]
    assert "SOKO_IMAGE_REGISTRY" not in names, "no default image registry unless imageRegistry"


def airgapped_values(docs):
    expect(container(docs)["image"], f"registry.example/soko/soko-operator:{version()}", "image")
    expect(container(docs)["imagePullPolicy"], "Always", "pull policy")
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    expect(pod["imagePullSecrets"], [{"name": "regcred"}], "imagePullSecrets")
    expect(one(docs, "StorageCluster")["spec"]["images"]["registry"], "registry.example/soko",
           "StorageCluster image registry")
    env = {e["name"]: e.get("value") for e in container(docs)["env"]}
    expect(env.get("SOKO_IMAGE_REGISTRY"), "registry.example/mirror", "operator default registry")


def tolerations_values(docs):
    deployment = one(docs, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    values = yaml.safe_load(open(os.path.join(CHART, "ci/tolerations-values.yaml")))
    for key in ("tolerations", "nodeSelector", "affinity", "priorityClassName"):
        expect(pod[key], values[key], key)
    expect(deployment["spec"]["replicas"], 2, "replicas")
    service = one(docs, "Service")
    expect(service["spec"]["selector"], deployment["spec"]["selector"]["matchLabels"], "selector")
    expect(service["spec"]["ports"][0]["targetPort"], "http", "metrics target port")
    expect([p["name"] for p in container(docs)["ports"]], ["http"], "container ports")


def storagecluster_values(docs):
    cluster = one(docs, "StorageCluster")
    expect(cluster["apiVersion"], "soko.dev/v1alpha1", "apiVersion")
    expect(cluster["metadata"]["name"], "local", "name")
    expect([p["name"] for p in cluster["spec"]["pools"]], ["fast", "bulk"], "pools")
    assert "namespace" not in cluster["metadata"], "StorageCluster is cluster-scoped"


ASSERTIONS = {
    "default-values.yaml": default_values,
    "airgapped-values.yaml": airgapped_values,
    "tolerations-values.yaml": tolerations_values,
    "storagecluster-values.yaml": storagecluster_values,
}


def values_file_checks(helm, path):
    name = os.path.basename(path)

    def lint():
        result = run(helm, "lint", "--strict", CHART, "-f", path)
        assert result.returncode == 0, result.stdout + result.stderr

    check(f"helm lint --strict -f ci/{name}", lint)
    assertion = ASSERTIONS.get(name)
    assert assertion, f"ci/{name} has no assertions in hack/test-dist.py"
    check(f"helm template -f ci/{name}", lambda: assertion(template(helm, "-f", path)))


def refused(helm, setting, message):
    def attempt():
        result = run(helm, "template", "soko", CHART, "--set", setting)
        assert result.returncode != 0, f"--set {setting} was accepted"
        assert message in result.stderr, f"no '{message}' in: {result.stderr}"

    check(f"schema refuses --set {setting}", attempt)


# --- monitoring --------------------------------------------------------------------------------

MONITORING = os.path.join(CHART, "files/monitoring")
MONITORING_API = ["--api-versions", "monitoring.coreos.com/v1/PrometheusRule",
                  "--api-versions", "monitoring.coreos.com/v1/PodMonitor"]


def kinds(docs):
    return sorted(doc["kind"] for doc in docs)


def monitoring_needs_the_api(helm):
    docs = template(helm, "--set", "monitoring.prometheusRule.enabled=true",
                    "--set", "monitoring.podMonitor.enabled=true")
    for kind in ("PrometheusRule", "PodMonitor"):
        assert kind not in kinds(docs), f"{kind} rendered without the monitoring API"


def prometheus_rule_is_the_tested_file(helm):
    rule = one(template(helm, *MONITORING_API), "PrometheusRule")
    source = yaml.safe_load(open(os.path.join(MONITORING, "alerts.yaml")))
    expect(rule["spec"], {"groups": source["groups"]}, "PrometheusRule spec vs alerts.yaml")
    expect(rule["metadata"]["namespace"], "soko-system", "PrometheusRule namespace")


def pod_monitors(helm):
    docs = [d for d in template(helm, *MONITORING_API, "--set", "monitoring.podMonitor.labels.team=storage")
            if d["kind"] == "PodMonitor"]
    expect(len(docs), 2, "PodMonitors (operator and driver)")
    operator, driver = docs
    deployment = one(template(helm), "Deployment")
    expect(operator["spec"]["selector"]["matchLabels"],
           deployment["spec"]["selector"]["matchLabels"], "operator PodMonitor selector")
    expect(operator["spec"]["podMetricsEndpoints"][0]["port"], "http", "operator metrics port")
    expect(driver["spec"]["namespaceSelector"], {"matchNames": ["soko-system"]}, "driver namespace")
    # The driver pods' labels and port name come from the operator's model (Names, Containers).
    expect(driver["spec"]["selector"]["matchLabels"],
           {"app.kubernetes.io/name": "soko", "app.kubernetes.io/managed-by": "soko-operator"},
           "driver PodMonitor selector")
    expect(driver["spec"]["podMetricsEndpoints"][0]["port"], "metrics", "driver metrics port")
    expect(operator["metadata"]["labels"].get("team"), "storage", "extra labels")
    other = [d for d in template(helm, *MONITORING_API, "--set", "storageCluster.spec.namespace=storage")
             if d["kind"] == "PodMonitor"][1]
    expect(other["spec"]["namespaceSelector"], {"matchNames": ["storage"]}, "driver namespace from spec")
    off = template(helm, *MONITORING_API, "--set", "monitoring.podMonitor.enabled=false",
                   "--set", "monitoring.prometheusRule.enabled=false")
    assert not {"PodMonitor", "PrometheusRule"} & set(kinds(off)), "disabled yet rendered"


def dashboard(helm):
    assert "ConfigMap" not in kinds(template(helm)), "dashboard ConfigMap is off by default"
    docs = template(helm, "--set", "monitoring.dashboard.enabled=true",
                    "--set", "monitoring.dashboard.namespace=grafana")
    config_map = one(docs, "ConfigMap")
    expect(config_map["metadata"]["labels"].get("grafana_dashboard"), "1", "sidecar label")
    expect(config_map["metadata"]["namespace"], "grafana", "dashboard namespace")
    source = json.load(open(os.path.join(MONITORING, "dashboard.json")))
    expect(json.loads(config_map["data"]["soko.json"]), source, "ConfigMap data vs dashboard.json")


# --- bundle ------------------------------------------------------------------------------------


def crd_role_names_only_the_charts_crds():
    names = sorted(yaml.safe_load(open(c))["metadata"]["name"]
                   for c in glob.glob(os.path.join(CHART, "crds/*")))
    for rule in rbac_cluster_role(CRD_ROLE)["rules"]:
        expect(sorted(rule.get("resourceNames") or []), names, "resourceNames")
        expect(rule["resources"], ["customresourcedefinitions"], "resources")
        assert "create" not in rule["verbs"], "the operator creates no CRD"


def crds_upgrade_switch(helm):
    def upgrades(docs):
        role = [d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] == CRD_ROLE]
        flag = "--upgrade-crds" in container(docs)["args"]
        assert flag == bool(role), f"flag {flag} but CRD role {bool(role)}"
        return flag
    assert not upgrades(template(helm, "--set", "crds.upgrade=false")), "crds.upgrade=false"
    # A release installed before crds.upgrade existed, upgraded with --reuse-values.
    assert upgrades(template(helm, "--set", "crds=null")), "no crds key: on"


def csv_equals_chart(helm):
    # The bundle is the chart with crds.upgrade=false: OLM owns the CRDs.
    docs = template(helm, "--set", "crds.upgrade=false")
    csv = yaml.safe_load(open(CSV))
    install = csv["spec"]["install"]["spec"]
    deployment = one(docs, "Deployment")
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    expect(install["clusterPermissions"],
           [{"serviceAccountName": account, "rules": one(docs, "ClusterRole")["rules"]}],
           "CSV clusterPermissions vs chart ClusterRole")
    roles = [{"serviceAccountName": account, "rules": doc["rules"]}
             for doc in docs if doc["kind"] == "Role"]
    expect(install.get("permissions"), roles or None, "CSV permissions vs chart Role")
    expect([(d["name"], d["spec"]) for d in install["deployments"]],
           [(deployment["metadata"]["name"], deployment["spec"])], "CSV deployment vs chart")
    assert "--upgrade-crds" not in str(install), "the bundle leaves the CRDs to OLM"
    image = container(docs)["image"]
    expect(csv["metadata"]["annotations"]["containerImage"], image, "containerImage")
    expect([i["image"] for i in csv["spec"]["relatedImages"]], [image], "relatedImages")
    expect(csv["spec"]["version"], version(), "CSV version")
    chart = yaml.safe_load(open(os.path.join(CHART, "Chart.yaml")))
    expect(chart["appVersion"], version(), "chart appVersion")
    chart_crds = sorted(glob.glob(os.path.join(CHART, "crds/*")))
    expect([os.path.basename(c) for c in chart_crds],
           ["noderequests.soko.dev-v1.yml", "storageclusters.soko.dev-v1.yml",
            "storagenodes.soko.dev-v1.yml"], "chart CRDs")
    for chart_file in chart_crds:
        chart_crd = yaml.safe_load(open(chart_file))
        plural = chart_crd["spec"]["names"]["plural"]
        crd = yaml.safe_load(open(os.path.join(BUNDLE, f"manifests/soko.dev_{plural}.yaml")))
        expect(crd, chart_crd, f"bundle CRD vs chart CRD ({plural})")


# The tool warns that its own "operatorhub" validator is deprecated; that says nothing of the bundle.
TOOL_NOTICE = 'validator is deprecated'


def verify_problems(tool, bundle):
    """Error and warning lines of operator-verify (it exits 0 even when it finds errors)."""
    result = run(tool, "manifests", "--operatorhub_validate", "--object_validate", bundle)
    output = result.stdout + result.stderr
    problems = [line for line in output.splitlines()
                if re.search(r"level=(error|fatal|warning)", line) and TOOL_NOTICE not in line]
    if result.returncode != 0 and not problems:
        problems = [f"exit {result.returncode}: {output}"]
    return problems


def operator_verify(tool):
    problems = verify_problems(tool, BUNDLE)
    assert not problems, "\n".join(problems)


def operator_verify_sees_errors(tool):
    """The output parsing above is what makes the check real: a CSV without a version must fail."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(BUNDLE, os.path.join(tmp, "bundle"))
        broken = os.path.join(tmp, "bundle/manifests", os.path.basename(CSV))
        csv = yaml.safe_load(open(broken))
        del csv["spec"]["version"]
        with open(broken, "w") as f:
            yaml.safe_dump(csv, f)
        problems = verify_problems(tool, os.path.join(tmp, "bundle"))
        assert any("Spec.Version must be set" in line for line in problems), problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--helm", required=True)
    parser.add_argument("--operator-verify", required=True)
    parser.add_argument("--junit", help="also write the results as JUnit XML to this file")
    args = parser.parse_args()
    for path in sorted(glob.glob(os.path.join(CHART, "ci/*-values.yaml"))):
        values_file_checks(args.helm, path)
    refused(args.helm, "replicaCount=-1", "replicaCount")
    refused(args.helm, "logLevel=loud", "logLevel")
    refused(args.helm, "rolloutDeadline=soon", "rolloutDeadline")
    refused(args.helm, "imageTypo.tag=x", "imageTypo")
    refused(args.helm, "storageCluster.spec.pools=null", "pools")
    refused(args.helm, "leaderElection.enabled=false,replicaCount=2", "needs replicaCount <= 1")
    refused(args.helm, "imageRegistry=https://registry.example", "imageRegistry")
    refused(args.helm, "monitoring.podMonitor.interval=soon", "interval")
    check("monitoring objects need the monitoring.coreos.com/v1 API",
          lambda: monitoring_needs_the_api(args.helm))
    check("PrometheusRule carries files/monitoring/alerts.yaml unchanged",
          lambda: prometheus_rule_is_the_tested_file(args.helm))
    check("PodMonitors select the operator and the driver pods", lambda: pod_monitors(args.helm))
    check("dashboard ConfigMap: off by default, sidecar label, dashboard.json unchanged",
          lambda: dashboard(args.helm))
    check("the CRD role names exactly the chart's CRDs, without create",
          crd_role_names_only_the_charts_crds)
    check("crds.upgrade renders the flag and the CRD role together; unset is on",
          lambda: crds_upgrade_switch(args.helm))
    check("CSV permissions, deployment, images and CRD equal the chart's",
          lambda: csv_equals_chart(args.helm))
    check("operator-verify: no errors or warnings on olm-bundle",
          lambda: operator_verify(args.operator_verify))
    check("operator-verify: a CSV without version is reported",
          lambda: operator_verify_sees_errors(args.operator_verify))
    print(f"{results['passed']} passed, {results['failed']} failed")
    if args.junit:
        os.makedirs(os.path.dirname(os.path.abspath(args.junit)), exist_ok=True)
        ElementTree.ElementTree(junit).write(args.junit, encoding="utf-8", xml_declaration=True)
    sys.exit(1 if results["failed"] else 0)


if __name__ == "__main__":
    main()
