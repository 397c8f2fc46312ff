"""Fleets: many Samba servers at once (issue 20).

A fleet comes from what admins already keep: an Ansible inventory (INI or YAML), the
``Host`` entries of ``~/.ssh/config``, or ``user@host:port`` typed by hand
(:mod:`sambatune.fleet.inventory`). :mod:`sambatune.fleet.survey` surveys every host in
parallel. No Qt here: the GUI's Fleet page and ``sambatune fleet`` both sit on top.
"""
