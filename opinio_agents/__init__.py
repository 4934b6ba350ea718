"""opinio_agents: user-centric opinion highlights from large collections of reviews."""

__version__ = "0.1.0"
