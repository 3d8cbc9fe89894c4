"""Registry behaviour and the package-level registries."""

import subprocess
import sys

import pytest

import ai_economist
from ai_economist import foundation
from ai_economist.foundation.base.registrar import Registry


class Animal:
    name = "Animal"


class Cat(Animal):
    name = "Cat"


class Dog(Animal):
    name = "Dog"


def test_add_get_is_case_insensitive_and_entries_keep_case():
    registry = Registry(Animal)
    assert registry.add(Dog) is Dog  # usable as a decorator
    registry.add(Cat)
    assert registry.get("cat") is Cat
    assert registry.get("DOG") is Dog
    assert registry.has("cAt") and "dog" in registry
    assert not registry.has("Cow")
    assert registry.entries == ["Cat", "Dog"]
    assert len(registry) == 2


def test_unknown_name_error_names_it_and_lists_entries():
    registry = Registry(Animal)
    registry.add(Cat)
    registry.add(Dog)
    with pytest.raises(KeyError) as err:
        registry.get("Cow")
    message = str(err.value)
    assert "'Cow'" in message and "['Cat', 'Dog']" in message


def test_add_rejects_dots_non_subclasses_and_non_classes():
    registry = Registry(Animal)

    class Dotted(Animal):
        name = "my.animal"

    class Stranger:
        name = "Stranger"

    with pytest.raises(ValueError, match="may not contain"):
        registry.add(Dotted)
    with pytest.raises(TypeError, match="subclass of Animal"):
        registry.add(Stranger)
    with pytest.raises(TypeError, match="expects a class"):
        registry.add(Cat())


def test_readding_a_name_replaces_the_class():
    registry = Registry(Animal)
    registry.add(Cat)

    class Cat2(Animal):
        name = "cat"

    registry.add(Cat2)
    assert registry.get("Cat") is Cat2
    assert len(registry) == 1


def test_package_registries_hold_the_core_entries():
    assert {"BasicMobileAgent", "BasicPlanner"} <= set(foundation.agents.entries)
    assert foundation.resources.entries == ["Coin", "Stone", "Wood"]
    assert {"House", "Water", "StoneSourceBlock", "WoodSourceBlock"} <= set(
        foundation.landmarks.entries
    )
    assert foundation.endogenous.entries == ["Labor"]
    assert foundation.utils.save_episode_log is not None
    assert ai_economist.foundation is foundation


def test_entity_flags_and_colours():
    wood = foundation.resources.get("Wood")
    assert wood.collectible and not foundation.resources.get("Coin").collectible
    assert wood.color.tolist() == pytest.approx([107 / 255, 143 / 255, 113 / 255])
    house = foundation.landmarks.get("House")()
    water = foundation.landmarks.get("Water")()
    block = foundation.landmarks.get("WoodSourceBlock")()
    assert (house.private, house.blocking, house.public) == (True, False, False)
    assert (water.private, water.blocking, water.public) == (False, True, False)
    assert (block.private, block.blocking, block.public) == (False, False, True)
    assert block.color.tolist() == wood.color.tolist()


def test_make_env_instance_unknown_scenario_lists_known():
    with pytest.raises(KeyError, match="no-such-scenario"):
        foundation.make_env_instance("no-such-scenario")


def test_importing_the_package_prints_nothing():
    result = subprocess.run(
        [sys.executable, "-c", "import ai_economist; import ai_economist.foundation"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == ""
    assert result.stderr == ""
