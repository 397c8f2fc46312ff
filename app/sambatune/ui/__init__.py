"""The desktop app: the only package that imports Qt."""
