"""The default run configuration; installed as package data `utcgen.configs`."""
