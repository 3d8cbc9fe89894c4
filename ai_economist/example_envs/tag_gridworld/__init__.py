"""WarpDrive's grid-world Tag: taggers chase one runner on a square grid (``env.TagGridWorld``)."""

from ai_economist.example_envs.tag_gridworld.env import TagGridWorld

__all__ = ["TagGridWorld"]
