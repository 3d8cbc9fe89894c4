"""Foundation core: registries, agents, world, components and the environment base class."""
