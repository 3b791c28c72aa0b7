"""The held-out kernel-check workloads (tierlab.kernel_heldout): their specs parse and generate the
references and footprints docs/kernel-check.md states, relative to the limit. No root needed."""

import pytest

from tierlab import kernel as kc
from tierlab.kernel_heldout import HEAP_WAVE, HELDOUT, heldout_spec
from tierlab.kernel_workloads import cells_for, trace_footprint


def _footprint(name, limit_mib):
    return trace_footprint(heldout_spec(name, limit_mib))


@pytest.mark.parametrize("limit_mib", [16, 32])
def test_references_and_footprints_are_those_stated_relative_to_the_limit(limit_mib):
    lp = limit_mib * 256
    db = _footprint("db_lookup_scan", limit_mib)
    # 6 periods of 1.25 L; every range scan completes, so the whole 3 L table is read, plus the
    # index pages drawn (at most 0.4 L).
    assert db["references"] == 6 * round(1.25 * lp)
    assert db["anon_pages"] == 0
    assert 3 * lp < db["file_pages"] <= 3 * lp + round(0.4 * lp)
    sh = _footprint("shifting_hot", limit_mib)
    assert sh["references"] == 8 * lp
    assert sh["anon_pages"] == 0
    # hot windows cover 0 .. 2.25 L, the background 2 L more; a uniform 0.8 L draws over 2 L pages
    # leave part of it untouched.
    assert 2 * lp < sh["file_pages"] <= round(2.25 * lp) + 2 * lp
    hw = _footprint("heap_wave", limit_mib)
    assert hw["references"] == 8 * lp
    # the stream reads 8 x 0.35 L pages, each once; the heap's largest phase is 1.2 L pages, of
    # which 2 x 0.6 L Zipf(0.6) draws touch most
    assert hw["file_pages"] == 8 * round(0.35 * lp)
    assert round(0.8 * lp) < hw["anon_pages"] <= round(max(HEAP_WAVE) * lp)
    tp = _footprint("two_procs", limit_mib)
    assert tp["references"] == 16 * round(0.5 * lp)
    assert round(0.5 * lp) < tp["anon_pages"] <= round(0.7 * lp)
    # 4 L Zipf(0.9) reads over 1.5 L pages leave the coldest part of the file untouched
    assert round(0.5 * lp) < tp["file_pages"] <= round(1.5 * lp)


def test_specs_are_fixed_and_scale_with_the_limit():
    for name in HELDOUT:
        assert heldout_spec(name, 16) == heldout_spec(name, 16)
        assert heldout_spec(name, 16) != heldout_spec(name, 32)
        assert _footprint(name, 32)["references"] == 2 * _footprint(name, 16)["references"]


def test_an_unknown_name_or_limit_is_refused_with_one_line():
    with pytest.raises(ValueError, match="unknown held-out workload 'nope'; known: db_lookup_scan"):
        heldout_spec("nope", 16)
    with pytest.raises(ValueError, match="limit 0 MiB"):
        heldout_spec("two_procs", 0)


def test_a_spec_longer_than_a_file_name_is_a_cell_named_by_its_start():
    spec = heldout_spec("db_lookup_scan", 16)
    assert len(spec) > 255
    cells = cells_for(traces=[spec], limits_mib=[16])
    assert [c.name for c in cells] == [spec[:37] + "...@16MiB"]


def test_under_qemu_a_mixed_trace_runs_with_its_swap_devices():
    spec = heldout_spec("two_procs", 16)
    cells = kc.cells_for(None, [16], ("zram", "brd"), traces=[spec])
    assert [c.swap for c in cells] == ["zram", "brd"]
    assert kc.vm_default_cells(cells) == cells
    built_in = kc.cells_for(None, [16], ("zram", "brd"))
    assert [c.workload for c in kc.vm_default_cells(built_in)] == kc.FILE_WORKLOADS
