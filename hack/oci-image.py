#!/usr/bin/env python3
"""Writes a single-layer OCI image archive from files on this machine, for images that need no
root filesystem: the local cluster's pause image, the CSI sidecars (static Go binaries) and the
test workloads' busybox. No registry and no container engine are involved; containerd imports the
archive under the name given (`ctr -n k8s.io images import`).

  oci-image.py --name REF --out FILE [--entrypoint PATH]... [--cmd ARG]... [--env K=V]... [--user U]
               (--file SRC:DEST[:MODE])... [--tree SRC:DEST]... [--symlink LINK:TARGET]...
               [--dir PATH:MODE]... [--label K=V]...
"""
import argparse
import hashlib
import io
import json
import os
import tarfile

# Fixed timestamps and owners: the same inputs give the same image digest.
EPOCH = 0


def layer(files, symlinks, extra_dirs, owners=()):
    """owners: (folder, uid) pairs; the folder and everything under it belongs to uid."""

    def owner(path):
        return next((uid for folder, uid in owners if path == folder or path.startswith(folder + "/")), 0)

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        dirs = set()
        entries = [dest for _, dest, _ in files] + [link for link, _ in symlinks]
        for dest in entries:
            parent = os.path.dirname(dest.strip("/"))
            while parent and parent not in dirs:
                dirs.add(parent)
                parent = os.path.dirname(parent)
        modes = {d: 0o755 for d in dirs}
        modes.update({d.strip("/"): mode for d, mode in extra_dirs})
        for d in sorted(modes):
            info = tarfile.TarInfo(d)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, modes[d], EPOCH
            info.uid = info.gid = owner(d)
            tar.addfile(info)
        for src, dest, mode in files:
            with open(src, "rb") as f:
                data = f.read()
            info = tarfile.TarInfo(dest.strip("/"))
            info.size, info.mode, info.mtime = len(data), mode, EPOCH
            info.uid = info.gid = owner(info.name)
            tar.addfile(info, io.BytesIO(data))
        for link, target in symlinks:
            info = tarfile.TarInfo(link.strip("/"))
            info.type, info.linkname, info.mtime = tarfile.SYMTYPE, target, EPOCH
            tar.addfile(info)
    return buf.getvalue()


def blob(tar, data):
    digest = hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo("blobs/sha256/" + digest)
    info.size, info.mtime = len(data), EPOCH
    tar.addfile(info, io.BytesIO(data))
    return "sha256:" + digest


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--name", required=True, help="full image reference, e.g. host/repo:tag")
    p.add_argument("--out", required=True)
    p.add_argument("--entrypoint", action="append", default=[])
    p.add_argument("--cmd", action="append", default=[], help="the default arguments")
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--user", default="")
    p.add_argument("--file", action="append", default=[], help="SRC:DEST[:MODE(octal)]")
    p.add_argument("--symlink", action="append", default=[], help="LINK:TARGET")
    p.add_argument("--dir", action="append", default=[], help="PATH:MODE(octal), e.g. /tmp:1777")
    p.add_argument("--tree", action="append", default=[],
                   help="SRC:DEST[:UID], every regular file under folder SRC, mode 0644 (data, not "
                        "programs); with UID, DEST and all in it belong to that user (data it writes)")
    p.add_argument("--label", action="append", default=[], help="K=V, an image label")
    a = p.parse_args()
    files = []
    for spec in a.file:
        parts = spec.split(":")
        files.append((parts[0], parts[1], int(parts[2], 8) if len(parts) > 2 else 0o755))
    owners = []
    for spec in a.tree:
        src, dest, *uid = spec.split(":")
        if uid:
            owners.append((dest.strip("/"), int(uid[0])))
        for folder, subfolders, names in os.walk(src):
            subfolders.sort()
            for name in sorted(names):
                path = os.path.join(folder, name)
                files.append((path, os.path.join(dest, os.path.relpath(path, src)), 0o644))
    symlinks = [tuple(s.split(":", 1)) for s in a.symlink]

    dirs = [(d.split(":")[0], int(d.split(":")[1], 8)) for d in a.dir]
    diff = layer(files, symlinks, dirs, owners)
    tag = a.name.rsplit(":", 1)[1] if ":" in a.name.rsplit("/", 1)[-1] else "latest"
    with tarfile.open(a.out + ".partial", "w") as tar:
        layer_digest = blob(tar, diff)
        runtime = {"Entrypoint": a.entrypoint or None, "Env": a.env or None, "User": a.user or None}
        if a.cmd:  # only when given, so that the other images keep their digests
            runtime["Cmd"] = a.cmd
        if a.label:
            runtime["Labels"] = dict(label.split("=", 1) for label in a.label)
        config = json.dumps({
            "architecture": "amd64", "os": "linux",
            "config": runtime,
            "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
        }, sort_keys=True).encode()
        config_digest = blob(tar, config)
        manifest = json.dumps({
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                       "digest": config_digest, "size": len(config)},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                        "digest": layer_digest, "size": len(diff)}],
        }, sort_keys=True).encode()
        manifest_digest = blob(tar, manifest)
        index = json.dumps({
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "digest": manifest_digest, "size": len(manifest),
                           "annotations": {"io.containerd.image.name": a.name,
                                           "org.opencontainers.image.ref.name": tag}}],
        }, sort_keys=True).encode()
        for name, data in (("oci-layout", b'{"imageLayoutVersion": "1.0.0"}'),
                           ("index.json", index)):
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), EPOCH
            tar.addfile(info, io.BytesIO(data))
    os.replace(a.out + ".partial", a.out)


if __name__ == "__main__":
    main()
