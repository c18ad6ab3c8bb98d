"""The shipped tool catalog (`tools/`) and personas; installed as package data `utcgen.catalog`."""
