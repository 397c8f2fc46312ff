"""The fleet window: many servers from an Ansible inventory, surveyed, compared and changed in waves."""
