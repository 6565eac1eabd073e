"""A run's own PV tables folder is read once per folder and kept apart from the shipped tables."""

from __future__ import annotations

import shutil

import pytest

from tools.pv.data import SHIPPED_TABLES, find_locations, locations, using_tables


def test_a_runs_own_folder_is_used_inside_its_block_and_the_shipped_tables_outside(tmp_path):
    own = tmp_path / "tables"
    shutil.copytree(SHIPPED_TABLES, own)
    text = (own / "yield.csv").read_text(encoding="utf-8")
    (own / "yield.csv").write_text(
        text.replace("北京市,北京市,,beijing|peking,1370", "北京市,北京市,,beijing|peking,999")
    )
    shipped = {loc.city: loc for loc in locations()}["北京市"].specific_yield
    with using_tables(own):
        assert {loc.city: loc for loc in locations()}["北京市"].specific_yield == 999
        assert find_locations("北京")[0][1].specific_yield == 999
    assert {loc.city: loc for loc in locations()}["北京市"].specific_yield == shipped == 1370
    assert find_locations("北京")[0][1].specific_yield == 1370


def test_a_folder_without_the_tables_is_a_clear_error(tmp_path):
    with using_tables(tmp_path), pytest.raises(FileNotFoundError, match="PLANGRAPH_PV_DATA"):
        locations()
