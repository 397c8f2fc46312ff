"""The "Tune this computer" page and its views."""
