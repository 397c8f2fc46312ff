"""Findings and recommendations from configuration, survey and measurements; the wizard."""
