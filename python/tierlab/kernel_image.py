"""Debian's packaged kernels for kernel-check under QEMU: which ``linux-image-*`` package
``debian:6.1`` / ``debian:6.12`` names, downloading it (``apt-get download``), unpacking its vmlinuz
and modules (``dpkg-deb -x``) into ``~/.cache/tierlab/kernels`` (``$TIERLAB_CACHE``) once, and
finding a module with the modules it depends on (from each .ko's ``depends=``) for the initramfs.

Cost: the first use of a kernel downloads ~70-110 MB and keeps ~100 MB of modules; later uses read
the cache. ``tierlab kernel-check --clear-kernel-cache`` removes it (:func:`clear_kernel_cache`).
"""

from __future__ import annotations

import lzma
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tierlab.kernel_host import KernelCheckUnavailable

KERNELS = {
    "debian:6.1": r"linux-image-6\.1\.0-\d+-amd64",
    "debian:6.12": r"linux-image-6\.12\.\d+\+deb12-amd64",
}


def cache_dir() -> Path:
    return Path(os.environ.get("TIERLAB_CACHE", Path.home() / ".cache" / "tierlab"))


def kernel_cache() -> Path:
    return cache_dir() / "kernels"


def clear_kernel_cache() -> list[str]:
    """Removes the cached kernels and the driver's build; returns what it removed."""
    removed = []
    for d in (kernel_cache(), cache_dir() / "vm-driver-target"):
        if d.exists():
            shutil.rmtree(d)
            removed.append(str(d))
    return removed


@dataclass(frozen=True)
class KernelImage:
    name: str  # what the user asked for: debian:6.12 or a path
    release: str  # uname -r of the kernel ("" when unknown)
    vmlinuz: Path
    modules: Path | None  # lib/modules/<release> (None: no modules; brd must be built in)


def _version_key(name: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", name)]


def resolve_package(spec: str) -> str:
    """The newest package apt knows for ``debian:6.1`` or ``debian:6.12``."""
    pat = re.compile(KERNELS[spec] + "$")
    r = subprocess.run(["apt-cache", "pkgnames", "linux-image-6."], capture_output=True, text=True, check=False)
    names = sorted((n for n in r.stdout.split() if pat.match(n)), key=_version_key)
    if not names:
        raise KernelCheckUnavailable(
            f"no package matching {KERNELS[spec]} in apt's lists (run apt-get update; Debian bookworm has both)"
        )
    return names[-1]


def fetch_kernel(spec: str, progress=None) -> KernelImage:
    """The kernel ``spec`` names: ``debian:6.1`` / ``debian:6.12`` (downloaded and cached once), or
    a path to a vmlinuz (its modules, if any, from ``../lib/modules/*`` beside it)."""
    if spec not in KERNELS:
        p = Path(spec)
        if not p.is_file():
            raise KernelCheckUnavailable(
                f"--kernel {spec}: expected {', '.join(KERNELS)} or the path of a vmlinuz (no such file)"
            )
        mods = sorted(p.resolve().parent.parent.glob("lib/modules/*"))
        return KernelImage(spec, mods[0].name if mods else "", p, mods[0] if mods else None)
    pkg = resolve_package(spec)
    dest = kernel_cache() / pkg
    if not (dest / "ready").exists():
        kernel_cache().mkdir(parents=True, exist_ok=True)
        if progress:
            progress(f"downloading and unpacking {pkg}")
        tmp = Path(tempfile.mkdtemp(prefix=f".{pkg}-", dir=kernel_cache()))
        try:
            r = subprocess.run(["apt-get", "download", pkg], cwd=tmp, capture_output=True, text=True, check=False)
            debs = list(tmp.glob("*.deb"))
            if r.returncode != 0 or not debs:
                raise KernelCheckUnavailable(f"apt-get download {pkg} failed: {r.stderr.strip()[-400:]}")
            subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(tmp / "x")], check=True, capture_output=True)
            rel = next((tmp / "x" / "lib" / "modules").iterdir()).name
            out = tmp / "k"
            out.mkdir()
            shutil.copy(tmp / "x" / "boot" / f"vmlinuz-{rel}", out / "vmlinuz")
            shutil.copy(tmp / "x" / "boot" / f"config-{rel}", out / "config")
            shutil.move(tmp / "x" / "lib" / "modules" / rel, out / "modules")
            (out / "release").write_text(rel)
            (out / "ready").write_text(pkg)
            if dest.exists():
                shutil.rmtree(dest)
            out.rename(dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return KernelImage(spec, (dest / "release").read_text().strip(), dest / "vmlinuz", dest / "modules")


def _module_file(modules: Path, name: str) -> Path | None:
    for ext in (".ko.xz", ".ko"):
        hits = list(modules.rglob(name + ext)) or list(modules.rglob(name.replace("_", "-") + ext))
        if hits:
            return hits[0]
    return None


def _modinfo(data: bytes, key: str) -> list[str]:
    return [m.decode() for m in re.findall(rb"\x00" + key.encode() + rb"=([^\x00]*)", data)]


def module_chain(modules: Path, name: str) -> list[tuple[str, bytes]]:
    """``name`` and the modules it depends on (from each module's ``depends=``), dependencies first,
    each decompressed: (name, .ko bytes)."""
    out: list[tuple[str, bytes]] = []
    seen: set[str] = set()

    def visit(n: str) -> None:
        if n in seen:
            return
        seen.add(n)
        f = _module_file(modules, n)
        if f is None:
            raise KernelCheckUnavailable(f"module {n} not found under {modules}")
        data = lzma.decompress(f.read_bytes()) if f.suffix == ".xz" else f.read_bytes()
        for deps in _modinfo(data, "depends"):
            for d in filter(None, deps.split(",")):
                visit(d)
        out.append((n, data))

    visit(name)
    return out


def _builtin(kernel: KernelImage, name: str) -> bool:
    if kernel.modules is None:
        return True
    b = kernel.modules / "modules.builtin"
    return b.exists() and any(line.endswith(f"/{name}.ko") for line in b.read_text().splitlines())


def _cached_packages(kernel: str) -> list[str]:
    if kernel not in KERNELS or not kernel_cache().exists():
        return []
    pat = re.compile(KERNELS[kernel] + "$")
    return [p.name for p in kernel_cache().iterdir() if pat.match(p.name)]
