"""Sections of the reliability probe (``scripts/reliability_probe.py``); see :mod:`.common`."""
