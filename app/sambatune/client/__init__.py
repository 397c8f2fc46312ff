"""This computer as a client: detect, plan and apply TCP window and MTU settings, with backups."""
