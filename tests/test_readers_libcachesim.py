"""tierlab's libCacheSim-format readers read what libCacheSim reads: on cloudPhysicsIO in csv,
txt, oracleGeneral and vscsi form, the object ids (and the csv/vscsi ops and sizes) match
libCacheSim's own readers request for request, and LRU misses with unit object size match
libCacheSim's LRU fed by libCacheSim's reader of the same file."""

from __future__ import annotations

import libcachesim as lcs
import numpy as np
import pytest
from reference.libcachesim_object_counts import READERS, lcs_reader

import tierlab

from conftest import trace_path

CP = "libcachesim/cloudPhysicsIO"


def lcs_requests(path, suffix):
    ids, sizes = [], []
    for req in lcs_reader(path, suffix):
        ids.append(req.obj_id)
        sizes.append(req.obj_size)
    return np.array(ids, dtype=np.uint64), np.array(sizes, dtype=np.int64)


def tierlab_pages(path, **options):
    pages, npages, ops = [], [], []
    for b in tierlab.Trace.of(path, None, options).batches():
        acc = b["event"] == 255
        pages.append(b["page"][acc])
        npages.append(b["npages"][acc])
        ops.append(b["op"][acc])
    return np.concatenate(pages), np.concatenate(npages), np.concatenate(ops)


@pytest.mark.parametrize("suffix", list(READERS))
def test_object_ids_match_libcachesim_reader(suffix):
    path = trace_path(f"{CP}.{suffix}")
    ids, sizes = lcs_requests(path, suffix)
    pages, npages, _ = tierlab_pages(path)
    assert len(pages) == len(ids) == 113_872
    assert (npages == 1).all()
    assert (pages == ids).all()
    if suffix in ("csv", "vscsi"):
        # Block addressing: bytes [id*512, id*512 + size) in 4 KiB pages.
        bp, bn, _ = tierlab_pages(path, addressing="block")
        first = ids * 512 // 4096
        last = (ids * 512 + sizes.astype(np.uint64) - 1) // 4096
        assert (bp == first).all() and (bn == last - first + 1).all()


def test_vscsi_ops_match_the_csv_scsi_opcodes():
    _, _, csv_ops = tierlab_pages(trace_path(f"{CP}.csv"))
    _, _, vscsi_ops = tierlab_pages(trace_path(f"{CP}.vscsi"))
    assert (csv_ops == vscsi_ops).all()
    assert int((csv_ops == 1).sum()) == 66_898  # `2a` (WRITE 10) rows of the csv


@pytest.mark.parametrize("suffix", ["vscsi", "csv"])
@pytest.mark.parametrize("size", [64, 2_000])
def test_lru_misses_match_libcachesim_on_its_own_reader(suffix, size):
    path = trace_path(f"{CP}.{suffix}")
    cache = lcs.LRU(cache_size=size)
    expected = sum(not cache.get(req) for req in lcs_reader(path, suffix, ignore_size=True))
    df = tierlab.run(path, policies=["lru"], sizes=[size])
    assert int(df["misses"].iloc[0]) == expected
