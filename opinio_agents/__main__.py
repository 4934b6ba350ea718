"""``python -m opinio_agents`` runs the ``opinio`` CLI."""

from opinio_agents.cli.main import run

run()
