"""The guided tuning wizard's page and its views."""
