"""Talking to a target: a Samba server over SSH, or this computer."""
