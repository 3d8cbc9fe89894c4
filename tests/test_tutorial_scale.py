"""AI_ECONOMIST_TUTORIAL_SCALE: unset means full, ci and full are accepted, anything else is
an error that names the variable and the accepted values."""

import pytest

from ai_economist.tutorial_scale import SCALE_VARIABLE, TutorialScaleError, tutorial_scale


def test_unset_or_empty_means_full():
    assert tutorial_scale({}) == "full"
    assert tutorial_scale({SCALE_VARIABLE: " "}) == "full"


def test_known_scales_ignore_case_and_spaces():
    assert tutorial_scale({SCALE_VARIABLE: "ci"}) == "ci"
    assert tutorial_scale({SCALE_VARIABLE: " CI "}) == "ci"
    assert tutorial_scale({SCALE_VARIABLE: "Full"}) == "full"


def test_an_unknown_scale_is_a_named_error():
    with pytest.raises(TutorialScaleError) as info:
        tutorial_scale({SCALE_VARIABLE: "tiny"})
    assert str(info.value) == (
        "AI_ECONOMIST_TUTORIAL_SCALE='tiny' is not a tutorial scale; expected one of ci, full "
        "(unset means full)"
    )
    assert isinstance(info.value, ValueError)


def test_the_process_environment_is_the_default(monkeypatch):
    monkeypatch.setenv(SCALE_VARIABLE, "nope")
    with pytest.raises(TutorialScaleError, match="'nope'"):
        tutorial_scale()
    monkeypatch.delenv(SCALE_VARIABLE)
    assert tutorial_scale() == "full"
