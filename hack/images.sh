#!/usr/bin/env bash
# Builds the soko-driver and soko-operator container images without Docker and without pulling any
# base image: the root filesystem is made by mmdebstrap from Debian packages (this host's own apt
# sources), then `podman build` puts it into an image FROM scratch with the project's jar on top.
# Each image is saved as an OCI archive under target/images/.
#
# Usage: hack/images.sh [driver|operator|bundle|all]      (default: all)
#   bundle: the OLM bundle image soko-operator-bundle:<version> from olm-bundle/bundle.Dockerfile
# Environment:
#   IMAGE_REGISTRY  prefix for image names, e.g. "<your-registry>/soko" (default: none, local only)
#   IMAGE_TAG       tag of both images (default: the project version from pom.xml)
#   SOKO_CACHE      cache folder (default: ~/.cache/soko); root filesystems go to $SOKO_CACHE/images
#   SKIP_SAVE=1     do not write the OCI archives
set -euo pipefail
SOKO_LOG_TAG=images
source "$(dirname "$0")/lib.sh"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../images/base.env
source "$ROOT/images/base.env"
SOKO_CACHE="${SOKO_CACHE:-$HOME/.cache/soko}"
ROOTFS_CACHE="$SOKO_CACHE/images"
OUT="$ROOT/target/images"

# The one project version (root pom.xml, lib.sh's project_version) flows into the image tags.

image_name() { # component -> full image reference
  local prefix="${IMAGE_REGISTRY:+${IMAGE_REGISTRY%/}/}"
  printf '%ssoko-%s:%s\n' "$prefix" "$1" "${IMAGE_TAG:-$(project_version)}"
}

jar_path() { # component -> path of its runnable jar
  printf '%s/%s/target/soko-%s.jar\n' "$ROOT" "$1" "$1"
}

# Package sources for mmdebstrap: the enabled apt source files of this host, so that no mirror is
# named by the project and a machine with a local mirror or proxy uses it unchanged.
host_sources() {
  local f found=()
  [[ -s /etc/apt/sources.list ]] && found+=(/etc/apt/sources.list)
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
    [[ -s "$f" ]] && found+=("$f")
  done
  ((${#found[@]})) || die "no apt sources on this host (/etc/apt/sources.list[.d])"
  grep -qw "$DEBIAN_SUITE" "${found[@]}" ||
    die "the host's apt sources do not offer suite '$DEBIAN_SUITE' (images/base.env)"
  printf '%s\n' "${found[@]}"
}

packages_of() { # component -> comma-separated package list, comments stripped
  sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$ROOT/images/$1/packages.txt" | tr -d ' \t' | paste -sd, -
}

# Builds (or reuses) the root filesystem tarball of one image; prints its path. The cache key covers
# everything that changes the result: suite, variant, package list and the sources' content.
rootfs() {
  local component="$1" packages key tarball
  packages="$(packages_of "$component")"
  mapfile -t sources < <(host_sources)
  key="$( { echo "$DEBIAN_SUITE $MMDEBSTRAP_VARIANT $packages"; cat "${sources[@]}"; } |
    sha256sum | cut -c1-16)"
  tarball="$ROOTFS_CACHE/rootfs-$component-$DEBIAN_SUITE-$key.tar"
  if [[ -s "$tarball" ]]; then
    log "reusing root filesystem $tarball"
  else
    command -v mmdebstrap >/dev/null || die "mmdebstrap is missing: run hack/deps.sh"
    mkdir -p "$ROOTFS_CACHE"
    log "building root filesystem for $component ($packages)"
    # Docs, man pages and locales are dropped (copyright files kept); apt lists are not left behind.
    # The JRE's postinst registers man pages with update-alternatives, which fails without man1.
    # shellcheck disable=SC2016 # mmdebstrap runs the hook with the root filesystem as $1
    mmdebstrap --variant="$MMDEBSTRAP_VARIANT" --include="$packages" \
      --setup-hook='mkdir -p "$1/usr/share/man/man1"' \
      --dpkgopt='path-exclude=/usr/share/man/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' \
      --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' \
      "$DEBIAN_SUITE" "${tarball%.tar}.partial.tar" "${sources[@]}" >&2
    mv "${tarball%.tar}.partial.tar" "$tarball"
  fi
  printf '%s\n' "$tarball"
}

ensure_jar() {
  local component="$1"
  if [[ ! -s "$(jar_path "$component")" ]]; then
    log "building jars (mvn package, tests skipped)"
    (cd "$ROOT" && mvn -B -q -DskipTests package)
  fi
  [[ -s "$(jar_path "$component")" ]] || die "$(jar_path "$component") was not built"
}

build_image() {
  local component="$1" image context tarball archive
  ensure_jar "$component"
  tarball="$(rootfs "$component")"
  image="$(image_name "$component")"
  context="$OUT/context-$component"
  rm -rf "$context" && mkdir -p "$context"
  # A hard link keeps the context cheap when the cache is on the same filesystem.
  ln "$tarball" "$context/rootfs.tar" 2>/dev/null || cp "$tarball" "$context/rootfs.tar"
  cp "$(jar_path "$component")" "$context/soko-$component.jar"
  if [[ "$component" == driver ]]; then
    # JNA's native stub (mount and loop ioctls), unpacked here so the driver never writes it at
    # run time: the root filesystem may be read-only. The images are amd64.
    mkdir -p "$context/native"
    (cd "$context/native" && jar xf "../soko-$component.jar" com/sun/jna/linux-x86-64/libjnidispatch.so \
      && mv com/sun/jna/linux-x86-64/libjnidispatch.so . && rm -r com)
  fi
  cp -r "$ROOT/images/$component/." "$context/"
  # Each image runs its component's own launcher (its measured JVM flags).
  cp "$ROOT/$component/bin/soko-$component" "$context/soko-$component"
  log "podman build $image"
  # RUN steps (the driver's class-data archive) use chroot isolation: no OCI runtime is involved,
  # so crun's cgroup problem and the refused default ulimits do not apply at build time.
  podman build --quiet --pull=never --isolation chroot \
    --build-arg "VERSION=${IMAGE_TAG:-$(project_version)}" \
    -f "$context/Containerfile" -t "$image" "$context" >&2
  rm -rf "$context"
  if [[ "${SKIP_SAVE:-0}" != 1 ]]; then
    archive="$OUT/soko-$component-${IMAGE_TAG:-$(project_version)}.oci.tar"
    rm -f "$archive"
    podman save --quiet --format oci-archive -o "$archive" "$image"
    log "saved $archive"
  fi
  printf '%s\n' "$image"
}

# The OLM bundle image: only the generated manifests and metadata, FROM scratch. With
# IMAGE_REGISTRY the bundle is regenerated into target/ so that its CSV names the pushed operator
# image; without it the committed olm-bundle/ is used as is.
build_bundle() {
  local prefix="${IMAGE_REGISTRY:+${IMAGE_REGISTRY%/}/}" image archive bundle="$ROOT/olm-bundle"
  image="${prefix}soko-operator-bundle:${IMAGE_TAG:-$(project_version)}"
  if [[ -n "${IMAGE_REGISTRY:-}" ]]; then
    [[ -z "${IMAGE_TAG:-}" ]] || die "IMAGE_TAG with a bundle: the CSV version is the project's"
    rm -rf "$OUT/publish" && mkdir -p "$OUT/publish"
    cp -r "$ROOT/helm" "$ROOT/olm-bundle" "$OUT/publish/"
    bash "$ROOT/hack/gen-dist.sh" --out "$OUT/publish" --image-registry "${IMAGE_REGISTRY%/}"
    bundle="$OUT/publish/olm-bundle"
  fi
  log "podman build $image"
  podman build --quiet --pull=never -f "$bundle/bundle.Dockerfile" -t "$image" "$bundle" >&2
  if [[ "${SKIP_SAVE:-0}" != 1 ]]; then
    archive="$OUT/soko-operator-bundle-${IMAGE_TAG:-$(project_version)}.oci.tar"
    rm -f "$archive"
    podman save --quiet --format oci-archive -o "$archive" "$image"
    log "saved $archive"
  fi
  printf '%s\n' "$image"
}

main() {
  command -v podman >/dev/null || die "podman is missing: run hack/deps.sh"
  mkdir -p "$OUT"
  local target="${1:-all}"
  case "$target" in
    driver | operator) build_image "$target" ;;
    bundle) build_bundle ;;
    all) build_image driver && build_image operator && build_bundle ;;
    *) die "unknown image '$target' (driver, operator, bundle or all)" ;;
  esac
}

# Sourced by hack/test-images.sh for image_name/project_version; run directly to build.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  main "$@"
fi
