"""The parts of the Foundation env ``CovidAndEconomyEnvironment``: argument checks, the observation plan, the one-pass step of one env and the evaluation plots."""
