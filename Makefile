# Soko — the project's verbs. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help
MVN ?= mvn -B
export SOKO_CACHE ?= $(HOME)/.cache/soko

##@ Main jobs
.PHONY: demo
demo: deps build tools-node images ## A real node (kubelet, containerd): helm install, a StorageCluster, pods writing to volumes expanded, snapshotted, restored; uninstall (root)
	bash hack/node-demo.sh

.PHONY: demo-control-plane
demo-control-plane: deps build tools-e2e ## Control plane only: the operator, and the driver + CSI sidecars as local processes playing the node (root)
	bash hack/cluster-demo.sh

.PHONY: cluster-up
cluster-up: deps build tools-node images $(if $(VELERO),tools-backup) ## A real cluster of NODES nodes (default 1), each with its own kubelet, containerd and namespaces; VELERO=1 adds Velero and a MinIO store; prints KUBECONFIG (root)
	SOKO_CLUSTER_NODES=$(or $(NODES),1) bash hack/local-cluster.sh up
	$(if $(VELERO),bash hack/velero.sh up)

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and remove everything it made (root)
	bash hack/local-cluster.sh down

.PHONY: demo-driver
demo-driver: deps build ## The driver alone on a temporary pool: create, stage, publish, write, snapshot, restore, verify, expand (root)
	bash hack/demo.sh

.PHONY: test
test: deps tools-test tools-e2e tools-node tools-suite tools-backup releases ## Every tier: unit, integration (real mounts, kube-apiserver), csi-sanity, control-plane e2e, chart/bundle, images, real-node e2e, Kubernetes' storage suite (CI's selection)
	$(MVN) verify
	bash hack/check-generated.sh
	bash hack/lint-shell.sh
	bash hack/sanity.sh
	bash hack/test-dist.sh
	bash hack/test-images.sh
	bash hack/e2e-node.sh
	bash hack/conformance.sh ci

##@ Test tiers
.PHONY: unit
unit: ## Unit tests only (*Test), seconds
	$(MVN) test

.PHONY: sanity
sanity: deps build ## csi-sanity against the real driver jar with real loop devices and mounts
	bash hack/sanity.sh

.PHONY: e2e
e2e: deps build tools-e2e ## Control-plane end to end (ControlPlaneE2E, also in `mvn verify`): kube-apiserver, operator, driver and the real provisioner/resizer/snapshotter as processes (root)
	$(MVN) -pl operator -am verify -DskipITs=true -DcontrolPlaneE2E.skip=false -Dtest=none \
	  -Dsurefire.failIfNoSpecifiedTests=false

.PHONY: e2e-node
e2e-node: deps build tools-node images ## End to end on a real node: Helm install, pods writing to volumes, expansion, snapshots, faults (root)
	bash hack/e2e-node.sh

.PHONY: conformance
conformance: deps build tools-node tools-suite images ## Kubernetes' External Storage e2e suite on the real node, every pass, per driver definition (root; docs/conformance.md)
	bash hack/conformance.sh full

.PHONY: test-dist
test-dist: tools-test ## Helm chart and OLM bundle: drift, lint, template, schema, CSV == chart, operator-verify
	bash hack/test-dist.sh

.PHONY: lint-shell
lint-shell: deps ## shellcheck on every shell script git tracks
	bash hack/lint-shell.sh

.PHONY: test-images
test-images: deps ## Build both images offline and run them (driver Probe + CreateVolume, operator render)
	bash hack/test-images.sh

.PHONY: bench
bench: deps build ## Benchmarks: the driver beside csi-driver-host-path (HOSTPATH_BIN), its data path (fio), btrfs's qgroup limit, the operator, then provisioning at scale and online growth
	bash hack/bench.sh
	bash hack/bench-data.sh
	bash hack/bench-cbt.sh
	bash hack/bench-restore.sh
	bash hack/bench-btrfs-qgroup.sh
	bash hack/bench-operator.sh
	bash hack/bench-provision.sh
	bash hack/bench-expand.sh

.PHONY: bench-cbt
bench-cbt: deps build ## Changed block tracking: GetMetadataDelta on 1 and 10 GiB volumes with 1 % rewritten, beside a full read (root)
	bash hack/bench-cbt.sh

.PHONY: bench-restore
bench-restore: deps build ## A restore on another node: a snapshot holding 512 MiB copied over the data path, beside cp (root)
	bash hack/bench-restore.sh

.PHONY: bench-velero
bench-velero: deps build tools-node tools-backup images ## Velero with Soko on two nodes: backup, incremental backup and restore on the other node of a 1 GiB claim holding 512 MiB, beside cp (root)
	bash hack/bench-velero.sh

.PHONY: bench-expand
bench-expand: deps build tools-node images ## Online growth on the local cluster: 20 growths each of xfs and block claims, PVC patch to the pod seeing the new size, through the node beside the kubelet's path (root)
	bash hack/bench-expand.sh

.PHONY: bench-provision
bench-provision: deps build tools-node images ## Provisioning at scale on the local cluster: 100 and 300 claims with pods, Soko beside local-path-provisioner, then Soko's deletion (root)
	bash hack/bench-provision.sh

##@ Build
.PHONY: build
build: ## Build all jars (driver/target/soko-driver.jar, operator/target/soko-operator.jar)
	$(MVN) -q package -DskipTests

.PHONY: images
images: deps ## Build the driver and operator images (OCI archives in target/images)
	bash hack/images.sh

.PHONY: dist
dist: ## Regenerate the chart's and bundle's generated files, and the docs' generated blocks, from their sources
	bash hack/gen-dist.sh
	/usr/bin/python3 hack/gen-docs.py

.PHONY: fmt
fmt: ## Format the Java sources (the build only checks)
	$(MVN) -q spotless:apply

.PHONY: tools
tools: ## Build every pinned Go tool into $(SOKO_CACHE) (reused when present)
	bash hack/tools.sh all

.PHONY: tools-test
tools-test: ## Build the pinned Go tools that the tests use
	bash hack/tools.sh csi-sanity kube-api-test helm operator-verify

.PHONY: tools-e2e
tools-e2e: ## Build the pinned Go tools of the end-to-end test and the demo
	bash hack/tools.sh kube-apiserver etcd kubectl kube-controller-manager csi-provisioner \
	  csi-resizer csi-snapshotter csi-snapshot-metadata snapshot-controller snapshot-crds

.PHONY: tools-node
tools-node: tools-e2e ## Build the local cluster's node (kubelet, kube-scheduler, kube-proxy, containerd), helm and OLM
	bash hack/tools.sh kube-scheduler kubelet kube-proxy containerd containerd-shim-runc-v2 ctr helm \
	  olm catalog package-server copy-content cpb opm grpc_health_probe olm-manifests

.PHONY: tools-backup
tools-backup: ## Build Velero, its AWS plugin and MinIO (the backup tier's programs)
	bash hack/tools.sh velero velero-plugin-for-aws minio

.PHONY: releases
releases: ## Build the releases the tiers start from, from their commits, into the cache: 0.1.0 (the first release's reader test) and the newest (upgrade, downgrade, OLM)
	bash hack/previous-release.sh 0.1.0 >/dev/null
	bash hack/previous-release.sh >/dev/null

.PHONY: tools-suite
tools-suite: ## Build Kubernetes' e2e suite (e2e.test), its runner (ginkgo) and its test image program (agnhost)
	bash hack/tools.sh e2e.test ginkgo agnhost

.PHONY: deps
deps: ## Install the Debian packages the driver and tests run (idempotent)
	bash hack/deps.sh

.PHONY: clean
clean: ## Remove build output (not the tool cache)
	$(MVN) -q clean

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} \
	  /^[a-zA-Z_-]+:.*?##/ { printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2 } \
	  /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)
