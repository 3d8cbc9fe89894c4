"""Layout files: the packaged maps, and errors that name the file, line and character."""

import numpy as np
import pytest

from ai_economist.foundation.scenarios.simple_wood_and_stone.layout_file import (
    LayoutFileError,
    available_layouts,
    load_layout,
    parse_layout,
)

# shape, W, S, @ (AI Economist 1.7.1's maps, counted from the files)
PACKAGED = {
    "quadrant_25x25_20each_30clump.txt": ((25, 25), 20, 20, 33),
    "quadrant_25x25_20each_30clump_no_water.txt": ((25, 25), 20, 20, 0),
    "closed_quadrant_25x25_20each_30clump.txt": ((25, 25), 20, 20, 49),
    "uniform_25x25_25each_65clump.txt": ((25, 25), 27, 24, 0),
    "env-pure_and_mixed-15x15.txt": ((15, 15), 23, 12, 21),
    "env-pure_and_mixed-25x25.txt": ((25, 25), 43, 45, 37),
    "env-pure_and_mixed-40x40.txt": ((40, 40), 27, 36, 0),
    "quadrant_40x40_50each.txt": ((40, 40), 49, 51, 108),
    "quadrant_40x40_50each_no_water.txt": ((40, 40), 49, 51, 0),
    "quadrant_8x8_4each_8clump.txt": ((9, 9), 13, 9, 15),
    "top_wood_bottom_stone_14x14.txt": ((14, 14), 9, 9, 0),
}


def test_every_packaged_map_loads_with_its_counts():
    assert available_layouts() == sorted(PACKAGED)
    for name, (shape, n_wood, n_stone, n_water) in PACKAGED.items():
        layout = load_layout(name)
        assert layout.shape == shape, name
        counts = [int(layout.maps[k].sum()) for k in ("Wood", "Stone", "Water")]
        assert counts == [n_wood, n_stone, n_water], name


def test_parse_places_each_symbol():
    layout = parse_layout("W @;  S;")
    assert layout.maps["Wood"].tolist() == [[True, False, False], [False, False, False]]
    assert np.argwhere(layout.maps["Water"]).tolist() == [[0, 2]]
    assert np.argwhere(layout.maps["Stone"]).tolist() == [[1, 2]]


def test_an_unknown_character_names_file_line_and_character(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("W  ;  S;@ X;")
    with pytest.raises(
        LayoutFileError, match=r"bad\.txt: line 3, character 3: unknown character 'X'"
    ):
        load_layout(path)


def test_ragged_lines_name_the_file_and_line(tmp_path):
    path = tmp_path / "ragged.txt"
    path.write_text("W  ;  S ;@  ;")
    with pytest.raises(LayoutFileError, match=r"ragged\.txt: line 2: ragged rows: this row has 4"):
        load_layout(path)


def test_an_unknown_bare_name_suggests_close_matches():
    with pytest.raises(FileNotFoundError, match="Did you mean 'quadrant_25x25_20each_30clump.txt'"):
        load_layout("quadrant_25x25_20each_30clumps.txt")


def test_a_layout_that_does_not_fit_world_size_is_rejected():
    from ai_economist import foundation

    with pytest.raises(ValueError, match=r"is 25x25 but world_size is \[20, 20\]"):
        foundation.make_env_instance(
            "layout_from_file/simple_wood_and_stone",
            components=[{"Gather": {}}],
            n_agents=2,
            world_size=[20, 20],
        )
